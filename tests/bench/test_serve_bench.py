"""``bench --serve``'s arithmetic and report, without servers (the real runs are in ``test_serve_parallel``)."""

from __future__ import annotations

import io
import json
import re

import pytest

from harmony_chat.bench.serve_bench import (
    LevelResult,
    RoundResult,
    ServeBenchError,
    ServeBenchReport,
    StreamResult,
    bench_prompt,
    parse_concurrency,
    print_serve_report,
    summarize,
)


def test_concurrency_lists_are_whole_numbers_from_1_to_256() -> None:
    assert parse_concurrency("1,4,16") == (1, 4, 16)
    assert parse_concurrency(" 8 , 2") == (8, 2)
    for bad in ("", "0", "1,,4", "four", "257", "-1", "1.5", "٣"):
        with pytest.raises(ServeBenchError, match="--concurrency takes whole numbers"):
            parse_concurrency(bad)


def test_every_stream_of_a_level_gets_a_prompt_of_its_own() -> None:
    assert len({bench_prompt(index) for index in range(16)}) == 16


def test_a_round_counts_all_tokens_over_the_time_to_the_last_one() -> None:
    result = RoundResult(
        (StreamResult(100, 0.1, 2.0), StreamResult(60, 0.3, 4.0), StreamResult(0, None, None, "HTTP 500"))
    )
    assert (result.tokens, result.wall_s, result.tokens_per_s) == (160, 4.0, 40.0)
    assert RoundResult((StreamResult(0, None, None, "refused"),)).tokens_per_s == 0.0


def test_a_side_is_the_median_of_its_rounds_with_first_token_percentiles_over_all_streams() -> None:
    rounds = [
        RoundResult(tuple(StreamResult(10, ttft, 1.0) for ttft in (0.01, 0.02))),  # 20 tokens/s
        RoundResult(tuple(StreamResult(10, ttft, 0.5) for ttft in (0.03, 0.04))),  # 40 tokens/s
        RoundResult((StreamResult(10, 0.05, 2.0), StreamResult(4, 1.0, 2.0, "the stream ended early"))),  # 7
    ]
    figures = summarize(rounds, prompt_tokens=83)
    assert (figures.tokens_per_s, figures.tokens_per_s_low, figures.tokens_per_s_high) == (20.0, 7.0, 40.0)
    assert figures.ttft_median_s == pytest.approx(0.035) and figures.ttft_p95_s == 1.0
    assert figures.errors == 1 and figures.tokens_per_stream == pytest.approx(54 / 6) and figures.prompt_tokens == 83


def _report(model: str) -> ServeBenchReport:
    serve = summarize([RoundResult((StreamResult(96, 0.02, 1.0),))])
    engine = summarize([RoundResult((StreamResult(100, 0.01, 1.0),))])
    return ServeBenchReport(
        "http://127.0.0.1:8000", model, "llama-server", "127.0.0.1:8080", 256, 1, (LevelResult(1, serve, engine),)
    )


def test_the_report_gives_the_ratio_as_json() -> None:
    out = io.StringIO()
    print_serve_report(_report("pocket-gpt-oss"), out, as_json=True)
    data = json.loads(out.getvalue())
    assert data["levels"][0]["ratio"] == 0.96 and data["levels"][0]["serve"]["tokens_per_s"] == 96.0
    assert data["engine_host"] == "127.0.0.1:8080" and data["max_tokens"] == 256


def test_the_table_shows_what_the_servers_named_as_text() -> None:
    out = io.StringIO()
    print_serve_report(_report("[bold]gpt\x1b]0;owned\x07\x9b2J"), out, as_json=False)
    text = out.getvalue()
    assert not re.search(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]", text)
    assert "[bold]gpt␛]0;owned␇�2J" in text and "96.0%" in text


def test_a_failed_stream_is_named_under_the_table_with_what_it_reported_as_text() -> None:
    serve = summarize([RoundResult((StreamResult(96, 0.02, 1.0),))])
    engine = summarize(
        [RoundResult((StreamResult(100, 0.01, 1.0), StreamResult(3, 0.01, 0.2, "HTTP 503: [red]busy\x1b[2J")))]
    )
    report = ServeBenchReport(
        "http://127.0.0.1:8000", "m", "llama-server", "h", 256, 1, (LevelResult(2, serve, engine),)
    )
    out = io.StringIO()
    print_serve_report(report, out, as_json=False)
    text = out.getvalue()
    assert "2 streams, engine: 1 failed; the first: HTTP 503: [red]busy␛[2J" in text
    assert "serve: " not in text.split("the first:")[0].splitlines()[-1]  # serve had no failure to name
    assert engine.first_error == "HTTP 503: [red]busy\x1b[2J" and serve.first_error is None


def test_the_ratio_is_the_median_of_each_rounds_ratio_to_the_engines_round_beside_it() -> None:
    """The machine sped up after the first round: pair by pair serve keeps 96 %; the medians' ratio says 50 %."""
    serve = summarize([RoundResult((StreamResult(n, 0.01, 1.0),)) for n in (96, 192, 100)])
    engine = summarize([RoundResult((StreamResult(n, 0.01, 1.0),)) for n in (100, 200, 210)])
    assert LevelResult(1, serve, engine).ratio == pytest.approx(0.96)
    assert serve.tokens_per_s / engine.tokens_per_s == pytest.approx(0.5)
    uneven = LevelResult(1, serve, summarize([RoundResult((StreamResult(200, 0.01, 1.0),))]))
    assert uneven.ratio == pytest.approx(0.5)  # rounds that do not pair up: the medians' ratio (100 / 200)
