"""The ``harmony-chat`` command line: the app, ``ask``, ``history``, ``bench``, ``models``, ``serve``, ``conform``.

Imports stay light here so ``harmony-chat --help`` is instant: llama.cpp, openai-harmony and
Textual load only inside the command that needs them.
"""

from __future__ import annotations

from harmony_chat.cli import commands as _commands  # registers ask and bench on the app
from harmony_chat.cli import conform as _conform  # registers conform on the app
from harmony_chat.cli import serve as _serve  # registers serve on the app
from harmony_chat.cli.root import app, main, run

__all__ = ["app", "main", "run"]
del _commands, _conform, _serve
