"""The approval modal: a tool call the model wants to make, and the user's answer.

Everything shown comes from the model or a tool server, so it is rendered as text (``Content``
and ``rich.syntax.Syntax``), never as markup, with control characters made visible. The review
says what kind of action it is (``python``'s code is labelled as written in the model's hidden
reasoning and highlighted as Python) and what is not contained (its warning). Escape
denies the call and stops the turn (``stop_requested``); ``n`` denies it and lets the model go on,
with the reason typed, if any.
"""

from __future__ import annotations

from rich.syntax import Syntax
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Static

from harmony_chat.chat.approval import Choice, Decision, ToolReview
from harmony_chat.tui.literal import literal, visible

KEYS_HINT = "y once · a always · s always, saved · n deny (with the reason typed) · escape deny and stop"


class ApprovalScreen(ModalScreen[Decision]):
    """Ask whether a tool call may run: once, always (this session or saved), or not at all."""

    BINDINGS = [
        Binding("y", "answer('once')", "Approve once", priority=True),
        Binding("a", "answer('always')", "Always (this session)", priority=True),
        Binding("s", "answer('always-save')", "Always (saved)", priority=True),
        Binding("n", "answer('deny')", "Deny", priority=True),
        Binding("escape", "stop", "Deny and stop", show=False, priority=True),
    ]
    DEFAULT_CSS = """
    ApprovalScreen { align: center middle; }
    ApprovalScreen > Vertical {
        width: 90%; max-width: 110; height: auto; max-height: 90%;
        border: round $warning; background: $surface; padding: 1 2;
    }
    ApprovalScreen #approval-title { text-style: bold; }
    ApprovalScreen #approval-warning { color: $warning; }
    ApprovalScreen #approval-arguments { height: auto; max-height: 20; border: round $primary-darken-2; }
    ApprovalScreen Horizontal { height: auto; margin: 1 0 0 0; }
    ApprovalScreen Button { margin: 0 1 0 0; }
    ApprovalScreen #approval-reason { margin: 1 0 0 0; }
    ApprovalScreen #approval-keys { color: $text-muted; margin: 1 0 0 0; }
    """

    def __init__(self, review: ToolReview) -> None:
        super().__init__()
        self.review = review
        self.stop_requested = False
        """True when the user denied with escape: the turn stops too."""

    def compose(self) -> ComposeResult:
        """Build the widget tree."""
        review = self.review
        with Vertical():
            label = visible(review.label)
            title = Content.assemble((label[:1].upper() + label[1:], "bold"), ": ", (visible(review.tool), "bold"))
            yield Static(title, id="approval-title")
            where = review.server or "unknown"
            yield Static(literal(f"server: {where}   ·   called as: {review.called_as}"), id="approval-where")
            if review.warning:
                yield Static(literal(review.warning), id="approval-warning")
            with VerticalScroll(id="approval-arguments"):
                arguments = Syntax(visible(review.arguments), review.language, word_wrap=True, theme="ansi_dark")
                yield Static(arguments, id="approval-args")
            yield Input(placeholder="Reason for denying (optional, sent to the model)", id="approval-reason")
            with Horizontal():
                yield Button("Approve once (y)", id="once", variant="success")
                yield Button("Always for this tool (a)", id="always", variant="primary")
                yield Button("Always, saved (s)", id="always-save")
                yield Button("Deny (n)", id="deny", variant="error")
            yield Static(KEYS_HINT, id="approval-keys", markup=False)

    def on_mount(self) -> None:
        """Focus the safest choice's neighbour: nothing runs on a stray enter."""
        self.query_one("#deny", Button).focus()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Letters go to the reason field while it has focus."""
        return not (action == "answer" and self.focused is self.query_one("#approval-reason", Input))

    def action_stop(self) -> None:
        """Deny and stop the turn (escape works everywhere, the reason field included)."""
        self.stop_requested = True
        self.action_answer(Choice.DENY.value)

    def action_answer(self, choice: str) -> None:
        """Close with the decision."""
        reason = self.query_one("#approval-reason", Input).value.strip() if choice == Choice.DENY else ""
        self.dismiss(Decision(Choice(choice), reason))

    @on(Button.Pressed)
    def pressed(self, event: Button.Pressed) -> None:
        """A button was pressed."""
        if event.button.id:
            self.action_answer(event.button.id)

    @on(Input.Submitted, "#approval-reason")
    def reason_given(self) -> None:
        """Enter in the reason field denies with that reason."""
        self.action_answer(Choice.DENY.value)
