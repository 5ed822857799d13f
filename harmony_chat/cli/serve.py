"""``harmony-chat serve``: the OpenAI-compatible server over any model harmony-chat runs.

The model options are the app's (the config file's settings with the command line's on top,
through :mod:`~harmony_chat.cli.options` and the one factory); the server itself is
:func:`harmony_chat.server.app.run_server`. ``--api-key`` here is the key clients must send to
this server; a remote engine's own key (``--url``) comes from the config file or
``HARMONY_CHAT_API_KEY``.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Annotated

import typer

from harmony_chat.cli.options import SERVE, Overrides, chat_flags
from harmony_chat.cli.root import app
from harmony_chat.server import SERVE_API_KEY_ENV
from harmony_chat.server.backend_pool import DEFAULT_ENGINE_PARALLEL, MAX_PARALLEL, ParallelError
from harmony_chat.server.connections import DEFAULT_HEADER_TIMEOUT_S, DEFAULT_MAX_CONNECTIONS
from harmony_chat.server.response_store import DEFAULT_STORE_LIMITS
from harmony_chat.server.workers import (
    AUTO_WORKERS_CAP,
    MAX_WORKERS,
    Supervisor,
    WorkersError,
    WorkerSpec,
    default_workers,
)
from harmony_chat.text_safety import visible

if TYPE_CHECKING:
    from pathlib import Path

    from harmony_chat.backends.base import ModelBackend

MAX_QUEUE = 10_000
"""The most requests ``--max-queue`` lets wait (each holds a connection open while it waits)."""


@app.command()
@chat_flags(SERVE)
def serve(
    invocation: typer.Context,
    host: Annotated[
        str, typer.Option("--host", help="Address to listen on; not loopback needs --api-key.")
    ] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", min=0, max=65535, help="Port to listen on.")] = 8000,
    api_key: Annotated[
        str | None,
        typer.Option("--api-key", envvar=SERVE_API_KEY_ENV, help="The bearer key clients must send to this server."),
    ] = None,
    name: Annotated[str | None, typer.Option("--name", help="The model name clients ask for.")] = None,
    max_queue: Annotated[
        int, typer.Option("--max-queue", min=0, max=MAX_QUEUE, help="Requests that may wait for the model.")
    ] = 32,
    parallel: Annotated[
        int | None,
        typer.Option(
            "--parallel",
            metavar="N",
            min=1,
            max=MAX_PARALLEL,
            help="Generations at once on a serving engine (--url); default: its slots (llama-server), 16 (vLLM, "
            "SGLang). The in-process model runs one at a time.",
        ),
    ] = None,
    workers: Annotated[
        int | None,
        typer.Option(
            "--workers",
            metavar="N",
            min=1,
            max=MAX_WORKERS,
            help="Processes serving on the port, each with --parallel places (vLLM, SGLang); default: one per "
            f"core up to {AUTO_WORKERS_CAP} there, 1 for llama-server and the in-process model.",
        ),
    ] = None,
    allow_host: Annotated[
        list[str] | None,
        typer.Option("--allow-host", metavar="NAME", help="A host name clients may use beside localhost (repeatable)."),
    ] = None,
    max_connections: Annotated[
        int, typer.Option("--max-connections", min=1, help="Connections held at once.")
    ] = DEFAULT_MAX_CONNECTIONS,
    header_timeout: Annotated[
        float, typer.Option("--header-timeout", min=0.1, help="Seconds a client may take to send a request's headers.")
    ] = DEFAULT_HEADER_TIMEOUT_S,
    store_path: Annotated[
        str | None,
        typer.Option(
            "--store-path",
            metavar="FILE",
            help="SQLite file of stored responses and conversations (:memory: keeps them until the server stops).",
        ),
    ] = None,
    store_item_kb: Annotated[
        int,
        typer.Option("--store-item-kb", metavar="KIB", min=1, max=1024**2, help="KiB one conversation item may hold."),
    ] = DEFAULT_STORE_LIMITS.item_bytes // 1024,
    store_conversation_mb: Annotated[
        int,
        typer.Option(
            "--store-conversation-mb", metavar="MIB", min=1, max=1024**2, help="MiB of items one conversation may hold."
        ),
    ] = DEFAULT_STORE_LIMITS.conversation_bytes // 1024**2,
    store_max_mb: Annotated[
        int, typer.Option("--store-max-mb", metavar="MIB", min=1, max=1024**2, help="MiB the whole store may hold.")
    ] = DEFAULT_STORE_LIMITS.store_bytes // 1024**2,
    *,
    overrides: Overrides,
) -> None:
    """Serve the model to OpenAI clients: /v1/chat/completions, /v1/responses, /v1/models."""
    from harmony_chat.chat.factory import load_model
    from harmony_chat.chat.model_source import Engine
    from harmony_chat.server.app import ServerLimits, run_server
    from harmony_chat.server.backend_pool import pool_for
    from harmony_chat.server.connections import fit_connections
    from harmony_chat.server.harmony_request import ServedModel
    from harmony_chat.server.limits import check_bind
    from harmony_chat.server.listening import listen
    from harmony_chat.server.response_store import StoreLimits, store_location

    check_bind(host, api_key)  # before loading anything
    options = overrides.chat_options(invocation)
    engine = isinstance(options.source, Engine)  # clashing model options are said here, before anything loads
    if parallel is not None and parallel > 1 and not engine:
        raise ParallelError(
            "--parallel needs a serving engine (--url): the in-process model runs one generation at a time; "
            "serve the GGUF with llama-server --parallel N and point --url at it"
        )
    if workers is not None and workers > 1 and not engine:
        raise WorkersError(
            f"--workers {workers}: the in-process model runs in one worker (it has one context); several "
            "workers serve a vLLM or SGLang engine (--url)"
        )
    limits = ServerLimits(
        max_queue=max_queue,
        parallel=parallel,
        max_connections=max_connections,
        header_timeout_s=header_timeout,
        store_path=store_location(store_path),
        store_limits=StoreLimits(
            item_bytes=store_item_kb * 1024,
            conversation_bytes=store_conversation_mb * 1024**2,
            store_bytes=store_max_mb * 1024**2,
        ),
    )
    limits.max_connections, limits.backlog = fit_connections(limits.max_connections, limits.backlog)
    loaded = load_model(options, lambda step: print(visible(f"{step}..."), file=sys.stderr))
    count = _worker_count(workers, loaded.backend, limits.store_path)
    if count > 1:
        _serve_in_workers(
            WorkerSpec(
                options,
                name,
                host,
                port,
                api_key,
                limits,
                tuple(allow_host or ()),
                parallel or DEFAULT_ENGINE_PARALLEL,
            ),
            count,
            name or loaded.info.name,
            loaded.backend,
        )
        return
    with (
        ServedModel(
            loaded.backend,
            loaded.encoding,
            name or loaded.info.name,
            sampling=options.sampling,
            effort=options.settings.chat.effort,
            start_date=options.conversation_date,
            context_size=loaded.info.context_size,
        ) as served,
        listen(host, port, limits.backlog) as sock,  # bound before "serving" is said: a port in use is one line
    ):
        pool = pool_for(loaded.backend, parallel)
        at_once = "1 generation at a time" if pool.size == 1 else f"{pool.size} generations at once"
        print(
            visible(f"serving {served.name} at http://{host}:{port}/v1, {at_once} ({pool.reason}); Ctrl+C stops"),
            file=sys.stderr,
        )
        run_server(
            served,
            host=host,
            port=port,
            api_key=api_key,
            limits=limits,
            allow_hosts=tuple(allow_host or ()),
            pool=pool,
            sock=sock,
        )


def _worker_count(asked: int | None, backend: ModelBackend, store_path: Path | None) -> int:
    """How many workers serve (``--workers``, else the default for the backend).

    Raises:
        WorkersError: more than one asked for where the backend or an in-memory store allows one.
    """
    from harmony_chat.backends.remote.sglang import SglangBackend
    from harmony_chat.backends.remote.vllm import VllmBackend

    splittable = isinstance(backend, VllmBackend | SglangBackend)
    count = asked or default_workers(splittable)
    if count > 1 and not splittable:
        raise WorkersError(
            f"--workers {count}: {backend.name} runs in one worker (llama-server pins each generation to a slot "
            "of its own, the in-process model has one context); vLLM and SGLang can be served by several"
        )
    if count > 1 and store_path is None:
        if asked:
            raise WorkersError(f"--workers {count}: an in-memory store (:memory:) cannot be shared; give a file")
        return 1
    return count


def _serve_in_workers(spec: WorkerSpec, count: int, model: str, backend: ModelBackend) -> None:
    """Bind, make the store's schema once, list the server, and run ``count`` workers until stopped."""
    from harmony_chat.server.listening import listen
    from harmony_chat.server.registry import register, unregister
    from harmony_chat.server.response_store import ServerStore

    backend.close()  # each worker connects on its own
    limits = spec.limits
    ServerStore(limits.store_path, limits=limits.store_limits).close()  # the schema, made once before they share it
    with listen(spec.host, spec.port, limits.backlog) as sock:
        registration = register(spec.host, spec.port, model, api_key=bool(spec.api_key), workers=count)
        print(
            visible(
                f"serving {model} at http://{spec.host}:{spec.port}/v1 in {count} workers, up to {spec.parallel} "
                "generations at once each (the engine schedules them); Ctrl+C stops"
            ),
            file=sys.stderr,
        )
        try:
            Supervisor(spec, count, sock).run()
        finally:
            unregister(registration)
