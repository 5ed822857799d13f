"""Run the command line with ``python -m harmony_chat``."""

from harmony_chat.entry import run

run()
