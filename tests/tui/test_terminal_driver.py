"""The app's terminal output when the terminal goes away: writes are dropped, the writer thread lives on."""

from __future__ import annotations

import contextlib
import os
import pty
import sys
import threading

import pytest

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="needs a POSIX pty")


def test_a_writer_whose_terminal_went_away_takes_every_write_and_stops() -> None:
    """Textual's writer thread died on the first failed write; then its full queue hung the app's shutdown."""
    from textual.drivers._writer_thread import MAX_QUEUED_WRITES, WriterThread

    from harmony_chat.tui.terminal_driver import TerminalOutput

    master, slave = pty.openpty()
    output = TerminalOutput(os.fdopen(slave, "w"))
    writer = WriterThread(output)  # type: ignore[arg-type]  # file-like, as Textual's own stderr
    writer.start()
    writer.write("before\n")
    os.close(master)  # the terminal window closes

    def write_then_stop() -> None:
        for _ in range(MAX_QUEUED_WRITES * 4):
            writer.write("x" * 200 + "\n")
        writer.stop()

    done = threading.Thread(target=write_then_stop, daemon=True)
    done.start()
    done.join(timeout=30)
    assert not done.is_alive(), "the writer stopped taking writes"
    assert not writer.is_alive()
    assert output.gone
    with contextlib.suppress(OSError):  # the text buffer still holds what the gone terminal refused
        output.file.close()


def test_a_failed_flush_also_marks_the_terminal_gone() -> None:
    class Broken:
        def write(self, text: str) -> int:
            return len(text)

        def flush(self) -> None:
            raise OSError(5, "Input/output error")

    from harmony_chat.tui.terminal_driver import TerminalOutput

    output = TerminalOutput(Broken())  # type: ignore[arg-type]
    assert output.write("abc") == 3
    output.flush()
    assert output.gone
    assert output.write("more") == 4  # dropped, no error


def test_the_app_draws_through_that_driver_on_posix() -> None:
    from harmony_chat.chat.options import ChatOptions
    from harmony_chat.tui.app import HarmonyChatApp
    from harmony_chat.tui.terminal_driver import TerminalDriver

    assert HarmonyChatApp(ChatOptions(replay_demo=True)).driver_class is TerminalDriver
