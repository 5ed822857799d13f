"""``ask`` runs the tool loop: real MCP servers, the pocket model, the python tool, approval modes."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from harmony_chat.cli import main
from tests.tools.mcp_test_server import forecast
from tests.tools.python.helpers import needs_sandbox

ROOT = Path(__file__).resolve().parents[2]
TEST_SERVER = ROOT / "tests" / "tools" / "mcp_test_server.py"
CALL = (
    "<|channel|>analysis<|message|>Need the weather.<|end|>"
    "<|start|>assistant<|channel|>commentary to=functions.{tool} <|constrain|>json<|message|>{args}<|call|>"
)
ANSWER = "<|channel|>final<|message|>Done.<|return|>"


def mcp_json(path: Path, **servers: list[str]) -> Path:
    entries = {name: {"command": sys.executable, "args": args} for name, args in servers.items()}
    path.write_text(json.dumps({"mcpServers": entries}), encoding="utf-8")
    return path


def recording(path: Path, *completions: str) -> Path:
    path.write_text("\n=====\n".join(completions) + "\n", encoding="utf-8")
    return path


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, list[dict[str, object]], str]:
    code = main(["ask", *args, "--json"])
    out, err = capsys.readouterr()
    return code, [json.loads(line) for line in out.splitlines()], err


@pytest.fixture
def weather(tmp_path: Path) -> Path:
    return mcp_json(tmp_path / "mcp.json", weather=["-m", "harmony_chat.demo.weather_server"])


@pytest.mark.llama
def test_pocket_model_calls_the_mcp_weather_tool_and_answers_with_its_result(
    capsys: pytest.CaptureFixture[str], weather: Path
) -> None:
    code = main(["ask", "--demo", "--mcp-config", str(weather), "--yes", "What's the weather in Paris?"])
    out, err = capsys.readouterr()
    assert code == 0
    assert out == "It is 18 °C and sunny in Paris right now.\n"
    assert "[tool result] functions.get_weather (done" in err and '"temperature": 18' in err


@pytest.mark.llama
def test_a_recorded_tool_loop_replays_one_completion_per_step(
    capsys: pytest.CaptureFixture[str], weather: Path, tmp_path: Path
) -> None:
    recorded = tmp_path / "loop.json"
    question = "What's the weather in Tokyo?"
    code = main(["ask", "--demo", "--mcp-config", str(weather), "--yes", "--record", str(recorded), question])
    live = capsys.readouterr().out
    completions = json.loads(recorded.read_text(encoding="utf-8"))
    assert code == 0 and live == "It is 24 °C and cloudy in Tokyo right now.\n"
    assert len(completions) == 2 and completions[0][-1] == 200012  # the call (its grammar switch merged), the answer
    code = main(["ask", "--replay", str(recorded), "--mcp-config", str(weather), "--yes", question])
    assert code == 0 and capsys.readouterr().out == live


def test_approve_none_declines_and_the_model_is_told(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    config = mcp_json(tmp_path / "mcp.json", test=[str(TEST_SERVER)])
    replay = recording(tmp_path / "r.txt", CALL.format(tool="get_weather", args='{"location": "Oslo"}'), ANSWER)
    code, events, _ = run(capsys, "--replay", str(replay), "--mcp-config", str(config), "--approve", "none", "q")
    (result,) = [e for e in events if e["type"] == "tool_result"]
    assert code == 0 and result["status"] == "denied" and "declined" in str(result["text"])
    assert not [e for e in events if e["type"] == "tool_started"]


def test_without_a_terminal_calls_are_declined_unless_approved(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    config = mcp_json(tmp_path / "mcp.json", test=[str(TEST_SERVER)])
    replay = recording(tmp_path / "r.txt", CALL.format(tool="get_weather", args='{"location": "Oslo"}'), ANSWER)
    code, events, err = run(capsys, "--replay", str(replay), "--mcp-config", str(config), "q")
    (result,) = [e for e in events if e["type"] == "tool_result"]
    assert result["status"] == "denied" and "stdin is no terminal" in err
    code, events, _ = run(capsys, "--replay", str(replay), "--mcp-config", str(config), "--approve", "all", "q")
    (result,) = [e for e in events if e["type"] == "tool_result"]
    assert result["status"] == "done" and result["text"] == forecast("Oslo")


def test_max_steps_and_a_failing_server(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    config = mcp_json(tmp_path / "mcp.json", test=[str(TEST_SERVER)], broken=["-c", "import sys; sys.exit(3)"])
    call = CALL.format(tool="get_weather", args='{"location": "Oslo"}')
    replay = recording(tmp_path / "r.txt", call, call, call, ANSWER)
    code, events, err = run(
        capsys, "--replay", str(replay), "--mcp-config", str(config), "--yes", "--max-steps", "2", "q"
    )
    assert code == 0
    assert [e["status"] for e in events if e["type"] == "tool_result"] == ["done", "failed"]
    assert [e["max_steps"] for e in events if e["type"] == "tool_loop_limit"] == [2]
    notices = [line for line in err.splitlines() if line.startswith("[notice]")]
    assert len([line for line in notices if "broken" in line]) == 1  # one notice names the server that failed


def test_malformed_arguments_are_never_run(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    config = mcp_json(tmp_path / "mcp.json", test=[str(TEST_SERVER)])
    broken = CALL.format(tool="get_weather", args='{"location": Oslo}')
    replay = recording(tmp_path / "r.txt", broken, ANSWER)
    code, events, _ = run(capsys, "--replay", str(replay), "--mcp-config", str(config), "--yes", "q")
    (result,) = [e for e in events if e["type"] == "tool_result"]
    assert result["status"] == "failed" and "not valid JSON" in str(result["text"])
    assert not [e for e in events if e["type"] == "tool_started"]


@needs_sandbox
def test_python_tool_runs_code_from_the_reasoning(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HARMONY_CHAT_DATA_DIR", str(tmp_path / "data"))
    code_call = "<|channel|>analysis to=python<|message|>print(1234 * 5678)<|call|>"
    replay = recording(tmp_path / "r.txt", code_call, "<|channel|>final<|message|>7006652<|return|>")
    code, events, _ = run(capsys, "--replay", str(replay), "--tool", "python", "--yes", "q")
    (result,) = [e for e in events if e["type"] == "tool_result"]
    assert code == 0 and result["status"] == "done" and "7006652" in str(result["text"])
