"""The part every remote engine shares: connect and check the vocabulary, stream token ids, measure.

An engine subclass says how to describe the served model, tokenize text, shape a generate request
and read one streamed event. Token ids go in and come out: the engines' chat endpoints and their
harmony parsers are never used.
"""

from __future__ import annotations

import copy
import json
import time
from abc import abstractmethod
from collections.abc import Callable, Collection, Generator, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from harmony_chat.backends.base import GenerationStats, ModelBackend, ModelInfo, SamplingParams
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

    def __init__(self, client: EngineClient, *, model_name: str | None = None) -> None:
        super().__init__()
        self.client = client
        self.model_name = model_name
        self._info: ModelInfo | None = None
        self._started = self._first = 0.0

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
        self.last_stats = GenerationStats(
            prompt_tokens=len(prompt), prompt_tokens_evaluated=len(prompt), engine=self.name, host=self.client.host
        )
        self._started = time.perf_counter()
        yield from self._stream(prompt, sampling, stop_ids, should_stop)

    def _stream(
        self,
        prompt: Sequence[int],
        sampling: SamplingParams,
        stop_ids: Collection[int],
        should_stop: Callable[[], bool],
    ) -> Generator[int, None, None]:
        """Run one streamed request (under the engine's JSON grammar when ``sampling.json_schema`` is set)."""
        stats = self.last_stats
        generated: list[int] = []
        path, body = self._request(prompt, sampling, stop_ids, sampling.json_schema)
        state = StreamState()
        prompt_length = len(prompt)
        stream = self.client.stream(path, body, should_stop)
        events = stream.events()
        last_arrival: float | None = None
        try:
            for event, arrived in events:
                for token in self._read(event, state):
                    if len(generated) >= sampling.max_tokens or should_stop():
                        return
                    if not generated:
                        stats.ttft_s = arrived - self._started
                        self._first = arrived
                    if arrived != last_arrival:
                        stats.bursts = (stats.bursts or 0) + 1
                        last_arrival = arrived
                    generated.append(token)
                    stats.generated_tokens = len(generated)
                    stats.decode_s = arrived - self._first
                    if token in stop_ids:  # read the closing events (cache figures) before handing it over
                        self._drain(events, state)
                        self._record_cache(stats, state, prompt_length)
                        yield token
                        return
                    self._record_cache(stats, state, prompt_length)
                    yield token
        except EngineStreamError as error:
            raise EngineStreamError(f"{error}; {self._explain_drop()}") from None
        finally:
            stream.close()
        self._record_cache(stats, state, prompt_length)
        if should_stop() or len(generated) >= sampling.max_tokens:
            return
        if not state.done:
            raise EngineStreamError(f"the answer from {self.client.label} ended early; {self._explain_drop()}")
        if state.stop_token is not None and (not generated or generated[-1] not in stop_ids):
            generated.append(state.stop_token)
            stats.generated_tokens = len(generated)
            yield state.stop_token

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

    def _record_cache(self, stats: GenerationStats, state: StreamState, prompt_length: int) -> None:
        if state.cached is None or prompt_length < 0:
            return
        cached = max(0, min(state.cached, prompt_length))
        stats.prompt_tokens_cached = cached
        stats.prompt_tokens_evaluated = prompt_length - cached

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
        twin._started = twin._first = 0.0
        return twin

    def close(self) -> None:
        """Close the HTTP connections."""
        self.client.close()


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
