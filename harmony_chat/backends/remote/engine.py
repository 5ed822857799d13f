"""The part every remote engine shares: connect and check the vocabulary, stream token ids, measure.

An engine subclass says how to describe the served model, tokenize text, shape a generate request
and read one streamed event. Token ids go in and come out: the engines' chat endpoints and their
harmony parsers are never used.
"""

from __future__ import annotations

import asyncio
import copy
import json
import time
from abc import abstractmethod
from collections.abc import AsyncGenerator, Callable, Collection, Generator, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from harmony_chat.backends.base import GenerationStats, ModelBackend, ModelInfo, SamplingParams
from harmony_chat.backends.remote.async_transport import AsyncEngineSession
from harmony_chat.backends.remote.transport import EngineClient
from harmony_chat.errors import EngineError, EngineStreamError, ModelError
from harmony_chat.harmony import tokens as tk

VOCAB_PROBE_TEXT = (
    "<|start|>assistant<|channel|>commentary to=functions.probe <|constrain|>json<|message|>"
    '{"q": "naïve café 東京 🙂"}<|call|><|start|>assistant<|channel|>final<|message|>ok<|end|><|return|>'
)
"""Text whose harmony token ids (special tokens included) the engine's tokenizer must reproduce."""
DRAIN_S = 2.0
"""How long to keep reading the closing events after the stop token."""


@dataclass(slots=True)
class StreamState:
    """What the events of one streamed answer have said so far."""

    done: bool = False
    """The engine said the answer is complete."""
    stop_token: int | None = None
    """The stop token the engine says it stopped on (for engines that leave it out of the ids)."""
    cached: int | None = None
    """Prompt tokens the engine served from its prefix cache, where it reports them."""
    received: list[int] = field(default_factory=list)
    """Every generated id so far (engines with cumulative output compare against it)."""
    cumulative: bool | None = None
    """Whether each event repeats all ids so far (None: not known yet)."""
    predicted: int = 0
    """Tokens the engine says it generated so far (where it says so)."""


