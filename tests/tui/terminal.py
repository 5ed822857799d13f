"""Run ``harmony-chat`` in a real pseudo-terminal (standard library ``pty``), type into it, read it."""

from __future__ import annotations

import fcntl
import os
import pty
import struct
import subprocess
import sys
import termios
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


class Terminal:
    """The app on the other side of a pty: ``write`` sends bytes in one write, ``wait_for`` reads."""

    def __init__(self, args: list[str], home: Path, size: tuple[int, int] = (120, 36)) -> None:
        master, slave = pty.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", size[1], size[0], 0, 0))
        env = {
            **os.environ,
            "TERM": "xterm-256color",
            "HOME": str(home),
            "HARMONY_CHAT_CONFIG_DIR": str(home / "config"),
            "HARMONY_CHAT_DATA_DIR": str(home / "data"),
            "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])),
        }
        env.pop("TEXTUAL", None)
        self.process = subprocess.Popen(
            [sys.executable, "-m", "harmony_chat", *args],
            stdin=slave,
            stdout=slave,
            stderr=slave,
            env=env,
            cwd=home,
            start_new_session=True,
        )
        os.close(slave)
        self._master = master
        self._output = bytearray()
        self._lock = threading.Lock()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        while True:
            try:
                chunk = os.read(self._master, 65536)
            except OSError:
                return
            if not chunk:
                return
            with self._lock:
                self._output += chunk

    @property
    def output(self) -> bytes:
        """Everything the app wrote so far."""
        with self._lock:
            return bytes(self._output)

    def write(self, data: str) -> None:
        """Send ``data`` to the app in a single write, as a paste or a fast typist's burst arrives."""
        os.write(self._master, data.encode())

    def wait_for(self, text: str, after: int = 0, timeout: float = 60.0) -> int:
        """Wait until ``text`` appears in the output past offset ``after``; return where it ends."""
        needle = text.encode()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            found = self.output.find(needle, after)
            if found >= 0:
                return found + len(needle)
            if self.process.poll() is not None:
                break
            time.sleep(0.05)
        raise AssertionError(f"{text!r} never appeared; the app wrote:\n{self.output[-3000:]!r}")

    def hang_up(self) -> None:
        """Close the terminal's other end, as a terminal window that closes or a dropped connection."""
        os.close(self._master)
        self._reader.join(timeout=5)

    def wait_exit(self, timeout: float = 60.0) -> int:
        """Wait for the process to end (a bound so a broken app fails the test instead of hanging it)."""
        try:
            return self.process.wait(timeout)
        finally:
            self.close()

    def close(self) -> None:
        """Kill the app if it still runs, and close the pty."""
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        self._reader.join(timeout=5)
        try:
            os.close(self._master)
        except OSError:
            pass
