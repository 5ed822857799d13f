"""``bench --url``: the engine's raw token stream and harmony-chat's pipeline, measured side by side."""

from __future__ import annotations

import json
import re

import pytest
from openai_harmony import HarmonyEncoding

from harmony_chat.backends.remote import create_remote_backend
from harmony_chat.bench.remote_bench import BENCH_PROMPT, compare_remote
from harmony_chat.cli import main
from harmony_chat.errors import EngineError
from tests.support.fake_engine import FakeEngine, load_fixture

ANSWER_TOKENS = 16
"""Ids in the fixtures' recorded answer (``…final<|message|>Hello!<|return|>``)."""


@pytest.mark.parametrize("engine", ["vllm", "sglang"])
def test_raw_and_pipeline_runs_side_by_side(encoding: HarmonyEncoding, engine: str) -> None:
    fake = FakeEngine(load_fixture(engine), api_key="bench-key")
    try:
        backend = create_remote_backend(fake.url, engine, api_key="bench-key")
        backend.load()
        result = compare_remote(backend, tokens=64, runs=2)
    finally:
        fake.close()
    assert (result.engine, result.model, result.runs, result.max_tokens) == (engine, "openai/gpt-oss-120b", 2, 64)
    assert result.raw.tokens == result.pipeline.tokens == ANSWER_TOKENS
    assert result.raw.tokens_per_s > 0 and result.pipeline.tokens_per_s > 0 and result.ratio > 0
    requests = fake.generate_requests()
    assert len(requests) == 1 + 2 * 2  # warm-up, then raw and pipeline alternating
    assert all(r.headers["authorization"] == "Bearer bench-key" for r in requests)
    bodies = [json.dumps(r.body, sort_keys=True) for r in requests]
    assert len(set(bodies)) == 1  # the raw stream sends exactly the pipeline's request
    params = requests[0].body if engine == "vllm" else requests[0].body["sampling_params"]
    assert params["ignore_eos"] is True and params["stop_token_ids"] == []  # a stream of the length asked for
    prompt = requests[0].body["prompt" if engine == "vllm" else "input_ids"]
    assert BENCH_PROMPT in encoding.decode(prompt) and result.prompt_tokens == len(prompt)
    figures = result.as_dict()
    assert set(figures) >= {"engine", "host", "raw", "pipeline", "ratio"} and "bench-key" not in json.dumps(figures)


def test_needs_a_run(encoding: HarmonyEncoding) -> None:
    fake = FakeEngine(load_fixture("vllm"))
    try:
        backend = create_remote_backend(fake.url, "vllm")
        backend.load()
        with pytest.raises(EngineError, match="at least one run"):
            compare_remote(backend, runs=0)
    finally:
        fake.close()


def test_the_table_shows_the_engines_model_name_as_text(capsys: pytest.CaptureFixture[str]) -> None:
    fixture = load_fixture("vllm")
    listed = json.loads(json.dumps(fixture["endpoints"]["GET /v1/models"]))
    listed["body"]["data"][0]["id"] = "[bold]gpt-oss\x1b]0;owned\x07\x9b2J"
    fake = FakeEngine(fixture, overrides={"GET /v1/models": listed})
    try:
        code = main(["bench", "--url", fake.url, "--engine", "vllm", "--tokens", "16", "--runs", "1"])
    finally:
        fake.close()
    out, err = capsys.readouterr()
    assert code == 0, err
    assert not re.search(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]", out + err)
    assert "[bold]gpt-oss␛]0;owned␇�2J" in out  # markup and escapes shown as they are
