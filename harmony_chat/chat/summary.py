"""Reasoning summaries: the model tells the user in a few sentences how it is reaching its answer.

The raw chain of thought is never shown to users (the gpt-oss guidance); in ``summary`` mode the
same model writes a short account of it instead, the way OpenAI's own products do. Each summary
is a separate generation: its prompt is the turn's exact tokens so far (the conversation, then the
analysis), closed, then a summary request (:func:`summary_prompt`), so the KV cache serves all but
the request. Its own output is checked (:func:`check_summary`) and shown only when it is clean
text; it never enters the conversation, the session's history or any later prompt.

:class:`ReasoningWatch` follows one turn's events and asks for a summary when an analysis message
ends and, with live summaries, every ``live_every`` analysis tokens while it goes on: it pauses
the turn's stream (:class:`~harmony_chat.chat.pausable.PausableBackend`), has the summary written,
and lets the turn resume where it was.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from harmony_chat.backends.base import GenerationStats, ModelBackend, SamplingParams
from harmony_chat.chat.events import ReasoningSummary, SummaryStarted
from harmony_chat.chat.pausable import PausableBackend
from harmony_chat.harmony import tokens as tk
from harmony_chat.harmony.events import ContentDelta, MessageFinished, MessageStarted, Recovery, StopReason
from harmony_chat.harmony.messages import message_text
from harmony_chat.harmony.visibility import MessageKind, is_answer, kind_of, message_kind

if TYPE_CHECKING:
    from openai_harmony import HarmonyEncoding

    from harmony_chat.generation.turn import TurnEvent

SUMMARY_REQUEST = (
    "Summarize the reasoning you just did for the user in one to three short sentences, in the language "
    "of the user's message you are answering. Say what you considered and how you went about it; do not "
    "give the answer itself. Leave out anything the developer instructions keep private and anything "
    "unsafe. Plain text only."
)
"""The request after a finished analysis (a user message: the pocket model is trained on this exact text)."""
LIVE_SUMMARY_REQUEST = (
    "Summarize the reasoning you have done so far for the user in one or two short sentences, in the "
    "language of the user's message you are answering. Leave out anything the developer instructions "
    "keep private and anything unsafe. Plain text only."
)
"""The request while the analysis is still going on (live summaries)."""
ANSWER_PREFILL = "<|channel|>final<|message|>"
"""The summary's answer is opened in the prompt: the summary is written at once, with no reasoning of its own."""
SUMMARY_MAX_TOKENS = 200
"""Most tokens a summary may take; one cut off there is not shown."""
MIN_ROOM = 32
"""Fewer free tokens than this in the context: no summary is attempted."""


def summary_prompt(
    encoding: HarmonyEncoding, context: Sequence[int], live: bool = False, request: str = SUMMARY_REQUEST
) -> list[int]:
    """The prompt of a summary: the turn's tokens up to the analysis, closed, then the request.

    ``context`` is the turn's prompt and what it generated so far (ending inside or right after
    an analysis message). Every one of its tokens is kept, so a model that just generated them
    only evaluates the close and the request. ``request`` asks for the summary after a finished
    analysis (a live one always uses :data:`LIVE_SUMMARY_REQUEST`).
    """
    tokens = list(context)
    if tokens and tokens[-1] == tk.START:  # a header the decoder read past a missing <|end|>
        tokens.pop()
    if tokens and tokens[-1] in tk.MESSAGE_STOPS:
        tokens.pop()
    tokens.append(tk.END)
    text = LIVE_SUMMARY_REQUEST if live else request
    tokens += encoding.encode(f"<|start|>user<|message|>{text}<|end|><|start|>assistant", allowed_special="all")
    tokens += encoding.encode(ANSWER_PREFILL, allowed_special="all")
    return tokens


def check_summary(text: str) -> tuple[str | None, str | None]:
    """Return ``(summary, None)`` for clean text, else ``(None, why)``: a failed summary shows nothing."""
    summary = text.strip()
    if not summary:
        return None, "the summarizer wrote nothing"
    if "<|" in summary or "|>" in summary:
        return None, "the summarizer wrote harmony markup"
    return summary, None


