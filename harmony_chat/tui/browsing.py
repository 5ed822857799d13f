"""What the TUI shows of the browser tool: the searches and pages of a turn, the views a stored answer cites.

Live, the pages an answer cites come from ``ChatConversation.citation_sources()`` and the visits
from the conversation's browser; for a stored conversation shown again, the pages are rebuilt
from the browser views stored up to each answer
(:func:`~harmony_chat.tools.browser.transcript.sources_from_transcript`), as the model saw them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from harmony_chat.harmony.messages import message_text
from harmony_chat.harmony.visibility import MessageKind, message_kind

if TYPE_CHECKING:
    from openai_harmony import Message

    from harmony_chat.chat.conversation import ChatConversation
    from harmony_chat.tools.browser.tool import BrowserTool, Visit

BROWSER_PREFIX = "browser."


def browser_of(conversation: ChatConversation) -> BrowserTool | None:
    """The conversation's live browser tool, if it has one (the only place the TUI reaches into the tools)."""
    from harmony_chat.chat.builtins import BrowserBuiltin

    runner = conversation.tools
    if runner is None:
        return None
    return next((tool.tool for tool in runner.tools.builtins if isinstance(tool, BrowserBuiltin)), None)


def browser_views(messages: Sequence[Message]) -> list[str]:
    """The texts of the browser's results among ``messages``, in order."""
    return [
        message_text(message)
        for message in messages
        if message_kind(message) is MessageKind.TOOL_RESULT and (message.author.name or "").startswith(BROWSER_PREFIX)
    ]


def visits(conversation: ChatConversation) -> list[Visit]:
    """Every search and page of the conversation's live browser, oldest first (none without one)."""
    browser = browser_of(conversation)
    return browser.visited() if browser is not None else []