class RemoteBackend(ModelBackend):
    """A gpt-oss model served by a remote engine, driven with token ids over HTTP.

    Args:
        client: the HTTP client for the engine's URL (it carries the API key).
        model_name: the served model's name, for engines that route by it (None: ask the engine).
    """

    name = "remote"
    supports_json_schema = True
    supports_penalties = True
    streams_on_event_loop = True

    def __init__(self, client: EngineClient, *, model_name: str | None = None) -> None:
        super().__init__()
        self.client = client
        self.model_name = model_name
        self._info: ModelInfo | None = None
        self.engine_session = AsyncEngineSession(client)
        """The pooled connections :meth:`agenerate` streams on (shared with :meth:`handles`' copies)."""

    @property
    def info(self) -> ModelInfo:
        """What the served model is (valid after :meth:`load`)."""
        if self._info is None:
            raise RuntimeError("the engine is not connected")
        return self._info

    def load(self) -> ModelInfo:
        """Connect, check that the engine serves a gpt-oss vocabulary, and describe the model.

        Raises:
            EngineError: the engine is unreachable, refuses the key, times out or is not ready.
            ModelError: the engine serves a model whose vocabulary is not gpt-oss's.
        """
        name, context_size = self._describe()
        self._check_vocabulary(name)
        self._info = ModelInfo(
            name=name,
            backend=self.name,
            context_size=context_size,
            path=self.client.url,
            host=self.client.host,
        )
        return self._info

    def _check_vocabulary(self, model: str) -> None:
        from harmony_chat.harmony.vocab import load_encoding

        expected = load_encoding().encode(VOCAB_PROBE_TEXT, allowed_special="all")
        actual = self._tokenize(VOCAB_PROBE_TEXT)
        if list(actual) != list(expected):
            raise ModelError(
                f"{self.client.label} serves {model!r}, whose tokenizer does not give harmony's "
                "o200k_harmony token ids; harmony-chat drives gpt-oss models only"
            )

    @abstractmethod
    def _describe(self) -> tuple[str, int]:
        """Return the served model's name and context size (checking the engine is ready)."""

    @abstractmethod
    def _tokenize(self, text: str) -> list[int]:
        """Tokenize ``text`` with the engine's tokenizer, parsing special tokens, adding none."""

    @abstractmethod
    def _request(
        self,
        prompt: Sequence[int],
        sampling: SamplingParams,
        stop_ids: Collection[int],
        schema: Mapping[str, Any] | None,
    ) -> tuple[str, dict[str, Any]]:
        """Return the path and JSON body of a streamed generate request (constrained by ``schema``)."""

    @abstractmethod
    def _read(self, event: Mapping[str, Any], state: StreamState) -> list[int]:
        """Return the new token ids in one streamed event, updating ``state``.

        Raises:
            EngineStreamError: when the event reports an error.
        """

    def build_request(
        self, prompt: Sequence[int], sampling: SamplingParams, stop_ids: Collection[int]
    ) -> tuple[str, dict[str, Any]]:
        """The path and body of the streamed request :meth:`generate` sends (for benchmarks)."""
        return self._request(prompt, sampling, stop_ids, None)

    def parse_event(self, event: Mapping[str, Any], state: StreamState) -> list[int]:
        """The new token ids in one streamed event (for benchmarks reading the raw stream)."""
        return self._read(event, state)

    def _health_path(self) -> str:
        return "/health"

    def _tokenize_with(self, body: Mapping[str, Any]) -> list[int]:
        """POST ``body`` to the engine's ``/tokenize`` and return the token ids it answers with."""
        answer = self.client.call("POST", "/tokenize", dict(body), doing="checking the vocabulary")
        tokens = answer.get("tokens") if isinstance(answer, Mapping) else None
        if not isinstance(tokens, list):
            raise EngineError(f"{self.client.label} answered /tokenize without a token list")
        return [require_int(t, "a token id", self.client.label) for t in tokens]

    def generate(
        self,
        prompt: Sequence[int],
        sampling: SamplingParams,
        stop_ids: Collection[int],
        should_stop: Callable[[], bool],
    ) -> Generator[int, None, None]:
        """Stream generated token ids from the engine; stop on a stop id, the limit or cancellation.

        Raises:
            EngineError: the request failed or the stream broke (what was yielded stays yielded).
        """
        tally = self._tally(prompt, sampling, stop_ids, should_stop)
        path, body = self._request(prompt, sampling, stop_ids, sampling.json_schema)
        stream = self.client.stream(path, body, should_stop)
        events = stream.events()
        try:
            for event, arrived in events:
                for token in tally.read(event):
                    if not tally.accept(token, arrived):
                        return
                    if tally.stop_seen:  # read the closing events (cache figures) before handing the stop over
                        self._drain(events, tally.state)
                    tally.record_cache()
                    yield token
                    if tally.ended:
                        return
            closing = tally.close_out()
        except EngineStreamError as error:
            raise EngineStreamError(f"{error}; {self._explain_drop()}") from None
        finally:
            stream.close()
        yield from closing

    async def agenerate(
        self,
        prompt: Sequence[int],
        sampling: SamplingParams,
        stop_ids: Collection[int],
        should_stop: Callable[[], bool],
    ) -> AsyncGenerator[list[int], None]:
        """:meth:`generate` on the event loop: the ids of each read from the engine, together.

        Raises:
            EngineError: the request failed or the stream broke (what was yielded stays yielded).
        """
        tally = self._tally(prompt, sampling, stop_ids, should_stop)
        path, body = self._request(prompt, sampling, stop_ids, sampling.json_schema)
        reads = self.engine_session.events(path, body)
        try:
            async for events, arrived in reads:
                tokens: list[int] = []
                failure: EngineError | None = None
                for event in events:
                    if tally.ended:  # after the stop token: only the closing figures
                        self._read_closing([event], tally.state)
                        continue
                    try:
                        new = tally.read(event)
                    except EngineError as error:  # the ids before it still go on, then the error
                        failure = error
                        break
                    tokens.extend(token for token in new if tally.accept(token, arrived))
                if tally.complete and failure is None:  # the engine ends its stream here too: read its closing figures
                    await self._adrain(reads, tally.state)
                tally.record_cache()
                if tokens:
                    yield tokens
                if failure is not None:
                    raise failure
                if tally.ended:
                    return
            closing = tally.close_out()
        except EngineStreamError as error:
            raise EngineStreamError(f"{error}; {await asyncio.to_thread(self._explain_drop)}") from None
        finally:
            await reads.aclose()
        if closing:
            yield closing

    def _tally(
        self,
        prompt: Sequence[int],
        sampling: SamplingParams,
        stop_ids: Collection[int],
        should_stop: Callable[[], bool],
    ) -> _Tally:
        """Start the figures of a new generation and the tally of its ids."""
        self.last_stats = GenerationStats(
            prompt_tokens=len(prompt), prompt_tokens_evaluated=len(prompt), engine=self.name, host=self.client.host
        )
        return _Tally(self, len(prompt), sampling, stop_ids, should_stop)

    def _read_closing(self, events: Sequence[dict[str, Any]], state: StreamState) -> None:
        """Read the events that came after the stop token in the same read (usage, timings)."""
        try:
            for event in events:
                self._read(event, state)
        except EngineError:
            return  # the answer is complete; a late hiccup costs only the cache figure

    async def _adrain(
        self, reads: AsyncGenerator[tuple[list[dict[str, Any]], float], None], state: StreamState
    ) -> None:
        """:meth:`_drain` on the event loop."""
        try:
            async with asyncio.timeout(DRAIN_S):
                async for events, _ in reads:
                    self._read_closing(events, state)
        except (TimeoutError, EngineError):
            return

    def _drain(self, events: Iterator[tuple[dict[str, Any], float]], state: StreamState) -> None:
        """Read what the engine still sends after the stop token (usage, timings), briefly."""
        deadline = time.perf_counter() + DRAIN_S
        try:
            for event, _ in events:
                self._read(event, state)
                if time.perf_counter() > deadline:
                    return
        except EngineError:
            return  # the answer is complete; a late hiccup costs only the cache figure

    def _explain_drop(self) -> str:
        """Say whether the engine came back (it restarted) or is gone, after a broken stream."""
        try:
            status, _ = self.client.probe(self._health_path(), timeout=2.0)
        except EngineError:
            return "the server is gone (not reachable any more)"
        if status < 500:
            return "the server answers again, so it restarted or the connection dropped mid-answer"
        return f"the server answers HTTP {status} now (restarting or overloaded)"

    def prefill(self, tokens: Sequence[int]) -> int:
        """Nothing to do ahead of time: the engines keep their own prefix caches."""
        return 0

    @property
    def parallel_slots(self) -> int | None:
        """How many generations the engine says it runs at once (None: it says nothing; valid after :meth:`load`)."""
        return None

    def handles(self, count: int) -> list[RemoteBackend]:
        """``count`` backends for generations at once: this one, then copies sharing its connection.

        Each keeps its own per-generation state (figures, stream), so each may generate in its own
        thread; closing any of them closes the shared connection (close this one, once). Call it
        after :meth:`load`.

        Raises:
            EngineError: when the engine cannot run ``count`` generations at once.
        """
        return [self] + [self._twin() for _ in range(count - 1)]

    def _twin(self) -> RemoteBackend:
        """A copy on the same engine and connection, with per-generation state of its own."""
        twin = copy.copy(self)
        twin.last_stats = GenerationStats()
        twin.token_logprobs = None
        return twin

    def close(self) -> None:
        """Close the HTTP connections."""
        self.client.close()

    async def aclose(self) -> None:
        """Close the event loop's pooled connections to the engine."""
        await self.engine_session.close()


