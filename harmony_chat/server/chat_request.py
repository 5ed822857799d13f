"""Chat Completions requests: their shape, and what they ask for in harmony terms.

Reasoning sent back on assistant messages (``reasoning``, or ``reasoning_content`` as llama.cpp
names it) becomes ``analysis``; whether a prompt keeps it is the session's chain-of-thought rule
(dropped after a final answer, kept through a tool loop), whatever the client sends. Assistant
``content`` next to ``tool_calls`` is a preamble (``commentary``), otherwise the answer
(``final``). ``system`` and ``developer`` messages become the developer message's instructions.
``stop`` (a string or up to four) cuts the answer before the first stop sequence (see
:mod:`~harmony_chat.server.turn_output`).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictBool

from harmony_chat.harmony.session import ResponseFormat
from harmony_chat.server.errors import ApiError
from harmony_chat.server.harmony_request import HarmonyRequest, request_effort
from harmony_chat.server.sampling_request import given, parse_logit_bias, parse_logprobs
from harmony_chat.server.stop_sequences import MAX_STOP_SEQUENCES

MAX_TOP_K = 2**31 - 1
"""llama.cpp's top_k is a 32-bit integer (``[sampling] top_k`` has the same bound)."""
SEED_RANGE = (-(2**63), 2**63 - 1)
"""A request's seed: a 64-bit signed integer, as vLLM's OpenAI server takes it (a larger one breaks the engine)."""


class _Lenient(BaseModel):
    model_config = ConfigDict(extra="ignore")


class TextPart(_Lenient):
    """A content part; only text is supported."""

    type: str
    text: str | None = None


class FunctionCall(_Lenient):
    """The function a tool call names."""

    name: str
    arguments: str = ""


class ToolCallIn(_Lenient):
    """A tool call on an assistant message."""

    id: str = ""
    type: str = "function"
    function: FunctionCall


class ChatMessage(_Lenient):
    """One message of the conversation the client sends."""

    role: Literal["system", "developer", "user", "assistant", "tool"]
    content: str | list[TextPart] | None = None
    reasoning: str | None = None
    reasoning_content: str | None = None
    tool_calls: list[ToolCallIn] | None = None
    tool_call_id: str | None = None
    name: str | None = None


class FunctionDef(_Lenient):
    """A function tool's declaration."""

    name: str
    description: str | None = None
    parameters: dict[str, Any] | None = None


class ToolDef(_Lenient):
    """A tool on offer; only functions are supported."""

    type: str
    function: FunctionDef | None = None


class ReasoningOptions(_Lenient):
    """OpenRouter's ``reasoning`` request object (``summary``: ``auto``, ``concise`` or ``detailed``)."""

    effort: str | None = None
    exclude: bool = False
    enabled: bool | None = None
    summary: str | None = None


class JsonSchemaFormat(_Lenient):
    """The ``json_schema`` of a response format."""

    name: str = "response"
    description: str | None = None
    schema_: dict[str, Any] | None = Field(default=None, alias="schema")
    strict: bool | None = None


class ResponseFormatIn(_Lenient):
    """``response_format``: text, any JSON object, or JSON of a schema."""

    type: Literal["text", "json_object", "json_schema"]
    json_schema: JsonSchemaFormat | None = None


class StreamOptions(_Lenient):
    """``stream_options``."""

    include_usage: bool = False


class ChatRequest(_Lenient):
    """A ``POST /v1/chat/completions`` body."""

    model: str
    messages: list[ChatMessage] = Field(min_length=1)
    stream: StrictBool = False
    stream_options: StreamOptions | None = None
    reasoning_effort: str | None = None
    reasoning: ReasoningOptions | None = None
    include_reasoning: bool | None = None
    tools: list[ToolDef] | None = None
    tool_choice: str | dict[str, Any] | None = None
    response_format: ResponseFormatIn | None = None
    max_tokens: int | None = Field(default=None, ge=1)
    max_completion_tokens: int | None = Field(default=None, ge=1)
    temperature: float | None = Field(default=None, ge=0, le=2)
    top_p: float | None = Field(default=None, gt=0, le=1)
    top_k: int | None = Field(default=None, ge=-1, le=MAX_TOP_K)
    """vLLM's extension: sample from the k most likely tokens only (-1 or 0: off)."""
    min_p: float | None = Field(default=None, ge=0, le=1)
    """vLLM's extension: sample only from tokens at least min_p times as likely as the most likely one."""
    seed: int | None = Field(default=None, ge=SEED_RANGE[0], le=SEED_RANGE[1])
    n: int | None = None
    stop: Any = None
    """A stop sequence or a list of them: checked by :meth:`stop_sequences` (one error, naming ``stop``)."""
    frequency_penalty: float | None = Field(default=None, ge=-2, le=2)
    presence_penalty: float | None = Field(default=None, ge=-2, le=2)
    logit_bias: dict[str, float] | None = None
    logprobs: StrictBool | None = None
    top_logprobs: int | None = None
    functions: list[Any] | None = None
    function_call: Any = None
    modalities: list[str] | None = None
    audio: Any = None

    def sampling_overrides(self) -> dict[str, Any]:
        """The :class:`~harmony_chat.backends.base.SamplingParams` fields the request sets, by name.

        ``max_completion_tokens`` (or the older ``max_tokens``) is ``max_tokens``; ``top_k`` -1 is 0 (off).

        Raises:
            ApiError: 400 for a ``logit_bias`` or ``top_logprobs`` the server cannot take.
        """
        return given(
            {
                "max_tokens": self.max_completion_tokens or self.max_tokens,
                "temperature": self.temperature,
                "top_p": self.top_p,
                "top_k": None if self.top_k is None else max(self.top_k, 0),
                "min_p": self.min_p,
                "seed": self.seed,
                "frequency_penalty": self.frequency_penalty,
                "presence_penalty": self.presence_penalty,
                "logit_bias": parse_logit_bias(self.logit_bias),
                "logprobs": parse_logprobs(self.logprobs, self.top_logprobs),
            }
        )

    def stop_sequences(self) -> tuple[str, ...]:
        """The stop sequences asked for (none for ``null`` or ``[]``).

        Raises:
            ApiError: 400 for anything but a non-empty string or a list of up to four of them.
        """
        stops = [self.stop] if isinstance(self.stop, str) else self.stop
        if stops is None:
            return ()
        if (
            not isinstance(stops, list)
            or len(stops) > MAX_STOP_SEQUENCES
            or not all(isinstance(stop, str) and stop for stop in stops)
        ):
            message = f"stop must be a non-empty string or a list of up to {MAX_STOP_SEQUENCES} non-empty strings"
            raise ApiError(400, message, param="stop")
        return tuple(stops)

    @property
    def exclude_reasoning(self) -> bool:
        """Whether the client asked not to get the reasoning back."""
        if self.reasoning is not None and (self.reasoning.exclude or self.reasoning.enabled is False):
            return True
        return self.include_reasoning is False


