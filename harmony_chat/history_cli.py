"""``harmony-chat history``: list, show, search, export, delete and import stored conversations."""

from __future__ import annotations

import datetime as dt
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:
    from harmony_chat.history.store import HistoryStore

history_app = typer.Typer(
    help="Stored conversations: list, show, search, export, delete, import.",
    no_args_is_help=True,
    rich_markup_mode=None,
)

DbOpt = Annotated[Path | None, typer.Option("--history-db", help="The history database file.")]


def open_history(path: Path | None, store_analysis: bool = False) -> HistoryStore:
    """The history store at ``path`` (the config's or the default when None)."""
    from harmony_chat.config import load_settings
    from harmony_chat.history.db import default_database
    from harmony_chat.history.store import HistoryStore

    settings = load_settings()
    chosen = path or (Path(settings.history.path).expanduser() if settings.history.path else default_database())
    return HistoryStore(chosen, store_analysis or settings.history.store_analysis)


def _store(path: Path | None) -> HistoryStore:
    return open_history(path)


@history_app.command("list")
def list_command(history_db: DbOpt = None) -> None:
    """List conversations, newest first."""
    store = _store(history_db)
    for row in store.list_conversations():
        when = dt.datetime.fromtimestamp(row.updated_at).strftime("%Y-%m-%d %H:%M")
        print(f"{row.id}\t{when}\t{row.model}\t{row.messages} messages\t{row.title}")


@history_app.command("show")
def show_command(conversation: int, history_db: DbOpt = None) -> None:
    """Print a conversation as Markdown (final answers and preambles)."""
    from harmony_chat.history.export import to_markdown

    print(to_markdown(_store(history_db).load(conversation)), end="")


@history_app.command("search")
def search_command(text: str, history_db: DbOpt = None) -> None:
    """Full-text search over your messages and the final answers."""
    hits = _store(history_db).search(text)
    for conversation, title, snippet in hits:
        print(f"{conversation}\t{title}\t{snippet}")
    if not hits:
        print(f"no conversation mentions {text!r}", file=sys.stderr)


@history_app.command("export")
def export_command(
    conversation: int,
    export_format: Annotated[str, typer.Option("--format", "-f", help="md, json or harmony.")] = "md",
    with_reasoning: Annotated[bool, typer.Option("--with-reasoning", help="Add stored analysis.")] = False,
    out: Annotated[Path | None, typer.Option("--out", "-o", help="Write here instead of stdout.")] = None,
    history_db: DbOpt = None,
) -> None:
    """Export a conversation as Markdown, JSON (harmony Conversation + metadata) or harmony text."""
    from harmony_chat.history.export import FORMATS, to_harmony, to_json, to_markdown

    if export_format not in FORMATS:
        raise typer.BadParameter(f"unknown format {export_format!r} (choose md, json or harmony)")
    stored = _store(history_db).load(conversation)
    if export_format == "md":
        text = to_markdown(stored, with_reasoning)
    else:
        from harmony_chat.harmony.vocab import load_encoding

        exporter = to_json if export_format == "json" else to_harmony
        text = exporter(stored, load_encoding(), with_reasoning)
    if out is None:
        print(text, end="")
    else:
        out.write_text(text, encoding="utf-8")


@history_app.command("delete")
def delete_command(
    conversation: int,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Do not ask for confirmation.")] = False,
    history_db: DbOpt = None,
) -> None:
    """Delete a conversation."""
    store = _store(history_db)
    title = store.load(conversation).title
    if not yes and not typer.confirm(f"Delete conversation {conversation} ({title})?"):
        raise typer.Exit(1)
    store.delete(conversation)


@history_app.command("import")
def import_command(file: Path, history_db: DbOpt = None) -> None:
    """Import a harmony Conversation JSON file; print the new conversation's id."""
    from harmony_chat.harmony.session import ChatSession
    from harmony_chat.harmony.vocab import load_encoding
    from harmony_chat.history.recording import session_settings

    session = ChatSession.load(load_encoding(), file)
    store = _store(history_db)
    conversation = store.import_messages(session.history, session_settings(session))
    print(conversation)
