"""Repeated log lines, held back: a flood of like records (accept errors, bad requests) becomes a few lines.

When the process runs out of file descriptors, asyncio logs ``socket.accept() out of system
resource`` with a traceback for every connection it fails to accept, thousands a second (a
log of hundreds of megabytes in a minute and a half). :class:`RepeatFilter` lets the first
record of a kind through, holds back like ones for a while, and says how many it held when it
next lets one through. A kind is the logger, the level and the start of the message before its
arguments, numbers masked (asyncio puts handles, addresses and times in its messages).
"""

from __future__ import annotations

import logging
import re
import time
from collections import OrderedDict
from collections.abc import Callable

REPEAT_WINDOW_S = 10.0
"""How long like records are held back after one got through."""
TRACKED_KINDS = 512
"""Kinds of record remembered at once (the oldest is forgotten first)."""
KIND_LENGTH = 200
"""How much of a message (numbers masked) tells its kind."""
_NUMBERS = re.compile(r"0x[0-9a-fA-F]+|\d+")
QUIETED_LOGGERS = ("asyncio", "uvicorn.error", "harmony_chat.server")
"""The loggers :func:`quiet_repeats` filters."""


class RepeatFilter(logging.Filter):
    """Passes one record of a kind per ``window_s``; the next one that passes counts those held back.

    Args:
        window_s: seconds like records are held back after one passed.
        clock: monotonic seconds (tests pass their own).
    """

    def __init__(self, window_s: float = REPEAT_WINDOW_S, clock: Callable[[], float] = time.monotonic) -> None:
        super().__init__()
        self.window_s = window_s
        self.clock = clock
        self._kinds: OrderedDict[tuple[str, int, str], tuple[float, int]] = OrderedDict()

    def filter(self, record: logging.LogRecord) -> bool:
        """Whether ``record`` is logged (its message then says how many like ones were held back)."""
        kind = (record.name, record.levelno, _NUMBERS.sub("#", str(record.msg))[:KIND_LENGTH])
        now = self.clock()
        seen = self._kinds.get(kind)
        if seen is not None and now - seen[0] < self.window_s:
            self._kinds[kind] = (seen[0], seen[1] + 1)
            return False
        held = seen[1] if seen is not None else 0
        if held:
            record.msg = f"{record.msg} [{held} like messages held back]"
        self._kinds[kind] = (now, 0)
        self._kinds.move_to_end(kind)
        while len(self._kinds) > TRACKED_KINDS:
            self._kinds.popitem(last=False)
        return True


def quiet_repeats(window_s: float = REPEAT_WINDOW_S) -> None:
    """Put one :class:`RepeatFilter` on each of :data:`QUIETED_LOGGERS` (once)."""
    for name in QUIETED_LOGGERS:
        logger = logging.getLogger(name)
        if not any(isinstance(existing, RepeatFilter) for existing in logger.filters):
            logger.addFilter(RepeatFilter(window_s))
