"""A terminal whose other end closed is noticed (the app then quits instead of spinning)."""

from __future__ import annotations

import os
import pty
import sys

import pytest

from harmony_chat.tui.hangup import hung_up

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="needs a POSIX pty")


def test_a_pseudo_terminal_hangs_up_when_its_other_end_closes() -> None:
    leader, follower = pty.openpty()
    try:
        assert not hung_up(follower)
        os.write(leader, b"typed")
        assert not hung_up(follower)  # waiting input is not a hang-up
        os.close(leader)
        assert hung_up(follower)
    finally:
        os.close(follower)
