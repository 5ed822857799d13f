"""The first-run panel: gpt-oss GGUF files found here, how to download gpt-oss-20b, and the demo."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.message import Message
from textual.widgets import Button, Markdown, Static

from harmony_chat.backends.sources import GPT_OSS_20B_FILE, GPT_OSS_20B_REPO
from harmony_chat.demo import DEMO_QUESTIONS
from harmony_chat.models import FoundModel

DOWNLOAD_TUI_COMMAND = f"harmony-chat --hf-repo {GPT_OSS_20B_REPO} --hf-file {GPT_OSS_20B_FILE}"
"""Downloads gpt-oss-20b (about 12 GB) and opens the chat on it."""


class WelcomePanel(Vertical):
    """Shown in place of the conversation while no model is configured."""

    DEFAULT_CSS = """
    WelcomePanel { height: auto; border: round $primary; padding: 1 2; margin: 1 2; }
    WelcomePanel Button { margin: 1 0 0 0; }
    WelcomePanel .found { color: $text-muted; }
    """

    @dataclass
    class LoadModel(Message):
        """The user picked a model file."""

        path: Path

    class StartDemo(Message):
        """The user wants the replayed demo."""

    def __init__(self, found: list[FoundModel], notice: str | None = None) -> None:
        super().__init__(id="welcome")
        self.found = found
        self.notice = notice

    def compose(self) -> ComposeResult:
        """Build the widget tree."""
        yield Markdown(
            "# Welcome to harmony-chat\n\n"
            + (f"{self.notice}\n\n" if self.notice else "No model is configured yet.\n\n")
            + "**Download gpt-oss-20b** (about 12 GB) and chat with it:\n\n"
            f"```sh\n{DOWNLOAD_TUI_COMMAND}\n```\n\n"
            "Or point harmony-chat at a GGUF you have: `harmony-chat --model PATH`, or set `path` under "
            "`[model]` in the config file."
        )
        if self.found:
            yield Static("gpt-oss models found on this machine:", classes="found")
            for index, model in enumerate(self.found):
                label = f"Chat with {model.path.name} ({model.size_gb:.1f} GB, {model.source})"
                yield Button(label, id=f"found-{index}", variant="primary")
        else:
            yield Static(
                "No gpt-oss GGUF files found in the Hugging Face cache, LM Studio, llama.cpp or ~/models.",
                classes="found",
            )
        yield Button("Try the demo: replays recorded gpt-oss conversations", id="demo", variant="success")
        yield Static("Demo questions: " + " · ".join(DEMO_QUESTIONS), classes="found")

    def on_button_pressed(self, event: Button.Pressed) -> None:
        """Turn a button press into a request to the screen."""
        event.stop()
        if event.button.id == "demo":
            self.post_message(self.StartDemo())
        elif event.button.id and event.button.id.startswith("found-"):
            self.post_message(self.LoadModel(self.found[int(event.button.id.split("-")[1])].path))