class Summarizer:
    """Writes reasoning summaries: with the turn's own model ("same"), or with another one.

    Args:
        encoding: the harmony encoding (the summary model must share gpt-oss's vocabulary).
        backend: the model that writes summaries (a remote engine); None: the turn's own model.
        connect: builds that model when the first summary is due (a remote engine is only reached
            then; if it cannot be, no summary is written and it is not tried again).
        live_every: analysis tokens between live summaries (0: a summary only when an analysis ends).
        max_tokens: most tokens a summary may take.
        request: what the summary of a finished analysis is asked to be (the pocket model is
            trained on :data:`SUMMARY_REQUEST` only; ``serve`` asks for concise or detailed ones).
    """

    def __init__(
        self,
        encoding: HarmonyEncoding,
        backend: ModelBackend | None = None,
        *,
        connect: Callable[[], ModelBackend] | None = None,
        live_every: int = 0,
        max_tokens: int = SUMMARY_MAX_TOKENS,
        request: str = SUMMARY_REQUEST,
    ) -> None:
        self.encoding = encoding
        self.request = request
        self.backend = backend
        self.live_every = max(0, live_every)
        self.max_tokens = max_tokens
        self._connect = connect
        self._loaded = False
        self._unavailable: str | None = None

    def close(self) -> None:
        """Release a summary model of its own (the turn's model is the conversation's to close)."""
        if self.backend is not None:
            self.backend.close()

    def _writer(self, model: ModelBackend) -> ModelBackend:
        """The model that writes the next summary (loaded on first use).

        Raises:
            Exception: whatever connecting or loading raised (remembered: it is not tried again).
        """
        if self._unavailable is not None:
            raise RuntimeError(self._unavailable)
        try:
            if self.backend is None and self._connect is not None:
                self.backend = self._connect()
            if self.backend is not None and not self._loaded:
                self.backend.load()
                self._loaded = True
        except Exception as error:
            self._unavailable = str(error).splitlines()[0] if str(error) else type(error).__name__
            raise
        return self.backend or model

    def watch(self, model: ModelBackend, sampling: SamplingParams, should_stop: Callable[[], bool]) -> ReasoningWatch:
        """A watch for one turn on ``model`` (generate the turn with ``watch.model``)."""
        return ReasoningWatch(self, PausableBackend(model), sampling, should_stop)

    def write(
        self,
        model: ModelBackend,
        context: Sequence[int],
        sampling: SamplingParams,
        *,
        part: int = 1,
        live: bool = False,
        analysis_tokens: int = 0,
        should_stop: Callable[[], bool] = lambda: False,
    ) -> ReasoningSummary:
        """Summarise the reasoning at the end of ``context`` (the turn's tokens) with ``model`` or this one's.

        Never raises: any failure gives a summary without text, saying why.
        """
        started = time.perf_counter()
        writer = model
        text: str | None = None
        failure: str | None = None
        stats = GenerationStats()
        before = writer.last_stats
        try:
            writer = self._writer(model)
            before = writer.last_stats
            prompt = summary_prompt(self.encoding, context, live, self.request)
            room = writer.info.context_size - len(prompt)
            if room < MIN_ROOM:
                failure = "the context has no room for a summary"
            else:
                limits = replace(sampling, max_tokens=min(self.max_tokens, room), json_schema=None)
                text, failure = self._generate(writer, prompt, limits, should_stop)
                stats = writer.last_stats
        except Exception as error:  # any backend may fail in its own way; the turn goes on without a summary
            failure = f"the summarizer failed: {str(error).splitlines()[0] if str(error) else type(error).__name__}"
            stats = writer.last_stats if writer.last_stats is not before else stats
        return ReasoningSummary(
            text, part, live, analysis_tokens, stats, time.perf_counter() - started, None if text else failure
        )

    def _generate(
        self, writer: ModelBackend, prompt: list[int], sampling: SamplingParams, should_stop: Callable[[], bool]
    ) -> tuple[str | None, str | None]:
        from harmony_chat.harmony.decoder import StreamDecoder

        decoder = StreamDecoder(self.encoding, raw_tokens=False)
        for token in self.encoding.encode(ANSWER_PREFILL, allowed_special="all"):
            decoder.feed(token)  # the prompt opened the answer: the decoder starts inside it
        repaired = False
        generated = 0
        stream = writer.generate(prompt, sampling, tk.GENERATION_STOPS, should_stop)
        try:
            for token in stream:
                generated += 1
                repaired |= any(isinstance(event, Recovery) for event in decoder.feed(token))
                if decoder.finished is not None:
                    break
        finally:
            stream.close()
        if decoder.finished is None:
            if should_stop():
                decoder.finish(StopReason.CANCELLED)
            else:
                decoder.finish(StopReason.LENGTH if generated >= sampling.max_tokens else StopReason.RETURN)
        finished = decoder.finished
        assert finished is not None
        if finished.reason is StopReason.CANCELLED:
            return None, "the summary was stopped"
        if finished.reason is StopReason.LENGTH or finished.truncated:
            return None, "the summary was cut off"
        if repaired:
            return None, "the summarizer wrote malformed harmony"
        answers = [message for message in finished.messages if is_answer(message)]
        if not answers:
            return None, "the summarizer wrote nothing"
        return check_summary(message_text(answers[0]))


