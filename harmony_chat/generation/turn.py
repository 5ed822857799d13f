"""One assistant turn end to end: render the prompt, generate token ids, decode them, record.

Data flows one way: backend token ids -> decoder events -> the caller (``ask`` or the TUI),
which only ever sees :mod:`~harmony_chat.harmony.events` and a closing :class:`TurnStats`.
"""

from __future__ import annotations

import threading
from collections.abc import AsyncGenerator, Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from harmony_chat.backends.base import GenerationStats, ModelBackend, SamplingParams
from harmony_chat.errors import ContextOverflowError
from harmony_chat.generation.batches import token_batches
from harmony_chat.generation.producer import batches_in_background
from harmony_chat.harmony import tokens as tk
from harmony_chat.harmony.effort import Effort
from harmony_chat.harmony.events import DecoderEvent, Recovery, StopReason

if TYPE_CHECKING:  # the session and decoder pull in openai-harmony; the UI starts without it
    from harmony_chat.harmony.session import ChatSession, RenderedPrompt


@dataclass(frozen=True, slots=True)
class PromptReady:
    """The prompt is rendered and about to be generated from."""

    prompt: RenderedPrompt
    max_tokens: int
    """The answer limit of this turn: the requested ``max_tokens``, or less when the context has less room."""
    requested_max_tokens: int
    """The ``max_tokens`` the turn was asked for."""

    @property
    def answer_capped(self) -> bool:
        """Whether the context left less room for the answer than was asked for."""
        return self.max_tokens < self.requested_max_tokens


@dataclass(frozen=True, slots=True)
class TurnStats:
    """The last event of a turn: how it ended and what it cost."""

    reason: StopReason
    effort: Effort
    stats: GenerationStats
    truncated: bool = False
    recoveries: int = 0
    evicted_turns: int = 0
    error: str | None = None
    max_tokens: int = 0
    """The answer limit the turn ran with (see :attr:`PromptReady.max_tokens`)."""

    def as_dict(self) -> dict[str, object]:
        """Return the figures as a flat dict (the last line of ``ask --json``)."""
        return {
            "type": "stats",
            **self.stats.as_dict(),
            "stop_reason": self.reason.value,
            "effort": self.effort,
            "truncated": self.truncated,
            "recoveries": self.recoveries,
            "evicted_turns": self.evicted_turns,
            "max_tokens": self.max_tokens,
        }


TurnEvent = DecoderEvent | PromptReady | TurnStats
"""Everything :func:`run_turn` yields."""


@dataclass(slots=True)
class TurnOptions:
    """How to run a turn."""

    sampling: SamplingParams = field(default_factory=SamplingParams)
    effort: Effort | None = None
    """Reasoning effort of this turn (default: the session's)."""
    stop_on_final: bool = True
    raw_tokens: bool = True
    tool_schemas: Mapping[str, Mapping[str, object]] = field(default_factory=dict)
    """JSON Schema of each function's arguments by ``functions.<name>``: a ``<|constrain|>json`` call to
    one of them is generated under that schema's grammar where the backend supports it."""
    final_schema: Mapping[str, object] | None = None
    """JSON Schema of the answer (a response format): the ``final`` message is generated under its grammar
    where the backend supports it."""
    tool_choice: str | None = None
    """``required``: the turn ends with a call to one of the session's functions; a function's name
    (``x`` or ``functions.x``): with a call to it; None or ``auto``: the model decides."""


def required_calls(tool_choice: str | None, functions: Iterable[str]) -> list[str] | None:
    """The functions a ``tool_choice`` requires a call to (``functions.<name>``), or None when it requires none.

    Raises:
        ValueError: for a named function that is not among ``functions``, or ``required`` without any.
    """
    if tool_choice in (None, "auto", "none"):
        return None
    names = [name if name.startswith("functions.") else f"functions.{name}" for name in functions]
    if tool_choice == "required":
        if not names:
            raise ValueError("a call is required but no function is declared")
        return names
    assert tool_choice is not None
    named = tool_choice if tool_choice.startswith("functions.") else f"functions.{tool_choice}"
    if named not in names:
        raise ValueError(f"{tool_choice!r} is not among the functions")
    return [named]


def prefill_next_turn(session: ChatSession, backend: ModelBackend) -> int:
    """Evaluate the history exactly as the next prompt will show it, ahead of time.

    Dropping a finished turn's analysis moves its final answer to new positions, so the next
    prompt would otherwise re-evaluate that answer before the new message. Doing it while the user
    reads leaves only the new message for the next turn. The prefill keeps the same answer room
    as the turn before (:meth:`ChatSession.render` with no ``max_new_tokens``), so it leaves out
    the same old turns the next prompt will. Returns the tokens evaluated now.
    """
    if not session.history:
        return 0
    try:
        tokens = session.render().tokens
    except ContextOverflowError:
        return 0
    return backend.prefill(tokens[:-1])  # every next message starts with <|start|>; the role is unknown


