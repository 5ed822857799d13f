"""Text from users, models, tools and files, made safe to show: never markup, never terminal controls.

Textual reads a plain ``str`` given to ``Static``, ``Label``, ``Button``, ``Collapsible`` titles,
palette entries and notifications as content markup: ``[/]`` raises ``MarkupError``, ``[b]x[/b]``
loses its brackets and ``[@click=app.quit]`` becomes a clickable action. Textual also passes
escape characters through to the terminal. Every widget in the app that shows such text gets it
through :func:`literal` (a :class:`~textual.content.Content`, which is never parsed); Markdown
sources go through :func:`visible` first. :func:`visible` itself lives in
:mod:`harmony_chat.text_safety`, the one definition the command line and the server use too.
"""

from __future__ import annotations

from textual.content import Content

from harmony_chat.text_safety import visible

__all__ = ["literal", "visible"]


def literal(text: str) -> Content:
    """Return ``text`` as content shown exactly as written (see :func:`visible`)."""
    return Content(visible(text))
