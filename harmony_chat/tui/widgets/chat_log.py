"""The scrolling conversation, kept in chapters so a growing answer does not re-lay-out all of it.

When an answer grows, Textual lays out again every container above it: the scroll view places each
of its children and indexes their regions. With every message a child of the scroll view, that is
the whole conversation on every batch. Here the scroll view's children are chapters of a few
messages each; a new message goes into the last chapter, so a batch re-lays-out that chapter and
the short list of chapters, while the finished chapters keep their cached layout.
"""

from __future__ import annotations

from textual.containers import Vertical, VerticalScroll
from textual.widget import AwaitMount, Widget


class Chapter(Vertical):
    """A few consecutive widgets of the chat log."""

    DEFAULT_CSS = "Chapter { height: auto; }"


class ChatLog(VerticalScroll):
    """The conversation's scroll view; ``mount`` puts widgets into chapters of ``CHAPTER_SIZE``."""

    CHAPTER_SIZE = 12
    """Widgets per chapter (a user message and an answer are two)."""

    @property
    def chapters(self) -> list[Chapter]:
        """The chapters, in order."""
        return [child for child in self.children if isinstance(child, Chapter)]

    def mount(
        self,
        *widgets: Widget,
        before: int | str | Widget | None = None,
        after: int | str | Widget | None = None,
    ) -> AwaitMount:
        """Mount ``widgets`` at the end of the last chapter (a new one when it is full).

        ``before=0`` (the welcome panel) mounts at the top of the first chapter; other positions
        are taken inside the chapter that holds the widget named.
        """
        if widgets and all(isinstance(widget, Chapter) for widget in widgets):
            return super().mount(*widgets, before=before, after=after)
        chapters = self.chapters
        if before == 0 and after is None:
            if not chapters:
                return self._mount_in_new_chapter(widgets)
            return chapters[0].mount(*widgets, before=0)
        anchor = before if before is not None else after
        if isinstance(anchor, Widget):
            parent = anchor.parent
            if isinstance(parent, Chapter):
                return parent.mount(*widgets, before=before, after=after)
        if anchor is not None:
            return super().mount(*widgets, before=before, after=after)
        if chapters and len(chapters[-1].children) + len(widgets) <= self.CHAPTER_SIZE:
            return chapters[-1].mount(*widgets)
        return self._mount_in_new_chapter(widgets)

    def _mount_in_new_chapter(self, widgets: tuple[Widget, ...]) -> AwaitMount:
        chapter = Chapter(*widgets)
        return super().mount(chapter)
