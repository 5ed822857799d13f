"""The audit as one table (check, what the guide says, result, evidence) or as JSON.

Evidence quotes what servers sent; every cell is plain :class:`rich.text.Text` (never markup) with
control characters escaped, so a server cannot style or drive the terminal it is reported on.
"""

from __future__ import annotations

import json
from typing import IO, Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from harmony_chat.conform.result import CheckResult, Status
from harmony_chat.conform.runner import Audit
from harmony_chat.text_safety import visible

STYLES = {Status.PASS: "green", Status.FAIL: "bold red", Status.NOT_OFFERED: "yellow", Status.INCONCLUSIVE: "yellow"}


def plain(text: str) -> str:
    """``text`` safe for the terminal: the one neutraliser, :func:`harmony_chat.text_safety.visible`."""
    return visible(text)


def _row(result: CheckResult) -> list[Text]:
    clause = result.check.clause
    says = Text(plain(clause.rule))
    says.append("\n" + plain(clause.citation), style="dim")
    title = Text(plain(result.check.title))
    title.append("\n" + result.check.id, style="dim")
    status = Text(result.status.value, style=STYLES[result.status])
    return [title, says, status, Text(plain(result.outcome.evidence))]


def print_table(audit: Audit, stream: IO[str]) -> None:
    """The table and a one-line tally."""
    console = Console(file=stream, width=None if stream.isatty() else 200, highlight=False, emoji=False)
    title = Text(plain(f"{audit.server} · model {audit.model}"))  # Text: a server's model id is never markup
    table = Table(title=title, show_lines=True, expand=False)
    table.add_column("check", ratio=2)
    table.add_column("what the guide says", ratio=3)
    table.add_column("result", no_wrap=True)
    table.add_column("evidence", ratio=5)
    for result in audit.results:
        table.add_row(*_row(result))
    console.print(table)
    tally = ", ".join(f"{audit.count(status)} {status.value}" for status in Status)
    console.print(Text(f"{tally} ({audit.requests} requests)"))


def audit_json(audit: Audit) -> dict[str, Any]:
    """The audit as a JSON-ready object."""
    return {
        "server": audit.server,
        "model": audit.model,
        "requests": audit.requests,
        "summary": {status.value: audit.count(status) for status in Status},
        "checks": [
            {
                "id": result.check.id,
                "title": result.check.title,
                "api": result.check.api,
                "clause": {
                    "source": result.check.clause.source,
                    "section": result.check.clause.section,
                    "rule": result.check.clause.rule,
                },
                "status": result.status.value,
                "evidence": result.outcome.evidence,
            }
            for result in audit.results
        ],
    }


def print_json(audit: Audit, stream: IO[str]) -> None:
    """The audit as one JSON object."""
    stream.write(json.dumps(audit_json(audit), indent=2) + "\n")
