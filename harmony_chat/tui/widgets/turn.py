"""One exchange in the conversation: the user's message, and the assistant turn that answers it.

The assistant turn turns engine events into widgets: the final answer streams as Markdown
through ``MarkdownStream`` (citations as numbered links, see :mod:`~harmony_chat.tui.widgets.answer`);
commentary preambles are quiet lines; tool calls are collapsible rows that follow the call through
approval, running and its result (a tool loop's steps all land in one turn), with the browser's
searches and pages listed under them; the model's summaries of its reasoning are quiet blocks
above the answer (shown in summary mode); analysis (raw chain of thought) is kept in a block that
only raw mode and debug mode show, while a thinking indicator counts its tokens.
"""

from __future__ import annotations

import re
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, assert_never

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Static

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
    MessageFinished,
    MessageStarted,
    NoAnswer,
    RawToken,
    Recovery,
    StopReason,
    ToolCall,
    TurnFinished,
)
from harmony_chat.harmony.messages import message_text
from harmony_chat.harmony.visibility import Display, MessageKind, display_of, message_kind, rule_of
from harmony_chat.tui.literal import literal
from harmony_chat.tui.widgets.answer import Answer
from harmony_chat.tui.widgets.reasoning import SummaryBlock, VisitList
from harmony_chat.tui.widgets.tool_row import ToolCallRow, ToolRow

__all__ = ["Answer", "AssistantTurn", "ToolCallRow", "ToolRow", "UserMessage", "code_blocks"]

if TYPE_CHECKING:
    from openai_harmony import Message

    from harmony_chat.tools.browser.tool import Visit
    from harmony_chat.tui.citing import SourceLookup

_FENCE = re.compile(r"```[^\n]*\n(.*?)```", re.S)
ANALYSIS_SHOWN = ("-debug", "-reasoning-raw")
"""The screen classes under which the raw analysis is shown (debug mode, raw reasoning mode)."""
ANALYSIS_SEPARATOR = "\n\n"
"""Between two analysis messages of a turn in the raw view."""


def code_blocks(markdown: str) -> list[str]:
    """Return the contents of the fenced code blocks in ``markdown``."""
    return [match.group(1).rstrip("\n") for match in _FENCE.finditer(markdown)]


def summary_cost(summaries: Sequence[ReasoningSummary]) -> str:
    """What the turn's reasoning summaries cost: tokens written, prompt tokens evaluated, seconds waited."""
    written = sum(summary.stats.generated_tokens for summary in summaries)
    evaluated = sum(summary.stats.prompt_tokens_evaluated for summary in summaries)
    seconds = sum(summary.seconds for summary in summaries)
    count = f"{len(summaries)} summaries" if len(summaries) > 1 else "summary"
    return f"{count} {written} tokens (+{evaluated} prompt) in {seconds:.2f}s"


class UserMessage(Static):
    """What the user sent, shown exactly as typed."""

    DEFAULT_CSS = """
    UserMessage { background: $user-message; padding: 0 1; margin: 1 0 0 0; }
    """

    def __init__(self, text: str) -> None:
        super().__init__(literal(text), markup=False)
        self.text = text
        """The message as sent."""


