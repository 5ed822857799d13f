"""The HTTP app: routes, request checks, and :func:`run_server` for the ``serve`` command.

``POST /v1/chat/completions``, ``POST /v1/responses`` (and ``GET /v1/responses/{id}`` for a
stored one), the Conversations API (:mod:`~harmony_chat.server.conversations`), ``GET
/v1/models`` and ``/v1/models/{id}``, ``GET /health``. Every failure is an OpenAI-shaped JSON
error; nothing the server does shows a traceback to a client. :class:`RequestGuard` refuses
foreign Host names, foreign web origins and non-JSON bodies before any route runs.
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from pydantic import BaseModel, ValidationError
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from harmony_chat.server.backend_pool import BackendPool, pool_for
from harmony_chat.server.chat_completions import ChatFormatter
from harmony_chat.server.chat_request import ChatRequest, chat_harmony_request
from harmony_chat.server.connections import (
    DEFAULT_BACKLOG,
    DEFAULT_HEADER_TIMEOUT_S,
    DEFAULT_MAX_CONNECTIONS,
    fit_connections,
    guarded_protocol,
)
from harmony_chat.server.conversations import ConversationRoutes, input_items
from harmony_chat.server.errors import ApiError, invalid_request
from harmony_chat.server.generation import TurnRun
from harmony_chat.server.guard import LOOPBACK_HOSTS, RequestGuard, host_rule
from harmony_chat.server.harmony_request import HarmonyRequest, ServedModel, build_session, turn_options
from harmony_chat.server.json_body import parse_object
from harmony_chat.server.limits import (
    DEFAULT_MAX_BODY_BYTES,
    DEFAULT_MAX_QUEUE,
    GenerationGate,
    check_api_key,
    check_bind,
    has_api_key,
    read_body,
)
from harmony_chat.server.log_limits import quiet_repeats
from harmony_chat.server.reasoning_seal import ReasoningSeal
from harmony_chat.server.response_store import (
    DEFAULT_MAX_AGE_S,
    DEFAULT_STORE_SIZE,
    ServerStore,
    StoredResponse,
    StoreFull,
    StoreLimits,
)
from harmony_chat.server.responses_output import ResponseBuilder
from harmony_chat.server.responses_request import (
    LOGPROBS_INCLUDE,
    Item,
    ResponsesRequest,
    load_seal,
    normalise_input,
    responses_harmony_request,
)
from harmony_chat.server.sampling_request import check_sampling
from harmony_chat.server.streaming import (
    EventStream,
    GatedResponse,
    OpenStreams,
    chat_stream,
    collect,
    first_event,
    responses_stream,
)
from harmony_chat.server.summaries import parse_summary, summarizer_for
from harmony_chat.server.turn_output import TurnReader

if TYPE_CHECKING:
    import socket

    import uvicorn

    from harmony_chat.chat.summary import Summarizer
    from harmony_chat.generation.turn import TurnOptions
    from harmony_chat.server.generation import ServedEvent

log = logging.getLogger("harmony_chat.server")
RequestModel = TypeVar("RequestModel", bound=BaseModel)


INLINE_PARSE_BYTES = 65_536
"""A body up to this size is parsed on the event loop (well under a millisecond); a larger one in a worker
thread. A hop to a thread costs a wake-up and a turn at the GIL, which concurrent requests make wait."""


@dataclass(slots=True)
class ServerLimits:
    """Who may call and how much."""

    api_key: str | None = None
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES
    max_queue: int = DEFAULT_MAX_QUEUE
    parallel: int | None = None
    """Generations at once (``--parallel``); None: what the engine reports, 1 for the in-process model."""
    store_size: int = DEFAULT_STORE_SIZE
    """Responses kept for ``previous_response_id``, and conversations kept."""
    store_max_age_s: float = DEFAULT_MAX_AGE_S
    store_path: Path | None = None
    """The SQLite file of stored responses and conversations (None: in memory)."""
    store_limits: StoreLimits = field(default_factory=StoreLimits)
    """The store's bounds in bytes: an item, a conversation, a stored response, the whole store."""
    allowed_hosts: tuple[str, ...] | None = LOOPBACK_HOSTS
    """Host names requests may use (see :func:`~harmony_chat.server.guard.host_rule`); None: any."""
    max_connections: int = DEFAULT_MAX_CONNECTIONS
    """Connections held at once (see :mod:`~harmony_chat.server.connections`)."""
    header_timeout_s: float = DEFAULT_HEADER_TIMEOUT_S
    """Seconds a connection may take to send a request's headers."""
    backlog: int = DEFAULT_BACKLOG
    """Connections the kernel may queue before they are accepted."""
    workers: int = 1
    """Processes serving on the same socket (``--workers``); each has its own places on the model."""


