"""``ask`` with ``[tools] always = ["builtin.python"]`` in the config: python is asked (or declined), never run."""

from __future__ import annotations

from pathlib import Path

import pytest

from harmony_chat.cli import main

CODE_CALL = "<|channel|>analysis to=python<|message|>print(12 * 34)<|call|>"
ANSWER = "<|channel|>final<|message|>408.<|return|>"


def test_a_saved_always_for_python_does_not_run_code_unasked(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = tmp_path / "config.toml"
    config.write_text('[tools]\nalways = ["builtin.python"]\n', encoding="utf-8")
    replay = tmp_path / "call.txt"
    replay.write_text(f"{CODE_CALL}\n=====\n{ANSWER}\n", encoding="utf-8")
    monkeypatch.setenv("HARMONY_CHAT_CONFIG_FILE", str(config))
    monkeypatch.setenv("HARMONY_CHAT_DATA_DIR", str(tmp_path / "data"))
    code = main(["ask", "--replay", str(replay), "--tool", "python", "What is 12 * 34?"])
    _, err = capsys.readouterr()
    assert code == 0
    assert "denied" in err and "declined this call of python" in err  # nobody could be asked: not run
    assert "running python" not in err
