"""``ask`` never writes a control character a model, tool or engine sent: the terminal obeys none of them.

Answers, preambles, reasoning, raw tokens, tool calls, tool results, the approval prompt and
``error:`` lines show escape sequences as visible symbols (``␛``, ``␇``, ``�``). ``--json`` keeps
the exact text, escaped as JSON, so nothing in it is raw either.
"""

from __future__ import annotations

import io
import json
import re
import sys
from pathlib import Path

import pytest

from harmony_chat.cli import main
from tests.cli.test_ask_tools import TEST_SERVER, mcp_json, recording
from tests.support.fake_engine import FakeEngine, load_fixture
from tests.tools.python.helpers import needs_sandbox

RAW_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
"""Any control character but tab and newline (ESC, BEL, CR, DEL, C1 such as CSI ``\\x9b``)."""
TITLE = "\x1b]0;owned\x07"
CLIPBOARD = "\x1b]52;c;aGVsbG8=\x07"
COLOUR = "\x1b[31mred\x1b[0m"
C1_CSI = "\x9b2J"
"""C1 CSI: erases the screen in terminals that read 8-bit controls."""
HIDE_LINE = "\x1b[2K\x1b[1G"
"""Erase the line and go back to its start: what follows is drawn over it."""
ANALYSIS = f"think {TITLE}"
PREAMBLE = f"Checking {TITLE} {C1_CSI}"
ANSWER = f"Done {CLIPBOARD} {COLOUR} {C1_CSI}."
ANSWER_SHOWN = "Done ␛]52;c;aGVsbG8=␇ ␛[31mred␛[0m �2J."
TURN = (
    f"<|channel|>analysis<|message|>{ANALYSIS}<|end|>"
    f"<|start|>assistant<|channel|>commentary<|message|>{PREAMBLE}<|end|>"
    f"<|start|>assistant<|channel|>final<|message|>{ANSWER}<|return|>"
)
HIDDEN_CODE = f"open('pwned.txt', 'w').write('owned')  #{HIDE_LINE}print('hello')"
"""On a terminal that obeys escapes the approval prompt shows ``print('hello')`` only."""


def no_raw_control(*streams: str) -> bool:
    """Whether no stream holds a control character other than tab and newline."""
    return not any(RAW_CONTROL.search(stream) for stream in streams)


def ask(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["ask", *args])
    out, err = capsys.readouterr()
    return code, out, err


class TerminalInput(io.StringIO):
    """Answers typed on a terminal (``ask`` asks for approval only when stdin is one)."""

    def isatty(self) -> bool:
        return True


@pytest.fixture
def turn(tmp_path: Path) -> Path:
    return recording(tmp_path / "turn.txt", TURN)


def test_answer_preamble_and_reasoning_show_escapes_as_symbols(capsys: pytest.CaptureFixture[str], turn: Path) -> None:
    code, out, err = ask(capsys, "--replay", str(turn), "--show-reasoning", "q")
    assert code == 0 and no_raw_control(out, err)
    assert out == ANSWER_SHOWN + "\n"
    assert "[preamble] Checking ␛]0;owned␇ �2J\n" in err
    assert "[reasoning] think ␛]0;owned␇\n" in err


def test_raw_tokens_show_escapes_as_symbols(capsys: pytest.CaptureFixture[str], turn: Path) -> None:
    code, out, err = ask(capsys, "--replay", str(turn), "--raw", "q")
    assert code == 0 and no_raw_control(out, err)
    assert "<|channel|>analysis<|message|>think ␛]0;owned␇<|end|>" in out
    assert "<|channel|>final<|message|>Done ␛]52;c;aGVsbG8=␇ ␛[31mred␛[0m " in out


def test_json_keeps_the_exact_text_with_no_raw_control(capsys: pytest.CaptureFixture[str], turn: Path) -> None:
    code, out, err = ask(capsys, "--replay", str(turn), "--json", "q")
    assert code == 0 and no_raw_control(out, err)
    events = [json.loads(line) for line in out.splitlines()]
    finished = {e["channel"]: e["text"] for e in events if e["type"] == "message_finished" and "text" in e}
    assert finished == {"commentary": PREAMBLE, "final": ANSWER}
    deltas = "".join(e["text"] for e in events if e["type"] == "delta" and e["channel"] == "final")
    assert deltas == ANSWER


def test_the_approval_prompt_shows_a_hidden_line_of_code(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HARMONY_CHAT_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "stdin", TerminalInput("n\n"))
    call = f"<|channel|>analysis to=python<|message|>{HIDDEN_CODE}<|call|>"
    replay = recording(tmp_path / "r.txt", call, "<|channel|>final<|message|>ok<|return|>")
    code, out, err = ask(capsys, "--replay", str(replay), "--tool", "python", "q")
    assert code == 0 and no_raw_control(out, err)
    shown = "open('pwned.txt', 'w').write('owned')  #␛[2K␛[1Gprint('hello')"
    assert f"\n    {shown}\n" in err  # the approval prompt's code, every character of it in sight
    assert f"[tool call] python {shown}\n" in err
    assert "[approve] code the model wants to run (written in its hidden reasoning): python (built-in)\n" in err
    assert not (tmp_path / "pwned.txt").exists()


