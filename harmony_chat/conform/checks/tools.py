"""Function calls: a call parses, its result goes back, and a preamble is content, not reasoning."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from jsonschema import Draft202012Validator

from harmony_chat.conform import guide
from harmony_chat.conform.checks.common import unanswered
from harmony_chat.conform.readers import (
    assemble_chat_stream,
    chat_finish,
    chat_message,
    get,
    markup_in,
    output_items,
    output_text,
    quote,
    reasoning_by_field,
    text_of,
)
from harmony_chat.conform.result import Check, Outcome, Status
from harmony_chat.conform.session import ProbeSession
from harmony_chat.conform.transport import Reply

TOOLS_DECLINED = Status.NOT_OFFERED
"""A server may be started without function calling (vLLM needs --enable-auto-tool-choice): not offered."""
CALL_TOKEN = 200012
"""``<|call|>``: vLLM's ``stop_reason`` when the model ended its message with a tool call."""
VLLM_TOOL_FLAGS = "start vLLM with `--tool-call-parser openai --enable-auto-tool-choice`"
"""What vLLM's chat endpoint needs to return gpt-oss's calls as ``tool_calls`` (0.32.0 drops them without)."""


def call_problems(name: object, arguments: object, call_id: object, session: ProbeSession) -> list[str]:
    """What is wrong with one call: its id, its name (harmony residue), its arguments (JSON of the schema)."""
    problems: list[str] = []
    expected = session.prompts.tool_name
    if not text_of(call_id):
        problems.append("the call has no id")
    if name != expected:
        detail = quote(name)
        if isinstance(name, str) and (name.startswith("functions.") or markup_in(name) or "<|" in name):
            detail += " (harmony recipient or channel residue left in the name)"
        problems.append(f"name {detail}, not {quote(expected)}")
    if not isinstance(arguments, str):
        problems.append(f"arguments are {type(arguments).__name__}, not a JSON string")
        return problems
    try:
        parsed = json.loads(arguments)
    except ValueError:
        problems.append(f"arguments are not JSON: {quote(arguments)}")
        return problems
    errors = sorted(Draft202012Validator(session.prompts.tool["function"]["parameters"]).iter_errors(parsed), key=str)
    if errors:
        problems.append(f"arguments {quote(arguments)} break the schema: {errors[0].message}")
    return problems


def _replies(reply: Reply) -> list[Any]:
    """The reply's JSON body, or each of its stream's events."""
    return list(reply.events) if reply.events is not None else [reply.data]


def stopped_on_call(reply: Reply) -> bool:
    """Whether the server says the model stopped on ``<|call|>`` (vLLM's ``choices[0].stop_reason``)."""
    return any(get(event, "choices", 0, "stop_reason") == CALL_TOKEN for event in _replies(reply))


def from_vllm(reply: Reply) -> bool:
    """Whether the reply names vLLM (its ``system_fingerprint`` is ``vllm-<version>-...``)."""
    return any(text_of(get(event, "system_fingerprint")).startswith("vllm") for event in _replies(reply))


def _no_call(content: str, reasoning: str, reply: Reply) -> Outcome:
    leaked = markup_in(content)
    if leaked:
        return Outcome.failed(f"no tool_calls; the call is in content as text ({', '.join(leaked)}): {quote(content)}")
    if markup_in(reasoning):
        return Outcome.failed(f"no tool_calls; harmony text is in the reasoning instead: {quote(reasoning)}")
    if stopped_on_call(reply):  # the model called; the server's chat parser dropped the call
        return Outcome.failed(
            f"the model called the tool (it stopped on <|call|>, stop_reason {CALL_TOKEN}) but no tool_calls came "
            f"back, only content {quote(content)}: the server did not parse the call; {VLLM_TOOL_FLAGS}"
        )
    hint = f" (if vLLM never returns tool_calls, {VLLM_TOOL_FLAGS})" if from_vllm(reply) else ""
    return Outcome.inconclusive(f"the model answered without calling the tool: content {quote(content)}{hint}")


def chat_call(session: ProbeSession) -> Outcome:
    """A call comes as ``tool_calls`` (id, bare name, JSON arguments) with ``finish_reason: tool_calls``."""
    reply = session.reply(session.book.chat_tool())
    if (outcome := unanswered(reply, refused=TOOLS_DECLINED, what="a request with tools")) is not None:
        return outcome
    message = chat_message(reply)
    if message is None:
        return Outcome.failed(f"{reply.probe}: no choices[0].message in the reply")
    calls = [call for call in message.get("tool_calls") or [] if isinstance(call, Mapping)]
    if not calls:
        return _no_call(text_of(message.get("content")), "".join(reasoning_by_field(message).values()), reply)
    call = calls[0]
    function = call.get("function")
    if not isinstance(function, Mapping):
        function = {}
    problems = call_problems(function.get("name"), function.get("arguments"), call.get("id"), session)
    if call.get("type") != "function":
        problems.append(f'type {quote(call.get("type"))}, not "function"')
    if chat_finish(reply) != "tool_calls":
        problems.append(f'finish_reason {quote(chat_finish(reply))}, not "tool_calls"')
    if problems:
        return Outcome.failed("; ".join(problems))
    return Outcome.passed(f"{function['name']}({function['arguments']}), id {call['id']}, finish_reason tool_calls")


