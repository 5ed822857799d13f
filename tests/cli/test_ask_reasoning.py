"""``ask --reasoning hidden|summary|raw`` through replay: what reaches stdout, stderr and ``--json``.

The summarised turn is recorded in three pieces, one per generation call: the turn up to the end
of its analysis (where it is paused for the summary), the summary's completion, the rest.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from openai_harmony import HarmonyEncoding

from harmony_chat.backends.replay import TURN_SEPARATOR
from harmony_chat.chat.summary import summary_prompt
from harmony_chat.cli import main
from tests.helpers import ids

ANALYSIS = "<|channel|>analysis<|message|>Private reasoning about 2+2.<|end|>"
REST = "<|start|>assistant<|channel|>final<|message|>2 + 2 = **4**.<|return|>"
SUMMARY = "I added two and two.<|return|>"


def recording(tmp_path: Path, *turns: str) -> str:
    path = tmp_path / "turns.txt"
    path.write_text(TURN_SEPARATOR.join(turns) + "\n", encoding="utf-8")
    return str(path)


def ask(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["ask", *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_summary_mode_prints_the_summary_on_stderr_and_never_the_reasoning(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    replay = recording(tmp_path, ANALYSIS, SUMMARY, REST)
    code, out, err = ask(capsys, "--replay", replay, "What is 2 + 2?", "--reasoning", "summary")
    assert code == 0 and out == "2 + 2 = **4**.\n"
    assert "[summary] I added two and two.\n" in err
    assert "Private reasoning" not in out + err and "[reasoning]" not in err


@pytest.mark.parametrize("mode", [[], ["--reasoning", "hidden"]])
def test_hidden_mode_shows_neither(capsys: pytest.CaptureFixture[str], tmp_path: Path, mode: list[str]) -> None:
    replay = recording(tmp_path, ANALYSIS + REST, SUMMARY)
    code, out, err = ask(capsys, "--replay", replay, "q", *mode)
    assert code == 0 and out == "2 + 2 = **4**.\n"
    assert "[summary]" not in err and "Private reasoning" not in err and "I added" not in err


@pytest.mark.parametrize("mode", [["--reasoning", "raw"], ["--show-reasoning"]])
def test_raw_mode_shows_the_raw_reasoning_and_no_summary(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, mode: list[str]
) -> None:
    replay = recording(tmp_path, ANALYSIS + REST, SUMMARY)
    code, out, err = ask(capsys, "--replay", replay, "q", *mode)
    assert code == 0 and out == "2 + 2 = **4**.\n"
    assert "[reasoning] Private reasoning about 2+2." in err and "[summary]" not in err


def test_json_reports_the_summary_and_its_cost(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, encoding: HarmonyEncoding
) -> None:
    replay = recording(tmp_path, ANALYSIS, SUMMARY, REST)
    code, out, _ = ask(capsys, "--replay", replay, "q", "--reasoning", "summary", "--json")
    lines = [json.loads(line) for line in out.splitlines()]
    assert code == 0 and "Private reasoning" not in out
    types = [line["type"] for line in lines]
    assert types.index("summary_started") < types.index("summary") < types.index("turn_finished")
    summary = next(line for line in lines if line["type"] == "summary")
    assert summary["text"] == "I added two and two." and summary["error"] is None
    assert summary["part"] == 1 and summary["live"] is False and summary["analysis_tokens"] > 0
    summary_tokens = len(ids(encoding, SUMMARY))
    assert summary["generated_tokens"] == summary_tokens and summary["seconds"] > 0
    request = len(summary_prompt(encoding, [])) - 1  # the summary request after the analysis' <|end|>
    assert summary["prompt_tokens_evaluated"] == request  # the conversation and its analysis came from the cache
    assert summary["prompt_tokens_reused"] == summary["prompt_tokens"] - request > 20
    stats = lines[-1]
    assert stats["type"] == "stats" and stats["summaries"] == 1 and stats["summary_tokens"] == summary_tokens
    assert stats["summary_prompt_tokens_evaluated"] == summary["prompt_tokens_evaluated"]
    assert stats["generated_tokens"] == len(ids(encoding, ANALYSIS + REST))  # the summary's are not counted


def test_a_failed_summary_prints_nothing_and_json_says_why(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    bad = "<|channel|>analysis<|message|>leaked raw thought<|return|>"
    replay = recording(tmp_path, ANALYSIS, bad, REST)
    code, out, err = ask(capsys, "--replay", replay, "q", "--reasoning", "summary")
    assert code == 0 and out == "2 + 2 = **4**.\n"
    assert "[summary]" not in err and "leaked" not in out + err
    replay = recording(tmp_path, ANALYSIS, bad, REST)
    code, out, _ = ask(capsys, "--replay", replay, "q", "--reasoning", "summary", "--json")
    summary = next(json.loads(line) for line in out.splitlines() if '"type": "summary"' in line)
    assert summary["text"] is None and "harmony" in summary["error"] and "leaked" not in out


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["--reasoning", "loud"], "--reasoning takes hidden, summary, raw, not 'loud'"),
        (["--reasoning", "summary", "--show-reasoning"], "--show-reasoning is --reasoning raw"),
    ],
)
def test_bad_reasoning_options_are_one_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, args: list[str], words: str
) -> None:
    code, out, err = ask(capsys, "--replay", recording(tmp_path, ANALYSIS + REST), "q", *args)
    assert code == 2 and out == "" and err.startswith("error: ") and words in err and err.count("\n") == 1


@pytest.mark.parametrize("saved", ["raw", "summary"])
def test_the_apps_saved_reasoning_mode_never_changes_what_ask_prints(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, saved: str
) -> None:
    """``ctrl+t`` in the app saves ``[ui] reasoning``; ``ask`` shows reasoning only when its own flags ask."""
    config = tmp_path / "config.toml"
    config.write_text(f'[ui]\nreasoning = "{saved}"\n', encoding="utf-8")
    code, out, err = ask(capsys, "--config", str(config), "--replay", recording(tmp_path, ANALYSIS + REST), "q")
    assert code == 0 and out == "2 + 2 = **4**.\n"
    assert "Private reasoning" not in err and "[reasoning]" not in err and "[summary]" not in err
    code, _, err = ask(
        capsys, "--config", str(config), "--replay", recording(tmp_path, ANALYSIS + REST), "--show-reasoning", "q"
    )
    assert code == 0 and "[reasoning] Private reasoning about 2+2." in err
