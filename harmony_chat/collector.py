"""When Python's cyclic garbage collector runs: not during startup, never over everything mid-answer.

Startup imports and builds hundreds of thousands of objects, and the collector ran about 190 times
(45 ms) before the app's first paint; :func:`pause` stops it from the entry point until then.
A full collection walks every object the process holds: with Textual's modules and a conversation's
widgets and drawn lines, each full pass stalled the UI for 150 to 290 ms, several times per streamed
answer (``bench --tui``: the paced stream fell to 87 to 98 % of its rate). So after the first paint
and after each turn, everything alive is moved out of the collector's reach (:func:`settle`, which
is :func:`gc.freeze`); the passes during the next answer walk only what that answer allocated.
The app also lets more objects be allocated between young passes (:data:`APP_THRESHOLDS`): every
frame makes thousands of short-lived strips and segments, and with Python's default 700 a young pass
ran several times a frame, pushing them into older generations whose passes they then triggered.

After a turn, :func:`settle` first collects what is not frozen (the turn's own garbage: about 20 ms
after a 20,000-token answer), so no garbage is frozen; after the first paint it does not (a
collection there delayed the first frame; startup leaves about 2,000 unreachable objects of 75,000,
collected at the first release). Frozen objects that later become cyclic
garbage (the widgets of a new chat's old turns, a regenerated answer, another conversation opened)
are handed back with :func:`release` and collected by the next :func:`settle`. The app releases
everything when it closes.
No UI imports: the command line pauses and resumes, the TUI settles and releases.
"""

from __future__ import annotations

import gc

APP_THRESHOLDS = (10_000, 20, 10)
"""Allocations before a young pass, young passes before a middle one, middle before a full one."""
_paused = False
"""Whether :func:`pause` turned automatic collection off (and nothing turned it back on yet)."""


def pause() -> None:
    """Turn automatic collection off until :func:`resume` (startup: the app has not painted yet)."""
    global _paused
    if gc.isenabled():
        gc.disable()
        _paused = True


def resume() -> None:
    """Turn automatic collection back on if :func:`pause` turned it off."""
    global _paused
    if _paused:
        gc.enable()
        _paused = False


def settle(collect: bool = True) -> None:
    """Resume collection, collect what is not frozen (unless told not to), and freeze what is alive."""
    resume()
    gc.set_threshold(*APP_THRESHOLDS)
    if collect:
        gc.collect()
    gc.freeze()


def release() -> None:
    """Hand every frozen object back to the collector: some of it has become garbage."""
    gc.unfreeze()
