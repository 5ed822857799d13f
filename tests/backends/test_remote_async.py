"""The engines' token streams read on the event loop (``serve``'s path): the same ids and errors as in a thread.

Each recorded stream of each engine (tests/data/engines, served on loopback by the fake engine) is
read both ways, :meth:`RemoteBackend.generate` and :meth:`RemoteBackend.agenerate`, and must give
the same ids, the same figures and the same error; then what only the event loop does: many
streams at once on one pooled session, and a cancelled task that closes its connection at once.
"""

from __future__ import annotations

import asyncio
import json
import socket
import time
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from openai_harmony import HarmonyEncoding

from harmony_chat.backends.base import SamplingParams
from harmony_chat.backends.remote import RemoteBackend, create_remote_backend
from harmony_chat.backends.remote.async_transport import SseSplitter
from harmony_chat.errors import EngineError
from harmony_chat.generation.turn import TurnOptions, TurnStats, stream_turn
from harmony_chat.harmony import tokens as tk
from harmony_chat.harmony.events import ContentDelta
from harmony_chat.harmony.session import ChatSession
from tests.support.fake_engine import FakeEngine, load_fixture

SAMPLING = SamplingParams(temperature=0.7, top_p=0.9, seed=11, max_tokens=300)
STREAMS = [
    (engine, name)
    for engine in ("vllm", "sglang")
    for name in load_fixture(engine)["streams"]
    if name != "held"  # held back until the client leaves: see the cancel test
]


def connect(fake: FakeEngine) -> RemoteBackend:
    backend = create_remote_backend(fake.url, None)
    backend.load()
    return backend


def prompt(encoding: HarmonyEncoding) -> list[int]:
    session = ChatSession(encoding)
    session.add_user("Hi")
    return session.render().tokens


def threaded(backend: RemoteBackend, tokens: list[int], sampling: SamplingParams) -> tuple[list[int], str | None]:
    received: list[int] = []
    try:
        received.extend(backend.generate(tokens, sampling, tk.GENERATION_STOPS, lambda: False))
    except EngineError as error:
        return received, f"{type(error).__name__}: {error}"
    return received, None


async def on_loop(backend: RemoteBackend, tokens: list[int], sampling: SamplingParams) -> tuple[list[int], str | None]:
    received: list[int] = []
    try:
        async for read in backend.agenerate(tokens, sampling, tk.GENERATION_STOPS, lambda: False):
            assert read, "a read with no ids is never handed on"
            received.extend(read)
    except EngineError as error:
        return received, f"{type(error).__name__}: {error}"
    finally:
        await backend.aclose()
    return received, None


@pytest.mark.parametrize(("engine", "stream"), STREAMS)
@pytest.mark.parametrize("max_tokens", [300, 3])
def test_every_recorded_stream_reads_the_same_on_the_event_loop(
    serve: Any, encoding: HarmonyEncoding, engine: str, stream: str, max_tokens: int
) -> None:
    fake = serve(engine, stream)
    backend = connect(fake)
    sampling = SamplingParams(temperature=0.7, seed=11, max_tokens=max_tokens)
    expected = threaded(backend, prompt(encoding), sampling)
    expected_stats = backend.last_stats
    got = asyncio.run(on_loop(backend, prompt(encoding), sampling))
    assert got == expected
    stats = backend.last_stats
    assert (stats.generated_tokens, stats.prompt_tokens) == (
        expected_stats.generated_tokens,
        expected_stats.prompt_tokens,
    )
    assert fake.generate_requests()[0].body == fake.generate_requests()[1].body  # the same request both ways


def test_the_cache_figure_is_read_after_the_stop_on_the_event_loop(serve: Any, encoding: HarmonyEncoding) -> None:
    """The usage of vLLM comes in its own event after the stop token: the loop reads it before it ends."""
    fake = serve("vllm", "answer")
    backend = connect(fake)
    ids, error = asyncio.run(on_loop(backend, prompt(encoding), SAMPLING))
    assert error is None and ids[-1] == tk.RETURN
    usage = next(chunk["usage"] for chunk in load_fixture("vllm")["streams"]["answer"]["chunks"] if chunk.get("usage"))
    assert backend.last_stats.prompt_tokens_cached == usage["prompt_tokens_details"]["cached_tokens"]


def test_many_streams_at_once_on_one_session_each_get_their_own_answer(serve: Any, encoding: HarmonyEncoding) -> None:
    fake = serve("vllm", "answer")
    backend = connect(fake)
    handles = backend.handles(24)
    tokens = prompt(encoding)

    async def all_at_once() -> list[list[int]]:
        async def one(handle: RemoteBackend, index: int) -> list[int]:
            received: list[int] = []
            async for read in handle.agenerate(tokens + [index], SAMPLING, tk.GENERATION_STOPS, lambda: False):
                received.extend(read)
            return received

        try:
            return await asyncio.gather(*(one(handle, index) for index, handle in enumerate(handles)))
        finally:
            await backend.aclose()

    answers = asyncio.run(all_at_once())
    expected = threaded(backend, tokens, SAMPLING)[0]
    assert answers == [expected] * len(handles)
    prompts = sorted(request.body["prompt"][-1] for request in fake.generate_requests()[:-1])
    assert prompts == list(range(len(handles)))  # each stream sent its own request
    assert len({id(handle.last_stats) for handle in handles}) == len(handles)  # and kept its own figures