def test_bidi_controls_in_the_approval_prompt_and_answer_are_written_as_escapes(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Code that reads differently from what runs (a Trojan Source comparison) shows its controls."""
    monkeypatch.setenv("HARMONY_CHAT_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setattr(sys, "stdin", TerminalInput("n\n"))
    trap = 'access = "user"\nif access != "none\u202e\u2066# check\u2069\u2066":\n    print(1)'
    call = f"<|channel|>analysis to=python<|message|>{trap}<|call|>"
    replay = recording(tmp_path / "r.txt", call, "<|channel|>final<|message|>ok\u2028\u202eko<|return|>")
    code, out, err = ask(capsys, "--replay", str(replay), "--tool", "python", "q")
    assert code == 0 and not {"\u202e", "\u2066", "\u2069", "\u2028"} & set(out + err)
    assert '\n    if access != "none\\u202e\\u2066# check\\u2069\\u2066":\n' in err
    assert out == "ok\\u2028\\u202eko\n"


def test_the_approval_prompt_names_the_kind_of_action(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "stdin", TerminalInput("n\n"))
    config = mcp_json(tmp_path / "mcp.json", test=[str(TEST_SERVER)])
    call = '<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{"location": "Oslo"}<|call|>'
    replay = recording(tmp_path / "r.txt", call, "<|channel|>final<|message|>ok<|return|>")
    code, _, err = ask(capsys, "--replay", str(replay), "--mcp-config", str(config), "q")
    assert code == 0
    assert "[approve] tool call: get_weather (test)\n" in err


@needs_sandbox
def test_python_tool_call_and_result_show_escapes_as_symbols(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HARMONY_CHAT_DATA_DIR", str(tmp_path / "data"))
    code_text = f"print('\\x1b]0;owned\\x07' + '\\x9b2J' + 'printed')  # {TITLE}"
    call = f"<|channel|>analysis to=python<|message|>{code_text}<|call|>"
    replay = recording(tmp_path / "r.txt", call, "<|channel|>final<|message|>ok<|return|>")
    code, out, err = ask(capsys, "--replay", str(replay), "--tool", "python", "--yes", "q")
    assert code == 0 and no_raw_control(out, err)
    assert "[tool call] python print('\\x1b]0;owned\\x07' + '\\x9b2J' + 'printed')  # ␛]0;owned␇\n" in err
    assert re.search(r"\[tool result\] python \(done, [\d.]+ s\): .*�2Jprinted\n", err), err
    code, out, err = ask(capsys, "--replay", str(replay), "--tool", "python", "--yes", "--json", "q")
    assert code == 0 and no_raw_control(out, err)
    events = [json.loads(line) for line in out.splitlines()]
    (called,) = [e for e in events if e["type"] == "tool_call"]
    (result,) = [e for e in events if e["type"] == "tool_result"]
    assert called["arguments"] == code_text
    assert result["status"] == "done" and "\x9b2Jprinted" in str(result["text"])


def test_an_mcp_result_shows_escapes_as_symbols(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    config = mcp_json(tmp_path / "mcp.json", test=[str(TEST_SERVER)])
    place = f"{TITLE}{C1_CSI}Oslo"
    arguments = json.dumps({"location": place})  # the model escapes them in JSON; the tool's result holds them raw
    call = f"<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{arguments}<|call|>"
    replay = recording(tmp_path / "r.txt", call, "<|channel|>final<|message|>ok<|return|>")
    code, out, err = ask(capsys, "--replay", str(replay), "--mcp-config", str(config), "--yes", "q")
    assert code == 0 and no_raw_control(out, err)
    assert re.search(r"\[tool result\] functions.get_weather \(done, [\d.]+ s\): ␛]0;owned␇�2JOslo: ", err), err
    code, out, err = ask(capsys, "--replay", str(replay), "--mcp-config", str(config), "--yes", "--json", "q")
    assert code == 0 and no_raw_control(out, err)
    (result,) = [json.loads(line) for line in out.splitlines() if '"tool_result"' in line]
    assert str(result["text"]).startswith(place + ": ")


def test_an_engine_error_line_shows_escapes_as_symbols(capsys: pytest.CaptureFixture[str]) -> None:
    fixture = load_fixture("vllm")
    refusal = {"status": 400, "body": {"error": {"message": f"bad {TITLE}{C1_CSI} request", "code": 400}}}
    engine = FakeEngine(fixture, overrides={f"POST {fixture['generate_path']}": refusal})
    try:
        code, out, err = ask(capsys, "--url", engine.url, "--engine", "vllm", "hi")
    finally:
        engine.close()
    assert code != 0 and no_raw_control(out, err)
    assert err.startswith("error: ") and "bad ␛]0;owned␇�2J request" in err and err.count("\n") == 1


def test_the_approval_prompt_folds_blank_runs_so_no_line_hides_below_them(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HARMONY_CHAT_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setattr(sys, "stdin", TerminalInput("n\n"))
    code_text = "print('hello, harmless')" + "\n" * 121 + "import os; os.system('true')"
    call = f"<|channel|>analysis to=python<|message|>{code_text}<|call|>"
    replay = recording(tmp_path / "r.txt", call, "<|channel|>final<|message|>ok<|return|>")
    code, _, err = ask(capsys, "--replay", str(replay), "--tool", "python", "q")
    prompt = err[err.index("[approve] 122 lines") :]
    assert code == 0
    assert prompt.startswith(
        "[approve] 122 lines, 120 blank ones folded:\n    print('hello, harmless')\n    ⋯ 120 blank lines ⋯\n"
        "    import os; os.system('true')\n[approve] run it?"
    )
