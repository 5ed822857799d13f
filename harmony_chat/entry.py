"""The ``harmony-chat`` console script and ``python -m harmony_chat``.

The collector is paused before the command line is even imported (``collector.py``); the app
resumes it after its first paint, every other command as soon as it starts.
"""

from __future__ import annotations


def run() -> None:
    """Run the command line with the collector paused for startup."""
    from harmony_chat.collector import pause

    pause()
    from harmony_chat.cli import run as run_cli

    run_cli()
