"""Untrusted text made safe for a terminal: control characters shown as visible symbols, never obeyed.

Text from models, tools, pages, files, engines and network clients may hold escape sequences:
``ESC ] 0 ; … BEL`` retitles the terminal, ``ESC ] 52`` writes the clipboard, ``ESC [ 2K`` erases
a line (hiding it from a reader who is asked to approve it), and the C1 character U+009B is a
CSI on its own in some terminals; bidirectional controls (U+202E and kin) make code read
differently from what runs, and U+2028/U+2029 break lines where none shows. :func:`visible` is
the one place that neutralises such text, for every output that reaches a terminal: the TUI
(through :mod:`harmony_chat.tui.literal`), ``ask``, ``history``, error lines, ``serve``'s log
and ``bench``. JSON keeps the exact text instead: its
escapes make C0 controls inert, and :func:`terminal_json` escapes DEL and C1 as well.

This module imports no UI library: engine, CLI and server code use it too.
"""

from __future__ import annotations

import json
import re

__all__ = ["C1_PICTURE", "DEL_PICTURE", "terminal_json", "visible"]

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
"""Control characters except tab and newline: C0, DEL and C1 (C1 ``\\x9b`` is a CSI in some terminals)."""
_JSON_RAW_CONTROL = re.compile(r"[\x7f-\x9f]")
"""The control characters ``json.dumps(..., ensure_ascii=False)`` leaves unescaped: DEL and C1."""
_LAYOUT = re.compile(r"[\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
"""Bidirectional controls (marks, embeddings, overrides, isolates) and the line and paragraph separators."""
DEL_PICTURE = "\u2421"
"""What DEL looks like on screen (␡)."""
C1_PICTURE = "\ufffd"
"""What a C1 control character looks like on screen (�)."""


def _picture(match: re.Match[str]) -> str:
    code = ord(match.group())
    if code < 0x20:
        return chr(0x2400 + code)  # the Unicode "control pictures" block: ␀ … ␟ (␛ for escape)
    return DEL_PICTURE if code == 0x7F else C1_PICTURE


def visible(text: str) -> str:
    r"""Return ``text`` with CR LF as a newline and every other control character as a visible symbol.

    Tabs and newlines stay; escape becomes ``␛``, so nothing a model writes can drive the terminal;
    bidirectional controls and line separators are written as escapes (``\u202e``), so text reads
    in the order it runs.
    """
    shown = _CONTROL.sub(_picture, text.replace("\r\n", "\n"))
    return _LAYOUT.sub(lambda match: f"\\u{ord(match.group()):04x}", shown)


def terminal_json(value: object, *, indent: int | None = None) -> str:
    r"""``value`` as JSON (non-ASCII text as it is) with no raw control character left in it.

    ``json.dumps`` escapes C0 controls but writes DEL and C1 characters raw; here they become
    ``\u007f`` … ``\u009f`` escapes too. Outside strings JSON has no such characters, so the
    document decodes to exactly the same value.
    """
    text = json.dumps(value, ensure_ascii=False, indent=indent)
    return _JSON_RAW_CONTROL.sub(lambda match: f"\\u{ord(match.group()):04x}", text)
