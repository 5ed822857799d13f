"""Responses API requests: their shape, their input items, and what both ask for in harmony terms.

Input items are normalised (a string input is one user message) so a stored response can be
continued with ``previous_response_id``: the stored items come first, the new ones after. A
``reasoning`` item's ``reasoning_text`` becomes ``analysis`` (the session's CoT rule decides if
a prompt keeps it), and so does the text sealed in its ``encrypted_content`` (see
:mod:`~harmony_chat.server.reasoning_seal`; the canonical item keeps the blob beside the opened
text, so whatever the server hands on shows the blob, never the text); an assistant message with
``phase: commentary`` is a preamble, and so is one without a phase that a ``function_call`` item
directly follows; any other assistant message is an answer; ``function_call`` and
``function_call_output`` items are the call and its result.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, StrictBool

from harmony_chat.harmony.session import ResponseFormat
from harmony_chat.server.errors import ApiError
from harmony_chat.server.harmony_request import HarmonyRequest, request_effort
from harmony_chat.server.reasoning_seal import ReasoningSeal, SealError, SealKeyError
from harmony_chat.server.sampling_request import given, parse_logprobs

Item = dict[str, Any]
LOGPROBS_INCLUDE = "message.output_text.logprobs"
"""The ``include`` value that asks for the output text's log probabilities."""
SEALED_REASONING_INCLUDE = "reasoning.encrypted_content"
"""The ``include`` value that asks for reasoning sealed in ``encrypted_content`` instead of plain text."""


class _Lenient(BaseModel):
    model_config = ConfigDict(extra="ignore")


class ReasoningConfig(_Lenient):
    """``reasoning``: the effort, and the summary asked for (``generate_summary`` is its old name)."""

    effort: str | None = None
    summary: str | None = None
    generate_summary: str | None = None

    @property
    def summary_asked(self) -> str | None:
        """``summary``, or the deprecated ``generate_summary``."""
        return self.summary if self.summary is not None else self.generate_summary


class FunctionTool(_Lenient):
    """A tool on offer; only functions are supported."""

    type: str
    name: str | None = None
    description: str | None = None
    parameters: dict[str, Any] | None = None
    strict: bool | None = None


class TextFormat(_Lenient):
    """``text.format``: text, any JSON object, or JSON of a schema."""

    type: str = "text"
    name: str = "response"
    description: str | None = None
    schema_: dict[str, Any] | None = Field(default=None, alias="schema")
    strict: bool | None = None


class TextConfig(_Lenient):
    """``text``."""

    format: TextFormat | None = None


class ConversationRef(_Lenient):
    """``conversation`` given as an object."""

    id: str


class ResponsesRequest(_Lenient):
    """A ``POST /v1/responses`` body."""

    model: str
    input: str | list[Item] = ""
    instructions: str | None = None
    reasoning: ReasoningConfig | None = None
    tools: list[FunctionTool] | None = None
    tool_choice: str | dict[str, Any] | None = None
    text: TextConfig | None = None
    max_output_tokens: int | None = Field(default=None, ge=1)
    temperature: float | None = Field(default=None, ge=0, le=2)
    top_p: float | None = Field(default=None, gt=0, le=1)
    stream: StrictBool = False
    store: StrictBool = True
    background: StrictBool | None = None
    include: list[str] | None = None
    top_logprobs: int | None = None
    previous_response_id: str | None = None
    conversation: str | ConversationRef | None = None
    prompt: Any = None
    metadata: dict[str, str] | None = None

    @property
    def seals_reasoning(self) -> bool:
        """Whether reasoning items carry their text sealed in ``encrypted_content`` (and not in plain text)."""
        return SEALED_REASONING_INCLUDE in (self.include or [])

    @property
    def uses_seal(self) -> bool:
        """Whether the request needs the server's reasoning key: to seal its reasoning, or to open an input item's."""
        if self.seals_reasoning:
            return True
        items = self.input if isinstance(self.input, list) else []
        return any(isinstance(item, dict) and item.get("encrypted_content") is not None for item in items)

    @property
    def logprobs_asked(self) -> bool:
        """Whether the output text should carry log probabilities (``include`` names them, or ``top_logprobs``)."""
        return LOGPROBS_INCLUDE in (self.include or []) or bool(self.top_logprobs)

    def sampling_overrides(self) -> dict[str, Any]:
        """The :class:`~harmony_chat.backends.base.SamplingParams` fields the request sets, by name.

        ``max_output_tokens`` is ``max_tokens``; the Responses API has no penalties or logit bias.

        Raises:
            ApiError: 400 for ``top_logprobs`` out of 0 to 20.
        """
        return given(
            {
                "max_tokens": self.max_output_tokens,
                "temperature": self.temperature,
                "top_p": self.top_p,
                "logprobs": parse_logprobs(self.logprobs_asked, self.top_logprobs),
            }
        )

    @property
    def conversation_id(self) -> str | None:
        """The id of the conversation the response belongs to (given as a string or ``{"id"}``)."""
        if isinstance(self.conversation, ConversationRef):
            return self.conversation.id
        return self.conversation

    def check_supported(self, produced: frozenset[str] = frozenset()) -> None:
        """Refuse what the server would otherwise silently ignore.

        Args:
            produced: the ``include`` values this server can produce for the request (sealed reasoning
                is always produced).

        Raises:
            ApiError: 400 for ``background: true``, an ``include`` value the server does not produce,
                a stored ``prompt`` template, or ``conversation`` with ``previous_response_id`` or
                ``store: false``.
        """
        if self.background:
            raise ApiError(400, "background responses are not supported: leave background false", param="background")
        for value in self.include or []:
            if value not in produced and value != SEALED_REASONING_INCLUDE:
                raise ApiError(400, f"include: this server does not produce {value[:60]!r}", param="include")
        if self.prompt is not None:
            raise ApiError(
                400, "stored prompt templates are not supported: send input and instructions", param="prompt"
            )
        if self.conversation is not None and self.previous_response_id:
            raise ApiError(
                400, "conversation and previous_response_id cannot be used together", param="previous_response_id"
            )
        if self.conversation is not None and not self.store:
            raise ApiError(400, "a conversation keeps its items: store must not be false with it", param="store")


