"""Text from users, models, tools and files, made safe to show: never markup, never terminal controls.

Textual reads a plain ``str`` given to ``Static``, ``Label``, ``Button``, ``Collapsible`` titles,
palette entries and notifications as content markup: ``[/]`` raises ``MarkupError``, ``[b]x[/b]``
loses its brackets and ``[@click=app.quit]`` becomes a clickable action. Textual also passes
escape characters through to the terminal. Every widget in the app that shows such text gets it
through :func:`literal` (a :class:`~textual.content.Content`, which is never parsed); Markdown
sources go through :func:`visible` first.
"""

from __future__ import annotations

import re

from textual.content import Content

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
"""Control characters except tab and newline: C0, DEL and C1 (C1 ``\\x9b`` is a CSI in some terminals)."""
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
    """Return ``text`` with CR LF as a newline and every other control character as a visible symbol.

    Tabs and newlines stay; escape becomes ``␛``, so nothing a model writes can drive the terminal.
    """
    return _CONTROL.sub(_picture, text.replace("\r\n", "\n"))


def literal(text: str) -> Content:
    """Return ``text`` as content shown exactly as written (see :func:`visible`)."""
    return Content(visible(text))
