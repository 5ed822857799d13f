"""The first-run panel: what is running, gpt-oss GGUF files found here, how to get gpt-oss-20b.

With no model configured it sits at the top of the chat while the pocket model answers; after a
failed load it explains the failure and offers the pocket model and the replayed demo instead.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.content import Content
from textual.message import Message
from textual.widgets import Button, Markdown, Static

from harmony_chat.backends.sources import GPT_OSS_20B_FILE, GPT_OSS_20B_REPO
from harmony_chat.demo import DEMO_QUESTIONS
from harmony_chat.demo.pocket import POCKET_QUESTIONS
from harmony_chat.gguf.discovery import FoundModel
from harmony_chat.tui.literal import literal

DOWNLOAD_TUI_COMMAND = f"harmony-chat --hf-repo {GPT_OSS_20B_REPO} --hf-file {GPT_OSS_20B_FILE}"
"""Downloads gpt-oss-20b (about 12 GB) and opens the chat on it."""

POCKET_NOTICE = (
    "You are chatting with the **pocket gpt-oss**: a tiny model of the real gpt-oss architecture that "
    "harmony-chat trained itself. It only knows what it was trained on, for example: "
    + ", ".join(f"*{question}*" for question in POCKET_QUESTIONS)
    + " (its python and weather tools ask you first). Anything else gets a short note that it does not"
    " know, and how to run gpt-oss-20b."
    " It reasons before it answers; the reasoning stays hidden"
    " (`ctrl+t` shows a summary it writes, `f12` the raw reasoning)."
)


class WelcomePanel(Vertical):
    """First-run help: the pocket model notice, models found, the download command, demos.

    Args:
        found: gpt-oss GGUF files found on this machine (one button each).
        notice: why the configured model did not load (shown as text), or None.
        pocket: whether the pocket model is answering beside the panel.
    """

    DEFAULT_CSS = """
    WelcomePanel { height: auto; border: round $primary; padding: 0 2; margin: 1 1; }
    WelcomePanel Button { margin: 1 1 0 0; }
    WelcomePanel .found { color: $text-muted; }
    WelcomePanel .failure { margin: 0 1 1 1; }
    WelcomePanel Horizontal { height: auto; }
    """

    @dataclass
    class LoadModel(Message):
        """The user picked a model file."""

        path: Path

    @dataclass
    class StartDemo(Message):
        """The user wants the pocket model, or (``replay``) the recorded conversations."""

        replay: bool = False

    def __init__(self, found: list[FoundModel], notice: str | None = None, pocket: bool = False) -> None:
        super().__init__(id="welcome")
        self.found = found
        self.notice = notice
        self.pocket = pocket

    def compose(self) -> ComposeResult:
        """Build the widget tree."""
        download = (
            "**For real answers, download gpt-oss-20b** (about 12 GB) and chat with it:\n\n"
            f"```sh\n{DOWNLOAD_TUI_COMMAND}\n```\n\n"
            "Or use a GGUF you have: `harmony-chat --model PATH`, or `path` under `[model]` in the config file."
        )
        if self.notice is None or self.pocket:
            intro = POCKET_NOTICE if self.pocket else "No model is configured yet."
            yield Markdown(f"## Welcome to harmony-chat\n\n{intro}\n\n{download}")
        else:  # the error names files and holds tool output: text, never Markdown
            yield Markdown("## Welcome to harmony-chat")
            # tabs as spaces: Textual sizes a tab as one column but draws it up to eight (lines were cut)
            failure = Content.assemble(("Could not load the model: ", "bold"), literal(self.notice.expandtabs()))
            yield Static(failure, classes="failure", markup=False)
            yield Markdown(download)
        if self.found:
            yield Static("gpt-oss models found on this machine:", classes="found")
            for index, model in enumerate(self.found):
                label = literal(f"Chat with {model.path.name} ({model.size_gb:.1f} GB, {model.source})")
                yield Button(label, id=f"found-{index}", variant="primary")
        else:
            yield Static(
                "No gpt-oss GGUF files found in the Hugging Face cache, LM Studio, llama.cpp or ~/models.",
                classes="found",
            )
        if not self.pocket:
            yield Button("Chat with the pocket gpt-oss (demo model)", id="pocket", variant="success")
        yield Button("Replay recorded gpt-oss conversations", id="demo")

    def on_button_pressed(self, event: Button.Pressed) -> None:
        """Turn a button press into a request to the screen."""
        event.stop()
        if event.button.id in ("demo", "pocket"):
            self.post_message(self.StartDemo(replay=event.button.id == "demo"))
        elif event.button.id and event.button.id.startswith("found-"):
            self.post_message(self.LoadModel(self.found[int(event.button.id.split("-")[1])].path))


REPLAY_HINT = (
    "Replaying recorded gpt-oss-20b conversations (no model runs). Ask one of these to see its answer: "
    + " · ".join(DEMO_QUESTIONS)
    + " (other questions get the recordings in turn)."
)


def replay_hint() -> Static:
    """What to type in the replayed demo, shown above an otherwise empty chat."""
    return Static(literal(REPLAY_HINT), id="replay-hint", classes="found")
