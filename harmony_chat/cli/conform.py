"""``harmony-chat conform URL``: check a gpt-oss server against the harmony and raw chain-of-thought guides.

Typer glue only; the audit is :mod:`harmony_chat.conform`. Exit status: 0 when no check failed,
1 when one did, 2 when the audit could not run (unreachable server, refused key, bad arguments).
"""

from __future__ import annotations

import sys
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from harmony_chat.cli.root import app


class ApiChoice(StrEnum):
    """Which API the audit exercises."""

    chat = "chat"
    responses = "responses"
    both = "both"


@app.command()
def conform(
    url: Annotated[
        str | None, typer.Argument(help="The server, e.g. http://127.0.0.1:8000 (/v1 is added when missing).")
    ] = None,
    model: Annotated[
        str | None, typer.Option("--model", help="The model (default: the first gpt-oss one /v1/models lists).")
    ] = None,
    api_key: Annotated[
        str | None,
        typer.Option("--api-key", envvar="HARMONY_CHAT_API_KEY", help="The server's key (or HARMONY_CHAT_API_KEY)."),
    ] = None,
    api: Annotated[ApiChoice, typer.Option("--api", help="chat, responses or both.")] = ApiChoice.both,
    json_output: Annotated[bool, typer.Option("--json", help="Print one JSON object instead of the table.")] = False,
    samples: Annotated[
        int, typer.Option("--samples", min=1, max=50, help="Runs at each effort for the effort check.")
    ] = 3,
    timeout: Annotated[
        float, typer.Option("--timeout", min=1.0, help="Seconds one request may take, streaming included.")
    ] = 120.0,
    prompts: Annotated[
        Path | None, typer.Option("--prompts", help="A JSON file replacing the default prompts (by field name).")
    ] = None,
    record: Annotated[Path | None, typer.Option("--record", help="Save every request and reply to this file.")] = None,
    replay: Annotated[
        Path | None, typer.Option("--replay", help="Run the checks on a file --record saved (no server).")
    ] = None,
) -> None:
    """Audit an OpenAI-compatible gpt-oss server against the harmony and raw-CoT guides; exit 1 on a failure."""
    from harmony_chat.conform.command import ConformSettings, audit_server
    from harmony_chat.conform.report import print_json, print_table

    apis = ("chat", "responses") if api is ApiChoice.both else (api.value,)
    settings = ConformSettings(
        url=url, model=model, api_key=api_key, apis=apis, samples=samples,  # type: ignore[arg-type]
        timeout_s=timeout, prompts=prompts, record=record, replay=replay,
    )  # fmt: skip

    def progress(check: object) -> None:
        if sys.stderr.isatty() and not json_output:
            print(f"\r\033[Kchecking {getattr(check, 'id', '')}...", end="", file=sys.stderr, flush=True)

    audit = audit_server(settings, progress)
    if sys.stderr.isatty() and not json_output:
        print("\r\033[K", end="", file=sys.stderr, flush=True)
    if json_output:
        print_json(audit, sys.stdout)
    else:
        print_table(audit, sys.stdout)
    raise typer.Exit(1 if audit.failed else 0)