class _Tally:
    """One generation's ids as they arrive: the limit, the stops and cancellation applied, timed, counted.

    Args:
        backend: the engine (it reads each event and holds the figures).
        prompt_length: the prompt's tokens (for the cache figures).
        sampling: ``max_tokens`` is the limit.
        stop_ids: the tokens that end the generation (handed on).
        should_stop: polled before each token.
    """

    def __init__(
        self,
        backend: RemoteBackend,
        prompt_length: int,
        sampling: SamplingParams,
        stop_ids: Collection[int],
        should_stop: Callable[[], bool],
    ) -> None:
        self.backend = backend
        self.stats = backend.last_stats
        self.state = StreamState()
        self.prompt_length = prompt_length
        self.max_tokens = sampling.max_tokens
        self.stop_ids = stop_ids
        self.should_stop = should_stop
        self.count = 0
        self.started = time.perf_counter()
        self.first = 0.0
        self.last_arrival: float | None = None
        self.last: int | None = None
        """The last id handed on."""
        self.ended = False
        """No more ids go on: the limit, a stop token, or the consumer asked to stop."""
        self.stop_seen = False
        """The last id handed on is a stop token."""

    def read(self, event: Mapping[str, Any]) -> list[int]:
        """The new ids in one event (see :meth:`accept` for each).

        Raises:
            EngineStreamError: when the event reports an error.
        """
        return self.backend._read(event, self.state)

    def accept(self, token: int, arrived: float) -> bool:
        """Whether ``token`` goes on (counted and timed); False once the limit is reached or a stop is asked."""
        if self.ended or self.count >= self.max_tokens or self.should_stop():
            self.ended = True
            return False
        stats = self.stats
        if not self.count:
            stats.ttft_s = arrived - self.started
            self.first = arrived
        if arrived != self.last_arrival:
            stats.bursts = (stats.bursts or 0) + 1
            self.last_arrival = arrived
        self.count += 1
        self.last = token
        stats.generated_tokens = self.count
        stats.decode_s = arrived - self.first
        if token in self.stop_ids:
            self.ended = self.stop_seen = True
        elif self.count >= self.max_tokens:
            self.ended = True
        return True

    @property
    def complete(self) -> bool:
        """Whether the generation ended on a stop token or at the limit (not because a stop was asked)."""
        return self.stop_seen or (self.ended and self.count >= self.max_tokens)

    def record_cache(self) -> None:
        """Put the engine's prefix-cache figure, where it gave one, into the stats."""
        cached = self.state.cached
        if cached is None:
            return
        cached = max(0, min(cached, self.prompt_length))
        self.stats.prompt_tokens_cached = cached
        self.stats.prompt_tokens_evaluated = self.prompt_length - cached

    def close_out(self) -> list[int]:
        """The stream ended on its own: the stop token the engine left out of the ids, if any.

        Raises:
            EngineStreamError: when the engine ended the stream before saying the answer was complete
                (the caller adds what became of the engine).
        """
        self.record_cache()
        if self.should_stop() or self.count >= self.max_tokens:
            return []
        if not self.state.done:
            raise EngineStreamError(f"the answer from {self.backend.client.label} ended early")
        stop = self.state.stop_token
        if stop is None or self.last in self.stop_ids:
            return []
        self.count += 1
        self.stats.generated_tokens = self.count
        return [stop]


