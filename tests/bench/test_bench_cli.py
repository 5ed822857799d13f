"""``harmony-chat bench`` runs on the tiny GGUF and reports sane, non-zero figures (not speed targets)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from harmony_chat.bench.runner import BENCH_STEPS
from harmony_chat.cli import main


@pytest.mark.llama
def test_bench_reports_every_figure(capsys: pytest.CaptureFixture[str], tiny_gguf: Path) -> None:
    code = main(
        [
            "bench",
            "--model",
            str(tiny_gguf),
            "--tokens",
            "16",
            "--runs",
            "1",
            "--ctx",
            "2048",
            "--json",
            "--chat-tokens",
            "16",
            "--long-tokens",
            "24",
        ]
    )
    report = json.loads(capsys.readouterr().out)
    assert code == 0
    assert report["model"] == "tiny-gpt-oss" and report["device"] == "CPU"
    for key in (
        "prompt_tokens_per_s",
        "bare_decode_tokens_per_s",
        "pipeline_decode_tokens_per_s",
        "decoder_us_per_token",
        "pipeline_ratio",
        "content_bare_decode_tokens_per_s",
        "content_pipeline_decode_tokens_per_s",
        "content_pipeline_ratio",
        "structure_guard_us_per_token",
        "structure_guard_header_us_per_token",
    ):
        assert report[key] > 0, key
    assert report["decoder_tokens"] > 10000 and report["prompt_tokens"] > 50
    assert 0.2 < report["pipeline_ratio"] < 5 and 0.2 < report["content_pipeline_ratio"] < 5
    ours, theirs = report["chat_turns"], report["template_chat_turns"]
    assert [turn["turn"] for turn in ours] == [1, 2, 3, 4, 5] and len(theirs) == 5
    assert ours[0]["evaluated"] == ours[0]["prompt_tokens"] > 0
    for turn in ours[1:]:
        assert 0 < turn["evaluated"] < turn["prompt_tokens"] and turn["ttft_s"] > 0
        assert turn["prompt_tokens"] - turn["evaluated"] == round(turn["reused_share"] * turn["prompt_tokens"])
    assert all(turn["evaluated"] > 0 and turn["ttft_s"] > 0 for turn in theirs)
    assert report["grammar_free_ms_per_token"] > 0 and report["grammar_constrained_ms_per_token"] > 0
    assert report["grammar_extra_ms_per_token"] == pytest.approx(
        report["grammar_constrained_ms_per_token"] - report["grammar_free_ms_per_token"], abs=0.002
    )
    costs = report["token_costs"]
    assert [(row["tokens"], row["response_format"]) for row in costs] == [
        (16, False),
        (16, True),
        (24, False),
        (24, True),
    ]
    for row in costs:
        assert row["tokens_per_s"] > 0 and row["decoder_us"] > 0 and row["event_dispatch_us"] > 0, row
        assert (row["json_guard_us"] > 0) == row["response_format"], row
    assert report["structured_tokens"] == 24 and report["structured_ratio"] > 0
    summary = report["summary"]
    assert summary["turns"] == 5 and [row["decode_tokens_per_s"] for row in summary["gpt_oss_20b"]] == [10, 50, 200]


@pytest.mark.llama
def test_bench_table(capsys: pytest.CaptureFixture[str], tiny_gguf: Path) -> None:
    arguments = [
        "bench",
        "--model",
        str(tiny_gguf),
        "--tokens",
        "8",
        "--runs",
        "1",
        "--ctx",
        "1024",
        "--long-tokens",
        "16",
    ]
    assert main(arguments) == 0
    out = capsys.readouterr().out
    assert "pipeline / bare" in out and "µs/token" in out and "five-turn chat" in out and "JSON grammar" in out
    assert "per-token cost" in out and "under a response format" in out
    assert "harmony's grammar" in out


def test_bench_needs_a_real_model(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert main(["bench", "--model", str(tmp_path / "none.gguf")]) == 1
    assert "model file not found" in capsys.readouterr().err


@pytest.mark.llama
def test_bench_table_shows_the_models_name_as_text(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, ranks: list[bytes], merges: list[str]
) -> None:
    from harmony_chat.gguf.writer import GptOssShape, random_tensors, write_gpt_oss_gguf

    shape = GptOssShape()
    name = "[bold]tiny\x1b]0;owned\x07\x9b2J"
    model = write_gpt_oss_gguf(
        tmp_path / "named.gguf", shape, random_tensors(shape, seed=1), ranks, merges=merges, name=name
    )
    args = ["--tokens", "8", "--runs", "1", "--ctx", "1024", "--chat-tokens", "4", "--long-tokens", "16"]
    assert main(["bench", "--model", str(model), *args]) == 0
    out, err = capsys.readouterr()
    assert not re.search(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]", out + err)
    assert "[bold]tiny␛]0;owned␇�2J" in out  # markup and escapes shown as they are


@pytest.mark.llama
def test_bench_tiny_makes_its_model_once_in_the_cache(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HARMONY_CHAT_CACHE_DIR", str(tmp_path / "cache"))
    args = ["bench", "--tiny", "--tokens", "8", "--runs", "1", "--ctx", "1024", "--chat-tokens", "4"]
    assert main([*args, "--long-tokens", "16", "--json"]) == 0
    out, err = capsys.readouterr()
    assert json.loads(out)["model"] == "tiny-gpt-oss"
    (made,) = (tmp_path / "cache").rglob("tiny-gpt-oss-*.gguf")
    # what runs and how far, on stderr whatever stdout is (a file, here): never minutes of silence
    assert err.splitlines()[0] == f"making the tiny benchmark model once (about a minute): {made}"
    assert err.splitlines()[1:] == [f"bench {n}/{len(BENCH_STEPS)}: {name}" for n, name in enumerate(BENCH_STEPS, 1)]
    assert made.stat().st_mode & 0o077 == 0
    stamp = made.stat().st_mtime_ns
    assert main([*args, "--long-tokens", "16", "--json"]) == 0
    out, err = capsys.readouterr()
    assert json.loads(out)["model"] == "tiny-gpt-oss" and "making the tiny" not in err
    assert made.stat().st_mtime_ns == stamp  # made once, then reused


def test_bench_takes_a_model_or_tiny_not_both(capsys: pytest.CaptureFixture[str], tiny_gguf: Path) -> None:
    assert main(["bench", "--tiny", "--model", str(tiny_gguf)]) == 2
    assert "give --model PATH or --tiny, not both" in capsys.readouterr().err