def _text(content: object, where: str) -> str:
    if content is None or isinstance(content, str):
        return content or ""
    if not isinstance(content, list):
        raise ApiError(400, f"{where}.content must be a string or a list of parts", param=where)
    texts: list[str] = []
    for part in content:
        kind = part.get("type") if isinstance(part, dict) else None
        if kind not in ("input_text", "output_text", "text", "reasoning_text") or not isinstance(part.get("text"), str):
            raise ApiError(400, f"{where}: only text content is supported, not {kind!r}", param=where)
        texts.append(part["text"])
    return "".join(texts)


def normalise_input(value: str | list[Item], seal: ReasoningSeal | None = None) -> list[Item]:
    """The request's input as canonical items (text only, one shape per kind).

    A reasoning item's ``encrypted_content`` is opened with ``seal``; without one (items kept for a
    conversation) the blob is kept unopened, with no text, to be opened when a response reads it.

    Raises:
        ApiError: 400 for an item the server does not understand, or a blob that does not open; 500
            when the key cannot be had.
    """
    if isinstance(value, str):
        return [{"type": "message", "role": "user", "content": value}] if value else []
    items: list[Item] = []
    for index, item in enumerate(value):
        where = f"input[{index}]"
        kind = item.get("type", "message")
        if kind == "message":
            role = item.get("role")
            if role not in ("user", "system", "developer", "assistant"):
                raise ApiError(400, f"{where}.role must be user, system, developer or assistant", param=where)
            canonical: Item = {"type": "message", "role": role, "content": _text(item.get("content"), where)}
            if role == "assistant" and _is_preamble(item, value[index + 1 : index + 2]):
                canonical["phase"] = "commentary"
            items.append(canonical)
        elif kind == "reasoning":
            items.append(_reasoning(item, where, seal))
        elif kind == "function_call":
            if not isinstance(item.get("name"), str):
                raise ApiError(400, f"{where}.name is required", param=where)
            arguments = item.get("arguments") if isinstance(item.get("arguments"), str) else "{}"
            items.append(
                {
                    "type": "function_call",
                    "call_id": str(item.get("call_id", "")),
                    "name": item["name"],
                    "arguments": arguments,
                }
            )
        elif kind == "function_call_output":
            output = item.get("output")
            text = output if isinstance(output, str) else _text(output, where)
            items.append({"type": "function_call_output", "call_id": str(item.get("call_id", "")), "output": text})
        else:
            raise ApiError(400, f"{where}: items of type {kind!r} are not supported", param=where)
    return items


def _reasoning(item: Item, where: str, seal: ReasoningSeal | None) -> Item:
    """A reasoning input item: its ``reasoning_text``, or the text sealed in its ``encrypted_content``.

    A blob, when there is one, is what counts (the server sealed it; ``content`` is the client's).
    """
    blob = item.get("encrypted_content")
    if blob is None:
        return {"type": "reasoning", "text": _text(item.get("content") or [], where)}
    if not isinstance(blob, str):
        raise ApiError(400, f"{where}.encrypted_content must be a string", param=where)
    if seal is None:
        return {"type": "reasoning", "text": "", "encrypted_content": blob}
    try:
        text = seal.open(blob)
    except SealError as error:
        message = f"{where}.encrypted_content is not reasoning this server sealed: {error}"
        raise ApiError(400, message, param=where) from None
    except SealKeyError as error:
        raise key_unavailable(error) from None
    return {"type": "reasoning", "text": text, "encrypted_content": blob}


