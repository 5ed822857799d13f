"""How a conversation becomes training examples: rendered exactly as the app renders it.

A :class:`Setup` is what the app declares (effort, the demo tools, instructions, a response format);
each generation step of a conversation's last exchange becomes an :class:`Example` whose prompt is
what :class:`ChatSession` renders at that point: earlier analysis dropped, tool calls and results
kept, ``<|end|>`` endings, the pinned date. Some steps also teach the summary of their analysis, on
exactly the prompt the app's summarizer renders. No torch, no UI.
"""

from __future__ import annotations

import hashlib
import json
import multiprocessing
from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple

from openai_harmony import (
    Conversation,
    HarmonyEncoding,
    Message,
    RenderConversationConfig,
    Role,
    ToolNamespaceConfig,
)

from harmony_chat.chat.summary import summary_prompt
from harmony_chat.demo.pocket import POCKET_DATE
from harmony_chat.harmony.decoder import StreamDecoder
from harmony_chat.harmony.effort import Effort
from harmony_chat.harmony.events import ToolCall
from harmony_chat.harmony.session import ChatSession, ResponseFormat, TurnRecord, visible_history
from training.pocket.exchanges import Exchange
from training.pocket.texts import SHOPPING_INSTRUCTIONS
from training.pocket.weather import WEATHER_TOOL

SHOPPING = ResponseFormat(
    "shopping_list",
    {"type": "object", "properties": {"items": {"type": "array", "items": {"type": "string"}}}},
    "the items the user needs to buy",
)
_NO_DROP = RenderConversationConfig(auto_drop_analysis=False)


@dataclass(frozen=True, slots=True)
class Example:
    """One training sample: the prompt the app renders and the completion the model must write."""

    name: str
    effort: Effort
    prompt: list[int]
    completion: list[int]
    turn: int = 1
    """Which user turn of its conversation it answers (1 to 6)."""
    bare: bool = False
    """Rendered without the system and developer messages (only for the first, cheap phase of training)."""


@dataclass(frozen=True, slots=True)
class Setup:
    """What the app declares to the model: effort, the demo tools, instructions and a response format."""

    effort: Effort
    weather: bool = False
    python: ToolNamespaceConfig | None = None
    instructions: str | None = None
    shopping: bool = False

    def session(self, encoding: HarmonyEncoding) -> ChatSession:
        """A new chat with this setup, on the pocket model's date."""
        session = ChatSession(
            encoding,
            effort=self.effort,
            instructions=SHOPPING_INSTRUCTIONS if self.shopping else self.instructions,
            functions=[WEATHER_TOOL] if self.weather else [],
            builtin=["python"] if self.python else [],
            response_formats=[SHOPPING] if self.shopping else [],
            start_date=POCKET_DATE,
        )
        if self.python is not None:
            session.tool_namespaces = {"python": self.python}
        return session


