"""The HTTP app: routes, request checks, and :func:`run_server` for the ``serve`` command.

``POST /v1/chat/completions``, ``POST /v1/responses`` (and ``GET /v1/responses/{id}`` for a
stored one), ``GET /v1/models``, ``GET /health``. Every failure is an OpenAI-shaped JSON error;
nothing the server does shows a traceback to a client.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from pydantic import BaseModel, ValidationError
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from harmony_chat.server.chat_completions import ChatFormatter
from harmony_chat.server.chat_request import ChatRequest, chat_transcript
from harmony_chat.server.errors import ApiError, invalid_request
from harmony_chat.server.generation import TurnRun
from harmony_chat.server.limits import (
    DEFAULT_MAX_BODY_BYTES,
    DEFAULT_MAX_QUEUE,
    GenerationGate,
    check_api_key,
    check_bind,
    read_body,
)
from harmony_chat.server.response_store import DEFAULT_STORE_SIZE, ResponseStore, StoredResponse
from harmony_chat.server.responses_output import ResponseBuilder
from harmony_chat.server.responses_request import (
    ResponsesRequest,
    normalise_input,
    output_as_input,
    responses_transcript,
)
from harmony_chat.server.streaming import GatedResponse, chat_stream, collect, first_event, responses_stream
from harmony_chat.server.summaries import parse_summary, summarizer_for
from harmony_chat.server.transcript import ServedModel, Transcript, build_session, turn_options
from harmony_chat.server.turn_output import TurnReader

if TYPE_CHECKING:
    from harmony_chat.chat.summary import Summarizer
    from harmony_chat.harmony.turn import TurnOptions
    from harmony_chat.server.generation import ServedEvent

log = logging.getLogger("harmony_chat.server")
RequestModel = TypeVar("RequestModel", bound=BaseModel)


@dataclass(slots=True)
class ServerLimits:
    """Who may call and how much."""

    api_key: str | None = None
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES
    max_queue: int = DEFAULT_MAX_QUEUE
    store_size: int = DEFAULT_STORE_SIZE


class ServerState:
    """What every request shares: the model, the limits, the gate and the stored responses."""

    def __init__(self, served: ServedModel, limits: ServerLimits) -> None:
        if served.context_size is None:
            served.context_size = served.backend.info.context_size
        self.served = served
        self.limits = limits
        self.gate = GenerationGate(limits.max_queue)
        self.store = ResponseStore(limits.store_size)
        self.created = int(time.time())


def _state(request: Request) -> ServerState:
    state: ServerState = request.app.state.harmony
    return state


async def _body(request: Request, model: type[RequestModel]) -> RequestModel:
    """Check the key, read at most the size limit, parse JSON, validate, check the model name."""
    state = _state(request)
    check_api_key(request, state.limits.api_key)
    raw = await read_body(request, state.limits.max_body_bytes)
    try:
        data = json.loads(raw)
    except ValueError as error:
        raise ApiError(400, f"the body is not valid JSON: {error}") from None
    if not isinstance(data, dict):
        raise ApiError(400, "the body must be a JSON object")
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
    transcript: Transcript,
    options: TurnOptions,
    *,
    stream: Callable[[ServedEvent, AsyncIterator[ServedEvent]], Response] | None,
    consume: Callable[[ServedEvent], object],
    summarizer: Summarizer | None = None,
) -> Response | None:
    """Wait for the model and run the turn: return the streaming response, or None once ``consume`` has all."""
    state = _state(request)
    release = await state.gate.acquire(request.is_disconnected)
    run = TurnRun(build_session(transcript, state.served), state.served.backend, options, summarizer)
    try:
        if stream is not None:
            first, events = await first_event(run)
            return GatedResponse(stream(first, events), run, release)
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
    transcript = chat_transcript(chat)
    max_tokens = chat.max_completion_tokens or chat.max_tokens
    options = turn_options(
        transcript, state.served, max_tokens=max_tokens, temperature=chat.temperature, top_p=chat.top_p, seed=chat.seed
    )
    include_usage = bool(chat.stream_options and chat.stream_options.include_usage)
    summary = parse_summary(chat.reasoning.summary if chat.reasoning else None, "reasoning.summary")
    formatter = ChatFormatter(
        state.served.name,
        exclude_reasoning=chat.exclude_reasoning,
        include_usage=include_usage,
        summaries=summary is not None,
    )
    reader = TurnReader()
    streamed = await _generate(
        request,
        transcript,
        options,
        stream=(lambda first, events: chat_stream(first, events, reader, formatter)) if chat.stream else None,
        consume=reader.feed,
        summarizer=summarizer_for(summary, state.served.encoding),
    )
    if streamed is not None:
        return streamed
    if reader.error is not None:
        raise ApiError(500, f"the model failed: {reader.error}")
    return JSONResponse(formatter.completion(reader))


async def responses(request: Request) -> Response:
    """``POST /v1/responses``."""
    state = _state(request)
    body = await _body(request, ResponsesRequest)
    summary = parse_summary(body.reasoning.summary_asked if body.reasoning else None, "reasoning.summary")
    items: list[dict[str, Any]] = []
    if body.previous_response_id:
        previous = state.store.get(body.previous_response_id)
        if previous is None:
            message = f"no stored response {body.previous_response_id!r} (it was not stored, or is too old)"
            raise ApiError(404, message, param="previous_response_id", code="previous_response_not_found")
        items = list(previous.items)
    items += normalise_input(body.input)
    transcript = responses_transcript(body, items)
    options = turn_options(
        transcript, state.served, max_tokens=body.max_output_tokens, temperature=body.temperature, top_p=body.top_p
    )
    builder = ResponseBuilder(body, state.served.name)
    reader = TurnReader()

    def store() -> None:
        if body.store:
            response = builder.response(builder.status_of(reader), reader)
            state.store.put(builder.id, StoredResponse(response, items + output_as_input(builder.output)))

    streamed = await _generate(
        request,
        transcript,
        options,
        stream=(lambda first, events: responses_stream(first, events, reader, builder, store)) if body.stream else None,
        consume=lambda event: builder.events(reader.feed(event)),
        summarizer=summarizer_for(summary, state.served.encoding),
    )
    if streamed is not None:
        return streamed
    if reader.error is not None:
        raise ApiError(500, f"the model failed: {reader.error}")
    store()
    return JSONResponse(builder.response(builder.status_of(reader), reader))


async def get_response(request: Request) -> Response:
    """``GET /v1/responses/{id}``: a stored response."""
    state = _state(request)
    check_api_key(request, state.limits.api_key)
    stored = state.store.get(request.path_params["response_id"])
    if stored is None:
        raise ApiError(404, "no such stored response", code="not_found")
    return JSONResponse(stored.response)


async def models(request: Request) -> Response:
    """``GET /v1/models``: the one model this server runs."""
    state = _state(request)
    check_api_key(request, state.limits.api_key)
    model = {"id": state.served.name, "object": "model", "created": state.created, "owned_by": "harmony-chat"}
    return JSONResponse({"object": "list", "data": [model]})


async def health(request: Request) -> Response:
    """``GET /health``: the server is up; whether the model is busy and how many wait."""
    state = _state(request)
    return JSONResponse(
        {"status": "ok", "model": state.served.name, "busy": state.gate.busy, "waiting": state.gate.waiting}
    )


async def _api_error(request: Request, error: Exception) -> Response:
    assert isinstance(error, ApiError)
    return error.response()


async def _http_error(request: Request, error: Exception) -> Response:
    assert isinstance(error, HTTPException)
    code = "not_found" if error.status_code == 404 else None
    return ApiError(error.status_code, str(error.detail), code=code).response()


async def _unexpected(request: Request, error: Exception) -> Response:
    log.error("unexpected error serving %s: %s", request.url.path, error, exc_info=error)
    return ApiError(500, f"internal error: {type(error).__name__}").response()


def create_app(served: ServedModel, limits: ServerLimits | None = None) -> Starlette:
    """The ASGI app serving ``served`` (an already loaded backend) under ``limits``."""
    routes = [
        Route("/v1/chat/completions", chat_completions, methods=["POST"]),
        Route("/v1/responses", responses, methods=["POST"]),
        Route("/v1/responses/{response_id}", get_response, methods=["GET"]),
        Route("/v1/models", models, methods=["GET"]),
        Route("/health", health, methods=["GET"]),
    ]
    handlers = {ApiError: _api_error, HTTPException: _http_error, Exception: _unexpected}
    app = Starlette(routes=routes, exception_handlers=handlers)
    app.state.harmony = ServerState(served, limits or ServerLimits())
    return app


def run_server(
    served: ServedModel,
    *,
    host: str = "127.0.0.1",
    port: int = 8000,
    api_key: str | None = None,
    limits: ServerLimits | None = None,
) -> None:
    """Serve until interrupted (the ``serve`` command), listed in the registry of running servers meanwhile.

    Raises:
        UnsafeBind: when ``host`` is not loopback and there is no API key.
    """
    import uvicorn

    from harmony_chat.server.listening import RegisteringServer
    from harmony_chat.server.log_text import serve_log_config

    check_bind(host, api_key)
    limits = limits or ServerLimits()
    limits.api_key = api_key
    app = create_app(served, limits)
    config = uvicorn.Config(
        app, host=host, port=port, log_level="info", log_config=serve_log_config(), timeout_graceful_shutdown=5
    )
    server = RegisteringServer(config, model=served.name, api_key=bool(api_key))
    try:
        server.run()
    except KeyboardInterrupt:  # uvicorn re-raises the Ctrl+C it handled once it has shut down
        pass
    finally:
        server.unregister()
    if not server.started:
        raise SystemExit(3)  # uvicorn's startup failure; it has logged why (the port is taken...)