def key_unavailable(error: SealKeyError) -> ApiError:
    """The 500 for a server whose reasoning key cannot be had (its variable or file is at fault)."""
    return ApiError(500, f"sealed reasoning is unavailable on this server: {error}")


def load_seal(seal: ReasoningSeal) -> None:
    """Load the reasoning key (it may read or make a file: call it off the event loop).

    Raises:
        ApiError: 500 when the key cannot be had.
    """
    try:
        seal.load()
    except SealKeyError as error:
        raise key_unavailable(error) from None


def _is_preamble(message: Item, following: list[Item]) -> bool:
    """Whether an assistant message is a preamble: ``phase: commentary``, or no phase and a function call next.

    Clients that drop ``phase`` (pydantic-ai) send a preamble back as a bare assistant message;
    one that a ``function_call`` item directly follows was written before that call, so it is
    commentary, never the final answer.
    """
    phase: object = message.get("phase")
    if phase is not None:
        return phase == "commentary"
    after: object = following[0].get("type") if following and isinstance(following[0], dict) else None
    return after == "function_call"


def output_as_input(output: list[Item], sealed_texts: Mapping[str, str] | None = None) -> list[Item]:
    """A response's output items in canonical input form (for ``previous_response_id``).

    ``sealed_texts`` holds the text of each reasoning item (by id) that went out sealed, without ``content``.
    """
    items: list[Item] = []
    for item in output:
        if item["type"] == "reasoning":
            if "encrypted_content" in item:  # sealed (no blob yet when the turn failed inside it)
                sealed: Item = {"type": "reasoning", "text": (sealed_texts or {}).get(item["id"], "")}
                if item["encrypted_content"] is not None:
                    sealed["encrypted_content"] = item["encrypted_content"]
                items.append(sealed)
                continue
            items.append({"type": "reasoning", "text": "".join(part["text"] for part in item["content"])})
        elif item["type"] == "message":
            text = "".join(part["text"] for part in item["content"])
            canonical: Item = {"type": "message", "role": "assistant", "content": text}
            if item.get("phase") == "commentary":
                canonical["phase"] = "commentary"
            items.append(canonical)
        elif item["type"] == "function_call":
            items.append({key: item[key] for key in ("type", "call_id", "name", "arguments")})
    return items


def responses_harmony_request(request: ResponsesRequest, items: list[Item]) -> HarmonyRequest:
    """What a Responses request asks for in harmony terms, when its full input is ``items``.

    Raises:
        ApiError: 400 for non-function tools, an effort or a format the server does not know,
            or nothing to answer.
    """
    effort = request_effort(request.reasoning.effort if request.reasoning else None, "reasoning.effort")
    harmony_request = HarmonyRequest(effort=effort)
    if request.instructions:
        harmony_request.instructions.append(request.instructions)
    for index, tool in enumerate(request.tools or []):
        if tool.type != "function" or not tool.name:
            raise ApiError(400, f"tools[{index}]: only function tools are supported", param=f"tools[{index}]")
        harmony_request.add_function(tool.name, tool.description, tool.parameters)
    harmony_request.choose_tools(request.tool_choice)
    harmony_request.response_format = _text_format(request.text)
    for index, item in enumerate(items):
        if item["type"] == "message":
            if item["role"] in ("system", "developer"):
                harmony_request.instructions.append(item["content"])
            elif item["role"] == "user":
                harmony_request.add_user(item["content"])
            else:
                harmony_request.add_assistant_text(item["content"], preamble=item.get("phase") == "commentary")
        elif item["type"] == "reasoning":
            harmony_request.add_reasoning(item["text"])
        elif item["type"] == "function_call":
            harmony_request.add_call(item["call_id"], item["name"], item["arguments"])
        else:
            harmony_request.add_tool_output(item["call_id"], item["output"], param=f"input[{index}]")
    if not harmony_request.has_history():
        raise ApiError(400, "input is empty", param="input")
    return harmony_request


def _text_format(text: TextConfig | None) -> ResponseFormat | None:
    spec = text.format if text else None
    if spec is None or spec.type == "text":
        return None
    if spec.type == "json_object":
        return ResponseFormat("json_object", {"type": "object"}, "a JSON object")
    if spec.type != "json_schema" or spec.schema_ is None:
        raise ApiError(400, "text.format must be text, json_object, or json_schema with a schema", param="text.format")
    return ResponseFormat(spec.name, spec.schema_, spec.description or "")
