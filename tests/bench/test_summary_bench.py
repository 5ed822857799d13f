"""The summary's cost as ``bench`` measures it, on the pocket model, and the estimate's formula."""

from __future__ import annotations

import pytest
from openai_harmony import HarmonyEncoding

from harmony_chat.backends.llama_cpp import LlamaCppBackend
from harmony_chat.bench.summary_bench import bench_summaries, summary_seconds
from harmony_chat.chat.summary import summary_prompt
from harmony_chat.demo.pocket import pocket_model_path


def test_the_estimate_adds_the_request_the_summary_and_one_resumed_token() -> None:
    assert summary_seconds(73, 60, 100.0, 10.0) == pytest.approx(74 / 100 + 60 / 10)
    assert summary_seconds(73, 60, 0.0, 10.0) == 0.0


@pytest.mark.llama
def test_bench_measures_the_summary_on_the_pocket_model(encoding: HarmonyEncoding) -> None:
    backend = LlamaCppBackend(pocket_model_path(), context_size=2048)
    backend.load()
    try:
        cost = bench_summaries(backend, encoding, 64)
    finally:
        backend.close()
    assert cost.turns == 5 and cost.summaries >= 1
    assert cost.request_tokens == len(summary_prompt(encoding, []))  # the request, and the analysis' <|end|>
    assert cost.reused_tokens > 60 and cost.summary_tokens > 0 and cost.summary_s > 0
    figures = cost.as_dict(prompt_tps=1000.0, decode_tps=100.0)
    assert figures["estimated_s"] == pytest.approx(cost.estimate_s(1000.0, 100.0), abs=1e-6)
    rows = figures["gpt_oss_20b"]
    assert isinstance(rows, list) and rows[0]["extra_turn_s"] > rows[-1]["extra_turn_s"] > 0
