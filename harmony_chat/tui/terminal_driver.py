"""Textual's POSIX driver, with an output that survives the terminal going away, and pastes read as text.

Between the moment a terminal goes away and the app's check that sees it (``hangup.py``), the app
keeps drawing, and each write fails (``EIO``). Textual's writer thread dies on the first one, and
the shutdown that follows waits forever for room in its queue: the app hangs instead of quitting.
Here writes to a gone terminal are dropped instead. Its input is parsed by
:class:`~harmony_chat.tui.pasted_text.PasteSafeParser`, so a paste holding escape characters stays
one paste of text. POSIX only (the driver needs ``termios``). Both reach into the driver's private
parts through :mod:`~harmony_chat.tui.textual_private`; a Textual without them runs its own.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TextIO

from textual.drivers.linux_driver import LinuxDriver

from harmony_chat.tui.pasted_text import PasteSafeParser
from harmony_chat.tui.textual_private import guard_driver_output, use_input_parser

if TYPE_CHECKING:
    from textual.app import App


class TerminalOutput:
    """The terminal as the app writes to it: once a write fails (the terminal has gone), writes go nowhere."""

    def __init__(self, file: TextIO) -> None:
        self.file = file
        self.gone = False
        """Set by the first write or flush that failed."""

    def write(self, text: str) -> int:
        """Write ``text``, or drop it when the terminal has gone."""
        if not self.gone:
            try:
                self.file.write(text)
            except OSError:
                self.gone = True
        return len(text)

    def flush(self) -> None:
        """Flush, unless the terminal has gone."""
        if not self.gone:
            try:
                self.file.flush()
            except OSError:
                self.gone = True

    def fileno(self) -> int:
        """The terminal's descriptor."""
        return self.file.fileno()

    def isatty(self) -> bool:
        """Whether it is (still) a terminal."""
        return not self.gone and self.file.isatty()


class TerminalDriver(LinuxDriver):
    """Textual's POSIX driver writing through :class:`TerminalOutput` and parsing with :class:`PasteSafeParser`."""

    def __init__(
        self, app: App[Any], *, debug: bool = False, mouse: bool = True, size: tuple[int, int] | None = None
    ) -> None:
        super().__init__(app, debug=debug, mouse=mouse, size=size)
        # the writer thread only writes, flushes and asks fileno and isatty
        self.output_guarded = guard_driver_output(self, TerminalOutput)
        """Whether writes to a terminal that went away are dropped (False: this Textual does not allow it)."""

    def run_input_thread(self) -> None:
        """Textual's input loop, parsing with :class:`PasteSafeParser` where this Textual allows it."""
        use_input_parser(PasteSafeParser)
        super().run_input_thread()