class Renderer:
    """Renders conversations into examples, exactly as the app's session and decoder would."""

    def __init__(self, encoding: HarmonyEncoding) -> None:
        self.encoding = encoding
        self._tokens: dict[str, list[int]] = {}
        self._decoded: dict[tuple[str, tuple[str, ...]], tuple[list[Message], list[ToolCall]]] = {}

    def tokens(self, text: str) -> list[int]:
        """Harmony text (special tokens spelled out) as token ids."""
        if text not in self._tokens:
            self._tokens[text] = list(self.encoding.encode(text, allowed_special="all"))
        return self._tokens[text]

    def examples(
        self, setup: Setup, conversation: Sequence[Exchange], summaries: float = 0.0, bare: bool = False
    ) -> list[Example]:
        """The last exchange's steps as examples (with a summary example for a share ``summaries`` of them).

        ``bare`` leaves the system and developer messages out of the prompts.
        """
        session = setup.session(self.encoding)
        found: list[Example] = []
        for turn, exchange in enumerate(conversation, start=1):
            last = turn == len(conversation)
            session.add_user(exchange.user)
            for number, step in enumerate(exchange.steps):
                completion = self.tokens(step.completion)
                if last:
                    prompt = self._bare(session) if bare else session.render().tokens
                    name = (
                        exchange.kind if len(exchange.steps) == 1 else f"{exchange.kind}-{('call', 'answer')[number]}"
                    )
                    found.append(Example(name, setup.effort, prompt, completion, turn, bare))
                    if summaries and _chance(prompt, completion) < summaries:
                        found.append(self._summary(name, setup.effort, prompt, step.analysis, step.summary, turn))
                    if number == len(exchange.steps) - 1:
                        break  # nothing is rendered after the last step: it need not be decoded
                messages, calls = self._decode(step.completion, tuple(session.function_names))
                session.add_assistant_turn(messages, TurnRecord(setup.effort, "call" if calls else "return"))
                if step.reply is not None:
                    session.add_tool_result(calls[0].name, step.reply.text, calls[0].channel)
        return found

    def _decode(self, completion: str, functions: tuple[str, ...]) -> tuple[list[Message], list[ToolCall]]:
        """What the app's decoder makes of ``completion`` (the same completions recur: decoded once)."""
        key = (completion, functions)
        if key not in self._decoded:
            decoder = StreamDecoder(self.encoding, functions=list(functions), raw_tokens=False)
            tokens = self.tokens(completion)
            calls = [event for token in tokens for event in decoder.feed(token) if isinstance(event, ToolCall)]
            self._decoded[key] = (list(decoder.messages), calls)
        return self._decoded[key]

    def _bare(self, session: ChatSession) -> list[int]:
        kept = [session.history[index] for index in visible_history(session.history)]
        conversation = Conversation.from_messages(kept)
        return list(self.encoding.render_conversation_for_completion(conversation, Role.ASSISTANT, _NO_DROP))

    def _summary(self, name: str, effort: Effort, prompt: list[int], analysis: str, text: str, turn: int) -> Example:
        done = self.tokens(f"<|channel|>analysis<|message|>{analysis}<|end|>")
        asked = summary_prompt(self.encoding, [*prompt, *done])
        return Example(f"summary-{name}", effort, asked, self.tokens(f"{text}<|return|>"), turn)


class Job(NamedTuple):
    """One conversation to render: the arguments of :meth:`Renderer.examples`."""

    setup: Setup
    conversation: Sequence[Exchange]
    summaries: float = 0.0
    bare: bool = False


_FORKED: Renderer | None = None
"""The renderer forked worker processes use (set only while :func:`render_all` runs)."""


def _render_forked(job: Job) -> list[Example]:
    assert _FORKED is not None
    return _FORKED.examples(*job)


def render_all(renderer: Renderer, jobs: Sequence[Job], workers: int = 1) -> list[Example]:
    """Every job's examples, in order; ``workers`` > 1 renders in forked processes (the same examples)."""
    global _FORKED
    if workers <= 1 or len(jobs) < 2 * workers or "fork" not in multiprocessing.get_all_start_methods():
        return [example for job in jobs for example in renderer.examples(*job)]
    _FORKED = renderer
    try:
        with multiprocessing.get_context("fork").Pool(workers) as pool:
            parts = pool.map(_render_forked, jobs, chunksize=max(1, len(jobs) // (workers * 16)))
    finally:
        _FORKED = None
    return [example for part in parts for example in part]


def _chance(prompt: Sequence[int], completion: Sequence[int]) -> float:
    """A number in [0, 1) fixed by the example itself (which examples also teach a summary)."""
    digest = hashlib.sha256(json.dumps([list(prompt[-24:]), list(completion)]).encode()).digest()
    return int.from_bytes(digest[:4], "big") / 2**32


def data_hash(examples: Sequence[Example]) -> str:
    """A sha256 over every example's token ids (recorded with the trained model)."""
    digest = hashlib.sha256()
    for example in examples:
        digest.update(json.dumps([example.name, example.effort, example.prompt, example.completion]).encode())
    return digest.hexdigest()