def test_a_cancelled_stream_closes_its_connection_while_the_engine_holds_the_prompt(
    serve: Any, encoding: HarmonyEncoding
) -> None:
    fake = serve("vllm", "held")
    backend = connect(fake)

    async def cancel_after(seconds: float) -> None:
        async def read() -> None:
            async for _ in backend.agenerate(prompt(encoding), SAMPLING, tk.GENERATION_STOPS, lambda: False):
                pass

        task = asyncio.create_task(read())
        await asyncio.sleep(seconds)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        await backend.aclose()

    asyncio.run(cancel_after(0.3))
    assert fake.disconnected.wait(10)  # the engine saw the client leave, so it stops


def test_should_stop_is_asked_before_each_id(serve: Any, encoding: HarmonyEncoding) -> None:
    fake = serve("sglang", "answer_incremental")
    backend = connect(fake)
    received: list[int] = []
    asked = 0

    def stop_after_three() -> bool:
        nonlocal asked
        asked += 1
        return asked > 3

    async def read() -> None:
        async for ids in backend.agenerate(prompt(encoding), SAMPLING, tk.GENERATION_STOPS, stop_after_three):
            received.extend(ids)
        await backend.aclose()

    asyncio.run(read())
    full = threaded(backend, prompt(encoding), SAMPLING)[0]
    assert received == full[:3] and len(full) > 3


def test_a_whole_turn_on_the_event_loop_decodes_as_in_a_thread(serve: Any, encoding: HarmonyEncoding) -> None:
    fake = serve("vllm", "answer")
    backend = connect(fake)

    async def turn() -> list[object]:
        session = ChatSession(encoding)
        session.add_user("Hi")
        events: list[object] = []
        try:
            async for group in stream_turn(session, backend, TurnOptions(sampling=SAMPLING)):
                events.extend(group)
        finally:
            await backend.aclose()
        assert session.history, "the turn is recorded in the session"
        return events

    events = asyncio.run(turn())
    text = "".join(event.text for event in events if isinstance(event, ContentDelta) and event.channel == "final")
    assert text == "Hello!"
    stats = events[-1]
    assert isinstance(stats, TurnStats) and stats.reason.value == "return"


def _sse(events: list[bytes]) -> bytes:
    return b"".join(b"data: " + event + b"\n\n" for event in events)


@given(
    payloads=st.lists(st.dictionaries(st.text(max_size=5), st.integers(), max_size=3), min_size=1, max_size=6),
    cuts=st.lists(st.integers(min_value=0, max_value=400), max_size=8),
    crlf=st.booleans(),
)
def test_sse_events_split_anywhere_come_out_whole(payloads: list[dict[str, int]], cuts: list[int], crlf: bool) -> None:
    events = [json.dumps(payload).encode() for payload in payloads]
    data = b": a comment\n\n" + _sse(events) + b"data: [DONE]\n\n"
    if crlf:
        data = data.replace(b"\n", b"\r\n")
    points = sorted({min(cut, len(data)) for cut in cuts})
    pieces = [data[start:end] for start, end in zip([0, *points], [*points, len(data)], strict=True)]
    splitter = SseSplitter()
    out = [payload for piece in pieces for payload in splitter.feed(piece)] + splitter.finish()
    assert out == [*events, b"[DONE]"]


def test_sse_multi_line_data_and_other_fields() -> None:
    splitter = SseSplitter()
    assert splitter.feed(b'event: x\nid: 3\ndata: {"a":\ndata:1}\n\nretry: 5\n\n') == [b'{"a":\n1}']
    assert splitter.feed(b"data: {}") == []
    assert splitter.finish() == [b"{}"]  # the stream ended without the blank line


def test_an_engine_that_stops_sending_mid_answer_times_out_and_its_connection_closes(
    serve: Any, encoding: HarmonyEncoding
) -> None:
    """The headers came, then nothing: the session's watch gives up after the client's timeout."""
    fake = serve("vllm", "held")
    backend = create_remote_backend(fake.url, "vllm", timeout=1.0)
    backend.load()
    started = time.monotonic()
    got = asyncio.run(on_loop(backend, prompt(encoding), SAMPLING))
    assert got[0] == [] and got[1] is not None and got[1].startswith("EngineTimeoutError:")
    assert "did not answer within 1 s while streaming the answer" in got[1]
    assert time.monotonic() - started < 10  # long before the engine's 30 s hold ends
    assert fake.disconnected.wait(10)


def test_an_engine_that_never_answers_the_request_times_out() -> None:
    """No headers at all (a server that accepts and says nothing): the request's own timer."""
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        url = f"http://127.0.0.1:{silent.getsockname()[1]}"
        backend = create_remote_backend(url, "vllm", timeout=0.5)
        backend.model_name = "m"  # not loaded: nothing to ask a silent server
        got = asyncio.run(on_loop(backend, [1, 2, 3], SAMPLING))
    assert got[0] == [] and got[1] is not None
    assert got[1].startswith("EngineTimeoutError:") and "while waiting for the answer" in got[1]
