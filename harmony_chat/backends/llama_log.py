"""llama.cpp's log, kept in memory instead of printed on the terminal.

llama.cpp writes its log to stderr, which would draw over the app and mix into ``ask``'s output;
here it is routed into :data:`LLAMA_LOG` once, for debug views and to explain a failure.
"""

from __future__ import annotations

import ctypes
from collections import deque
from typing import Any

LLAMA_LOG: deque[str] = deque(maxlen=200)
"""The latest lines llama.cpp logged; shown in debug views and used to explain load failures."""
_log_callback: Any = None


def capture_llama_log(llama_cpp: Any) -> None:
    """Route llama.cpp's log into :data:`LLAMA_LOG` instead of the terminal (installed once)."""
    global _log_callback
    if _log_callback is not None:
        return

    @llama_cpp.llama_log_callback
    def callback(level: int, text: bytes, user_data: Any) -> None:
        LLAMA_LOG.append(text.decode("utf-8", errors="replace"))

    _log_callback = callback
    llama_cpp.llama_log_set(callback, ctypes.c_void_p(0))


def last_error_line() -> str:
    """The last line llama.cpp logged (what explains a failure), or ``no details``."""
    lines = [line.strip() for line in LLAMA_LOG if line.strip()]
    return lines[-1] if lines else "no details"
