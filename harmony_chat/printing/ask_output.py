"""How ``ask`` writes a turn: the answer on stdout, notices on stderr, or JSON Lines.

stdout carries the answer only (or raw tokens with ``--raw``, or JSON Lines with ``--json``);
preambles, tool calls and results and notices go to stderr. What counts as an answer, a preamble
or hidden reasoning is decided by :mod:`~harmony_chat.harmony.visibility`: hidden text (analysis,
text without a header, unknown channels) is never printed, not even inside ``--json`` events,
unless ``--reasoning raw`` (``--show-reasoning``) asks for it (labelled, on stderr). In summary
mode the model's summary of it goes to stderr as ``[summary] …`` (nothing when it failed), and to
``--json`` as a ``summary`` event with what it cost. Citations of the browser's pages in the answer
are shown as ``[1]`` with the sources after the answer (see :mod:`.citations`).

Everything the model, a tool or a page wrote reaches the terminal through
:func:`~harmony_chat.text_safety.visible`: escape sequences show as ``␛[…`` and are never obeyed.
``--json`` keeps the exact text instead, every control character escaped
(:func:`~harmony_chat.text_safety.terminal_json`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import IO, assert_never

from harmony_chat.chat.events import (
    ApprovalRequested,
    ChatEvent,
    Notice,
    ReasoningSummary,
    StepStarted,
    SummaryStarted,
    ToolFinished,
    ToolLoopLimit,
    ToolStarted,
)
from harmony_chat.generation.turn import PromptReady, TurnStats
from harmony_chat.harmony.events import (
    ContentDelta,
    DecoderEvent,
    MessageFinished,
    MessageStarted,
    NoAnswer,
    RawToken,
    Recovery,
    ToolCall,
    TurnFinished,
)
from harmony_chat.harmony.header import plain_content_type
from harmony_chat.harmony.session import ChatSession
from harmony_chat.harmony.visibility import Display, MessageKind, display_of, kind_of, message_kind
from harmony_chat.printing.citations import CitedAnswer, SourcesGetter, citations_payload
from harmony_chat.text_safety import terminal_json, visible


@dataclass(slots=True)
class OutputMode:
    """How ``ask`` prints (the flags of the command line that are about output)."""

    show_prompt: bool = False
    show_reasoning: bool = False
    """Print the raw chain of thought (raw mode)."""
    raw: bool = False
    json: bool = False
    max_tokens: int = 4096
    """The ``--max-tokens`` asked for (to tell a cut-off by the context from one by the limit)."""
    tools: bool = False
    """Whether tool calls are run (else a call ends the turn waiting for a result)."""


class AskPrinter:
    """Writes turn events to stdout and stderr in the mode ``ask`` was given.

    ``sources`` gives the pages the answer's citations can name (the conversation's
    ``citation_sources``); without it every citation is unresolved and left out.
    """

    def __init__(
        self,
        request: OutputMode,
        out: IO[str],
        err: IO[str],
        session: ChatSession,
        sources: SourcesGetter | None = None,
    ) -> None:
        self.request = request
        self.out = out
        self.err = err
        self.session = session
        self.sources: SourcesGetter = sources or dict
        self._answer: CitedAnswer | None = None
        self._wrote_final = ""
        self._stderr_open = False
        self.no_answer = False
        """True once the turn ended without an answer (a NoAnswer event)."""
        self.summaries: list[ReasoningSummary] = []
        """The step's reasoning summaries (their cost goes into its ``--json`` stats line)."""

    def _note(self, text: str) -> None:
        """A line on stderr; what the model, a tool or the engine wrote in it shows its control characters."""
        self._end_stderr_line()
        print(visible(text), file=self.err, flush=True)

    def _end_stderr_line(self) -> None:
        if self._stderr_open:
            print(file=self.err, flush=True)
            self._stderr_open = False

    def _stderr_label(self, channel: str | None, recipient: str | None) -> str | None:
        """The label text on ``channel`` gets on stderr, or None when it is not printed there."""
        display = display_of(channel, recipient)
        if display is Display.PREAMBLE:
            return "[preamble] "
        if display is Display.DEBUG and self.request.show_reasoning:
            return "[reasoning] "
        return None

    def handle(self, event: ChatEvent) -> None:
        """Print one event."""
        match event:
            case (
                RawToken()
                | ContentDelta()
                | MessageStarted()
                | MessageFinished()
                | ToolCall()
                | Recovery()
                | NoAnswer()
                | TurnFinished()
            ):
                self._decoder_event(event)
            case StepStarted() | ToolStarted() | ToolFinished() | ToolLoopLimit() | Notice():
                self._loop_event(event)
            case ReasoningSummary() | SummaryStarted():
                self._summary(event)
            case ApprovalRequested():
                pass  # the terminal approver asks on stderr; the call's result says how it was decided
            case PromptReady():
                self._prompt(event)
            case TurnStats():
                if self.request.json:
                    self._json(event)
                self._finish(event)
            case _:
                assert_never(event)

    def _prompt(self, event: PromptReady) -> None:
        """The prompt on stderr (``--show-prompt``), and a word when the context leaves the answer little room."""
        if self.request.show_prompt:
            self._note("[prompt] " + self.session.encoding.decode(event.prompt.tokens))
        if event.answer_capped:
            self._note(
                f"[context] only {event.max_tokens} tokens are left for the answer "
                f"(the prompt takes {len(event.prompt.tokens)} of --ctx {self.session.context_size})"
            )

    def _decoder_event(self, event: DecoderEvent) -> None:
        """A JSON event, a raw token (``--raw``: nothing else is printed), or the text a reader sees."""
        if self.request.json:
            self._json(event)
        elif self.request.raw:
            if isinstance(event, RawToken):
                self.out.write(visible(event.text))
                self.out.flush()
        else:
            self._text(event)

    def _text(self, event: DecoderEvent) -> None:
        """The answer on stdout; preambles, reasoning (raw mode), calls and repairs on stderr."""
        match event:
            case ContentDelta():
                self._delta(event)
            case MessageStarted():
                self._message_started(event)
            case MessageFinished():
                self._end_answer()
                self._end_stderr_line()
            case ToolCall():
                if event.runnable:
                    self._note(f"[tool call] {event.name} {event.arguments}")
                else:
                    self._note(f"[tool call] {event.name} was not run: {event.error}")
            case Recovery():
                self._note(f"[recovered] {event.kind}: {event.detail}")
            case NoAnswer():
                self._no_answer(event)
            case RawToken() | TurnFinished():
                pass  # tokens only with --raw; the turn's end is told by its TurnStats
            case _:
                assert_never(event)

    def _delta(self, event: ContentDelta) -> None:
        if display_of(event.channel, event.recipient) is Display.ANSWER:
            self._write_answer(self._answer.feed(event.text) if self._answer else event.text)
        elif self._stderr_label(event.channel, event.recipient) is not None:
            self.err.write(visible(event.text))
            self.err.flush()

    def _message_started(self, event: MessageStarted) -> None:
        if kind_of(event.channel, event.recipient, event.content_type) is MessageKind.FINAL:
            self._answer = CitedAnswer(self.sources)  # a constrained (JSON) answer is left as it is
        if (label := self._stderr_label(event.channel, event.recipient)) is not None:
            self._end_stderr_line()
            self.err.write(label)
            self._stderr_open = True

    def _write_answer(self, text: str) -> None:
        if text:
            self.out.write(visible(text))
            self.out.flush()
            self._wrote_final = text

    def _end_answer(self) -> None:
        """Write the rest of a streamed answer and the sources its citations name."""
        if self._answer is None:
            return
        rest, sources = self._answer.finish()
        self._answer = None
        self._write_answer(rest)
        if sources:
            self._write_answer(("" if self._wrote_final.endswith("\n") else "\n") + "\n" + "\n".join(sources) + "\n")

    def _loop_event(self, event: StepStarted | ToolStarted | ToolFinished | ToolLoopLimit | Notice) -> None:
        """Print an event of the tool loop (JSON, or a labelled line on stderr)."""
        if self.request.json:
            self._json_loop_event(event)
            return
        match event:
            case StepStarted():
                pass  # a step shows as its tool calls and text
            case ToolStarted():
                self._note(f"[tool] running {event.name}")
            case ToolFinished():
                result = event.result
                first = result.text.strip().splitlines()[0] if result.text.strip() else ""
                more = " …" if len(result.text.strip().splitlines()) > 1 else ""
                self._note(f"[tool result] {event.name} ({result.status}, {result.elapsed_s:.1f} s): {first}{more}")
            case ToolLoopLimit():
                self._note(f"[stopped] the turn reached --max-steps {event.max_steps}; the last tool call was not run")
            case Notice():
                self._note(f"[notice] {event.text}")
            case _:
                assert_never(event)

    def _json_loop_event(self, event: StepStarted | ToolStarted | ToolFinished | ToolLoopLimit | Notice) -> None:
        payload: dict[str, object]
        match event:
            case StepStarted():
                payload = {"type": "step", "step": event.step}
            case ToolStarted():
                payload = {"type": "tool_started", "id": event.call_id, "name": event.name, "server": event.server}
            case ToolFinished():
                result = event.result
                payload = {
                    "type": "tool_result",
                    "id": event.call_id,
                    "name": event.name,
                    "server": event.server,
                    "status": result.status,
                    "approval": event.approval,
                    "text": result.text,
                    "truncated": result.truncated,
                    "elapsed_s": round(result.elapsed_s, 3),
                }
            case ToolLoopLimit():
                payload = {"type": "tool_loop_limit", "max_steps": event.max_steps}
            case Notice():
                payload = {"type": "notice", "text": event.text, "severity": event.severity}
            case _:
                assert_never(event)
        print(terminal_json(payload), file=self.out, flush=True)

    def _summary(self, event: ReasoningSummary | SummaryStarted) -> None:
        """A summary goes to stderr as ``[summary] …`` (nothing when it failed), or out as JSON events."""
        match event:
            case ReasoningSummary():
                self.summaries.append(event)
                if self.request.json:
                    print(terminal_json(event.as_dict()), file=self.out, flush=True)
                elif event.text is not None:
                    self._note(f"[summary] {event.text}")
            case SummaryStarted():
                if self.request.json:
                    payload = {
                        "type": "summary_started",
                        "part": event.part,
                        "live": event.live,
                        "analysis_tokens": event.analysis_tokens,
                    }
                    print(terminal_json(payload), file=self.out, flush=True)
            case _:
                assert_never(event)

    def _summary_totals(self) -> dict[str, object]:
        """What the step's summaries added (nothing without summaries); starts the next step's count."""
        if not self.summaries:
            return {}
        figures = [summary.stats for summary in self.summaries]
        totals: dict[str, object] = {
            "summaries": len(self.summaries),
            "summary_tokens": sum(stats.generated_tokens for stats in figures),
            "summary_prompt_tokens_evaluated": sum(stats.prompt_tokens_evaluated for stats in figures),
            "summary_s": round(sum(summary.seconds for summary in self.summaries), 6),
        }
        self.summaries = []
        return totals

    def _no_answer(self, event: NoAnswer) -> None:
        self.no_answer = True
        self._note(f"[no answer] {event.detail}")

    def _hidden(self, channel: str | None, recipient: str | None) -> bool:
        """Whether text on ``channel`` must stay out of this output (not a debug view)."""
        return not self.request.show_reasoning and display_of(channel, recipient) is Display.DEBUG

    def _json(self, event: DecoderEvent | TurnStats) -> None:
        print(terminal_json(self._json_payload(event)), file=self.out, flush=True)
        if isinstance(event, MessageFinished) and message_kind(event.message) is MessageKind.FINAL:
            cited = citations_payload(event.text, self.sources())
            if cited is not None:
                print(terminal_json(cited), file=self.out, flush=True)

    def _json_payload(self, event: DecoderEvent | TurnStats) -> dict[str, object]:
        """The ``--json`` event for ``event`` (hidden text left out); a NoAnswer is also noted on stderr."""
        payload: dict[str, object]
        match event:
            case RawToken():
                payload = {
                    "type": "token",
                    "id": event.token_id,
                    "text": event.text,
                    "special": event.special,
                    "channel": event.channel,
                }
                if self._hidden(event.channel, event.recipient) or (event.special and not self.request.show_reasoning):
                    payload.pop("text")  # header words, markup and hidden text are for debug views only
            case ContentDelta():
                payload = {"type": "delta", "channel": event.channel, "text": event.text, "recipient": event.recipient}
                if self._hidden(event.channel, event.recipient):
                    payload.pop("text")
            case MessageStarted():
                payload = {
                    "type": "message_started",
                    "channel": event.channel,
                    "recipient": event.recipient,
                    "content_type": plain_content_type(event.content_type),
                }
            case MessageFinished():
                payload = {
                    "type": "message_finished",
                    "channel": event.channel,
                    "recipient": event.message.recipient,
                    "text": event.text,
                    "end_token": event.end_token,
                    "truncated": event.truncated,
                }
                if self._hidden(event.channel, event.message.recipient):
                    payload.pop("text")
            case ToolCall():
                payload = {
                    "type": "tool_call",
                    "name": event.name,
                    "recipient": event.recipient,
                    "arguments": event.arguments,
                    "channel": event.channel,
                    "content_type": plain_content_type(event.content_type),
                    "repaired": event.repaired,
                    "error": event.error,
                }
            case Recovery():
                payload = {"type": "recovery", "kind": event.kind, "detail": event.detail}
            case NoAnswer():
                self._no_answer(event)
                payload = {"type": "no_answer", "detail": event.detail}
            case TurnFinished():
                payload = {"type": "turn_finished", "reason": event.reason.value, "truncated": event.truncated}
            case TurnStats():
                payload = event.as_dict() | self._summary_totals()
            case _:
                assert_never(event)
        return payload

    def _finish(self, event: TurnStats) -> None:
        if not self.request.json:
            self._end_answer()
            if self.request.raw or (self._wrote_final and not self._wrote_final.endswith("\n")):
                print(file=self.out, flush=True)
            self._end_stderr_line()
        if event.reason.value == "cancelled":
            self._note("[stopped] generation was interrupted")
        elif event.reason.value == "length" and event.max_tokens < self.request.max_tokens:
            self._note(f"[stopped] the answer was cut off at {event.max_tokens} tokens, the room left in the context")
        elif event.reason.value == "length":
            self._note(f"[stopped] the answer was cut off at --max-tokens {self.request.max_tokens}")
        elif event.reason.value == "call" and not self.no_answer and not self.request.json and not self.request.tools:
            self._note("[waiting] add the tool result to the saved conversation and continue with --conversation")
        if event.evicted_turns:
            self._note(f"[context] left out the {event.evicted_turns} oldest turns to fit the context")
