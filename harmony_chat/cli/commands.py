"""The ``ask`` and ``bench`` commands (Typer glue; the work happens in the modules they call)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from harmony_chat.cli.options import ASK, Overrides, chat_flags, setting_option, setting_rule
from harmony_chat.cli.root import app

MAX_RUNS = 1000
"""The most runs ``bench --runs`` makes of each loop."""


@app.command()
@chat_flags(ASK)
def ask(
    invocation: typer.Context,
    prompt: Annotated[str | None, typer.Argument(help="The message; - reads it from stdin.")] = None,
    *,
    overrides: Overrides,
    record: Annotated[Path | None, typer.Option("--record", help="Write the generated tokens here.")] = None,
    conversation: Annotated[
        Path | None, typer.Option("--conversation", help="A harmony Conversation JSON to continue.")
    ] = None,
    save_conversation: Annotated[
        Path | None, typer.Option("--save-conversation", help="Save the conversation (JSON) after the turn.")
    ] = None,
    show_prompt: Annotated[bool, typer.Option("--show-prompt", help="Print the rendered prompt on stderr.")] = False,
    raw: Annotated[
        bool, typer.Option("--raw", help="Print every generated token, special tokens spelled out.")
    ] = False,
    json_lines: Annotated[
        bool, typer.Option("--json", help="Print JSON Lines events; the last line has stats.")
    ] = False,
) -> None:
    """Ask one question; the final answer streams to stdout (tool calls run as in the app)."""
    from harmony_chat.cli.ask import AskRequest, OutputMode, run_ask

    options = overrides.chat_options(invocation)
    options.record = record
    if not overrides.given("ui.reasoning"):  # the app's choice (ctrl+t saves it) never changes a script's output
        options.settings.ui.reasoning = "hidden"
    show_reasoning = options.settings.ui.reasoning == "raw"
    output = OutputMode(show_prompt=show_prompt, show_reasoning=show_reasoning, raw=raw, json=json_lines)
    request = AskRequest(
        prompt=prompt,
        options=options,
        output=output,
        conversation=conversation,
        save_conversation=save_conversation,
        approve_given=overrides.given("tools.approve"),
        effort=options.settings.chat.effort if overrides.given("chat.effort") else None,
        instructions=options.settings.chat.instructions if overrides.given("chat.instructions") else None,
    )
    raise typer.Exit(run_ask(request))


@app.command()
def bench(
    model: Annotated[Path | None, typer.Option("--model", "-m", help="A gpt-oss GGUF file.")] = None,
    tiny: Annotated[
        bool,
        typer.Option("--tiny", help="A tiny random-weight gpt-oss GGUF, made here once (no download needed)."),
    ] = False,
    url: Annotated[
        str | None, typer.Option("--url", help="A serving engine: compare its raw token stream with the pipeline.")
    ] = None,
    engine: Annotated[str | None, setting_option("model.engine", "--engine")] = None,
    api_key: Annotated[str | None, setting_option("model.api_key", "--api-key")] = None,
    serve_url: Annotated[
        str | None,
        typer.Option("--serve", metavar="URL", help="A running harmony-chat serve: streams at once through it."),
    ] = None,
    engine_url: Annotated[
        str | None,
        typer.Option("--engine-url", metavar="URL", help="With --serve: the engine behind it, measured side by side."),
    ] = None,
    concurrency: Annotated[
        str, typer.Option("--concurrency", metavar="LIST", help="With --serve: streams at once, e.g. 1,4,16.")
    ] = "1,4,16",
    fake_engine: Annotated[
        bool,
        typer.Option("--fake-engine", help="Run a synthetic vLLM on 127.0.0.1 for --serve benchmarks (until Ctrl+C)."),
    ] = False,
    port: Annotated[int, typer.Option("--port", min=0, max=65535, help="With --fake-engine: its port.")] = 8100,
    rate: Annotated[
        float, typer.Option("--rate", min=1.0, max=100000.0, help="With --fake-engine: tokens/s per stream.")
    ] = 200.0,
    tokens_per_event: Annotated[
        int, typer.Option("--tokens-per-event", min=1, max=64, help="With --fake-engine: token ids per event.")
    ] = 1,
    ttft_ms: Annotated[
        float, typer.Option("--ttft-ms", min=0.0, max=60000.0, help="With --fake-engine: ms to the first token.")
    ] = 15.0,
    tui: Annotated[bool, typer.Option("--tui", help="Benchmark the chat app under load (no model needed).")] = False,
    tui_tokens: Annotated[
        int,
        typer.Option(
            "--tui-tokens", min=100, callback=setting_rule("sampling.max_tokens"), help="Answer length for --tui."
        ),
    ] = 20000,
    tokens: Annotated[
        int,
        typer.Option(
            "--tokens", min=8, callback=setting_rule("sampling.max_tokens"), help="Tokens to generate per run."
        ),
    ] = 256,
    runs: Annotated[
        int, typer.Option("--runs", min=1, max=MAX_RUNS, help="Runs of each loop (medians are reported).")
    ] = 3,
    ctx: Annotated[int, setting_option("model.context", "--ctx")] = 4096,  # bench's default: a smaller context
    gpu_layers: Annotated[int, setting_option("model.gpu_layers", "--gpu-layers")] = 0,
    threads: Annotated[int | None, setting_option("model.threads", "--threads")] = None,
    chat_tokens: Annotated[
        int,
        typer.Option(
            "--chat-tokens", callback=setting_rule("sampling.max_tokens"), help="Tokens per turn of the chat."
        ),
    ] = 64,
    long_tokens: Annotated[
        int,
        typer.Option(
            "--long-tokens",
            min=8,
            callback=setting_rule("sampling.max_tokens"),
            help="Long answers of the per-token breakdown.",
        ),
    ] = 4096,
    json_output: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """Measure the model and every layer harmony-chat adds on top of it (--tui: the chat app)."""
    if model is not None and tiny:
        raise typer.BadParameter("give --model PATH or --tiny, not both")
    if fake_engine:
        from harmony_chat.bench.fake_engine import FakeEngineSettings, run_fake_engine

        run_fake_engine(FakeEngineSettings(rate, tokens_per_event, ttft_ms / 1000), port)
        return
    if model is None and not tiny and url is None and not tui and serve_url is None:
        raise typer.BadParameter(
            "give --model PATH, --tiny, --url URL, --serve URL, --tui, or several (or --fake-engine alone)"
        )
    if tiny:
        from harmony_chat.bench.tiny_model import tiny_model_path

        model = tiny_model_path(lambda line: print(line, file=sys.stderr, flush=True))
    if model is not None:
        from harmony_chat.bench.runner import BenchSettings, print_report, run_bench

        settings = BenchSettings(model, tokens, runs, ctx, gpu_layers, threads, chat_tokens, long_tokens)
        report = run_bench(settings, lambda line: print(line, file=sys.stderr, flush=True))
        print_report(report, sys.stdout, json_output)
    if url is not None:
        from harmony_chat.backends.remote import create_remote_backend
        from harmony_chat.bench.remote_bench import compare_remote, print_remote_report

        backend = create_remote_backend(url, engine, api_key)
        try:
            backend.load()
            print_remote_report(compare_remote(backend, tokens=tokens, runs=runs), sys.stdout, json_output)
        finally:
            backend.close()
    if serve_url is not None:
        from harmony_chat.bench.serve_bench import bench_serve

        bench_serve(serve_url, engine_url, concurrency, engine, api_key, tokens, runs, json_output)
    if tui:
        from harmony_chat.tui.bench import print_tui_report, run_tui_bench

        paced = min(4000, tui_tokens)
        print_tui_report(run_tui_bench(tui_tokens, paced_tokens=paced), sys.stdout, json_output)