class ApiServerState:
    """What every request shares: the model and its handles, the limits, the gate and the store.

    Args:
        served: the loaded model.
        limits: who may call and how much.
        pool: the handles to generate with (None: :func:`pool_for` the served backend and ``limits.parallel``).

    Raises:
        ParallelError: when ``limits.parallel`` asks for more than the model can run at once.
        StoreError: when the store's file cannot be used.
    """

    def __init__(self, served: ServedModel, limits: ServerLimits, pool: BackendPool | None = None) -> None:
        if served.context_size is None:
            served.context_size = served.backend.info.context_size
        self.served = served
        self.limits = limits
        self.pool = pool or pool_for(served.backend, limits.parallel)
        self.gate = GenerationGate(limits.max_queue, capacity=self.pool.size)
        self.store = ServerStore(
            limits.store_path, size=limits.store_size, max_age_s=limits.store_max_age_s, limits=limits.store_limits
        )
        self.created = int(time.time())
        self.seal = ReasoningSeal(served.name)
        """Seals and opens ``reasoning.encrypted_content`` (its key is loaded when first needed)."""
        self.open_streams = OpenStreams()
        """The event streams being sent (a shutdown cuts them)."""


def _state(request: Request) -> ApiServerState:
    state: ApiServerState = request.app.state.harmony
    return state


def _authorize(request: Request) -> None:
    check_api_key(request, _state(request).limits.api_key)


async def _json(request: Request) -> dict[str, Any]:
    """The body as a checked JSON object, read up to the size limit (the key is checked first)."""
    state = _state(request)
    check_api_key(request, state.limits.api_key)
    raw = await read_body(request, state.limits.max_body_bytes)
    if len(raw) <= INLINE_PARSE_BYTES:
        return parse_object(raw)
    return await run_in_threadpool(parse_object, raw)  # a big body takes a while: not on the event loop


async def _body(request: Request, model: type[RequestModel]) -> RequestModel:
    """Check the key, read at most the size limit, parse JSON, validate, check the model name."""
    state = _state(request)
    data = await _json(request)
    try:
        parsed = model.model_validate(data)
    except ValidationError as error:
        raise invalid_request(error) from None
    name = getattr(parsed, "model", None)
    if name != state.served.name:
        message = f"the model {name!r} does not exist; this server runs {state.served.name!r}"
        raise ApiError(404, message, param="model", code="model_not_found")
    return parsed


async def _generate(
    request: Request,
    harmony_request: HarmonyRequest,
    options: TurnOptions,
    *,
    stream: Callable[[list[ServedEvent], AsyncIterator[list[ServedEvent]]], EventStream] | None,
    consume: Callable[[ServedEvent], object],
    summarizer: Summarizer | None = None,
    on_start: Callable[[TurnRun], object] | None = None,
) -> Response | None:
    """Wait for a place on the model and run the turn: return the streaming response, or None once ``consume`` has all.

    ``on_start`` is given the turn before it starts (a reader that may stop it). The turn's handle
    goes back to the pool, and its place to the gate, once its thread has ended.
    """
    state = _state(request)
    leave = await state.gate.acquire(request.is_disconnected)
    lease = state.pool.lease()

    def release() -> None:
        lease.release()
        leave()

    run = TurnRun(build_session(harmony_request, state.served), lease, options, summarizer)
    if on_start is not None:
        on_start(run)
    try:
        if stream is not None:
            first, batches = await first_event(run)
            return GatedResponse(stream(first, batches), run, release, state.open_streams)
        await collect(run, consume, request.is_disconnected)
    except BaseException:
        run.cancel()
        await run.wait_ended()
        release()
        raise
    await run.wait_ended()
    release()
    return None


