"""``serve``'s log, written to a terminal: what clients, models and engines sent shows as text, never obeyed.

A log line can quote a client (the path it asked for, an exception about its request) or a model:
:class:`VisibleLogText` sends every message argument and traceback through
:func:`~harmony_chat.text_safety.visible` before uvicorn's formatters (with their own colours) write
the line. :func:`serve_log_config` is uvicorn's logging configuration with that filter on every
handler, and harmony-chat's own server log routed to the same handler.
"""

from __future__ import annotations

import copy
import logging
from collections.abc import Mapping
from typing import Any

from harmony_chat.text_safety import visible

SERVER_LOGGER = "harmony_chat.server"


class _Shown:
    """A log argument that formats (``%s``, ``%r``) with its control characters as symbols."""

    __slots__ = ("value",)

    def __init__(self, value: object) -> None:
        self.value = value

    def __str__(self) -> str:
        return visible(str(self.value))

    def __repr__(self) -> str:
        return visible(repr(self.value))


def _shown(value: object) -> object:
    """``value`` safe to format into a log line; numbers stay numbers (``%d``, uvicorn's status colours)."""
    if isinstance(value, int | float) or value is None:
        return value
    if isinstance(value, str):
        return visible(value)
    return _Shown(value)


class VisibleLogText(logging.Filter):
    """Makes a record's message, arguments, traceback and stack safe for a terminal (never drops one)."""

    def filter(self, record: logging.LogRecord) -> bool:
        """Neutralise ``record`` in place and let it through."""
        record.msg = visible(record.msg) if isinstance(record.msg, str) else _Shown(record.msg)
        if isinstance(record.args, Mapping):
            record.args = {key: _shown(value) for key, value in record.args.items()}
        elif record.args:
            record.args = tuple(_shown(value) for value in record.args)
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = visible(record.exc_text)
        if record.stack_info:
            record.stack_info = visible(record.stack_info)
        return True


def serve_log_config() -> dict[str, Any]:
    """Return uvicorn's logging configuration with every handler filtered by :class:`VisibleLogText`.

    The server's own log (``harmony_chat.server``) goes to uvicorn's default handler at WARNING,
    which is what Python showed of it before (its last-resort handler).
    """
    from uvicorn.config import LOGGING_CONFIG

    config: dict[str, Any] = copy.deepcopy(LOGGING_CONFIG)
    config["filters"] = {**config.get("filters", {}), "visible": {"()": VisibleLogText}}
    for handler in config["handlers"].values():
        handler["filters"] = [*handler.get("filters", []), "visible"]
    config["loggers"][SERVER_LOGGER] = {"handlers": ["default"], "level": "WARNING", "propagate": False}
    return config