def _text(content: str | list[TextPart] | None, where: str) -> str:
    if content is None or isinstance(content, str):
        return content or ""
    texts: list[str] = []
    for part in content:
        if part.type not in ("text", "input_text", "output_text") or part.text is None:
            raise ApiError(400, f"{where}: only text content is supported, not {part.type!r}", param=where)
        texts.append(part.text)
    return "".join(texts)


def chat_harmony_request(request: ChatRequest) -> HarmonyRequest:
    """What a Chat Completions request asks for, in harmony terms.

    Raises:
        ApiError: 400 for what the server cannot do (``n`` > 1, the legacy ``functions``,
            modalities beside text, non-text content, non-function tools), a ``stop`` that is not
            a stop sequence or up to four, or a conversation that does not hold together.
    """
    if request.n not in (None, 1):
        raise ApiError(400, "n must be 1", param="n")
    request.stop_sequences()  # checked here, with the rest of the request; the turn's reader applies them
    for legacy, current in (("functions", "tools"), ("function_call", "tool_choice")):
        if getattr(request, legacy) is not None:
            raise ApiError(400, f"{legacy} is the deprecated form of {current}: send {current} instead", param=legacy)
    other = [modality for modality in request.modalities or [] if modality != "text"]
    if other:
        raise ApiError(400, f"only the text modality is supported, not {other[0][:20]!r}", param="modalities")
    if request.audio is not None:
        raise ApiError(400, "audio output is not supported", param="audio")
    reasoning_effort = request.reasoning.effort if request.reasoning else None
    harmony_request = HarmonyRequest(
        effort=request_effort(request.reasoning_effort or reasoning_effort, "reasoning_effort")
    )
    for index, tool in enumerate(request.tools or []):
        if tool.type != "function" or tool.function is None:
            raise ApiError(400, f"tools[{index}]: only function tools are supported", param=f"tools[{index}]")
        harmony_request.add_function(tool.function.name, tool.function.description, tool.function.parameters)
    harmony_request.choose_tools(request.tool_choice)
    harmony_request.response_format = _response_format(request.response_format)
    for index, message in enumerate(request.messages):
        where = f"messages[{index}]"
        text = _text(message.content, where)
        if message.role in ("system", "developer"):
            harmony_request.instructions.append(text)
        elif message.role == "user":
            harmony_request.add_user(text)
        elif message.role == "tool":
            harmony_request.add_tool_output(message.tool_call_id, text, message.name, param=where)
        else:
            harmony_request.add_reasoning(message.reasoning or message.reasoning_content or "")
            harmony_request.add_assistant_text(text, preamble=bool(message.tool_calls))
            for call in message.tool_calls or []:
                harmony_request.add_call(call.id, call.function.name, call.function.arguments)
    if not harmony_request.has_history():
        raise ApiError(400, "messages holds no user, assistant or tool message", param="messages")
    return harmony_request


def _response_format(response_format: ResponseFormatIn | None) -> ResponseFormat | None:
    if response_format is None or response_format.type == "text":
        return None
    if response_format.type == "json_object":
        return ResponseFormat("json_object", {"type": "object"}, "a JSON object")
    spec = response_format.json_schema
    if spec is None or spec.schema_ is None:
        raise ApiError(400, "response_format.json_schema.schema is required", param="response_format")
    return ResponseFormat(spec.name, spec.schema_, spec.description or "")