async def chat_completions(request: Request) -> Response:
    """``POST /v1/chat/completions``."""
    state = _state(request)
    chat = await _body(request, ChatRequest)
    harmony_request = chat_harmony_request(chat)
    overrides = chat.sampling_overrides()
    check_sampling(overrides, state.served.backend)
    options = turn_options(harmony_request, state.served, overrides)
    include_usage = bool(chat.stream_options and chat.stream_options.include_usage)
    summary = parse_summary(chat.reasoning.summary if chat.reasoning else None, "reasoning.summary")
    formatter = ChatFormatter(
        state.served.name,
        exclude_reasoning=chat.exclude_reasoning,
        include_usage=include_usage,
        summaries=summary is not None,
        logprobs=overrides.get("logprobs") is not None,
        answer_only=harmony_request.response_format is not None,
    )
    reader = TurnReader(harmony_request.function_names, chat.stop_sequences())
    streamed = await _generate(
        request,
        harmony_request,
        options,
        stream=(lambda first, batches: chat_stream(first, batches, reader, formatter)) if chat.stream else None,
        consume=reader.feed,
        summarizer=summarizer_for(summary, state.served.encoding),
        on_start=reader.attach,  # a stop sequence stops the turn
    )
    if streamed is not None:
        return streamed
    if reader.error is not None:
        raise ApiError(500, f"the model failed: {reader.error}")
    return JSONResponse(formatter.completion(reader))


def _history(state: ApiServerState, body: ResponsesRequest) -> list[Item]:
    """The items a response continues from: its previous response's, or its conversation's (canonical)."""
    if body.previous_response_id:
        previous = state.store.get(body.previous_response_id)
        if previous is None:
            message = f"no stored response {body.previous_response_id!r} (it was not stored, or is too old)"
            raise ApiError(404, message, param="previous_response_id", code="previous_response_not_found")
        return list(previous.items)
    conversation_id = body.conversation_id
    if conversation_id is not None:
        items = state.store.items(conversation_id)
        if items is None:
            raise ApiError(404, f"no conversation {conversation_id[:80]!r}", param="conversation", code="not_found")
        return normalise_input(items, state.seal)
    return []


async def responses(request: Request) -> Response:
    """``POST /v1/responses``."""
    state = _state(request)
    body = await _body(request, ResponsesRequest)
    backend = state.served.backend
    body.check_supported(frozenset({LOGPROBS_INCLUDE}) if backend.supports_logprobs else frozenset())
    overrides = body.sampling_overrides()
    check_sampling(overrides, backend)
    summary = parse_summary(body.reasoning.summary_asked if body.reasoning else None, "reasoning.summary")
    if body.uses_seal and not state.seal.ready:
        await run_in_threadpool(load_seal, state.seal)  # its file, once: off the event loop
    continues = body.previous_response_id or body.conversation_id is not None
    history = await run_in_threadpool(_history, state, body) if continues else []  # SQLite, off the loop
    new_items = normalise_input(body.input, state.seal)
    items = history + new_items
    harmony_request = responses_harmony_request(body, items)
    options = turn_options(harmony_request, state.served, overrides)
    builder = ResponseBuilder(body, state.served.name, state.seal)
    reader = TurnReader(harmony_request.function_names)

    def store() -> None:  # in the thread pool: never on the event loop
        """Keep the response (``store``) and add its items to the conversation (``conversation``)."""
        status = builder.status_of(reader)
        if body.store:
            response = builder.response(status, reader)
            try:
                state.store.put(builder.id, StoredResponse(response, items + builder.as_input()))
            except StoreFull as full:
                log.warning("response %s was not stored: %s", builder.id, full)
        if body.conversation_id is not None and status != "failed":
            try:
                state.store.add_items(body.conversation_id, input_items(new_items) + builder.output)
            except StoreFull as full:
                log.warning("conversation %s: %s; this response's items were not added", body.conversation_id, full)

    keeps = body.store or body.conversation_id is not None
    streamed = await _generate(
        request,
        harmony_request,
        options,
        stream=(lambda first, batches: responses_stream(first, batches, reader, builder, store if keeps else None))
        if body.stream
        else None,
        consume=lambda event: builder.events(reader.feed(event)),
        summarizer=summarizer_for(summary, state.served.encoding),
    )
    if streamed is not None:
        return streamed
    if reader.error is not None:
        raise ApiError(500, f"the model failed: {reader.error}")
    if keeps:
        await run_in_threadpool(store)
    return JSONResponse(builder.response(builder.status_of(reader), reader))


