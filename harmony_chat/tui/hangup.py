"""Quit when the terminal goes away, as after a hang-up, instead of spinning unseen or hanging.

A terminal that closes sends SIGHUP to the processes it controls; Python's default for it ends the
app at once, skipping the shutdown that stops generation and records the partial answer. And an app
whose terminal is not its controlling one (started by a tool in a new session, a multiplexer that
died, a pseudo-terminal whose other end was closed) gets no signal at all: Textual's input thread
then reads end-of-file in a loop at 100 % of a core, forever. The app checks its terminal every
second with :func:`hung_up` and turns SIGHUP into a normal quit.

Until that check sees it, the app keeps drawing into the gone terminal: ``terminal_driver.py``
keeps those writes from ending or hanging the app.
"""

from __future__ import annotations

import select

GONE = select.POLLHUP | select.POLLERR | select.POLLNVAL
"""Poll flags of a terminal whose other end is closed (or a descriptor no longer open)."""
CHECK_S = 1.0
"""How often the app checks its terminal."""


def hung_up(fd: int) -> bool:
    """Whether the terminal on ``fd`` has gone: its other end closed, or the descriptor is invalid."""
    poller = select.poll()
    poller.register(fd, select.POLLIN)
    return any(events & GONE for _, events in poller.poll(0))