class ReasoningWatch:
    """Follows one turn's events and has its reasoning summarised where due.

    Generate the turn with :attr:`model` and pass its events through :meth:`interleave`: after the
    event that ends an analysis message (and, live, after every ``live_every`` analysis tokens)
    the turn's stream is paused, a :class:`SummaryStarted` and a :class:`ReasoningSummary` are
    yielded, and the turn resumes when it is next read.
    """

    def __init__(
        self,
        summarizer: Summarizer,
        model: PausableBackend,
        sampling: SamplingParams,
        should_stop: Callable[[], bool],
    ) -> None:
        self.summarizer = summarizer
        self.model = model
        self.sampling = sampling
        self.should_stop = should_stop
        self.summaries: list[ReasoningSummary] = []
        """Every summary of the turn so far (for cost totals)."""
        self._start: int | None = None
        self._next_live = 0

    def interleave(self, events: Iterator[TurnEvent]) -> Iterator[TurnEvent | SummaryStarted | ReasoningSummary]:
        """Yield ``events``, with the summaries where they are due."""
        for event in events:
            yield event
            yield from self._after(event)

    def _after(self, event: TurnEvent) -> Iterator[SummaryStarted | ReasoningSummary]:
        position = len(self.model.context)
        every = self.summarizer.live_every
        if isinstance(event, MessageStarted):
            analysis = kind_of(event.channel, event.recipient, event.content_type) is MessageKind.ANALYSIS
            self._start = position if analysis else None
            self._next_live = position + every
        elif isinstance(event, ContentDelta) and self._start is not None and every and position >= self._next_live:
            self._next_live = position + every
            if not self.should_stop():
                yield from self._summarize(live=True)
        elif isinstance(event, MessageFinished) and message_kind(event.message) is MessageKind.ANALYSIS:
            if self._start is not None and event.text.strip() and not self.should_stop():
                yield from self._summarize(live=False)
            self._start = None

    def _summarize(self, live: bool) -> Iterator[SummaryStarted | ReasoningSummary]:
        part = len(self.summaries) + 1
        covered = len(self.model.context) - (self._start or 0)
        yield SummaryStarted(part, live, covered)
        context = list(self.model.context)
        self.model.pause()
        summary = self.summarizer.write(
            self.model.inner,
            context,
            self.sampling,
            part=part,
            live=live,
            analysis_tokens=covered,
            should_stop=self.should_stop,
        )
        self.summaries.append(summary)
        yield summary