async def get_response(request: Request) -> Response:
    """``GET /v1/responses/{id}``: a stored response."""
    state = _state(request)
    check_api_key(request, state.limits.api_key)
    stored = await run_in_threadpool(state.store.get, request.path_params["response_id"])
    if stored is None:
        raise ApiError(404, "no such stored response", code="not_found")
    return JSONResponse(stored.response)


def _model_object(state: ApiServerState) -> dict[str, Any]:
    return {"id": state.served.name, "object": "model", "created": state.created, "owned_by": "harmony-chat"}


async def models(request: Request) -> Response:
    """``GET /v1/models``: the one model this server runs."""
    state = _state(request)
    check_api_key(request, state.limits.api_key)
    return JSONResponse({"object": "list", "data": [_model_object(state)]})


async def model(request: Request) -> Response:
    """``GET /v1/models/{id}``: the model, when ``id`` names it."""
    state = _state(request)
    check_api_key(request, state.limits.api_key)
    name = request.path_params["model_id"]
    if name != state.served.name:
        message = f"the model {name!r} does not exist; this server runs {state.served.name!r}"
        raise ApiError(404, message, param="model", code="model_not_found")
    return JSONResponse(_model_object(state))


async def health(request: Request) -> Response:
    """``GET /health``: the server is up; with the key (or when none is set) also the model and its load.

    ``parallel`` is how many generations run at once and ``parallel_reason`` why (the engine's
    slots, ``--parallel``, or the in-process model's one context); ``generating`` how many run
    now, ``busy`` whether all places are taken, ``waiting`` the line. With ``workers`` above 1
    these are the figures of the worker that answered (each has its share of the places).
    """
    state = _state(request)
    if not has_api_key(request, state.limits.api_key):
        return JSONResponse({"status": "ok"})
    gate = state.gate
    return JSONResponse(
        {
            "status": "ok",
            "model": state.served.name,
            "busy": gate.busy,
            "waiting": gate.waiting,
            "generating": gate.running,
            "parallel": gate.capacity,
            "parallel_reason": state.pool.reason,
            "workers": state.limits.workers,
        }
    )


async def _api_error(request: Request, error: Exception) -> Response:
    assert isinstance(error, ApiError)
    return error.response()


async def _http_error(request: Request, error: Exception) -> Response:
    assert isinstance(error, HTTPException)
    code = "not_found" if error.status_code == 404 else None
    return ApiError(error.status_code, str(error.detail), code=code).response()


async def _unexpected(request: Request, error: Exception) -> Response:
    if isinstance(error, ClientDisconnect):  # the client went away mid-body: its own doing, nobody reads the reply
        log.info("a client left %s before its request body arrived", request.url.path)
        return ApiError(400, "the client disconnected before its request body arrived").response()
    log.error("unexpected error serving %s: %s", request.url.path, error, exc_info=error)
    return ApiError(500, f"internal error: {type(error).__name__}").response()


