"""The status bar: model, device, effort, context, speed, engine cache, tools, reasoning, servers, app state."""

from __future__ import annotations

from textual.content import Content
from textual.reactive import reactive
from textual.widgets import Static

from harmony_chat.tui.literal import literal


def _short(count: int) -> str:
    return f"{count / 1000:.1f}k" if count >= 1000 else str(count)


class StatusBar(Static):
    """One line of live facts about the chat."""

    DEFAULT_CSS = "StatusBar { dock: bottom; height: 1; background: $panel; color: $foreground; padding: 0 1; }"

    model = reactive("no model")
    device = reactive("")
    effort = reactive("medium")
    context_used = reactive(0)
    context_size = reactive(0)
    ttft = reactive(0.0)
    speed = reactive(0.0)
    cached: reactive[int | None] = reactive(None)
    """Prompt tokens a remote engine served from its prefix cache in the last call (None: not reported)."""
    state = reactive("idle")
    debug = reactive(False)
    history_off = reactive(False)
    tools_state = reactive("")
    """``""`` (no tools configured), ``starting`` or ``ready``."""
    tool_count = reactive(0)
    servers_failed = reactive(0)
    reasoning = reactive("hidden")
    """What the chat shows of the reasoning: ``hidden``, ``summary`` or ``raw``."""
    summary_tokens = reactive(0)
    """Tokens the last turn's reasoning summaries wrote (their cost)."""
    summary_seconds = reactive(0.0)
    """Seconds the last turn waited for its reasoning summaries."""
    serving = reactive("")
    """The ``harmony-chat serve`` processes running on this machine (``:8000``, ``0.0.0.0:8080``), or ``""``."""

    def render(self) -> Content:
        """Compose the line (the model's name comes from its file: shown as text)."""
        parts = [self.model]
        if self.device:
            parts.append(self.device)
        parts.append(f"effort {self.effort}")
        if self.context_size:
            parts.append(f"ctx {_short(self.context_used)}/{_short(self.context_size)}")
        if self.speed:
            parts.append(f"ttft {self.ttft:.2f}s · {self.speed:.1f} tok/s")
        if self.cached is not None:
            parts.append(f"{_short(self.cached)} cached")
        if self.tools_state:
            parts.append(self._tools())
        if self.reasoning != "hidden":
            parts.append(f"reasoning {self.reasoning}")
        if self.summary_seconds:
            parts.append(f"summary {self.summary_tokens} tok {self.summary_seconds:.2f}s")
        if self.serving:
            parts.append(f"serving {self.serving}")
        if self.debug:
            parts.append("DEBUG")
        if self.history_off:
            parts.append("history off")
        parts.append(self.state)
        return literal(" · ".join(parts).replace("\n", " "))  # one line, whatever a model's name holds

    def _tools(self) -> str:
        text = f"{self.tool_count} tool{'' if self.tool_count == 1 else 's'}"
        if self.tools_state == "starting":
            text += " (starting)"
        if self.servers_failed:
            text += f", {self.servers_failed} server{'' if self.servers_failed == 1 else 's'} failed"
        return text
