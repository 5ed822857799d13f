"""``harmony-chat history``: list, show, search, export, delete and import stored conversations.

Stored text is the user's, the model's and the tools': whatever these commands write to stdout or
stderr shows its control characters as visible symbols (:func:`~harmony_chat.text_safety.visible`),
so a stored escape sequence never drives the terminal. ``export --out FILE`` writes the exact text
(a file is no terminal); JSON is exact everywhere, every control character escaped.

``delete`` asks first (``--yes`` skips the question); an answer other than yes, or no answer at all
(standard input at its end), deletes nothing and exits with :data:`NOT_DELETED_EXIT_CODE`.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from harmony_chat.errors import HarmonyChatError
from harmony_chat.text_safety import visible

if TYPE_CHECKING:
    from harmony_chat.config import Settings
    from harmony_chat.history.store import HistoryStore

history_app = typer.Typer(
    help="Stored conversations: list, show, search, export, delete, import.",
    no_args_is_help=True,
    rich_markup_mode=None,
)

DbOpt = Annotated[Path | None, typer.Option("--history-db", help="The history database file.")]
MAX_CONVERSATION_ID = 2**63 - 1
"""The largest conversation id (SQLite's integers are 64-bit: a larger number cannot be looked up)."""
ConversationArg = Annotated[int, typer.Argument(min=1, max=MAX_CONVERSATION_ID, help="The conversation's id.")]
NOT_DELETED_EXIT_CODE = 3
"""``history delete``'s exit code when the deletion was not confirmed (1: an error, 130: interrupted)."""


@dataclass(frozen=True, slots=True)
class RootOptions:
    """The root command's options the history commands honour (``harmony-chat --config F history …``)."""

    config: Path | None = None
    history_db: Path | None = None


def open_history(path: Path | None, settings: Settings) -> HistoryStore:
    """The history store at ``path``, else at the config's ``[history] path``, else at the default place.

    Raises:
        HistoryError: the file is not a healthy harmony-chat history (it is left untouched).
        HistoryLocationError: no history can be kept there (a directory, a read-only place).
    """
    from harmony_chat.history.db import default_database
    from harmony_chat.history.store import HistoryStore

    chosen = path or (Path(settings.history.path).expanduser() if settings.history.path else default_database())
    return HistoryStore(chosen, settings.history.store_analysis)


def app_history(
    path: Path | None, settings: Settings, no_history: bool, required: bool
) -> tuple[HistoryStore | None, str | None]:
    """The chat app's history, or None and why it is off when it cannot be kept where it should be.

    A place that cannot hold it (a directory, a read-only home) leaves the app chatting without a
    history, unless ``required`` (``--resume``, ``--continue``). A file that is not a healthy history
    still stops the app with one line: the user has to choose another file or ``--no-history``.
    """
    from harmony_chat.history.db import HistoryLocationError

    if no_history:
        return None, None
    try:
        return open_history(path, settings), None
    except HistoryLocationError as error:
        if required:
            raise
        return None, str(error)


class HistoryFileError(HarmonyChatError):
    """A file a history command reads or writes cannot be used."""


def _reason(path: Path, error: OSError) -> str:
    """Why ``path`` cannot be written, in words."""
    if path.is_dir():
        return "it is a folder"
    if not path.parent.is_dir():
        return f"there is no folder {path.parent}"
    return error.strerror or str(error)


def _confirmed(question: str) -> bool:
    """Ask ``question`` on stderr and read the answer; only yes counts (no answer, end of input: no)."""
    print(f"{question} [y/N] ", end="", file=sys.stderr, flush=True)
    try:
        answer = sys.stdin.readline() if sys.stdin is not None else ""
    except (OSError, ValueError):  # no standard input, or a closed one
        answer = ""
    if not answer.endswith("\n"):
        print(file=sys.stderr)  # end the question's line when input ended without one
    return answer.strip().lower() in ("y", "yes")


def _store(ctx: typer.Context, path: Path | None) -> HistoryStore:
    from harmony_chat.config import load_settings

    root = ctx.obj if isinstance(ctx.obj, RootOptions) else RootOptions()
    return open_history(path or root.history_db, load_settings(root.config))


@history_app.command("list")
def list_command(ctx: typer.Context, history_db: DbOpt = None) -> None:
    """List conversations, newest first."""
    from harmony_chat.history.text import local_time

    store = _store(ctx, history_db)
    for row in store.list_conversations():
        when = local_time(row.updated_at)
        print(visible(f"{row.id}\t{when}\t{row.model}\t{row.messages} messages\t{row.title}"))


@history_app.command("show")
def show_command(ctx: typer.Context, conversation: ConversationArg, history_db: DbOpt = None) -> None:
    """Print a conversation as Markdown (final answers and preambles)."""
    from harmony_chat.history.export import to_markdown

    print(visible(to_markdown(_store(ctx, history_db).load(conversation))), end="")


@history_app.command("search")
def search_command(ctx: typer.Context, text: str, history_db: DbOpt = None) -> None:
    """Full-text search over your messages and the final answers."""
    hits = _store(ctx, history_db).search(text)
    for hit in hits:
        print(visible(f"{hit.conversation_id}\t{hit.title}\t{hit.snippet}"))
    if not hits:
        print(f"no conversation mentions {text!r}", file=sys.stderr)


@history_app.command("export")
def export_command(
    ctx: typer.Context,
    conversation: ConversationArg,
    export_format: Annotated[str, typer.Option("--format", "-f", help="md, json or harmony.")] = "md",
    with_reasoning: Annotated[bool, typer.Option("--with-reasoning", help="Add stored analysis.")] = False,
    out: Annotated[Path | None, typer.Option("--out", "-o", help="Write here instead of stdout.")] = None,
    history_db: DbOpt = None,
) -> None:
    """Export a conversation as Markdown, JSON (harmony Conversation + metadata) or harmony text.

    On stdout control characters show as visible symbols; ``--out FILE`` keeps the exact text.
    """
    from harmony_chat.history.export import FORMATS, to_harmony, to_json, to_markdown

    if export_format not in FORMATS:
        raise typer.BadParameter(f"unknown format {export_format!r} (choose md, json or harmony)")
    stored = _store(ctx, history_db).load(conversation)
    if export_format == "md":
        text = to_markdown(stored, with_reasoning)
    else:
        from harmony_chat.demo.pocket import pocket_model_path
        from harmony_chat.harmony.vocab import load_encoding

        exporter = to_json if export_format == "json" else to_harmony
        text = exporter(stored, load_encoding(fallback_gguf=pocket_model_path()), with_reasoning)
    if out is None:
        print(visible(text), end="")
        return
    from harmony_chat.private_files import write_private_text

    try:
        write_private_text(out, text)  # a conversation: only its owner may read it
    except OSError as error:
        raise HistoryFileError(f"cannot write {out}: {_reason(out, error)}") from error


@history_app.command("delete")
def delete_command(
    ctx: typer.Context,
    conversation: ConversationArg,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Do not ask for confirmation.")] = False,
    history_db: DbOpt = None,
) -> None:
    """Delete a conversation."""
    store = _store(ctx, history_db)
    title = store.load(conversation).title
    if not yes and not _confirmed(visible(f"Delete conversation {conversation} ({title})?")):
        print(f"not deleted: conversation {conversation} is kept (--yes deletes without asking)", file=sys.stderr)
        raise typer.Exit(NOT_DELETED_EXIT_CODE)
    store.delete(conversation)
    print(visible(f"deleted conversation {conversation} ({title})"), file=sys.stderr)


@history_app.command("import")
def import_command(ctx: typer.Context, file: Path, history_db: DbOpt = None) -> None:
    """Import a harmony Conversation JSON file; print the new conversation's id."""
    from harmony_chat.demo.pocket import pocket_model_path
    from harmony_chat.harmony.session import ChatSession
    from harmony_chat.harmony.vocab import load_encoding
    from harmony_chat.history.recording import session_settings

    session = ChatSession.load(load_encoding(fallback_gguf=pocket_model_path()), file)
    store = _store(ctx, history_db)
    conversation = store.import_messages(session.history, session_settings(session))
    print(conversation)
