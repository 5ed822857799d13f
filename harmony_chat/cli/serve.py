"""``harmony-chat serve``: the OpenAI-compatible server over any model harmony-chat runs.

The model options are the app's (the config file's settings with the command line's on top,
through :class:`~harmony_chat.chat.options.ChatOptions` and the one factory); the server itself
is :func:`harmony_chat.server.app.run_server`.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from harmony_chat.server import API_KEY_ENV


def serve(
    host: Annotated[
        str, typer.Option("--host", help="Address to listen on; not loopback needs --api-key.")
    ] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", min=0, max=65535, help="Port to listen on.")] = 8000,
    api_key: Annotated[
        str | None, typer.Option("--api-key", envvar=API_KEY_ENV, help=f"Require this bearer key (or ${API_KEY_ENV}).")
    ] = None,
    model: Annotated[Path | None, typer.Option("--model", "-m", help="A gpt-oss GGUF file.")] = None,
    hf_repo: Annotated[str | None, typer.Option("--hf-repo", help="Hugging Face repository to download from.")] = None,
    hf_file: Annotated[str | None, typer.Option("--hf-file", help="File in --hf-repo to download.")] = None,
    replay: Annotated[Path | None, typer.Option("--replay", help="Play back a recorded stream.")] = None,
    demo: Annotated[bool, typer.Option("--demo", help="Serve the bundled pocket gpt-oss.")] = False,
    url: Annotated[str | None, typer.Option("--url", help="A llama-server, vLLM or SGLang engine to drive.")] = None,
    engine: Annotated[str | None, typer.Option("--engine", help="The engine at --url (default: detect).")] = None,
    name: Annotated[str | None, typer.Option("--name", help="The model name clients ask for.")] = None,
    effort: Annotated[str | None, typer.Option("--effort", "-e", help="Default reasoning effort.")] = None,
    temperature: Annotated[float | None, typer.Option("--temperature", min=0.0, help="Default temperature.")] = None,
    max_tokens: Annotated[int | None, typer.Option("--max-tokens", min=1, help="Default answer limit.")] = None,
    ctx: Annotated[int | None, typer.Option("--ctx", min=256, help="Context size in tokens.")] = None,
    gpu_layers: Annotated[int | None, typer.Option("--gpu-layers", help="Layers to offload (-1: all).")] = None,
    threads: Annotated[int | None, typer.Option("--threads", min=1, help="CPU threads.")] = None,
    max_queue: Annotated[int, typer.Option("--max-queue", min=0, help="Requests that may wait for the model.")] = 32,
    config: Annotated[Path | None, typer.Option("--config", help="Use this config file.")] = None,
) -> None:
    """Serve the model to OpenAI clients: /v1/chat/completions, /v1/responses, /v1/models."""
    from harmony_chat.chat.factory import load_model
    from harmony_chat.chat.options import ChatOptions
    from harmony_chat.config import load_settings
    from harmony_chat.harmony.effort import parse_effort
    from harmony_chat.server.app import ServerLimits, run_server
    from harmony_chat.server.limits import check_bind
    from harmony_chat.server.transcript import ServedModel

    check_bind(host, api_key)  # before loading anything
    try:
        chosen_effort = parse_effort(effort) if effort is not None else None
    except ValueError as error:
        raise typer.BadParameter(str(error)) from error
    options = ChatOptions.from_settings(
        load_settings(config),
        model=model,
        hf_repo=hf_repo,
        hf_file=hf_file,
        replay=replay,
        demo=demo,
        url=url,
        engine=engine,
        effort=chosen_effort,
        temperature=temperature,
        max_tokens=max_tokens,
        context=ctx,
        gpu_layers=gpu_layers,
        threads=threads,
    )
    loaded = load_model(options, lambda step: print(f"{step}...", file=sys.stderr))
    start_date = options.start_date
    if options.uses_pocket and start_date is None:
        from harmony_chat.pocket import POCKET_DATE

        start_date = POCKET_DATE
    served = ServedModel(
        loaded.backend,
        loaded.encoding,
        name or loaded.info.name,
        sampling=options.sampling,
        effort=options.effort,
        start_date=start_date,
        context_size=loaded.info.context_size,
    )
    print(f"serving {served.name} at http://{host}:{port}/v1 (Ctrl+C stops)", file=sys.stderr)
    try:
        run_server(served, host=host, port=port, api_key=api_key, limits=ServerLimits(max_queue=max_queue))
    finally:
        loaded.backend.close()
