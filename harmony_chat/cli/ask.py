"""``harmony-chat ask``: one turn from the command line, scriptable.

stdout carries the answer only (or raw tokens with ``--raw``, or JSON Lines with ``--json``);
preambles, tool calls and notices go to stderr. What counts as an answer, a preamble or hidden
reasoning is decided by :mod:`~harmony_chat.harmony.visibility`: hidden text (analysis, text
without a header, unknown channels) is never printed, not even inside ``--json`` events, unless
``--reasoning raw`` (or ``--show-reasoning``) asks for it (labelled, on stderr). ``--reasoning
summary`` has the model summarise its reasoning instead (``[summary] …`` on stderr, a ``summary``
event in ``--json``, with what it cost).
"""

from __future__ import annotations

import json
import signal
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import IO

from harmony_chat.backends.base import ModelBackend, SamplingParams
from harmony_chat.backends.replay import RecordingBackend, ReplayBackend
from harmony_chat.backends.sources import resolve_model
from harmony_chat.chat.events import ChatEvent, ReasoningSummary, SummaryStarted
from harmony_chat.chat.summary import REASONING_MODES, ReasoningMode, Summarizer
from harmony_chat.errors import HarmonyChatError, ModelError
from harmony_chat.harmony.effort import Effort
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
from harmony_chat.harmony.turn import PromptReady, TurnOptions, TurnStats, run_turn
from harmony_chat.harmony.visibility import Display, display_of, is_answer


class UsageProblem(HarmonyChatError):
    """The options given to ``ask`` do not make sense together."""

    exit_code = 2


@dataclass(slots=True)
class AskRequest:
    """Everything ``ask`` was told on the command line."""

    prompt: str | None = None
    model: Path | None = None
    hf_repo: str | None = None
    hf_file: str | None = None
    replay: Path | None = None
    demo: bool = False
    """Use the bundled pocket gpt-oss."""
    record: Path | None = None
    effort: Effort | None = None
    instructions: str | None = None
    max_tokens: int = 4096
    temperature: float = 1.0
    seed: int | None = None
    ctx: int = 16384
    gpu_layers: int = 0
    conversation: Path | None = None
    save_conversation: Path | None = None
    show_prompt: bool = False
    show_reasoning: bool = False
    """Show the raw chain of thought (``--show-reasoning``, the same as ``--reasoning raw``)."""
    reasoning: str | None = None
    """``hidden``, ``summary`` or ``raw`` (None: hidden, or raw with ``show_reasoning``)."""
    raw: bool = False
    json: bool = False

    def reasoning_mode(self) -> ReasoningMode:
        """The reasoning mode asked for; ``show_reasoning`` is set in raw mode.

        Raises:
            UsageProblem: for an unknown mode, or ``--show-reasoning`` with another mode.
        """
        mode = self.reasoning or ("raw" if self.show_reasoning else "hidden")
        if mode not in REASONING_MODES:
            raise UsageProblem(f"--reasoning takes {', '.join(REASONING_MODES)}, not {mode!r}")
        if self.show_reasoning and mode != "raw":
            raise UsageProblem(f"--show-reasoning is --reasoning raw; it does not go with --reasoning {mode}")
        self.show_reasoning = mode == "raw"
        return mode


def make_backend(request: AskRequest) -> tuple[ModelBackend, Path | None]:
    """Build (not load) the backend the request names; return it with the GGUF path, if any."""
    model_path = resolve_model(request.model, request.hf_repo, request.hf_file)
    if request.demo:
        if model_path is not None or request.replay is not None:
            raise UsageProblem("--demo runs the pocket model; give no other model")
        from harmony_chat.pocket import pocket_model_path

        model_path = pocket_model_path()
    backend: ModelBackend
    if request.replay is not None:
        if model_path is not None:
            raise UsageProblem("give either a model or --replay, not both")
        backend = ReplayBackend(request.replay, context_size=request.ctx)
    elif model_path is not None:
        from harmony_chat.backends.llama_cpp import LlamaCppBackend

        backend = LlamaCppBackend(model_path, context_size=request.ctx, gpu_layers=request.gpu_layers)
    else:
        raise ModelError(
            "no model: pass --model PATH, --hf-repo REPO --hf-file FILE, --replay FILE, or --demo (pocket model)"
        )
    if request.record is not None:
        backend = RecordingBackend(backend, request.record)
    return backend, model_path


def _strip_one_newline(text: str) -> str:
    """Drop the one line ending that ``echo`` and editors put after piped text (and no more)."""
    for ending in ("\r\n", "\n"):
        if text.endswith(ending):
            return text[: -len(ending)]
    return text


def build_session(request: AskRequest, model_path: Path | None, context_size: int) -> ChatSession:
    """Create the session (from ``--conversation`` when given) and add the user's prompt."""
    from harmony_chat.harmony.vocab import load_encoding

    encoding = load_encoding(model_path)
    if request.demo and request.conversation is None:
        from harmony_chat.pocket import POCKET_DATE

        session = ChatSession(
            encoding,
            effort=request.effort or "medium",
            instructions=request.instructions,
            context_size=context_size,
            start_date=POCKET_DATE,
        )
    elif request.conversation is not None:
        session = ChatSession.load(
            encoding,
            request.conversation,
            effort=request.effort,
            instructions=request.instructions,
            context_size=context_size,
        )
    else:
        session = ChatSession(
            encoding, effort=request.effort or "medium", instructions=request.instructions, context_size=context_size
        )
    prompt = request.prompt
    if prompt == "-":
        prompt = _strip_one_newline(sys.stdin.read())
    if prompt is not None:
        if not prompt.strip():
            raise UsageProblem("the prompt is empty")
        session.add_user(prompt)
    elif request.conversation is None:
        raise UsageProblem("give a PROMPT (or - to read stdin), or --conversation FILE to continue one")
    elif not session.history or is_answer(session.history[-1]):
        raise UsageProblem("the conversation ends with an answer; give a PROMPT to continue it")
    return session


