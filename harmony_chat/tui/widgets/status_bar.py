"""The status bar: model, device, effort, context, speed, engine cache, tools, reasoning, servers, app state.

It renders one :class:`~harmony_chat.tui.status.StatusState`, bound to the chat screen's
(``data_bind``); nothing sets its fields one by one.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Generic, TypeVar, cast, overload

from textual.content import Content
from textual.reactive import reactive
from textual.widgets import Static

from harmony_chat.tui.literal import literal
from harmony_chat.tui.status import StatusState

T = TypeVar("T")


def _short(count: int) -> str:
    return f"{count / 1000:.1f}k" if count >= 1000 else str(count)


class _Shown(Generic[T]):
    """One field of the bar's status value, by name (setting it replaces the value, as a test's shortcut)."""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    @overload
    def __get__(self, bar: None, owner: type) -> _Shown[T]: ...
    @overload
    def __get__(self, bar: StatusBar, owner: type) -> T: ...
    def __get__(self, bar: StatusBar | None, owner: type) -> _Shown[T] | T:
        if bar is None:
            return self
        return cast(T, getattr(bar.status_state, self.name))

    def __set__(self, bar: StatusBar, value: T) -> None:
        changes: dict[str, Any] = {self.name: value}
        bar.status_state = replace(bar.status_state, **changes)


class StatusBar(Static):
    """One line of live facts about the chat."""

    DEFAULT_CSS = "StatusBar { dock: bottom; height: 1; background: $panel; color: $foreground; padding: 0 1; }"

    status_state: reactive[StatusState] = reactive(StatusState())
    """What the line shows (the chat screen's, bound)."""

    # The value's fields by name, to read (tests, probes); the screen replaces the value whole.
    model = _Shown[str]()
    device = _Shown[str]()
    effort = _Shown[str]()  # read as text (callers compare it across changes; the value holds an Effort)
    context_used = _Shown[int]()
    context_size = _Shown[int]()
    ttft = _Shown[float]()
    speed = _Shown[float]()
    cached = _Shown[int | None]()
    state = _Shown[str]()
    debug = _Shown[bool]()
    history_off = _Shown[bool]()
    tools_state = _Shown[str]()
    tool_count = _Shown[int]()
    servers_failed = _Shown[int]()
    reasoning = _Shown[str]()
    summary_tokens = _Shown[int]()
    summary_seconds = _Shown[float]()
    serving = _Shown[str]()

    def render(self) -> Content:
        """Compose the line (the model's name comes from its file: shown as text)."""
        shown = self.status_state
        parts = [shown.model]
        if shown.device:
            parts.append(shown.device)
        parts.append(f"effort {shown.effort}")
        if shown.context_size:
            parts.append(f"ctx {_short(shown.context_used)}/{_short(shown.context_size)}")
        if shown.speed:
            parts.append(f"ttft {shown.ttft:.2f}s · {shown.speed:.1f} tok/s")
        if shown.cached is not None:
            parts.append(f"{_short(shown.cached)} cached")
        if shown.tools_state:
            parts.append(_tools(shown))
        if shown.reasoning != "hidden":
            parts.append(f"reasoning {shown.reasoning}")
        if shown.summary_seconds:
            parts.append(f"summary {shown.summary_tokens} tok {shown.summary_seconds:.2f}s")
        if shown.serving:
            parts.append(f"serving {shown.serving}")
        if shown.debug:
            parts.append("DEBUG")
        if shown.history_off:
            parts.append("history off")
        parts.append(shown.state)
        return literal(" · ".join(parts).replace("\n", " "))  # one line, whatever a model's name holds


def _tools(shown: StatusState) -> str:
    text = f"{shown.tool_count} tool{'' if shown.tool_count == 1 else 's'}"
    if shown.tools_state == "starting":
        text += " (starting)"
    if shown.servers_failed:
        text += f", {shown.servers_failed} server{'' if shown.servers_failed == 1 else 's'} failed"
    return text
