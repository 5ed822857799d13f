"""The effort of a new chat: ``[chat] effort`` (or ``--effort``), whatever the last chat was switched to."""

from __future__ import annotations

from typing import Any

from tests.tui.harness import make_app, send, settle


def efforts(app: Any) -> tuple[str, str]:
    """The conversation's effort and the one the status bar shows."""
    conversation = app.chat.conversation
    assert conversation is not None
    return conversation.effort, app.chat.status.effort


async def test_a_new_chat_starts_at_the_configured_effort() -> None:
    """ctrl+r (and /effort) set this chat's effort; ctrl+n and /new start the next at [chat] effort."""
    app = make_app(values={"chat.effort": "low"})
    async with app.run_test(size=(110, 36)) as pilot:
        await settle(pilot)
        assert efforts(app) == ("low", "low")
        await pilot.press("ctrl+r")
        assert efforts(app) == ("medium", "medium")
        await pilot.press("ctrl+n")
        await settle(pilot)
        assert efforts(app) == ("low", "low")
        await send(pilot, "/effort high")
        assert efforts(app) == ("high", "high")
        await send(pilot, "/new")
        assert efforts(app) == ("low", "low")
        await send(pilot, "What is the capital of France?")
        conversation = app.chat.conversation
        assert conversation is not None and conversation.session.turns[-1].effort == "low"  # its first turn ran at it
