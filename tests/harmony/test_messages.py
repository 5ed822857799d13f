"""``message_text``: a harmony message's text parts joined, parts without text left out."""

from __future__ import annotations

from openai_harmony import Message, Role, SystemContent, TextContent

from harmony_chat.harmony.events import MessageFinished
from harmony_chat.harmony.messages import message_text


def test_the_text_parts_are_joined_with_nothing_between() -> None:
    message = Message.from_role_and_contents(Role.USER, [TextContent(text="Hello, "), TextContent(text="world")])
    assert message_text(message) == "Hello, world"


def test_a_part_without_text_adds_nothing() -> None:
    assert message_text(Message.from_role_and_content(Role.SYSTEM, SystemContent.new())) == ""


def test_a_finished_messages_text_is_the_same() -> None:
    message = Message.from_role_and_content(Role.ASSISTANT, "4").with_channel("final")
    assert MessageFinished(message, None).text == message_text(message) == "4"
