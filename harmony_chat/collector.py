"""When Python's cyclic garbage collector runs: not during startup, never over everything mid-answer.

:func:`pause` stops automatic collection from the entry point until the app's first paint. A full
collection walks every object the process holds (Textual's modules, every turn's widgets and drawn
lines) and stalls the UI, so after the first paint and after each turn everything alive is moved out
of the collector's reach (:func:`settle`, which is :func:`gc.freeze`): the passes during the next
answer walk only what that answer allocated. The app also lets more objects be allocated between
young passes (:data:`APP_THRESHOLDS`), since every frame makes thousands of short-lived strips.

After a turn, :func:`settle` first collects what is not frozen (the turn's own garbage), so no
garbage is frozen; after the first paint it does not (a collection there would delay the first
frame). Frozen objects that later become cyclic garbage (the widgets of a new chat's old turns, a
regenerated answer, another conversation opened) are handed back with :func:`release` and collected
by the next :func:`settle`. The app releases everything when it closes.
No UI imports: the command line pauses and resumes, the TUI settles and releases.
The measurements behind these choices: docs/performance.md, "What keeps the app fast".
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