def chat_call_streamed(session: ProbeSession) -> Outcome:
    """Streamed, the call's deltas add up to the same: id, bare name, JSON arguments, ``tool_calls``."""
    reply = session.reply(session.book.chat_tool(stream=True))
    if (outcome := unanswered(reply, refused=TOOLS_DECLINED, what="a streamed request with tools")) is not None:
        return outcome
    if reply.events is None:
        return Outcome.failed(f"{reply.probe}: a stream was asked for, but one JSON body came back")
    stream = assemble_chat_stream(reply.events)
    if not stream.tool_calls:
        return _no_call(stream.content, "".join(stream.reasoning.values()), reply)
    call = stream.tool_calls[0]
    problems = call_problems(call["function"]["name"], call["function"]["arguments"], call["id"], session)
    if stream.finish_reason != "tool_calls":
        problems.append(f'finish_reason {quote(stream.finish_reason)}, not "tool_calls"')
    if problems:
        return Outcome.failed("; ".join(problems))
    return Outcome.passed(f"{call['function']['name']}({call['function']['arguments']}) over {stream.chunks} chunks, "
                          f"id {call['id']}")  # fmt: skip


def chat_result(session: ProbeSession) -> Outcome:
    """The model's own call, sent back with the tool's result, gets an answer."""
    first = session.reply(session.book.chat_tool())
    message = chat_message(first) if first.ok else None
    if message is None or not message.get("tool_calls"):
        return Outcome.inconclusive("the model made no call to answer (see the tool call check)")
    assistant: dict[str, Any] = {key: value for key, value in message.items() if value is not None}
    reply = session.reply(session.book.chat_tool_result(assistant))
    if (outcome := unanswered(reply, what="its own tool call sent back with the result")) is not None:
        return outcome
    answer = chat_message(reply)
    content = text_of(answer.get("content")) if answer else ""
    if chat_finish(reply) == "tool_calls":
        return Outcome.inconclusive("after the result the model called a tool again instead of answering")
    if not content:
        return Outcome.failed(f"no answer after the tool result (finish_reason {quote(chat_finish(reply))})")
    return Outcome.passed(f"answered {quote(content)} after the result")


def chat_preamble(session: ProbeSession) -> Outcome:
    """Text the model writes for the user before a call (a preamble) is ``content``, not reasoning."""
    reply = session.reply(session.book.chat_tool())
    message = chat_message(reply) if reply.ok else None
    if message is None or not message.get("tool_calls"):
        return Outcome.inconclusive("the model made no call, so no preamble to place")
    content = text_of(message.get("content"))
    reasoning = "".join(reasoning_by_field(message).values())
    if not content:
        return Outcome.inconclusive("the model wrote no preamble before its call (content empty): nothing to place")
    if " ".join(content.split()) in " ".join(reasoning.split()):
        return Outcome.failed(f"the preamble {quote(content)} is also in the reasoning")
    return Outcome.passed(f"preamble in content: {quote(content)}")


def responses_call(session: ProbeSession) -> Outcome:
    """A ``function_call`` item with a ``call_id``, the bare name and JSON arguments."""
    reply = session.reply(session.book.responses_tool())
    if (outcome := unanswered(reply, refused=TOOLS_DECLINED, what="a request with tools")) is not None:
        return outcome
    items = output_items(reply)
    calls = [item for item in items if item.get("type") == "function_call"]
    if not calls:
        reasoning = "".join(text_of(part.get("text")) for item in items for part in item.get("content") or []
                            if item.get("type") == "reasoning" and isinstance(part, Mapping))  # fmt: skip
        return _no_call(output_text(items), reasoning, reply)
    call = calls[0]
    problems = call_problems(call.get("name"), call.get("arguments"), call.get("call_id"), session)
    if problems:
        return Outcome.failed("; ".join(problems))
    return Outcome.passed(f"function_call {call['name']}({call['arguments']}), call_id {call['call_id']}")


def responses_result(session: ProbeSession) -> Outcome:
    """The model's own call, sent back with a ``function_call_output``, gets an answer."""
    first = session.reply(session.book.responses_tool())
    calls = [item for item in output_items(first) if item.get("type") == "function_call"] if first.ok else []
    if not calls:
        return Outcome.inconclusive("the model made no call to answer (see the tool call check)")
    call = calls[0]
    probe = session.book.responses_tool_result(text_of(call.get("call_id")), text_of(call.get("arguments")))
    reply = session.reply(probe)
    if (outcome := unanswered(reply, what="its own call sent back with function_call_output")) is not None:
        return outcome
    items = output_items(reply)
    text = output_text(items)
    if not text:
        if any(item.get("type") == "function_call" for item in items):
            return Outcome.inconclusive("after the output the model called a tool again instead of answering")
        return Outcome.failed("no answer after the function_call_output")
    return Outcome.passed(f"answered {quote(text)} after the output")


CHECKS = (
    Check("chat.tools.call", "a tool call parses", "chat", guide.TOOL_CALL_PARSED, chat_call),
    Check("chat.tools.stream", "a streamed tool call parses", "chat", guide.TOOL_CALL_PARSED, chat_call_streamed),
    Check("chat.tools.result", "the tool result round-trips", "chat", guide.TOOL_RESULT_ROUND_TRIP, chat_result),
    Check("chat.tools.preamble", "a preamble is content", "chat", guide.PREAMBLE_IS_CONTENT, chat_preamble),
    Check("responses.tools.call", "a function_call item parses", "responses", guide.TOOL_CALL_PARSED, responses_call),
    Check(
        "responses.tools.result", "the function output round-trips", "responses",
        guide.TOOL_RESULT_ROUND_TRIP, responses_result,
    ),
)  # fmt: skip
