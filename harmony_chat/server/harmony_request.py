"""What a request asks for, in harmony terms, and the session and turn options built from it.

Both APIs fill a :class:`HarmonyRequest` from the client's messages or items: instructions, the
history as harmony messages (reasoning as ``analysis``, preambles as ``commentary``, answers as
``final``, tool calls and their results), function tools, a response format, effort and
sampling. :func:`build_session` turns it into a fresh :class:`ChatSession`, whose own
chain-of-thought rule then decides which reasoning the prompt keeps.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from openai_harmony import Author, Message, Role, ToolDescription

from harmony_chat.backends.base import SamplingParams
from harmony_chat.backends.schema_errors import UnenforceableSchema
from harmony_chat.backends.schema_grammar import check_enforceable
from harmony_chat.generation.turn import TurnOptions
from harmony_chat.harmony.effort import Effort, parse_effort
from harmony_chat.harmony.session import ChatSession, ResponseFormat
from harmony_chat.server.errors import ApiError
from harmony_chat.server.sampling_request import SamplingOverrides
from harmony_chat.tools.schema import to_harmony_parameters

if TYPE_CHECKING:
    from openai_harmony import HarmonyEncoding

    from harmony_chat.backends.base import ModelBackend

_FUNCTION_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


@dataclass(slots=True)
class ServedModel:
    """The loaded model the server exposes, and the defaults requests start from."""

    backend: ModelBackend
    encoding: HarmonyEncoding
    name: str
    sampling: SamplingParams = field(default_factory=SamplingParams)
    effort: Effort = "medium"
    start_date: str | None = None
    """The conversation date in every prompt (None: today)."""
    context_size: int | None = None

    def close(self) -> None:
        """Release the model (the server owns it from start to stop)."""
        self.backend.close()

    def __enter__(self) -> ServedModel:
        """The served model, closed (:meth:`close`) when the ``with`` block ends, however it ends."""
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def request_effort(value: str | None, param: str) -> Effort | None:
    """A request's reasoning effort, read by :func:`parse_effort`: None when not given, ``minimal`` as ``low``.

    Raises:
        ApiError: 400 naming ``param`` for any other value (never ValueError, which is parse_effort's).
    """
    if value is None:
        return None
    try:
        return parse_effort("low" if value.strip().lower() == "minimal" else value)
    except ValueError:
        raise ApiError(400, f"{param} must be low, medium or high, not {value!r}", param=param) from None


@dataclass(slots=True)
class HarmonyRequest:
    """A request's conversation and settings, ready to become a session."""

    instructions: list[str] = field(default_factory=list)
    messages: list[Message] = field(default_factory=list)
    functions: list[ToolDescription] = field(default_factory=list)
    tool_schemas: dict[str, Mapping[str, object]] = field(default_factory=dict)
    response_format: ResponseFormat | None = None
    effort: Effort | None = None
    call_names: dict[str, str] = field(default_factory=dict)
    """Function name by call id, for the tool outputs that answer the calls."""
    tool_choice: str | None = None
    """``required`` or a function's name: the turn must end with such a call (see :class:`TurnOptions`)."""

    # -- tools ---------------------------------------------------------------------------------

    @property
    def function_names(self) -> list[str]:
        """The names of the functions the model may call (none after ``tool_choice: none``)."""
        return [tool.name for tool in self.functions]

    def add_function(self, name: str, description: str | None, parameters: Mapping[str, object] | None) -> None:
        """Declare a function tool the model may call.

        Raises:
            ApiError: 400 for a name OpenAI would refuse.
        """
        if not _FUNCTION_NAME.match(name):
            raise ApiError(400, f"invalid function name {name!r} (letters, digits, _ and -, at most 64)", param="tools")
        self.functions.append(ToolDescription.new(name, description or "", to_harmony_parameters(parameters)))
        if parameters:
            self.tool_schemas[f"functions.{name}"] = parameters

    def choose_tools(self, choice: object, param: str = "tool_choice") -> None:
        """Apply ``tool_choice``: ``none`` declares no tools; ``required`` or a named function forces the call.

        The turn then ends with that call (the tokens are held to it, see :class:`TurnOptions`);
        the developer message asks for it too, so the model's analysis plans for it.

        Raises:
            ApiError: 400 for an unknown value or a function that is not declared.
        """
        if choice is None or choice == "auto":
            return
        if choice == "none":
            self.functions, self.tool_schemas = [], {}
            return
        if choice == "required":
            if not self.functions:
                raise ApiError(400, "tool_choice is required but no tools are given", param=param)
            self.instructions.append("Call one of the functions before you answer.")
            self.tool_choice = "required"
            return
        name = _named_choice(choice)
        if name is None:
            raise ApiError(400, f"{param} must be none, auto, required or a function", param=param)
        if name not in {tool.name for tool in self.functions}:
            raise ApiError(400, f"{param} names {name!r}, which is not among the tools", param=param)
        self.instructions.append(f"Call functions.{name} before you answer.")
        self.tool_choice = name

    # -- history -------------------------------------------------------------------------------

    def add_user(self, text: str) -> None:
        """A user message."""
        self.messages.append(Message.from_role_and_content(Role.USER, text))

    def add_reasoning(self, text: str) -> None:
        """Reasoning the client sent back: an ``analysis`` message (the CoT rule decides if it stays)."""
        if text:
            self.messages.append(Message.from_role_and_content(Role.ASSISTANT, text).with_channel("analysis"))

    def add_assistant_text(self, text: str, *, preamble: bool) -> None:
        """Assistant text: a preamble (``commentary``) or an answer (``final``)."""
        if text:
            channel = "commentary" if preamble else "final"
            self.messages.append(Message.from_role_and_content(Role.ASSISTANT, text).with_channel(channel))

    def add_call(self, call_id: str, name: str, arguments: str) -> None:
        """A function call the assistant made, as harmony writes it (``commentary``, ``<|constrain|>json``)."""
        recipient = f"functions.{name.removeprefix('functions.')}"
        message = Message.from_role_and_content(Role.ASSISTANT, arguments or "{}")
        self.messages.append(
            message.with_channel("commentary").with_recipient(recipient).with_content_type("<|constrain|>json")
        )
        if call_id:
            self.call_names[call_id] = recipient

    def add_tool_output(
        self, call_id: str | None, output: str, name: str | None = None, param: str = "messages"
    ) -> None:
        """The result of a call, from the tool back to the assistant.

        Raises:
            ApiError: 400 when the call id answers no call in the conversation (and no name is given).
        """
        recipient = self.call_names.get(call_id or "")
        if recipient is None and name:
            recipient = f"functions.{name.removeprefix('functions.')}"
        if recipient is None:
            raise ApiError(400, f"tool output for call {call_id!r}, which no assistant message made", param=param)
        message = Message.from_author_and_content(Author.new(Role.TOOL, recipient), output)
        self.messages.append(message.with_recipient("assistant").with_channel("commentary"))

    def has_history(self) -> bool:
        """Whether there is anything to answer."""
        return bool(self.messages)


def _named_choice(choice: object) -> str | None:
    if not isinstance(choice, Mapping) or choice.get("type") != "function":
        return None
    function = choice.get("function")
    name = function.get("name") if isinstance(function, Mapping) else choice.get("name")
    return name if isinstance(name, str) else None


def build_session(harmony_request: HarmonyRequest, served: ServedModel) -> ChatSession:
    """A fresh session holding the request's conversation (nothing is shared between requests)."""
    session = ChatSession(
        served.encoding,
        effort=harmony_request.effort or served.effort,
        instructions="\n\n".join(text for text in harmony_request.instructions if text) or None,
        functions=harmony_request.functions,
        response_formats=[harmony_request.response_format] if harmony_request.response_format else [],
        start_date=served.start_date,
        context_size=served.context_size,
    )
    session.history = list(harmony_request.messages)
    return session


def turn_options(
    harmony_request: HarmonyRequest, served: ServedModel, overrides: SamplingOverrides | None = None
) -> TurnOptions:
    """The turn's options: the server's sampling with the request's overrides merged in, schemas for grammars.

    ``overrides`` (``sampling_overrides()`` of the request) must have passed
    :func:`~harmony_chat.server.sampling_request.check_sampling` for the served backend.
    """
    sampling = replace(served.sampling, **(overrides or {}))
    schema = harmony_request.response_format.schema if harmony_request.response_format else None
    checks = [("response_format", "the response format", schema)] if schema is not None else []
    checks += [
        ("tools", f"{name}'s parameters", parameters) for name, parameters in harmony_request.tool_schemas.items()
    ]
    for param, what, checked in checks:
        try:
            check_enforceable(checked)
        except UnenforceableSchema as error:
            raise ApiError(400, f"{what}: {error}", param=param) from None
    return TurnOptions(
        sampling=sampling,
        effort=harmony_request.effort or served.effort,
        tool_schemas=dict(harmony_request.tool_schemas),
        final_schema=schema,
        tool_choice=harmony_request.tool_choice,
    )