class AssistantTurn(Vertical):
    """The widgets of one assistant turn, fed by batches of engine events."""

    DEFAULT_CSS = """
    AssistantTurn { height: auto; margin: 1 0 0 0; }
    AssistantTurn .thinking { color: $text-muted; padding: 0 1; text-style: italic; }
    AssistantTurn .analysis { display: none; color: $channel-analysis; border-left: thick $channel-analysis;
                              padding: 0 1; margin: 0 0 1 0; }
    AssistantTurn .preamble { color: $channel-commentary; padding: 0 1; text-style: italic; }
    AssistantTurn .notice { color: $text-muted; padding: 0 1; }
    AssistantTurn .error { color: $error; padding: 0 1; text-style: bold; }
    AssistantTurn .footer { color: $text-muted; padding: 0 1; }
    AssistantTurn Collapsible { margin: 0 1; }
    """

    def __init__(self, turn_id: int, effort: str, sources: SourceLookup | None = None) -> None:
        super().__init__(id=f"turn-{turn_id}")
        self.sources = sources
        """Gives the pages the answer's citations can name (None: none can be cited)."""
        self.turn_id = turn_id
        self.effort = effort
        self.final_text = ""
        self.analysis_tokens = 0
        self.answer_tokens = 0
        self.stop_reason: StopReason | None = None
        self.recoveries: list[str] = []
        self.no_answer = False
        self._started = time.monotonic()
        self._thinking = Static("Thinking…", classes="thinking", markup=False)
        self._answer: Answer | None = None
        self._analysis: Static | None = None
        self._analysis_text: list[str] = []
        self._analysis_break = False
        """A new analysis message began: a blank line separates it from the one before."""
        self._preamble: Static | None = None
        self._preamble_text = ""
        self._channel: str | None = None
        self._recipient: str | None = None
        self._call: ToolCallRow | None = None
        """The last tool call's row (approval, running and the result land here)."""
        self._stats: TurnStats | None = None
        self._generated = 0
        self._steps = 0
        self.closed = False
        self.summarising = False
        """Whether the model is writing a summary of its reasoning right now (the turn waits for it)."""
        self.summaries: list[ReasoningSummary] = []
        """Every summary of this turn (failed ones too: they cost as much)."""
        self._summary: SummaryBlock | None = None
        """The block of the current analysis's summary (a later summary of it replaces the text)."""
        self._visits: VisitList | None = None

    def compose(self) -> ComposeResult:
        """Build the widget tree."""
        yield self._thinking

    @property
    def thinking(self) -> bool:
        """Whether the model is reasoning (analysis) right now."""
        return self.stop_reason is None and self._channel in (None, "analysis")

    @property
    def tool_running(self) -> bool:
        """Whether a tool call of this turn is being asked about or runs."""
        return self._call is not None and self._call.state in ("asking", "running")

    def tick(self) -> None:
        """Refresh the thinking indicator's live count and elapsed time, and a running tool's."""
        if self.stop_reason is None and self._thinking.display:
            seconds = time.monotonic() - self._started
            label = "Thinking" if self._channel in (None, "analysis") else "Working"
            doing = " · writing a summary of the reasoning" if self.summarising else ""
            self._thinking.update(f"{label}… {self.analysis_tokens} tokens · {seconds:.1f}s{doing}")
        if self._call is not None:
            self._call.tick()

    async def apply(self, events: list[ChatEvent]) -> None:
        """Render a batch of events, coalescing consecutive deltas of the answer."""
        pending = ""
        for event in events:
            if isinstance(event, ContentDelta) and display_of(event.channel, event.recipient) is Display.ANSWER:
                pending += event.text
                continue
            if pending and not isinstance(event, RawToken):  # a token count needs no flush: one write per batch
                await self._write_answer(pending)
                pending = ""
            await self._apply_one(event)
        if pending:
            await self._write_answer(pending)
        self.tick()

    async def _apply_one(self, event: ChatEvent) -> None:
        match event:
            case RawToken():
                self._count(event)
            case ContentDelta():
                await self._apply_delta(event)
            case MessageStarted():
                self._message_started(event)
            case ToolCall():
                self._call = ToolCallRow(event.name, event.arguments, event.runnable)
                await self.mount(self._call, before=self._answer)
            case NoAnswer():
                self.no_answer = True
                await self.mount(Static("The model gave no answer.", classes="notice no-answer", markup=False))
            case Recovery():
                self.recoveries.append(event.kind)
                notice = f"Repaired malformed model output ({event.kind}): {event.detail}"
                await self.mount(Static(literal(notice), classes="notice", markup=False))
            case TurnStats():
                await self._apply_stats(event)
            case StepStarted() | ApprovalRequested() | ToolStarted() | ToolFinished() | ToolLoopLimit():
                await self._apply_tool_event(event)
            case SummaryStarted():
                self.summarising = True
            case ReasoningSummary():
                await self._apply_summary(event)
            case MessageFinished() | TurnFinished() | PromptReady() | Notice():
                pass  # the screen shows notices; the turn's end shows from its TurnStats
            case _:
                assert_never(event)

    def _count(self, token: RawToken) -> None:
        if token.channel == "analysis":
            self.analysis_tokens += 1
        elif token.channel == "final":
            self.answer_tokens += 1

    def _message_started(self, event: MessageStarted) -> None:
        self._channel, self._recipient = event.channel, event.recipient
        self._preamble = None
        if display_of(event.channel, event.recipient) is Display.DEBUG:
            self._summary = None  # another analysis: its summary gets a block of its own
            self._analysis_break = bool(self._analysis_text)

    async def _apply_delta(self, event: ContentDelta) -> None:
        """A preamble's or the analysis's text (the answer's is written by :meth:`apply`, in one piece per batch)."""
        display = display_of(event.channel, event.recipient)
        if display is Display.PREAMBLE:
            await self._write_preamble(event.text)
        elif display is Display.DEBUG:
            await self._add_analysis(event.text)

    async def _apply_stats(self, event: TurnStats) -> None:
        self._stats = event
        self._generated += event.stats.generated_tokens
        self.stop_reason = event.reason
        self._thinking.display = False
        if event.reason is not StopReason.CALL:
            await self._finish(event)

    async def _apply_tool_event(
        self, event: StepStarted | ApprovalRequested | ToolStarted | ToolFinished | ToolLoopLimit
    ) -> None:
        match event:
            case StepStarted():
                self._steps = event.step
                if event.step > 1:  # the model goes on with the tool's result
                    self.stop_reason, self._channel, self._preamble = None, None, None
                    self._thinking.display = True
            case ApprovalRequested():
                if not event.answer.done():  # not already withdrawn: the turn was stopped meanwhile
                    row = await self._call_row(event.name, "")
                    row.asking()
            case ToolStarted():
                row = await self._call_row(event.name, event.arguments)
                row.running(event.server)
            case ToolFinished():
                row = await self._call_row(event.name, "")
                row.finished(event.server, event.result, event.approval)
            case ToolLoopLimit():
                notice = f"Stopped after {event.max_steps} steps (the limit per turn); the last call was not run."
                await self.mount(Static(notice, classes="notice tool-limit", markup=False), before=self._answer)
            case _:
                assert_never(event)

    async def _apply_summary(self, summary: ReasoningSummary) -> None:
        self.summarising = False
        self.summaries.append(summary)
        if summary.text is not None:  # a failed summary shows nothing, never raw text
            await self.add_summary(summary.text, summary.live)

    async def add_summary(self, text: str, live: bool = False) -> None:
        """Show a summary of the current analysis (replacing a live one of the same analysis)."""
        if self._summary is not None and self._summary.live:
            self._summary.replace(text, live)
            return
        self._summary = SummaryBlock(text, live)
        await self.mount(self._summary, before=self._answer)

    async def show_visits(self, visits: Sequence[Visit]) -> None:
        """List the browser's searches and pages of this turn (all of them so far) under its tool rows."""
        if not visits:
            return
        if self._visits is None:
            self._visits = VisitList()
            await self.mount(self._visits, before=self._answer)
        elif self._call is not None and self.children.index(self._visits) < self.children.index(self._call):
            self.move_child(self._visits, after=self._call)
        self._visits.show(visits)

    def copy_text(self) -> str:
        """The answer to copy (citations as Markdown footnotes), or ``""``."""
        return self._answer.copy_text() if self._answer is not None else ""

    async def _call_row(self, name: str, arguments: str) -> ToolCallRow:
        if self._call is None or self._call.state not in (None, "asking", "running"):
            self._call = ToolCallRow(name, arguments)
            await self.mount(self._call, before=self._answer)
        return self._call

    async def close(self, stopped: bool) -> None:
        """The turn's worker ended: finish a turn that stopped between steps (a tool call, a stop)."""
        if self.closed or self._stats is None:
            return
        if self.stop_reason is StopReason.CALL or self.stop_reason is None:
            self._thinking.display = False
            await self._finish(self._stats, stopped)

    async def _write_answer(self, text: str) -> None:
        if self._answer is None:
            self._answer = Answer(self.sources)
            await self.mount(self._answer)
            self._thinking.display = False
        self.final_text += text
        await self._answer.write(text)

    async def _write_preamble(self, text: str) -> None:
        self._preamble_text = text if self._preamble is None else self._preamble_text + text
        if self._preamble is None:
            self._preamble = Static("", classes="preamble", markup=False)
            await self.mount(self._preamble, before=self._answer)
        self._preamble.update(literal(self._preamble_text))

    async def _add_analysis(self, text: str) -> None:
        """Add raw analysis text; a new analysis message starts after a blank line."""
        if self._analysis_break:
            self._analysis_break = False
            self._analysis_text.append(ANALYSIS_SEPARATOR)
        self._analysis_text.append(text)
        await self._ensure_analysis()

    async def _ensure_analysis(self) -> None:
        if self._analysis is None:
            self._analysis = Static("", classes="analysis", markup=False)
            await self.mount(self._analysis, after=self._thinking)
        if any(self.screen.has_class(name) for name in ANALYSIS_SHOWN):
            self.show_analysis()

    def show_analysis(self) -> None:
        """Bring the analysis block up to date (called when debug mode shows it)."""
        if self._analysis is not None:
            self._analysis.update(
                literal("Analysis (raw chain of thought, not reviewed for safety)\n" + "".join(self._analysis_text))
            )

    async def add_tool_result(self, name: str, output: str) -> None:
        """Show a stored tool result: in its call's row, or as a row of its own."""
        if self._call is not None and self._call.state is None and self._call.tool_name == name:
            self._call.restored(output)
        else:
            await self.mount(ToolRow(f"Tool result ← {name}", output))

    async def _finish(self, stats: TurnStats, stopped: bool = False) -> None:
        self.closed = True
        self.stop_reason = stats.reason
        if self._answer is not None:
            await self._answer.finish()
        self._thinking.display = False
        figures = stats.stats
        parts = [f"effort {stats.effort}", f"{self._generated} tokens"]
        if self._steps > 1:
            parts.append(f"{self._steps} steps")
        if figures.decode_tokens_per_s:
            parts.append(f"{figures.decode_tokens_per_s:.1f} tok/s")
        if stats.reason is StopReason.CANCELLED or stopped:
            parts.insert(0, "■ stopped")
        elif stats.truncated or stats.reason is StopReason.LENGTH:
            parts.insert(0, "✂ cut off at the token limit")
        elif (
            stats.reason is StopReason.CALL and not self.no_answer and (self._call is None or self._call.state is None)
        ):
            parts.insert(0, "the tool call was not run (no tools are available)")
        if stats.evicted_turns:
            parts.append(f"{stats.evicted_turns} oldest turns left out of the context")
        if self.summaries:
            parts.append(summary_cost(self.summaries))
        await self.mount(Static(literal(" · ".join(parts)), classes="footer", markup=False))

    async def show_stored(
        self, messages: list[Message], status: str, summaries: Sequence[tuple[int, str]] = ()
    ) -> None:
        """Show a turn read back from the history (no stream to follow).

        ``summaries`` are (index, text): the reasoning summary shown before ``messages[index]``
        (an index past the end: after the last message).
        """
        waiting = sorted(summaries, key=lambda item: item[0])
        for index, message in enumerate(messages):
            while waiting and waiting[0][0] <= index:
                self._summary = None
                await self.add_summary(waiting.pop(0)[1])
            text = message_text(message)
            kind = message_kind(message)
            if kind is MessageKind.TOOL_RESULT:
                await self.add_tool_result(message.author.name or "tool", text)
            elif kind is MessageKind.TOOL_CALL:
                self._call = ToolCallRow(message.recipient or "tool", text)
                await self.mount(self._call)
            elif rule_of(message).display is Display.ANSWER:
                await self._write_answer(text)
            elif kind is MessageKind.PREAMBLE:
                self._preamble = None
                await self._write_preamble(text)
            else:
                self._analysis_break = bool(self._analysis_text)
                await self._add_analysis(text)
        for _, text in waiting:
            self._summary = None
            await self.add_summary(text)
        self.stop_reason = StopReason.RETURN
        self.closed = True
        self._thinking.display = False
        if self._answer is not None:
            await self._answer.finish()
        label = "restored from history" + ("" if status == "complete" else f" · {status}")
        await self.mount(Static(literal(f"{label} · effort {self.effort}"), classes="footer", markup=False))

    async def show_error(self, message: str) -> None:
        """Show an engine error in this turn."""
        self._thinking.display = False
        if self._answer is not None:
            await self._answer.finish()
        await self.mount(Static(literal(f"⚠ {message}"), classes="error", markup=False))
