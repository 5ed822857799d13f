"""The requests the checks send, by name: the same name always means the same request.

Names are what recordings are keyed by, so they are stable: ``chat.*`` go to
``/v1/chat/completions``, ``responses.*`` to ``/v1/responses``. Builders here only shape
requests; what a reply must look like is the checks' business.
"""

from __future__ import annotations

from typing import Any

from harmony_chat.conform.prompts import Prompts
from harmony_chat.conform.transport import Probe

CHAT = "/chat/completions"
RESPONSES = "/responses"
CALL_ID = "call_conform_1"
"""The id of the earlier tool call the tool-loop probes send back."""
CONTEXT_TOKENS = 16
"""The token limit of probes that only measure the prompt (``usage.prompt_tokens``)."""
REASONING_FIELDS = ("reasoning", "reasoning_content", "thinking")
"""Where servers put reasoning on a Chat Completions message: the guide's name first."""

Message = dict[str, Any]


class ProbeBook:
    """Builds the named probes for one model and one set of prompts."""

    def __init__(self, model: str, prompts: Prompts) -> None:
        self.model = model
        self.prompts = prompts

    # -- Chat Completions ----------------------------------------------------------------------

    def chat(self, name: str, messages: list[Message], *, stream: bool = False, **extra: Any) -> Probe:
        """A Chat Completions probe (streamed ones ask for the usage chunk)."""
        body: dict[str, Any] = {"model": self.model, "messages": messages, **extra}
        if stream:
            body["stream"] = True
            body["stream_options"] = {"include_usage": True}
        return Probe(f"chat.{name}", CHAT, body, stream=stream)

    def chat_plain(self, *, stream: bool = False) -> Probe:
        """The plain question."""
        return self.chat("plain.stream" if stream else "plain", [self._user(self.prompts.question)], stream=stream)

    def chat_exclude(self) -> Probe:
        """The plain question with ``reasoning: {exclude: true}``."""
        return self.chat("exclude", [self._user(self.prompts.question)], reasoning={"exclude": True})

    def chat_after_final(self, field: str | None) -> Probe:
        """Question, answer (with its reasoning as ``field``, or none), follow-up: measures the prompt."""
        answer: Message = {"role": "assistant", "content": self.prompts.answer}
        if field is not None:
            answer[field] = self.prompts.reasoning
        messages = [self._user(self.prompts.question), answer, self._user(self.prompts.follow_up)]
        return self.chat(f"cot.final.{field or 'none'}", messages, max_tokens=CONTEXT_TOKENS)

    def chat_tool_loop(self, field: str | None) -> Probe:
        """Question, reasoning (as ``field``, or none) and a call, then its result: measures the prompt."""
        call: Message = {"role": "assistant", "content": None, "tool_calls": [self._call()]}
        if field is not None:
            call[field] = self.prompts.tool_reasoning
        result = {"role": "tool", "tool_call_id": CALL_ID, "content": self.prompts.tool_result}
        messages = [self._user(self.prompts.tool_question), call, result]
        return self.chat(f"cot.loop.{field or 'none'}", messages, tools=[self.prompts.tool], max_tokens=CONTEXT_TOKENS)

    def chat_tool(self, *, stream: bool = False) -> Probe:
        """The question the model answers with a call."""
        name = "tool.stream" if stream else "tool"
        return self.chat(name, [self._user(self.prompts.tool_question)], stream=stream, tools=[self.prompts.tool])

    def chat_tool_result(self, assistant: Message) -> Probe:
        """The model's own call (``assistant``, as it came) answered with the tool's result."""
        calls = assistant.get("tool_calls") or []
        call_id = str(calls[0].get("id") or CALL_ID) if calls and isinstance(calls[0], dict) else CALL_ID
        result = {"role": "tool", "tool_call_id": call_id, "content": self.prompts.tool_result}
        messages = [self._user(self.prompts.tool_question), assistant, result]
        return self.chat("tool.result", messages, tools=[self.prompts.tool])

    def chat_structured(self) -> Probe:
        """A request for JSON of the schema (``response_format: json_schema``)."""
        messages = [
            {"role": "system", "content": self.prompts.schema_instructions},
            self._user(self.prompts.schema_request),
        ]
        schema = {"name": self.prompts.schema_name, "schema": self.prompts.schema, "strict": True}
        return self.chat("structured", messages, response_format={"type": "json_schema", "json_schema": schema})

    def chat_cutoff(self) -> Probe:
        """The effort question at high effort, cut off after a few tokens (inside the reasoning)."""
        messages = [self._user(self.prompts.effort_question)]
        return self.chat("cutoff", messages, reasoning_effort="high", max_tokens=self.prompts.cutoff_tokens)

    def chat_effort(self, effort: str, sample: int) -> Probe:
        """The effort question at ``effort`` (one of several samples)."""
        messages = [self._user(self.prompts.effort_question)]
        return self.chat(f"effort.{effort}.{sample}", messages, reasoning_effort=effort)

    def chat_errors(self) -> list[Probe]:
        """Requests a server must refuse: broken JSON, no messages, an unknown role, a wrong type."""
        user = [self._user(self.prompts.question)]
        return [
            Probe("chat.error.not_json", CHAT, raw='{"model": "' + self.model + '", "messages": ['),
            Probe("chat.error.no_messages", CHAT, {"model": self.model}),
            Probe(
                "chat.error.bad_role", CHAT, {"model": self.model, "messages": [{"role": "wizard", "content": "hi"}]}
            ),
            Probe("chat.error.bad_type", CHAT, {"model": self.model, "messages": user, "temperature": "hot"}),
        ]

    # -- Responses -----------------------------------------------------------------------------

    def responses(self, name: str, input_: str | list[Message], *, stream: bool = False, **extra: Any) -> Probe:
        """A Responses probe."""
        body: dict[str, Any] = {"model": self.model, "input": input_, **extra}
        if stream:
            body["stream"] = True
        return Probe(f"responses.{name}", RESPONSES, body, stream=stream)

    def responses_plain(self, *, stream: bool = False) -> Probe:
        """The plain question (stored, so it can be continued)."""
        return self.responses("plain.stream" if stream else "plain", self.prompts.question, stream=stream)

    def responses_continue(self, previous_id: str | None) -> Probe:
        """The follow-up continuing ``previous_id``, or (None) the follow-up alone."""
        if previous_id is None:
            return self.responses("follow_up.alone", self.prompts.follow_up, max_output_tokens=CONTEXT_TOKENS)
        return self.responses(
            "follow_up.continued", self.prompts.follow_up, previous_response_id=previous_id,
            max_output_tokens=CONTEXT_TOKENS,
        )  # fmt: skip

    def responses_after_final(self, with_reasoning: bool) -> Probe:
        """Question, reasoning item (or none), answer, follow-up: measures the prompt."""
        items: list[Message] = [self._input(self.prompts.question)]
        if with_reasoning:
            items.append(self._reasoning_item(self.prompts.reasoning))
        items.append({"type": "message", "role": "assistant", "content": self.prompts.answer})
        items.append(self._input(self.prompts.follow_up))
        name = "cot.final.reasoning" if with_reasoning else "cot.final.none"
        return self.responses(name, items, max_output_tokens=CONTEXT_TOKENS)

    def responses_tool_loop(self, with_reasoning: bool) -> Probe:
        """Question, reasoning item (or none), a call and its output: measures the prompt."""
        items: list[Message] = [self._input(self.prompts.tool_question)]
        if with_reasoning:
            items.append(self._reasoning_item(self.prompts.tool_reasoning))
        items.append(self._function_call(CALL_ID, self.prompts.tool_arguments))
        items.append({"type": "function_call_output", "call_id": CALL_ID, "output": self.prompts.tool_result})
        name = "cot.loop.reasoning" if with_reasoning else "cot.loop.none"
        return self.responses(name, items, tools=[self.prompts.responses_tool()], max_output_tokens=CONTEXT_TOKENS)

    def responses_tool(self) -> Probe:
        """The question the model answers with a call."""
        return self.responses("tool", self.prompts.tool_question, tools=[self.prompts.responses_tool()])

    def responses_tool_result(self, call_id: str, arguments: str) -> Probe:
        """The model's own call answered with the tool's result."""
        items = [
            self._input(self.prompts.tool_question),
            self._function_call(call_id, arguments),
            {"type": "function_call_output", "call_id": call_id, "output": self.prompts.tool_result},
        ]
        return self.responses("tool.result", items, tools=[self.prompts.responses_tool()])

    def responses_structured(self) -> Probe:
        """A request for JSON of the schema (``text.format: json_schema``)."""
        text_format = {"type": "json_schema", "name": self.prompts.schema_name, "schema": self.prompts.schema}
        return self.responses(
            "structured", self.prompts.schema_request, instructions=self.prompts.schema_instructions,
            text={"format": {**text_format, "strict": True}},
        )  # fmt: skip

    def responses_cutoff(self) -> Probe:
        """The effort question at high effort, cut off inside the reasoning."""
        return self.responses(
            "cutoff", self.prompts.effort_question, reasoning={"effort": "high"},
            max_output_tokens=self.prompts.cutoff_tokens,
        )  # fmt: skip

    def responses_effort(self, effort: str, sample: int) -> Probe:
        """The effort question at ``effort``."""
        return self.responses(f"effort.{effort}.{sample}", self.prompts.effort_question, reasoning={"effort": effort})

    def responses_errors(self) -> list[Probe]:
        """Requests a server must refuse: broken JSON, an unknown previous response, a bad item type."""
        return [
            Probe("responses.error.not_json", RESPONSES, raw='{"model": "' + self.model + '", "input": ['),
            Probe(
                "responses.error.unknown_previous",
                RESPONSES,
                {"model": self.model, "input": self.prompts.follow_up, "previous_response_id": "resp_conform_missing"},
            ),
            Probe("responses.error.bad_item", RESPONSES, {"model": self.model, "input": [{"type": "wizardry"}]}),
        ]

    # -- pieces --------------------------------------------------------------------------------

    @staticmethod
    def _user(text: str) -> Message:
        return {"role": "user", "content": text}

    @staticmethod
    def _input(text: str) -> Message:
        return {"type": "message", "role": "user", "content": text}

    @staticmethod
    def _reasoning_item(text: str) -> Message:
        return {
            "type": "reasoning",
            "id": "rs_conform_1",
            "summary": [],
            "content": [{"type": "reasoning_text", "text": text}],
        }

    def _call(self) -> Message:
        function = {"name": self.prompts.tool_name, "arguments": self.prompts.tool_arguments}
        return {"id": CALL_ID, "type": "function", "function": function}

    def _function_call(self, call_id: str, arguments: str) -> Message:
        return {"type": "function_call", "call_id": call_id, "name": self.prompts.tool_name, "arguments": arguments}