class TurnDecoding:
    """The part of a turn both loops share: the prompt, the decoder, the constrained stream, the record.

    :func:`run_turn` feeds it from a thread, :func:`stream_turn` from the event loop; each feeds it
    groups of ids that end at a special token at the latest (so the stream acts on harmony's
    structure before the next token, see :class:`~harmony_chat.generation.constrained.ConstrainedStream`).

    Raises:
        harmony_chat.errors.ContextOverflowError: when the prompt cannot fit the context.
    """

    def __init__(
        self,
        session: ChatSession,
        backend: ModelBackend,
        options: TurnOptions,
        should_stop: Callable[[], bool],
        stream_should_stop: Callable[[], bool] | None = None,
    ) -> None:
        from harmony_chat.generation.constrained import ConstrainedStream
        from harmony_chat.harmony.decoder import StreamDecoder

        self.session = session
        self.should_stop = should_stop
        self.effort = options.effort or session.effort
        requested = options.sampling.max_tokens
        self.prompt = session.render(self.effort, max_new_tokens=requested)
        room = self.prompt.answer_room
        self.max_tokens = requested if room is None else max(1, min(requested, room))
        self.ready = PromptReady(self.prompt, self.max_tokens, requested)
        self.decoder = StreamDecoder(
            session.encoding,
            functions=session.function_names,
            stop_on_final=options.stop_on_final,
            raw_tokens=options.raw_tokens,
        )
        self.recoveries = 0
        self.generated = 0
        self.stream = ConstrainedStream(
            backend,
            self.prompt.tokens,
            replace(options.sampling, max_tokens=self.max_tokens),
            tk.GENERATION_STOPS,
            stream_should_stop or should_stop,
            options.tool_schemas,
            options.final_schema,
            required_calls(options.tool_choice, session.function_names),
            session.encoding,
        )

    @property
    def done(self) -> bool:
        """Whether the decoder has seen the turn's end."""
        return self.decoder.finished is not None

    def feed(self, tokens: Iterable[int]) -> list[DecoderEvent]:
        """Decode ``tokens`` (up to the turn's end), letting the stream act on each event; return the events."""
        events: list[DecoderEvent] = []
        decoder, stream = self.decoder, self.stream
        for token in tokens:
            self.generated += 1
            for event in decoder.feed(token):
                if isinstance(event, Recovery):
                    self.recoveries += 1
                stream.on_event(event)
                events.append(event)
            if decoder.finished is not None:
                break
        return events

    def finish(self, failure: Exception | None) -> list[TurnEvent]:
        """Close the decoder (why the turn ended), record the turn in the session, and add its :class:`TurnStats`."""
        from harmony_chat.harmony.session import TurnRecord

        decoder = self.decoder
        events: list[TurnEvent] = []
        if decoder.finished is None:
            if failure is not None:
                reason = StopReason.ERROR
            elif self.should_stop():
                reason = StopReason.CANCELLED
            elif self.generated >= self.max_tokens:
                reason = StopReason.LENGTH
            else:
                reason = StopReason.RETURN
            events.extend(decoder.finish(reason))
        finished = decoder.finished
        assert finished is not None
        stats = self.stream.stats
        record = TurnRecord(self.effort, finished.reason.value, finished.truncated, stats.as_dict())
        self.session.add_assistant_turn(finished.messages, record)
        events.append(
            TurnStats(
                finished.reason,
                self.effort,
                stats,
                finished.truncated,
                self.recoveries,
                self.prompt.evicted_turns,
                str(failure) if failure else None,
                self.max_tokens,
            )
        )
        return events


def run_turn(
    session: ChatSession,
    backend: ModelBackend,
    options: TurnOptions | None = None,
    should_stop: Callable[[], bool] = lambda: False,
    *,
    background: bool = True,
) -> Iterator[TurnEvent]:
    """Generate one assistant turn and record it in ``session``.

    Yields :class:`PromptReady`, then the decoder's events as tokens arrive, then one
    :class:`TurnStats`. Whatever was generated is recorded, also when the turn was cancelled or
    the backend failed (the error is then re-raised after the stats).

    With ``background``, a backend whose work is native (:attr:`ModelBackend.native_generation`)
    generates on a thread of its own while the events of the tokens before are decoded and
    handled (:func:`~harmony_chat.generation.producer.batches_in_background`); a caller that uses
    the backend between two tokens of the turn (a reasoning summary pausing it) passes False.
    Elsewhere (an engine's stream, parsed in Python) a second thread would only take turns with
    the first for the GIL.

    Raises:
        harmony_chat.errors.ContextOverflowError: when the prompt cannot fit the context.
    """
    background = background and backend.native_generation
    stopping = threading.Event()
    turn = TurnDecoding(
        session,
        backend,
        options or TurnOptions(),
        should_stop,
        (lambda: stopping.is_set() or should_stop()) if background else None,
    )
    yield turn.ready
    failure: Exception | None = None
    tokens = iter(turn.stream)
    batches = batches_in_background(tokens, stopping) if background else token_batches(tokens)
    try:
        for batch in batches:
            yield from turn.feed(batch)
            if turn.done:
                break
    except Exception as error:  # the backend failed mid-stream: keep what we have
        failure = error
    finally:
        batches.close()
        tokens.close()
    yield from turn.finish(failure)
    if failure is not None:
        raise failure


async def stream_turn(
    session: ChatSession,
    backend: ModelBackend,
    options: TurnOptions | None = None,
    should_stop: Callable[[], bool] = lambda: False,
) -> AsyncGenerator[list[TurnEvent], None]:
    """:func:`run_turn` on the event loop, for a backend with ``streams_on_event_loop``: the events in groups.

    Yields ``[PromptReady]``, then the events of each arrival from the engine (decoded where they
    arrive: no thread, no hand-over), then the closing events with :class:`TurnStats`. Whatever
    was generated is recorded, also when the backend failed (the error is then raised after the
    stats); a cancelled task records nothing more.

    Raises:
        harmony_chat.errors.ContextOverflowError: when the prompt cannot fit the context.
    """
    turn = TurnDecoding(session, backend, options or TurnOptions(), should_stop)
    yield [turn.ready]
    failure: Exception | None = None
    groups = turn.stream.groups()
    try:
        async for group in groups:
            events = turn.feed(group)
            if events:
                yield list(events)
            if turn.done:
                break
    except Exception as error:  # the backend failed mid-stream: keep what we have
        failure = error
    finally:
        await groups.aclose()
    yield turn.finish(failure)
    if failure is not None:
        raise failure
