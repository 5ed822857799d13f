"""Reasoning on the Responses API: the reasoning item, its streamed events, and continuing a response."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from harmony_chat.conform import guide
from harmony_chat.conform.checks.common import unanswered
from harmony_chat.conform.readers import get, output_items, prompt_tokens, quote, text_of
from harmony_chat.conform.result import Check, Outcome
from harmony_chat.conform.session import ProbeSession

DELTA = "response.reasoning_text.delta"
DONE = "response.reasoning_text.done"
LOCATORS = ("sequence_number", "item_id", "output_index", "content_index")


def reasoning_item(session: ProbeSession) -> Outcome:
    """A ``reasoning`` item with ``content: [{type: reasoning_text}]`` and a ``summary`` array."""
    reply = session.reply(session.book.responses_plain())
    if (outcome := unanswered(reply)) is not None:
        return outcome
    items = output_items(reply)
    reasoning = [item for item in items if item.get("type") == "reasoning"]
    if not reasoning:
        kinds = ", ".join(str(item.get("type")) for item in items) or "nothing"
        return Outcome.failed(f"no reasoning item in output (it holds: {kinds})")
    item = reasoning[0]
    problems: list[str] = []
    content = item.get("content")
    parts = [part for part in content if isinstance(part, Mapping)] if isinstance(content, list) else []
    texts = [text_of(part.get("text")) for part in parts if part.get("type") == "reasoning_text"]
    if not any(texts):
        kinds = ", ".join(str(part.get("type")) for part in parts)
        if content is None:
            problems.append("the item has no content (no reasoning_text part)")
        else:
            problems.append(f"content holds no reasoning_text part ({'parts: ' + kinds if kinds else quote(content)})")
        summary_text = "".join(
            text_of(get(part, "text")) for part in item.get("summary") or [] if isinstance(part, Mapping)
        )
        if summary_text:
            problems.append(f"the raw CoT is sent as summary text: {quote(summary_text)}")
        if isinstance(item.get("encrypted_content"), str) and item["encrypted_content"]:
            problems.append(f"and as plain encrypted_content: {quote(item['encrypted_content'])}")
    if not isinstance(item.get("summary"), list):
        problems.append(f"summary is {quote(item.get('summary'))}, not an array")
    if not text_of(item.get("id")):
        problems.append("the item has no id")
    if problems:
        return Outcome.failed("; ".join(problems))
    summaries = len(item["summary"])
    return Outcome.passed(
        f"reasoning item {item['id']}: reasoning_text {quote(''.join(texts))}, summary [{summaries} parts]"
    )


def _ordered(events: list[dict[str, Any]]) -> str | None:
    """Why the sequence numbers are out of order (None when every event's number is the one after the last)."""
    numbers = [event.get("sequence_number") for event in events]
    if not all(isinstance(number, int) for number in numbers):
        return f"{sum(not isinstance(n, int) for n in numbers)} of {len(events)} events have no sequence_number"
    for earlier, later in zip(numbers, numbers[1:], strict=False):
        if later != earlier + 1:  # type: ignore[operator]
            return f"sequence_number goes {earlier} -> {later}"
    return None


def reasoning_events(session: ProbeSession) -> Outcome:
    """``response.reasoning_text.delta`` then ``.done``, located by item, output and content index, in order."""
    reply = session.reply(session.book.responses_plain(stream=True))
    if (outcome := unanswered(reply)) is not None:
        return outcome
    if reply.events is None:
        return Outcome.failed(f"{reply.probe}: a stream was asked for, but one JSON body came back")
    events = [event for event in reply.events if isinstance(event, dict)]
    kinds = [str(event.get("type")) for event in events]
    deltas = [event for event in events if event.get("type") == DELTA]
    dones = [event for event in events if event.get("type") == DONE]
    if not deltas and not dones:
        summary = [kind for kind in dict.fromkeys(kinds) if "reasoning" in kind]
        seen = f"its reasoning events: {', '.join(summary)}" if summary else "no reasoning events at all"
        return Outcome.failed(f"no {DELTA} / .done events ({seen})")
    problems: list[str] = [] if dones else [f"{len(deltas)} deltas but no {DONE}"]
    for event in (*deltas, *dones):
        missing = [key for key in LOCATORS if key not in event]
        if missing:
            problems.append(f"{event['type']} lacks {', '.join(missing)}")
            break
    if (disorder := _ordered(events)) is not None:
        problems.append(disorder)
    done = dones[0] if dones else deltas[-1]
    own = [event for event in deltas if event.get("item_id") == done.get("item_id")]
    if dones and "".join(text_of(event.get("delta")) for event in own) != text_of(done.get("text")):
        problems.append("the deltas do not add up to the done event's text")
    if dones and own and events.index(own[-1]) > events.index(done):
        problems.append("a delta came after its done event")
    added = [
        event for event in events
        if event.get("type") == "response.output_item.added" and get(event, "item", "id") == done.get("item_id")
    ]  # fmt: skip
    if not added or get(added[0], "item", "type") != "reasoning":
        problems.append(f"item_id {quote(done.get('item_id'))} was not announced as a reasoning item")
    if problems:
        return Outcome.failed("; ".join(problems))
    return Outcome.passed(
        f"{len(deltas)} deltas then done on item {done.get('item_id')} (output {done.get('output_index')}, "
        f"content {done.get('content_index')}); {len(events)} events numbered in order"
    )


def reasoning_input(session: ProbeSession) -> Outcome:
    """Reasoning items may come back as input (after an answer and before a function call)."""
    replies = [
        session.reply(session.book.responses_after_final(True)),
        session.reply(session.book.responses_tool_loop(True)),
    ]
    problems = [
        outcome for reply in replies if (outcome := unanswered(reply, what="a reasoning item sent back")) is not None
    ]
    if problems:
        return problems[0]
    return Outcome.passed(
        "accepted before an answer and before a function call (" + ", ".join(f"HTTP {r.status}" for r in replies) + ")"
    )


def continues(session: ProbeSession) -> Outcome:
    """``previous_response_id`` puts the earlier turn in the prompt."""
    first = session.reply(session.book.responses_plain())
    if (outcome := unanswered(first)) is not None:
        return outcome
    previous = get(first.data, "id")
    if not isinstance(previous, str) or not previous:
        return Outcome.failed(f"{first.probe}: the response has no id to continue")
    continued = session.reply(session.book.responses_continue(previous))
    if (outcome := unanswered(continued, what=f"previous_response_id {previous}")) is not None:
        return outcome
    alone = session.reply(session.book.responses_continue(None))
    if (outcome := unanswered(alone)) is not None:
        return outcome
    counted = prompt_tokens(continued), prompt_tokens(alone)
    if counted[0] is None or counted[1] is None:
        return Outcome.inconclusive("no usage.input_tokens to tell whether the earlier turn was in the prompt")
    if counted[0] > counted[1]:
        return Outcome.passed(f"input_tokens {counted[0]} continuing {previous} vs {counted[1]} alone")
    return Outcome.failed(f"previous_response_id ignored: input_tokens {counted[0]} continuing {previous} = "
                          f"{counted[1]} for the follow-up alone")  # fmt: skip


CHECKS = (
    Check(
        "responses.reasoning", "reasoning item: reasoning_text + summary", "responses",
        guide.RESPONSES_REASONING_ITEM, reasoning_item,
    ),
    Check(
        "responses.reasoning.stream", "reasoning_text.delta / .done events", "responses",
        guide.RESPONSES_REASONING_EVENTS, reasoning_events,
    ),
    Check(
        "responses.reasoning.input", "reasoning items sent back are accepted", "responses",
        guide.RESPONSES_REASONING_INPUT, reasoning_input,
    ),
    Check("responses.continue", "previous_response_id continues", "responses", guide.RESPONSES_CONTINUE, continues),
)  # fmt: skip
