"""The one visibility policy, its header rules and argument checks, and the places that ask it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from openai_harmony import Author, HarmonyEncoding, Message, Role

from harmony_chat.harmony.arguments import check_arguments, malformed_call_result
from harmony_chat.harmony.header import is_tool_recipient, read_header
from harmony_chat.harmony.session import ChatSession, visible_history
from harmony_chat.harmony.visibility import (
    POLICY,
    Display,
    MessageKind,
    PromptKeep,
    Storage,
    kind_of,
    message_kind,
)
from harmony_chat.history.export import to_harmony, to_json, to_markdown
from harmony_chat.history.store import HistoryStore


def _assistant(
    text: str, channel: str | None = None, recipient: str | None = None, ctype: str | None = None
) -> Message:
    message = Message.from_role_and_content(Role.ASSISTANT, text)
    if channel:
        message = message.with_channel(channel)
    if recipient:
        message = message.with_recipient(recipient)
    if ctype:
        message = message.with_content_type(ctype)
    return message


def test_every_kind_has_exactly_one_rule() -> None:
    assert set(POLICY) == set(MessageKind)
    hidden = {kind for kind, rule in POLICY.items() if rule.display is Display.DEBUG and kind is not MessageKind.SYSTEM}
    assert hidden == {MessageKind.ANALYSIS, MessageKind.HEADERLESS, MessageKind.UNKNOWN_CHANNEL}
    for kind in hidden:
        assert POLICY[kind].storage is Storage.WITH_ANALYSIS and POLICY[kind].prompt is PromptKeep.UNTIL_ANSWER


@pytest.mark.parametrize(
    ("channel", "recipient", "ctype", "role", "kind"),
    [
        ("final", None, None, "assistant", MessageKind.FINAL),
        ("final", None, "<|constrain|>json", "assistant", MessageKind.CONSTRAINED_FINAL),
        ("final", "<|constrain|>json", None, "assistant", MessageKind.CONSTRAINED_FINAL),  # stored by older versions
        ("commentary", None, None, "assistant", MessageKind.PREAMBLE),
        ("commentary", "all", None, "assistant", MessageKind.PREAMBLE),
        ("commentary", "functions.get_weather", "<|constrain|>json", "assistant", MessageKind.TOOL_CALL),
        ("analysis", "browser.search", None, "assistant", MessageKind.TOOL_CALL),
        ("analysis", "python", None, "assistant", MessageKind.TOOL_CALL),
        ("analysis", None, None, "assistant", MessageKind.ANALYSIS),
        ("analysis", "all", None, "assistant", MessageKind.ANALYSIS),
        ("analysis", "assistant", None, "assistant", MessageKind.ANALYSIS),
        (None, None, None, "assistant", MessageKind.HEADERLESS),
        (None, "analysis", None, "assistant", MessageKind.HEADERLESS),  # issue 17 item 3, stored by older versions
        ("commentary", "assistant<|channel|>analysis", None, "assistant", MessageKind.HEADERLESS),  # issue 9
        ("critique", None, None, "assistant", MessageKind.UNKNOWN_CHANNEL),
        ("commentary", "assistant", None, "tool", MessageKind.TOOL_RESULT),
        (None, None, None, "user", MessageKind.USER),
        ("final", None, None, "system", MessageKind.SYSTEM),
        (None, None, None, "developer", MessageKind.SYSTEM),
    ],
)
def test_kinds(channel: str | None, recipient: str | None, ctype: str | None, role: str, kind: MessageKind) -> None:
    assert kind_of(channel, recipient, ctype, role) is kind


def test_a_stored_message_is_classified_by_its_role_and_content_type() -> None:
    structured = _assistant('{"a": 1}', "final", ctype="<|constrain|>json")
    assert message_kind(structured) is MessageKind.CONSTRAINED_FINAL
    assert message_kind(_assistant("Four.", "final")) is MessageKind.FINAL
    for role in (Role.SYSTEM, Role.DEVELOPER):
        instructions = Message.from_role_and_content(role, "Be brief.")
        assert message_kind(instructions) is MessageKind.SYSTEM
        assert POLICY[message_kind(instructions)].prompt is PromptKeep.ALWAYS  # never dropped after an answer
    result = Message.from_author_and_content(Author.new(Role.TOOL, "functions.f"), "sunny").with_channel("commentary")
    assert message_kind(result) is MessageKind.TOOL_RESULT


@pytest.mark.parametrize(
    ("recipient", "tool"),
    [
        ("functions.get_weather", True),
        ("browser.search", True),
        ("python", True),
        ("container.exec", True),
        ("lookup_weather", True),
        ("assistant", False),
        ("user", False),
        ("all", False),
        ("", False),
        (None, False),
        ("analysis", False),
        ("final", False),
        ("assistant<|channel|>analysis", False),
        ("<|constrain|>json", False),
        ("functions.", False),
        ("functions.x y", False),
    ],
)
def test_clean_tool_names(recipient: str | None, tool: bool) -> None:
    assert is_tool_recipient(recipient) is tool


@pytest.mark.parametrize(
    ("header", "channel", "recipient", "ctype"),
    [
        ("<|channel|>final <|constrain|>json", "final", None, "<|constrain|>json"),
        ("<|channel|>final<|constrain|>json", "final", None, "<|constrain|>json"),
        (" to=functions.f<|channel|>commentary <|constrain|>json", "commentary", "functions.f", "<|constrain|>json"),
        ("<|channel|>commentary to=functions.f<|constrain|>json", "commentary", "functions.f", "<|constrain|>json"),
        ("<|channel|>commentary to=functions.f json", "commentary", "functions.f", "json"),
        ("<|channel|>commentary to=assistant", "commentary", None, None),
        ("<|channel|>analysis to=all", "analysis", None, None),
        ("assistant analysis", "analysis", None, None),
        ("analysis", "analysis", None, None),
        (" to=analysis", "analysis", None, None),
        (" to=<|channel|>analysis", "analysis", None, None),
        ("assistant", None, None, None),
        ("<|channel|>critique", "critique", None, None),
        (
            "final <|constrain|>json",
            "final",
            None,
            "<|constrain|>json",
        ),  # a structured answer without its channel token
        ("<|channel|>final <|constrain|>", "final", None, None),  # a constrain token naming no type types nothing
    ],
)
def test_read_closed_header(header: str, channel: str | None, recipient: str | None, ctype: str | None) -> None:
    read = read_header(header)
    assert (read.channel, read.recipient, read.content_type, read.leftover) == (channel, recipient, ctype, "")
    assert all("<|" not in detail for _kind, detail in read.repairs)


def test_unclosed_header_leftover_is_content() -> None:
    headerless = read_header("I must refuse", closed=False)
    assert (headerless.channel, headerless.leftover) == (None, "I must refuse")
    final = read_header("<|channel|>final I cannot help", closed=False)
    assert (final.channel, final.leftover) == ("final", "I cannot help")
    wordy = read_header("final answer is 42", closed=False)
    assert wordy.channel is None and wordy.leftover == "final answer is 42"


@pytest.mark.parametrize(
    ("text", "parsed", "repaired"),
    [
        ('{"a": 1}', {"a": 1}, False),
        ('{"a": 1', {"a": 1}, True),
        ('{"a": {"b": "c"}', {"a": {"b": "c"}}, True),
        ('{"a": "x', {"a": "x"}, True),
        ("[1, 2", [1, 2], True),
        ('{"a": 1,', {"a": 1}, True),
    ],
)
def test_arguments_cut_short_are_repaired(text: str, parsed: object, repaired: bool) -> None:
    checked = check_arguments(text, "functions.f", "<|constrain|>json")
    assert (checked.parsed, checked.repaired, checked.error) == (parsed, repaired, None)


@pytest.mark.parametrize(
    "text",
    ['{"a": ', '{"a" 1}', '{"a": 1}}', '{"a": 1} trailing', '{"a": SF}', "", "not json", '{"a": 1, "b', '{"a": 1, "b"'],
)
def test_ambiguous_arguments_are_malformed(text: str) -> None:
    checked = check_arguments(text, "functions.f", None)
    assert checked.error is not None and checked.parsed is None and not checked.repaired
    result = json.loads(malformed_call_result(checked.error))
    assert "not run" in result["error"]


def test_only_json_tools_are_checked() -> None:
    assert check_arguments("print(1)", "python", "<|constrain|>code").error is None
    assert check_arguments("print(1)", "browser.search", "json").error is not None


def test_session_drops_every_hidden_kind_after_the_answer(encoding: HarmonyEncoding) -> None:
    history = [
        Message.from_role_and_content(Role.USER, "q"),
        _assistant("headerless"),
        _assistant("to all", "analysis", "all"),
        _assistant("odd channel", "critique"),
        _assistant('{"x": 1}', "analysis", "functions.f"),
        Message.from_author_and_content(Author.new(Role.TOOL, "functions.f"), "out").with_channel("commentary"),
        _assistant('{"a":1}', "final", None, "<|constrain|>json"),
    ]
    kept = [history[i] for i in visible_history(history)]
    texts = ["".join(p.text for p in m.content) for m in kept]
    assert texts == ["q", '{"x": 1}', "out", '{"a":1}']
    session = ChatSession(encoding)
    session.history = history[:5]
    assert session.pending_tool_call() is history[4]
    assert [message_kind(m) for m in history[1:4]] == [
        MessageKind.HEADERLESS,
        MessageKind.ANALYSIS,
        MessageKind.UNKNOWN_CHANNEL,
    ]


def test_store_and_export_follow_the_table(tmp_path: Path, encoding: HarmonyEncoding) -> None:
    messages = [
        Message.from_role_and_content(Role.USER, "q"),
        _assistant("to all secret", "analysis", "all"),
        _assistant("headerless secret"),
        _assistant("Answer.", "final"),
    ]
    store = HistoryStore(tmp_path / "off.db")
    conversation = store.create_conversation({})
    ids = [store.add_message(conversation, m) for m in messages]
    assert ids[1] is None and ids[2] is None  # analysis to 'all' used to be stored with store_analysis off
    keeping = HistoryStore(tmp_path / "on.db", store_analysis=True)
    kept = keeping.create_conversation({})
    for message in messages:
        keeping.add_message(kept, message)
    stored = keeping.load(kept)
    assert stored.message_analysis == [False, True, True, False]
    for export in (to_markdown(stored), to_json(stored, encoding), to_harmony(stored, encoding)):
        assert "secret" not in export and "Answer." in export
    data = json.loads(to_json(stored, encoding, with_reasoning=True))
    assert len(data["harmony_chat"]["message_turns"]) == 4
    assert "to all secret" in to_harmony(stored, encoding, with_reasoning=True)
    assert "headerless secret" in to_markdown(stored, with_reasoning=True)
