"""The approval modal: a tool call the model wants to make, and the user's answer.

Everything shown comes from the model or a tool server, so it is rendered as text (``Content``
and ``rich.syntax.Syntax``), never as markup, with control characters made visible. The review
says what kind of action it is (``python``'s code is labelled as written in the model's hidden
reasoning and highlighted as Python) and what is not contained (its warning). Escape
denies the call and stops the turn (``stop_requested``); ``n`` denies it and lets the model go on;
``r`` moves to the reason field, where enter denies with the reason typed.

The modal opens when the model asks, often while the user is still typing their next words. A
:class:`TypingGuard` keeps such keys from answering: until the keyboard has been quiet for a moment
after the dialog opened, letters and backspace go on into the chat prompt (where the user was
typing) and other keys are set aside, and the dialog says so. Only then do its keys answer.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from rich.syntax import Syntax
from textual import events, on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Static

from harmony_chat.chat.approval import Choice, Decision, ToolReview, code_view
from harmony_chat.tui.literal import literal, visible

GUARD_S = 1.0
"""Quiet time (seconds) the keyboard needs after the dialog opened before a key answers it."""
GUARD_POLL_S = 0.1
"""How often the dialog looks whether its guard has ended (to show its keys and focus a button)."""

CODE_ROWS = 18
"""Rows of code the box shows before it scrolls (its height less its border)."""
REASON_PLACEHOLDER = "r: deny with a reason (sent to the model); enter denies"
REASON_HINT = "type the reason · enter deny with it · escape deny and stop"

Clock = Callable[[], float]
TypeAhead = Callable[[events.Key | events.Paste], bool]
"""Hands a key or a paste that is not for the dialog to the chat prompt; False when the prompt cannot take it."""


def keys_hint(review: ToolReview) -> str:
    """The keys that answer ``review``: ``s`` only where the tool can be approved for good."""
    always = "a always in this conversation" if review.per_conversation else "a always (this session)"
    saved = " · s always, saved" if review.savable else ""
    return f"y once · {always}{saved} · n deny · r deny with a reason… · escape deny and stop"


class TypingGuard:
    """Whether the user is still typing what was meant for the prompt, or may be answering.

    Keys are typing until ``quiet_s`` have passed, with no key in between, since the dialog opened:
    each key typed meanwhile restarts the wait, so a sentence typed on at any speed never answers.

    Args:
        quiet_s: the quiet time needed.
        clock: seconds, monotonic (tests pass a clock they move).
    """

    def __init__(self, quiet_s: float = GUARD_S, clock: Clock = time.monotonic) -> None:
        self.quiet_s = quiet_s
        self.clock = clock
        self._since = clock()

    @property
    def guarding(self) -> bool:
        """Whether keys are still taken for typing."""
        return self.clock() - self._since < self.quiet_s

    def typed(self) -> None:
        """A key came while guarding: the quiet time starts again."""
        self._since = self.clock()


class ApprovalScreen(ModalScreen[Decision]):
    """Ask whether a tool call may run: once, always (this session, or saved where allowed), or not at all."""

    AUTO_FOCUS = ""  # nothing focused while guarding (None would mean the app's "*")
    BINDINGS = [
        Binding("y", "answer('once')", "Approve once", priority=True),
        Binding("a", "answer('always')", "Always", priority=True),
        Binding("s", "answer('always-save')", "Always (saved)", priority=True),
        Binding("n", "answer('deny')", "Deny", priority=True),
        Binding("r", "reason", "Deny with a reason", priority=True),
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
    ApprovalScreen #approval-size { color: $text-muted; }
    ApprovalScreen #approval-arguments { height: auto; max-height: 20; border: round $primary-darken-2; }
    ApprovalScreen Horizontal { height: auto; margin: 1 0 0 0; }
    ApprovalScreen Button { margin: 0 1 0 0; }
    ApprovalScreen #approval-reason { margin: 1 0 0 0; }
    ApprovalScreen #approval-keys { color: $text-muted; margin: 1 0 0 0; }
    ApprovalScreen #approval-guard { color: $warning; }
    """

    def __init__(
        self, review: ToolReview, guard: TypingGuard | None = None, type_ahead: TypeAhead | None = None
    ) -> None:
        super().__init__()
        self.review = review
        self.guard = guard or TypingGuard()
        self.type_ahead = type_ahead
        """Where keys typed during the guard go (the chat prompt); None: they are set aside."""
        self.stop_requested = False
        """True when the user denied with escape: the turn stops too."""
        self.typed_ahead = 0
        """Keys typed during the guard that went on into the prompt."""
        self.pasted_ahead = 0
        """Pastes that went on into the prompt (a paste never answers)."""
        self.set_aside: list[str] = []
        """Keys typed during the guard that neither answered nor reached the prompt (shown in the dialog)."""
        self._answering = False
        self._deny_focused = False
        self._reason = Input(placeholder=REASON_PLACEHOLDER, id="approval-reason")
        self._reason.can_focus = False  # reached with r only: typing never lands here by accident

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
            view = code_view(visible(review.arguments))
            more = " · more below the box: scroll to read it all" if view.text.count("\n") + 1 > CODE_ROWS else ""
            yield Static(literal(f"{view.summary}{more}"), id="approval-size")
            with VerticalScroll(id="approval-arguments"):
                arguments = Syntax(view.text, review.language, word_wrap=True, theme="ansi_dark")
                yield Static(arguments, id="approval-args")
            yield self._reason
            with Horizontal():
                yield Button("Approve once (y)", id="once", variant="success")
                always = "Always in this conversation (a)" if review.per_conversation else "Always for this tool (a)"
                yield Button(always, id="always", variant="primary")
                if review.savable:
                    yield Button("Always, saved (s)", id="always-save")
                yield Button("Deny (n)", id="deny", variant="error")
            yield Static("", id="approval-guard", markup=False)
            yield Static(keys_hint(review), id="approval-keys", markup=False)

    def on_mount(self) -> None:
        """Start guarding: nothing is focused, so every key comes to :meth:`on_key` until the guard ends."""
        self._show_guard()
        self.set_interval(GUARD_POLL_S, self._check_guard)

    @property
    def answering(self) -> bool:
        """Whether the dialog takes answers (its guard has ended)."""
        if not self._answering and not self.guard.guarding:
            self._answering = True
        return self._answering

    def _check_guard(self) -> None:
        if self.answering and not self._deny_focused:
            self._deny_focused = True
            self.query_one("#deny", Button).focus()  # the safest choice: nothing runs on a stray enter
            self._show_guard()

    def _show_guard(self) -> None:
        if self.answering and not self.typed_ahead and not self.pasted_ahead and not self.set_aside:
            text = ""
        elif self.answering:
            text = self._guard_report()
        else:
            text = "Just opened: keys typed now go on into your message, not to this dialog. " + self._guard_report()
        line = self.query_one("#approval-guard", Static)
        line.update(literal(text.strip()))
        line.display = bool(text)

    def _guard_report(self) -> str:
        parts = []
        if self.typed_ahead:
            parts.append(f"{self.typed_ahead} key{'s' if self.typed_ahead != 1 else ''} went into your message.")
        if self.pasted_ahead:
            parts.append(f"{self.pasted_ahead} paste{'s' if self.pasted_ahead != 1 else ''} went into your message.")
        if self.set_aside:
            parts.append(f"Ignored as the dialog opened: {' '.join(self.set_aside[-5:])}.")
        return " ".join(parts)

    def on_key(self, event: events.Key) -> None:
        """While guarding, a key is the user's typing: it goes on into the prompt, or is set aside (and shown)."""
        if self.answering:
            return
        event.stop()
        event.prevent_default()
        self.guard.typed()
        if self.type_ahead is not None and self.type_ahead(event):
            self.typed_ahead += 1
        else:
            self.set_aside.append(event.key)
        self._show_guard()

    def on_paste(self, event: events.Paste) -> None:
        """A paste is never an answer: it goes into the reason field when that has focus, else into the prompt."""
        if self.focused is self._reason:
            return  # the field took it
        event.stop()
        if not self.answering:
            self.guard.typed()
        if self.type_ahead is not None and self.type_ahead(event):
            self.pasted_ahead += 1
        else:
            self.set_aside.append("a paste")
        self._show_guard()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """No answer while guarding; letters go to the reason field while it has focus; ``s`` only where savable."""
        if action == "stop":
            return True
        if not self.answering:
            return False
        if action == "answer" and parameters and parameters[0] == Choice.ALWAYS_SAVE and not self.review.savable:
            return False
        return not (action in ("answer", "reason") and self.focused is self._reason)

    def action_stop(self) -> None:
        """Deny and stop the turn (escape works everywhere and always: it runs nothing)."""
        self.stop_requested = True
        self._close(Choice.DENY.value)

    def action_answer(self, choice: str) -> None:
        """Close with the decision (``n``: deny at once, without a reason)."""
        self._close(choice)

    def action_reason(self) -> None:
        """Move to the reason field: what is typed there is sent to the model with the denial."""
        self._reason.can_focus = True
        self._reason.focus()
        self.query_one("#approval-keys", Static).update(literal(REASON_HINT))

    def _close(self, choice: str) -> None:
        reason = self._reason.value.strip() if choice == Choice.DENY else ""
        if choice == Choice.ALWAYS_SAVE and not self.review.savable:
            choice = Choice.ALWAYS.value
        self.dismiss(Decision(Choice(choice), reason))

    @on(Button.Pressed)
    def pressed(self, event: Button.Pressed) -> None:
        """A button was pressed (only once the guard has ended: a click as the dialog opens is shown as ignored)."""
        if not self.answering:
            self.set_aside.append(f"a click on {event.button.label}")
            self._show_guard()
        elif event.button.id:
            self.action_answer(event.button.id)

    @on(Input.Submitted, "#approval-reason")
    def reason_given(self) -> None:
        """Enter in the reason field denies with that reason."""
        self._close(Choice.DENY.value)