@dataclass(frozen=True, slots=True)
class Constraint:
    """What a request's output is held to, in the terms every engine offers.

    Attributes:
        schema: JSON of this schema (None: no JSON constraint).
        grammar: the schema's GBNF grammar, or one of ``choices`` as a grammar (None: neither).
        choices: the output is one of these strings.
        refused: token ids the engine must never sample (special tokens inside JSON; stops when
            the stream must go on).
        ignore_eos: keep generating past end-of-generation tokens.
    """

    schema: Mapping[str, Any] | None = None
    grammar: str | None = None
    choices: tuple[str, ...] | None = None
    refused: tuple[int, ...] = ()
    ignore_eos: bool = False


def constraint(prompt: Sequence[int], sampling: SamplingParams, schema: Mapping[str, Any] | None) -> Constraint:
    """The constraint of one streamed request.

    Under a JSON schema every special token is refused but the stop of the message the prompt
    ends in (``<|return|>`` for a final answer, ``<|call|>`` for arguments): an engine's grammar
    would otherwise take ``<|end|>`` as text inside a JSON string and end the message there. The
    stop is an end-of-generation token, which the grammar lets through once the JSON is complete.
    A schema the grammar cannot enforce is not sent (the server refuses such a request first).
    """
    from harmony_chat.backends.schema_errors import UnenforceableSchema
    from harmony_chat.backends.schema_grammar import schema_grammar
    from harmony_chat.harmony.structure import open_message_stops
    from harmony_chat.harmony.vocab import load_encoding

    refused: set[int] = set()
    if sampling.ignore_eos:
        refused |= tk.GENERATION_STOPS
    if schema is not None:
        try:
            grammar = schema_grammar(schema)
        except UnenforceableSchema:
            return Constraint(refused=tuple(sorted(refused)), ignore_eos=sampling.ignore_eos)
        stops = open_message_stops(load_encoding(), prompt) or JSON_STOPS
        refused |= set(range(tk.FIRST_SPECIAL, tk.VOCAB_SIZE)) - (stops & JSON_STOPS)
        return Constraint(schema, grammar, None, tuple(sorted(refused)), sampling.ignore_eos)
    if sampling.choices:
        grammar = "root ::= " + " | ".join(json.dumps(choice) for choice in sampling.choices)
        return Constraint(None, grammar, sampling.choices, tuple(sorted(refused)), sampling.ignore_eos)
    return Constraint(refused=tuple(sorted(refused)), ignore_eos=sampling.ignore_eos)


JSON_STOPS = frozenset({tk.RETURN, tk.CALL})


def require_int(value: Any, what: str, label: str) -> int:
    """Return ``value`` as an int, or fail with a clear message naming the engine."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise EngineError(f"{label} sent {what} that is not a whole number: {str(value)[:40]!r}")
    return value
