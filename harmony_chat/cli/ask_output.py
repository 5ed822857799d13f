"""How ``ask`` writes a turn: the answer on stdout, notices on stderr, or JSON Lines.

stdout carries the answer only (or raw tokens with ``--raw``, or JSON Lines with ``--json``);
preambles, tool calls and results and notices go to stderr. What counts as an answer, a preamble
or hidden reasoning is decided by :mod:`~harmony_chat.harmony.visibility`: hidden text (analysis,
text without a header, unknown channels) is never printed, not even inside ``--json`` events,
unless ``--show-reasoning`` asks for it (labelled, on stderr).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import IO

from harmony_chat.chat.events import ChatEvent, Notice, StepStarted, ToolFinished, ToolLoopLimit, ToolStarted
from harmony_chat.harmony.events import (
    ContentDelta,
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
from harmony_chat.harmony.turn import PromptReady, TurnEvent, TurnStats
from harmony_chat.harmony.visibility import Display, display_of


@dataclass(slots=True)
class OutputMode:
    """How ``ask`` prints (the flags of the command line that are about output)."""

    show_prompt: bool = False
    show_reasoning: bool = False
    raw: bool = False
    json: bool = False
    max_tokens: int = 4096
    """The ``--max-tokens`` asked for (to tell a cut-off by the context from one by the limit)."""
    tools: bool = False
    """Whether tool calls are run (else a call ends the turn waiting for a result)."""


class AskPrinter:
    """Writes turn events to stdout and stderr in the mode ``ask`` was given."""

    def __init__(self, request: OutputMode, out: IO[str], err: IO[str], session: ChatSession) -> None:
        self.request = request
        self.out = out
        self.err = err
        self.session = session
        self._wrote_final = ""
        self._stderr_open = False
        self.no_answer = False
        """True once the turn ended without an answer (a NoAnswer event)."""

    def _note(self, text: str) -> None:
        self._end_stderr_line()
        print(text, file=self.err, flush=True)

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
        if isinstance(event, StepStarted | ToolStarted | ToolFinished | ToolLoopLimit | Notice):
            self._loop_event(event)
        elif isinstance(event, PromptReady):
            if self.request.show_prompt:
                self._note("[prompt] " + self.session.encoding.decode(event.prompt.tokens))
            if event.answer_capped:
                self._note(
                    f"[context] only {event.max_tokens} tokens are left for the answer "
                    f"(the prompt takes {len(event.prompt.tokens)} of --ctx {self.session.context_size})"
                )
        elif isinstance(event, TurnStats):
            if self.request.json:
                self._json(event)
            self._finish(event)
        elif self.request.json:
            self._json(event)
        elif self.request.raw:
            if isinstance(event, RawToken):
                self.out.write(event.text)
                self.out.flush()
        elif isinstance(event, ContentDelta):
            if display_of(event.channel, event.recipient) is Display.ANSWER:
                self.out.write(event.text)
                self.out.flush()
                self._wrote_final = event.text
            elif self._stderr_label(event.channel, event.recipient) is not None:
                self.err.write(event.text)
                self.err.flush()
        elif isinstance(event, MessageStarted):
            if (label := self._stderr_label(event.channel, event.recipient)) is not None:
                self._end_stderr_line()
                self.err.write(label)
                self._stderr_open = True
        elif isinstance(event, MessageFinished):
            self._end_stderr_line()
        elif isinstance(event, ToolCall):
            if event.runnable:
                self._note(f"[tool call] {event.name} {event.arguments}")
            else:
                self._note(f"[tool call] {event.name} was not run: {event.error}")
        elif isinstance(event, Recovery):
            self._note(f"[recovered] {event.kind}: {event.detail}")
        elif isinstance(event, NoAnswer):
            self._no_answer(event)

    def _loop_event(self, event: StepStarted | ToolStarted | ToolFinished | ToolLoopLimit | Notice) -> None:
        """Print an event of the tool loop (JSON, or a labelled line on stderr)."""
        if self.request.json:
            self._json_loop_event(event)
        elif isinstance(event, ToolStarted):
            self._note(f"[tool] running {event.name}")
        elif isinstance(event, ToolFinished):
            result = event.result
            first = result.text.strip().splitlines()[0] if result.text.strip() else ""
            more = " …" if len(result.text.strip().splitlines()) > 1 else ""
            self._note(f"[tool result] {event.name} ({result.status}, {result.elapsed_s:.1f} s): {first}{more}")
        elif isinstance(event, ToolLoopLimit):
            self._note(f"[stopped] the turn reached --max-steps {event.max_steps}; the last tool call was not run")
        elif isinstance(event, Notice):
            self._note(f"[notice] {event.text}")

    def _json_loop_event(self, event: StepStarted | ToolStarted | ToolFinished | ToolLoopLimit | Notice) -> None:
        payload: dict[str, object]
        if isinstance(event, StepStarted):
            payload = {"type": "step", "step": event.step}
        elif isinstance(event, ToolStarted):
            payload = {"type": "tool_started", "id": event.call_id, "name": event.name, "server": event.server}
        elif isinstance(event, ToolFinished):
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
        elif isinstance(event, ToolLoopLimit):
            payload = {"type": "tool_loop_limit", "max_steps": event.max_steps}
        else:
            payload = {"type": "notice", "text": event.text, "severity": event.severity}
        print(json.dumps(payload, ensure_ascii=False), file=self.out, flush=True)

    def _no_answer(self, event: NoAnswer) -> None:
        self.no_answer = True
        self._note(f"[no answer] {event.detail}")

    def _hidden(self, channel: str | None, recipient: str | None) -> bool:
        """Whether text on ``channel`` must stay out of this output (not a debug view)."""
        return not self.request.show_reasoning and display_of(channel, recipient) is Display.DEBUG

    def _json(self, event: TurnEvent) -> None:
        payload: dict[str, object]
        if isinstance(event, NoAnswer):
            self._no_answer(event)
            payload = {"type": "no_answer", "detail": event.detail}
        elif isinstance(event, TurnStats):
            payload = event.as_dict()
        elif isinstance(event, RawToken):
            payload = {
                "type": "token",
                "id": event.token_id,
                "text": event.text,
                "special": event.special,
                "channel": event.channel,
            }
            if self._hidden(event.channel, event.recipient) or (event.special and not self.request.show_reasoning):
                payload.pop("text")  # header words, markup and hidden text are for debug views only
        elif isinstance(event, MessageStarted):
            payload = {
                "type": "message_started",
                "channel": event.channel,
                "recipient": event.recipient,
                "content_type": plain_content_type(event.content_type),
            }
        elif isinstance(event, ContentDelta):
            payload = {"type": "delta", "channel": event.channel, "text": event.text, "recipient": event.recipient}
            if self._hidden(event.channel, event.recipient):
                payload.pop("text")
        elif isinstance(event, MessageFinished):
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
        elif isinstance(event, ToolCall):
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
        elif isinstance(event, Recovery):
            payload = {"type": "recovery", "kind": event.kind, "detail": event.detail}
        elif isinstance(event, TurnFinished):
            payload = {"type": "turn_finished", "reason": event.reason.value, "truncated": event.truncated}
        else:
            return
        print(json.dumps(payload, ensure_ascii=False), file=self.out, flush=True)

    def _finish(self, event: TurnStats) -> None:
        if not self.request.json:
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
