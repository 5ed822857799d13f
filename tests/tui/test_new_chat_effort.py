"""The effort of a new chat: ``[chat] effort`` (or ``--effort``), whatever the last chat was switched to."""

from __future__ import annotations

from tests.tui.harness import make_app, send, settle


async def test_a_new_chat_starts_at_the_configured_effort() -> None:
    """ctrl+r (and /effort) set this chat's effort; ctrl+n and /new start the next at [chat] effort."""
    app = make_app(effort="low")
    async with app.run_test(size=(110, 36)) as pilot:
        await settle(pilot)
        chat = app.chat
        assert chat.conversation is not None and chat.conversation.effort == "low"
        await pilot.press("ctrl+r")
        assert chat.conversation.effort == "medium" and chat.status.effort == "medium"
        await pilot.press("ctrl+n")
        await settle(pilot)
        assert chat.conversation.effort == "low" and chat.status.effort == "low"
        await send(pilot, "/effort high")
        await send(pilot, "/new")
        assert chat.conversation.effort == "low" and chat.status.effort == "low"
        await send(pilot, "What is the capital of France?")
        assert chat.conversation.session.turns[-1].effort == "low"  # the new chat's first turn ran at it
