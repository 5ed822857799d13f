"""A prompt rendered with the cached system message is token for token the prompt rendered in one piece.

The system message of a session without built-in tools depends on the effort, the date and whether
the conversation declares functions only, so it is rendered once per (effort, date, functions) and
the rest of the conversation after it; each variant below is compared with openai-harmony's own
render of the whole conversation.
"""

from __future__ import annotations

import itertools

import pytest
from openai_harmony import (
    Author,
    Conversation,
    HarmonyEncoding,
    Message,
    RenderConversationConfig,
    Role,
    ToolDescription,
)

from harmony_chat.harmony.effort import Effort
from harmony_chat.harmony.session import ChatSession, ResponseFormat

FUNCTION = ToolDescription.new("get_weather", "Weather", {"type": "object", "properties": {"city": {"type": "string"}}})
USER = Message.from_role_and_content(Role.USER, "What's the weather in Paris? naïve café 東京 🙂")
ANALYSIS = Message.from_role_and_content(Role.ASSISTANT, "I should call the tool.").with_channel("analysis")
CALL = (
    Message.from_role_and_content(Role.ASSISTANT, '{"city":"Paris"}')
    .with_channel("commentary")
    .with_recipient("functions.get_weather")
    .with_content_type("<|constrain|>json")
)
RESULT = (
    Message.from_author_and_content(Author.new(Role.TOOL, "functions.get_weather"), '{"temp": 20}')
    .with_recipient("assistant")
    .with_channel("commentary")
)
FINAL = Message.from_role_and_content(Role.ASSISTANT, "It is 20 degrees.").with_channel("final")
PREAMBLE = Message.from_role_and_content(Role.ASSISTANT, "Let me check.").with_channel("commentary")
HISTORIES = [
    [USER],
    [USER, ANALYSIS, CALL, RESULT],
    [USER, ANALYSIS, CALL, RESULT, ANALYSIS, FINAL, USER],
    [USER, PREAMBLE, CALL, RESULT, FINAL, USER],
    [USER, FINAL, USER, FINAL, USER],
]


def _no_drop(encoding: HarmonyEncoding, conversation: Conversation) -> list[int]:
    """openai-harmony's render of the whole conversation, analysis kept (as the session renders)."""
    config = RenderConversationConfig(auto_drop_analysis=False)
    return list(encoding.render_conversation_for_completion(conversation, Role.ASSISTANT, config))


@pytest.mark.parametrize(
    ("effort", "instructions", "functions", "formats"),
    list(
        itertools.product(
            ["low", "medium", "high"],
            [None, "Be brief."],
            [[], [FUNCTION]],
            [[], [ResponseFormat("r", {"type": "object"}, "d")]],
        )
    ),
)
def test_the_cached_system_message_renders_the_same_tokens(
    encoding: HarmonyEncoding,
    effort: Effort,
    instructions: str | None,
    functions: list[ToolDescription],
    formats: list[ResponseFormat],
) -> None:
    session = ChatSession(
        encoding,
        effort=effort,
        instructions=instructions,
        functions=functions,
        response_formats=formats,
        start_date="2026-12-01",
    )
    for messages in HISTORIES:
        for asked in (None, "high"):
            expected = _no_drop(encoding, Conversation.from_messages(_prefix(session, asked or effort) + messages))
            assert session.render_messages(messages, asked) == expected
            assert session.render_messages(messages, asked) == expected  # the second time from the cache


def _prefix(session: ChatSession, effort: Effort) -> list[Message]:
    developer = session.developer_message()
    return [session.system_message(effort), *([developer] if developer is not None else [])]


def test_another_date_or_built_in_tools_are_not_taken_from_the_cache(encoding: HarmonyEncoding) -> None:
    today = ChatSession(encoding, start_date="2026-12-01")
    tomorrow = ChatSession(encoding, start_date="2026-12-02")
    python = ChatSession(encoding, builtin=["python"], start_date="2026-12-01")
    rendered = [session.render_messages([USER]) for session in (today, tomorrow, python)]
    assert len({tuple(tokens) for tokens in rendered}) == 3
    assert "2026-12-02" in encoding.decode(rendered[1]) and "## python" in encoding.decode(rendered[2])
    for session, tokens in zip((today, tomorrow, python), rendered, strict=True):
        assert tokens == _no_drop(encoding, Conversation.from_messages([*_prefix(session, "medium"), USER]))