def create_app(served: ServedModel, limits: ServerLimits | None = None, pool: BackendPool | None = None) -> Starlette:
    """The ASGI app serving ``served`` (an already loaded backend) under ``limits``.

    ``pool`` holds the handles generations run on (None: the served backend's, see :func:`pool_for`).

    Raises:
        ParallelError: when ``limits.parallel`` asks for more than the model can run at once.
        StoreError: when the store's file (``limits.store_path``) cannot be used.
    """
    limits = limits or ServerLimits()
    state = ApiServerState(served, limits, pool)
    routes = [
        Route("/v1/chat/completions", chat_completions, methods=["POST"]),
        Route("/v1/responses", responses, methods=["POST"]),
        Route("/v1/responses/{response_id}", get_response, methods=["GET"]),
        *ConversationRoutes(state.store, _authorize, _json).routes(),
        Route("/v1/models", models, methods=["GET"]),
        Route("/v1/models/{model_id:path}", model, methods=["GET"]),
        Route("/health", health, methods=["GET"]),
    ]
    handlers = {ApiError: _api_error, HTTPException: _http_error, Exception: _unexpected}
    middleware = [Middleware(RequestGuard, allowed_hosts=limits.allowed_hosts)]

    @contextlib.asynccontextmanager
    async def lifespan(_: Starlette) -> AsyncIterator[None]:
        yield
        await state.pool.primary.aclose()  # the engine's pooled connections, on the loop that made them

    app = Starlette(routes=routes, exception_handlers=handlers, middleware=middleware, lifespan=lifespan)
    app.state.harmony = state
    return app


def uvicorn_config(app: Starlette, host: str, port: int, limits: ServerLimits, **options: Any) -> uvicorn.Config:
    """Uvicorn's configuration for ``app``: h11 with the connection limits and the header timeout."""
    import uvicorn

    return uvicorn.Config(
        app,
        host=host,
        port=port,
        http=guarded_protocol(limits.max_connections, limits.header_timeout_s),
        backlog=limits.backlog,
        loop="asyncio",
        **options,
    )


def run_server(
    served: ServedModel,
    *,
    host: str = "127.0.0.1",
    port: int = 8000,
    api_key: str | None = None,
    limits: ServerLimits | None = None,
    allow_hosts: tuple[str, ...] = (),
    pool: BackendPool | None = None,
    sock: socket.socket | None = None,
    register: bool = True,
) -> None:
    """Serve until interrupted (the ``serve`` command), listed in the registry of running servers meanwhile.

    ``sock`` is the socket :func:`~harmony_chat.server.listening.listen` bound (None: bound here);
    ``register`` False leaves the registry to the caller (a worker of ``--workers``: its parent is listed).

    ``allow_hosts`` are the host names clients may use beside the loopback ones (see
    :func:`~harmony_chat.server.guard.host_rule`); ``pool`` the handles generations run on
    (None: the served backend's, for ``limits.parallel``).

    Raises:
        UnsafeBind: when ``host`` is not loopback and there is no API key.
        ParallelError: when ``limits.parallel`` asks for more than the model can run at once.
        StoreError: when the store's file cannot be used.
    """
    from harmony_chat.server.listening import ListenError, RegisteringServer, listen
    from harmony_chat.server.log_text import serve_log_config

    check_bind(host, api_key)
    limits = limits or ServerLimits()
    limits.api_key = api_key
    limits.allowed_hosts = host_rule(host, api_key=api_key, allow=allow_hosts)
    limits.max_connections, limits.backlog = fit_connections(limits.max_connections, limits.backlog)
    app = create_app(served, limits, pool)
    config = uvicorn_config(
        app, host, port, limits, log_level="info", log_config=serve_log_config(), timeout_graceful_shutdown=5
    )
    quiet_repeats()
    server = RegisteringServer(
        config,
        model=served.name,
        api_key=bool(api_key),
        register=register,
        on_shutdown=app.state.harmony.open_streams.cut_all,
    )
    bound = sock or listen(host, port, limits.backlog)
    try:
        server.run(sockets=[bound])
    except KeyboardInterrupt:  # uvicorn re-raises the Ctrl+C it handled once it has shut down
        pass
    finally:
        server.unregister()
        bound.close()
        app.state.harmony.store.close()
    if not server.started:
        raise ListenError(f"the server did not start on {host}:{port} (its log above says why)")
