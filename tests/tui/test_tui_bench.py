"""``harmony-chat bench --tui`` runs and reports sane figures (speed itself is not asserted)."""

from __future__ import annotations

import json

import pytest

from harmony_chat.cli import main
from harmony_chat.tui.bench import long_answer, run_tui_bench


def test_long_answer_is_markdown_heavy(encoding: object) -> None:
    tokens = long_answer(encoding, 2000)
    text = encoding.decode(tokens)  # type: ignore[attr-defined]
    assert len(tokens) >= 2000 and text.startswith("<|channel|>final<|message|>") and text.endswith("<|return|>")
    assert "```python" in text and "| name | value |" in text and "- second item" in text


def test_tui_bench_reports_every_figure() -> None:
    result = run_tui_bench(tokens=600, paced_tokens=300, rate=2000)
    figures = result.as_dict()
    assert figures["tokens"] >= 600 and figures["input_samples"] > 0 and figures["batches"] > 1
    for key in (
        "tokens_per_s",
        "paced_tokens_per_s",
        "input_latency_median_ms",
        "lag_max_ms",
        "rss_mb",
        "first_paint_s",
    ):
        assert figures[key] > 0, key
    assert figures["lag_max_ms"] >= figures["lag_first_quarter_ms"]


def test_bench_command_needs_a_target(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench"]) == 2
    assert "give --model PATH, --tiny, --url URL, --serve URL, --tui, or several" in capsys.readouterr().err


def test_bench_tui_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "--tui", "--tui-tokens", "300", "--json"]) == 0
    figures = json.loads(capsys.readouterr().out)
    assert figures["tokens"] >= 300 and figures["first_paint_s"] > 0
