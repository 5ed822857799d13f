"""``harmony-chat ask``: one turn from the command line, scriptable, with the same tool loop as the app.

It runs the conversation core (:class:`~harmony_chat.chat.conversation.ChatConversation`) with the
options of the config file and the command line. Tool calls are run after a y/n answer on the
terminal (``--approve ask``, the default on a terminal), without asking (``--approve all`` or
``--yes``), or never (``--approve none``, the default when stdin is not a terminal).
"""

from __future__ import annotations

import select
import signal
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import IO

from harmony_chat.chat.approval import Approver, Choice, Decision, ToolReview, code_view
from harmony_chat.chat.factory import UsageProblem, create_conversation, load_model, start_tools, tool_runner
from harmony_chat.chat.model_source import Pocket
from harmony_chat.chat.options import ChatOptions
from harmony_chat.chat.tool_calls import answer_with
from harmony_chat.errors import ModelError
from harmony_chat.harmony.effort import Effort
from harmony_chat.harmony.visibility import is_answer
from harmony_chat.printing.ask_output import AskPrinter, OutputMode
from harmony_chat.text_safety import visible

__all__ = ["AskRequest", "AskPrinter", "OutputMode", "UsageProblem", "run_ask"]


@dataclass(slots=True)
class AskRequest:
    """Everything ``ask`` was told: the prompt, the chat options and how to print."""

    prompt: str | None = None
    options: ChatOptions = field(default_factory=ChatOptions)
    output: OutputMode = field(default_factory=OutputMode)
    conversation: Path | None = None
    """A harmony Conversation JSON to continue."""
    save_conversation: Path | None = None
    approve_given: bool = False
    """Whether ``--approve``/``--yes`` was given (else ``ask`` only asks on a terminal)."""
    effort: Effort | None = None
    """``--effort`` as given: it overrides a continued conversation's own effort."""
    instructions: str | None = None
    """``--instructions`` as given: they override a continued conversation's own."""


def _strip_one_newline(text: str) -> str:
    """Drop the one line ending that ``echo`` and editors put after piped text (and no more)."""
    for ending in ("\r\n", "\n"):
        if text.endswith(ending):
            return text[: -len(ending)]
    return text


def _read_prompt(request: AskRequest) -> str | None:
    prompt = request.prompt
    if prompt == "-":
        prompt = _strip_one_newline(sys.stdin.read())
    if prompt is not None and not prompt.strip():
        raise UsageProblem("the prompt is empty")
    if prompt is None and request.conversation is None:
        raise UsageProblem("give a PROMPT (or - to read stdin), or --conversation FILE to continue one")
    return prompt


def _stop_on_interrupt(stop: threading.Event) -> Callable[[], None]:
    """First Ctrl-C stops generation (or a tool) gracefully; a second one interrupts for real.

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


def terminal_approver(answers: IO[str], err: IO[str], stop: threading.Event) -> Approver:
    """Ask on the terminal: y (once), a (always, this session), n (no; a reason may follow).

    The call is shown as the model wrote it, control characters as visible symbols: an escape
    sequence in the arguments cannot hide a line of them from the user who approves.
    """

    def ask(review: ToolReview) -> Decision:
        print(visible(f"[approve] {review.label}: {review.tool} ({review.server})"), file=err)
        if review.warning:
            print(visible(f"[approve] note: {review.warning}"), file=err)
        view = code_view(visible(review.arguments))
        print(f"[approve] {view.summary}:", file=err)
        for line in view.text.split("\n"):
            print(f"    {line}", file=err)
        question = "[approve] run it? y = yes, a = always for this tool, n = no (n REASON tells the model why): "
        print(question, end="", file=err, flush=True)
        answer = _read_line(answers, stop)
        if answer is None:
            print(file=err, flush=True)
            return Decision(Choice.DENY, "the user stopped")
        word, _, reason = answer.strip().partition(" ")
        if word.lower() in ("y", "yes"):
            return Decision(Choice.ONCE)
        if word.lower() in ("a", "always"):
            return Decision(Choice.ALWAYS)
        return Decision(Choice.DENY, reason.strip())

    return ask


def _read_line(stream: IO[str], stop: threading.Event) -> str | None:
    """A line from ``stream``, or None when Ctrl-C stops first (or the input ends)."""
    while not stop.is_set():
        try:
            ready, _, _ = select.select([stream], [], [], 0.1)
        except (OSError, ValueError):  # no file descriptor (a test's stream): read directly
            ready = [stream]
        if ready:
            line = stream.readline()
            return line if line else None
    return None


def run_ask(request: AskRequest, out: IO[str] | None = None, err: IO[str] | None = None) -> int:
    """Run one turn (with its tool calls) as ``ask`` does and return the exit code.

    Raises:
        HarmonyChatError: for every problem the user must fix (printed as one line by the CLI).
    """
    out, err = out or sys.stdout, err or sys.stderr
    options, output = request.options, request.output
    if output.raw and output.json:
        raise UsageProblem("--raw and --json do not go together")
    source = options.source  # clashing model options are said here, before the prompt is read
    if isinstance(source, Pocket) and source.fallback:
        raise ModelError(
            "no model: pass --model PATH, --hf-repo REPO --hf-file FILE, --url URL, --replay FILE, "
            "or --demo (pocket model), or set [model] in the config file"
        )
    prompt = _read_prompt(request)
    stop = threading.Event()
    model = load_model(options)
    with create_conversation(options, model, raw_tokens=output.raw or output.json) as conversation:
        session = conversation.session
        if request.conversation is not None:
            from harmony_chat.harmony.session import ChatSession

            session = conversation.session = ChatSession.load(
                model.encoding,
                request.conversation,
                effort=request.effort,
                instructions=request.instructions,
                context_size=model.info.context_size,
            )
            if prompt is None and (not session.history or is_answer(session.history[-1])):
                raise UsageProblem("the conversation ends with an answer; give a PROMPT to continue it")
        if options.has_tools:
            can_ask = sys.stdin.isatty() and request.prompt != "-"

            def notice(text: str) -> None:
                print(visible(f"[notice] {text}"), file=err, flush=True)

            conversation.tools = tool_runner(options, start_tools(options, on_notice=notice), asks=can_ask)
            for provider in conversation.tools.tools.providers:
                wait = getattr(provider, "wait_ready", None)
                if callable(wait):
                    wait(30.0)
            if options.settings.tools.approve == "ask" and not can_ask and not request.approve_given:
                print("[notice] stdin is no terminal: tool calls will be declined (--approve all runs them)", file=err)
        output.tools = conversation.tools is not None
        output.max_tokens = options.settings.sampling.max_tokens
        printer = AskPrinter(output, out, err, session, conversation.citation_sources)
        restore = _stop_on_interrupt(stop)
        try:
            if prompt is not None:
                events = conversation.send(prompt, stop.is_set)
            else:
                events = conversation.run(should_stop=stop.is_set)
            for event in answer_with(events, terminal_approver(sys.stdin, err, stop)):
                printer.handle(event)
        finally:
            restore()
        if request.save_conversation is not None:
            conversation.session.save(request.save_conversation)
    return 0
