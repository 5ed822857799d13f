"""Structured output: asked for JSON of a schema, the answer parses and validates."""

from __future__ import annotations

import json

from jsonschema import Draft202012Validator

from harmony_chat.conform import guide
from harmony_chat.conform.checks.common import unanswered
from harmony_chat.conform.readers import chat_message, output_items, output_text, quote, text_of
from harmony_chat.conform.result import Check, Outcome, Status
from harmony_chat.conform.session import ProbeSession


def _judge(answer: str, session: ProbeSession) -> Outcome:
    if not answer:
        return Outcome.failed("the answer is empty")
    try:
        parsed = json.loads(answer)
    except ValueError:
        return Outcome.failed(f"the answer is not JSON: {quote(answer)}")
    errors = sorted(Draft202012Validator(session.prompts.schema).iter_errors(parsed), key=str)
    if errors:
        return Outcome.failed(f"{quote(answer)} breaks the schema: {errors[0].message}")
    return Outcome.passed(f"valid JSON of the schema: {quote(answer, 80)}")


def chat_structured(session: ProbeSession) -> Outcome:
    """``response_format: {type: json_schema}``."""
    reply = session.reply(session.book.chat_structured())
    if (outcome := unanswered(reply, refused=Status.NOT_OFFERED, what="response_format json_schema")) is not None:
        return outcome
    message = chat_message(reply)
    if message is None:
        return Outcome.failed(f"{reply.probe}: no choices[0].message in the reply")
    return _judge(text_of(message.get("content")), session)


def responses_structured(session: ProbeSession) -> Outcome:
    """``text.format: {type: json_schema}``."""
    reply = session.reply(session.book.responses_structured())
    if (outcome := unanswered(reply, refused=Status.NOT_OFFERED, what="text.format json_schema")) is not None:
        return outcome
    return _judge(output_text(output_items(reply)), session)


CHECKS = (
    Check("chat.structured", "a json_schema answer validates", "chat", guide.STRUCTURED_OUTPUT, chat_structured),
    Check(
        "responses.structured", "a json_schema answer validates", "responses",
        guide.STRUCTURED_OUTPUT, responses_structured,
    ),
)  # fmt: skip
