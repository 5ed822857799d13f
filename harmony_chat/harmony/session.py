"""The session manager: one harmony conversation, rendered to token ids for each turn.

A :class:`ChatSession` keeps the history (user, assistant and tool messages) and rebuilds the
system and developer messages for every prompt, so reasoning effort can change on any turn while
the conversation date stays pinned. Rendering applies the chain-of-thought policy from the
gpt-oss guidance and the context budget; harmony's own ``auto_drop_analysis`` is switched off.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from openai_harmony import (
    Author,
    Conversation,
    DeveloperContent,
    HarmonyEncoding,
    Message,
    ReasoningEffort,
    RenderConversationConfig,
    RenderOptions,
    Role,
    SystemContent,
    ToolDescription,
    ToolNamespaceConfig,
)
from pydantic import ValidationError

from harmony_chat.errors import ContextOverflowError, ConversationFileError
from harmony_chat.harmony.effort import Effort, parse_effort
from harmony_chat.harmony.visibility import MessageKind, PromptKeep, is_answer, message_kind, rule_of
from harmony_chat.private_files import write_private_text

OverflowPolicy = Literal["evict", "refuse"]

_EFFORT_TO_HARMONY = {"low": ReasoningEffort.LOW, "medium": ReasoningEffort.MEDIUM, "high": ReasoningEffort.HIGH}
_NO_DROP = RenderConversationConfig(auto_drop_analysis=False)
_SYSTEM_TOKENS: dict[tuple[str, Effort, str, bool], tuple[int, ...]] = {}
"""The rendered system message of a session without built-in tools, by (encoding, effort, date, whether the
conversation declares functions): the same for every request a server answers at one effort on one day."""
_BUILTIN_TOOLS = {"browser": ToolNamespaceConfig.browser, "python": ToolNamespaceConfig.python}
"""The built-in tools gpt-oss is trained on, declared in the system message rather than as functions."""


@dataclass(frozen=True, slots=True)
class ResponseFormat:
    """A structured-output format announced in the developer message."""

    name: str
    schema: Mapping[str, object]
    description: str = ""

    def render(self) -> str:
        """Return the ``## name`` section of the developer message's ``# Response Formats``."""
        comment = f"// {self.description}\n" if self.description else ""
        return f"## {self.name}\n\n{comment}{json.dumps(self.schema, separators=(',', ':'))}"


@dataclass(frozen=True, slots=True)
class RenderedPrompt:
    """The token ids of one prompt and what went into them."""

    tokens: list[int]
    effort: Effort
    evicted_turns: int
    """How many of the oldest turns were left out to fit the context."""
    answer_room: int | None = None
    """The most tokens the answer can take in the context (None: no context budget)."""


@dataclass(slots=True)
class TurnRecord:
    """What is known about one assistant turn besides its messages."""

    effort: Effort
    stop_reason: str
    truncated: bool = False
    stats: dict[str, float | int | str | None] = field(default_factory=dict)


def _is_dropped_analysis(message: Message) -> bool:
    return rule_of(message).prompt is PromptKeep.UNTIL_ANSWER


def visible_history(messages: Sequence[Message]) -> list[int]:
    """Return the indices of the history messages a new prompt shows (the CoT policy).

    Once a turn has ended in a ``final`` message its analysis is dropped from every later prompt;
    while a turn is inside a tool loop (no final since its user message), its analysis, tool calls
    and tool results stay. A turn that ended without a final (stopped, cut off) and was followed
    by a new user message also loses its analysis. Tool calls are never dropped, also when they
    go to the analysis channel (built-in tools), so every tool result keeps its call.
    """
    cut = -1
    for index, message in enumerate(messages):
        role = message.author.role
        if role == Role.USER or is_answer(message):
            cut = index
    return [i for i, message in enumerate(messages) if i >= cut or not _is_dropped_analysis(message)]