class AskPrinter:
    """Writes turn events to stdout and stderr in the mode ``ask`` was given."""

    def __init__(self, request: AskRequest, out: IO[str], err: IO[str], session: ChatSession) -> None:
        self.request = request
        self.out = out
        self.err = err
        self.session = session
        self._wrote_final = ""
        self._stderr_open = False
        self.no_answer = False
        """True once the turn ended without an answer (a NoAnswer event)."""
        self.summaries: list[ReasoningSummary] = []
        """The turn's reasoning summaries (their cost goes into the ``--json`` stats line)."""

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
        if isinstance(event, ReasoningSummary | SummaryStarted):
            self._summary(event)
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

    def _summary(self, event: ReasoningSummary | SummaryStarted) -> None:
        """A summary goes to stderr as ``[summary] …`` (nothing when it failed), or as JSON events."""
        if isinstance(event, ReasoningSummary):
            self.summaries.append(event)
        if self.request.json:
            if isinstance(event, ReasoningSummary):
                payload = event.as_dict()
            else:
                payload = {"type": "summary_started", "part": event.part, "live": event.live}
                payload["analysis_tokens"] = event.analysis_tokens
            print(json.dumps(payload, ensure_ascii=False), file=self.out, flush=True)
        elif isinstance(event, ReasoningSummary) and event.text is not None:
            self._note(f"[summary] {event.text}")

    def _no_answer(self, event: NoAnswer) -> None:
        self.no_answer = True
        self._note(f"[no answer] {event.detail}")

    def _hidden(self, channel: str | None, recipient: str | None) -> bool:
        """Whether text on ``channel`` must stay out of this output (not a debug view)."""
        return not self.request.show_reasoning and display_of(channel, recipient) is Display.DEBUG

    def _json(self, event: ChatEvent) -> None:
        payload: dict[str, object]
        if isinstance(event, NoAnswer):
            self._no_answer(event)
            payload = {"type": "no_answer", "detail": event.detail}
        elif isinstance(event, TurnStats):
            payload = event.as_dict()
            if self.summaries:  # what the summaries added to the turn
                figures = [summary.stats for summary in self.summaries]
                payload["summaries"] = len(self.summaries)
                payload["summary_tokens"] = sum(stats.generated_tokens for stats in figures)
                payload["summary_prompt_tokens_evaluated"] = sum(stats.prompt_tokens_evaluated for stats in figures)
                payload["summary_s"] = round(sum(summary.seconds for summary in self.summaries), 6)
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
        elif event.reason.value == "call" and not self.no_answer and not self.request.json:
            self._note("[waiting] add the tool result to the saved conversation and continue with --conversation")
        if event.evicted_turns:
            self._note(f"[context] left out the {event.evicted_turns} oldest turns to fit the context")


def _stop_on_interrupt(stop: threading.Event) -> Callable[[], None]:
    """First Ctrl-C stops generation gracefully; a second one interrupts for real.

    Returns a function that puts the previous handler back.
    """

    def handler(signum: int, frame: FrameType | None) -> None:
        if stop.is_set():
            raise KeyboardInterrupt
        stop.set()

    if threading.current_thread() is not threading.main_thread():
        return lambda: None
    previous = signal.signal(signal.SIGINT, handler)

    def restore() -> None:
        signal.signal(signal.SIGINT, previous)

    return restore


def run_ask(request: AskRequest, out: IO[str] | None = None, err: IO[str] | None = None) -> int:
    """Run one turn as ``ask`` does and return the exit code.

    Raises:
        HarmonyChatError: for every problem the user must fix (printed as one line by the CLI).
    """
    out = out or sys.stdout
    err = err or sys.stderr
    if request.raw and request.json:
        raise UsageProblem("--raw and --json do not go together")
    mode = request.reasoning_mode()
    backend, model_path = make_backend(request)
    info = backend.load()
    try:
        session = build_session(request, model_path, info.context_size)
        stop = threading.Event()
        restore = _stop_on_interrupt(stop)
        options = TurnOptions(
            sampling=SamplingParams(temperature=request.temperature, seed=request.seed, max_tokens=request.max_tokens),
            effort=request.effort,
        )
        printer = AskPrinter(request, out, err, session)
        summarizer = Summarizer(session.encoding) if mode == "summary" else None
        watch = summarizer.watch(backend, options.sampling, stop.is_set) if summarizer else None
        try:
            events = run_turn(session, watch.model if watch else backend, options, should_stop=stop.is_set)
            for event in watch.interleave(events) if watch else events:
                printer.handle(event)
        finally:
            restore()
        if request.save_conversation is not None:
            session.save(request.save_conversation)
    finally:
        backend.close()
    return 0