class ChatSession:
    """A harmony conversation and the rules that turn it into prompts.

    Args:
        encoding: the harmony encoding.
        effort: the reasoning effort of the next turn.
        instructions: the user's instructions (the developer message).
        functions: function tools, announced in the developer message.
        builtin: gpt-oss's built-in tools to declare in the system message (``browser``, ``python``).
        response_formats: structured-output formats, announced in the developer message.
        start_date: the conversation date; pinned (default: today) so the prefix stays stable.
        context_size: the model's context in tokens; None disables the budget.
        overflow: ``evict`` the oldest whole turns, or ``refuse``, when a prompt does not fit.
    """

    def __init__(
        self,
        encoding: HarmonyEncoding,
        *,
        effort: Effort = "medium",
        instructions: str | None = None,
        functions: Iterable[ToolDescription] = (),
        builtin: Iterable[str] = (),
        response_formats: Iterable[ResponseFormat] = (),
        start_date: str | None = None,
        context_size: int | None = None,
        overflow: OverflowPolicy = "evict",
    ) -> None:
        self.encoding = encoding
        self.effort: Effort = effort
        self.instructions = instructions
        self.functions = list(functions)
        self.builtin = sorted(set(builtin))
        self.tool_namespaces: dict[str, ToolNamespaceConfig] = {}
        """How each built-in tool is declared, where the running tool says more than harmony's default."""
        self.response_formats = list(response_formats)
        self.start_date = start_date or dt.date.today().isoformat()
        self.context_size = context_size
        self.overflow: OverflowPolicy = overflow
        self.history: list[Message] = []
        self.turns: list[TurnRecord] = []
        self.answer_tokens = 0
        """The answer room prompts keep free: the last turn's ``max_tokens`` (see :meth:`render`)."""
        self._first_kept = 0

    @property
    def function_names(self) -> list[str]:
        """Names of the declared function tools."""
        return [tool.name for tool in self.functions]

    def system_message(self, effort: Effort | None = None) -> Message:
        """Return the system message for a turn at ``effort`` (default: the session's)."""
        content = (
            SystemContent.new()
            .with_reasoning_effort(_EFFORT_TO_HARMONY[effort or self.effort])
            .with_conversation_start_date(self.start_date)
        )
        for name in self.builtin:
            namespace = self.tool_namespaces.get(name)
            content = content.with_tools(namespace if namespace is not None else _BUILTIN_TOOLS[name]())
        return Message.from_role_and_content(Role.SYSTEM, content)

    def developer_message(self) -> Message | None:
        """Return the developer message, or None when there is nothing to put in it."""
        instructions = self.instructions or ""
        if self.response_formats:
            sections = "\n\n".join(fmt.render() for fmt in self.response_formats)
            formats = f"# Response Formats\n\n{sections}"
            instructions = f"{instructions}\n\n{formats}" if instructions else formats
        if not instructions and not self.functions:
            return None
        content = DeveloperContent.new()
        if instructions:
            content = content.with_instructions(instructions)
        if self.functions:
            content = content.with_function_tools(self.functions)
        return Message.from_role_and_content(Role.DEVELOPER, content)

    # -- history ---------------------------------------------------------------------------

    def add_user(self, text: str) -> None:
        """Append a user message."""
        self.history.append(Message.from_role_and_content(Role.USER, text))

    def add_tool_result(self, recipient: str, output: str, channel: str | None = "commentary") -> None:
        """Append the output of a tool call, addressed back to the assistant."""
        message = Message.from_author_and_content(Author.new(Role.TOOL, recipient), output)
        self.history.append(message.with_recipient("assistant").with_channel(channel or "commentary"))

    def add_assistant_turn(self, messages: Iterable[Message], record: TurnRecord) -> None:
        """Append what the assistant generated in one turn and what is known about it."""
        self.history.extend(messages)
        self.turns.append(record)

    def pending_tool_call(self) -> Message | None:
        """Return the last message if it is a tool call still waiting for its result."""
        if self.history and self.history[-1].author.role == Role.ASSISTANT:
            last = self.history[-1]
            return last if message_kind(last) is MessageKind.TOOL_CALL else None
        return None

    # -- rendering -------------------------------------------------------------------------

    def _turn_starts(self, indices: Sequence[int]) -> list[int]:
        return [pos for pos, i in enumerate(indices) if self.history[i].author.role == Role.USER]

    def _system_tokens(self, effort: Effort) -> tuple[int, ...] | None:
        """The system message's tokens from the cache (None: built-in tools, rendered with the rest)."""
        if self.builtin:
            return None
        functions = bool(self.functions)  # harmony's system message then says where function calls go
        key = (self.encoding.name, effort, self.start_date, functions)
        tokens = _SYSTEM_TOKENS.get(key)
        if tokens is None:
            options = RenderOptions(conversation_has_function_tools=functions)
            tokens = tuple(self.encoding.render(self.system_message(effort), options))
            if len(_SYSTEM_TOKENS) > 64:  # dates and efforts: a handful at a time
                _SYSTEM_TOKENS.clear()
            _SYSTEM_TOKENS[key] = tokens
        return tokens

    def render_messages(self, messages: Sequence[Message], effort: Effort | None = None) -> list[int]:
        """Render system, developer and ``messages`` for the assistant's next completion."""
        effort = effort or self.effort
        system = self._system_tokens(effort)
        prefix = [] if system is not None else [self.system_message(effort)]
        if (developer := self.developer_message()) is not None:
            prefix.append(developer)
        conversation = Conversation.from_messages([*prefix, *messages])
        rest = self.encoding.render_conversation_for_completion(conversation, Role.ASSISTANT, _NO_DROP)
        return [*system, *rest] if system is not None else list(rest)

    def answer_reserve(self, max_new_tokens: int) -> int:
        """Return the answer room a prompt keeps free, evicting old turns for it.

        That is ``max_new_tokens``, but at most half the context, so a small context keeps some
        history and the answer is capped at the room left instead (0 without a context budget).
        """
        if self.context_size is None:
            return 0
        return min(max_new_tokens, self.context_size // 2)

    def render(self, effort: Effort | None = None, max_new_tokens: int | None = None) -> RenderedPrompt:
        """Render the next prompt, applying the CoT policy and the context budget.

        The oldest whole turns are left out (policy ``evict``) until the prompt leaves
        :meth:`answer_reserve` tokens free; when even the newest turn alone leaves less, the answer
        gets the room there is (:attr:`RenderedPrompt.answer_room`).

        Args:
            effort: the reasoning effort of the turn (default: the session's).
            max_new_tokens: the turn's answer limit; None renders the next prompt as the last turn
                did (:attr:`answer_tokens`), which is what a prefill must do.

        Raises:
            ContextOverflowError: when the prompt itself cannot fit (the newest turn alone fills
                the context), or, with policy ``refuse``, when it does not leave the reserve free.
        """
        effort = effort or self.effort
        if max_new_tokens is None:
            max_new_tokens = self.answer_tokens
        else:
            self.answer_tokens = max_new_tokens
        reserve = self.answer_reserve(max_new_tokens)
        indices = visible_history(self.history)
        starts = self._turn_starts(indices)
        first = max((pos for pos in starts if indices[pos] <= self._first_kept), default=0)
        while True:
            messages = [self.history[i] for i in indices[first:]]
            tokens = self.render_messages(messages, effort)
            if self.context_size is None or len(tokens) + reserve <= self.context_size:
                break
            later = [pos for pos in starts if pos > first]
            if later and self.overflow == "evict":
                first = later[0]
                continue
            if later:
                raise ContextOverflowError(
                    f"the prompt needs {len(tokens)} tokens plus {reserve} for the answer, but the context "
                    f"holds {self.context_size}; start a new chat or raise --ctx"
                )
            if len(tokens) >= self.context_size:
                raise ContextOverflowError(
                    f"the prompt needs {len(tokens)} tokens, but the context holds {self.context_size}; "
                    "shorten the message or raise --ctx"
                )
            break  # the newest turn alone: the answer gets the room that is left
        if indices and first < len(indices):
            self._first_kept = indices[first]
        evicted = sum(1 for pos in starts if pos < first)
        room = None if self.context_size is None else self.context_size - len(tokens)
        return RenderedPrompt(tokens, effort, evicted, room)

    # -- persistence -----------------------------------------------------------------------

    def to_conversation(self) -> Conversation:
        """Return the conversation as harmony stores it (completed turns' analysis dropped)."""
        prefix = [self.system_message()]
        if (developer := self.developer_message()) is not None:
            prefix.append(developer)
        kept = [self.history[i] for i in visible_history(self.history)]
        return Conversation.from_messages([*prefix, *kept])

    def save(self, path: Path) -> None:
        """Write the conversation as openai-harmony's Conversation JSON (a 0600 file: conversations are private).

        Raises:
            ConversationFileError: if the file cannot be written.
        """
        try:
            write_private_text(path, self.to_conversation().to_json())  # a conversation: only its owner reads it
        except OSError as error:
            raise ConversationFileError(f"cannot write conversation {path}: {error.strerror}") from error

    @classmethod
    def load(cls, encoding: HarmonyEncoding, path: Path, **options: object) -> ChatSession:
        """Read a Conversation JSON file into a new session.

        The system message gives the pinned date and effort, the developer message the
        instructions and function tools; explicit ``options`` win over both.

        Raises:
            ConversationFileError: if the file is missing or is not a harmony conversation.
        """
        try:
            conversation = Conversation.from_json(path.read_text(encoding="utf-8"))
        except OSError as error:
            raise ConversationFileError(f"cannot read conversation {path}: {error.strerror}") from error
        except RecursionError as error:  # JSON nested deeper than Python's stack
            raise ConversationFileError(f"{path} is not a harmony conversation: its JSON nests too deeply") from error
        except (ValueError, ValidationError, KeyError, TypeError) as error:
            first_line = str(error).splitlines()[0] if str(error) else type(error).__name__
            raise ConversationFileError(f"{path} is not a harmony conversation: {first_line}") from error
        return cls.from_conversation(encoding, conversation, **options)

    @classmethod
    def from_conversation(cls, encoding: HarmonyEncoding, conversation: Conversation, **options: object) -> ChatSession:
        """Build a session from a harmony Conversation (see :meth:`load`)."""
        settings: dict[str, object] = {}
        history: list[Message] = []
        for message in conversation.messages:
            content = message.content[0] if message.content else None
            if message.author.role == Role.SYSTEM and isinstance(content, SystemContent):
                settings["start_date"] = content.conversation_start_date
                if content.reasoning_effort is not None:
                    settings["effort"] = parse_effort(content.reasoning_effort.value)
                settings["builtin"] = [name for name in (content.tools or {}) if name in _BUILTIN_TOOLS]
            elif message.author.role == Role.DEVELOPER and isinstance(content, DeveloperContent):
                settings["instructions"] = content.instructions
                namespace = (content.tools or {}).get("functions")
                settings["functions"] = list(namespace.tools) if namespace else []
            else:
                history.append(message)
        settings.update({key: value for key, value in options.items() if value is not None})
        session = cls(encoding, **settings)  # type: ignore[arg-type]
        session.history = history
        return session
