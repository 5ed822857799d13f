"""uvicorn for ``serve``: the listening socket bound first, registration while it listens.

:func:`listen` binds the port before the model loads, so a port in use is one ``error:`` line at
once, and ``serve`` claims to be serving only once it is.

Unregistering happens as shutdown begins, inside uvicorn's own signal handling: after a SIGTERM
uvicorn re-raises the signal once it has shut down, which ends the process before any ``finally``
of the caller could run.
"""

from __future__ import annotations

import socket
from collections.abc import Callable
from pathlib import Path

import uvicorn

from harmony_chat.errors import HarmonyChatError
from harmony_chat.server.registry import register, unregister


class ListenError(HarmonyChatError):
    """The address cannot be listened on (in use, not this machine's, not permitted)."""


def listen(host: str, port: int, backlog: int) -> socket.socket:
    """A socket bound to ``host``:``port`` and listening; raise ``ListenError`` in one line."""
    try:
        family, kind, proto, _name, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
        sock = socket.socket(family, kind, proto)
    except OSError as error:
        raise ListenError(f"cannot listen on {host}:{port}: {error.strerror or error}") from None
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(backlog)
    except OSError as error:
        sock.close()
        raise ListenError(f"cannot listen on {host}:{port}: {(error.strerror or str(error)).lower()}") from None
    sock.set_inheritable(True)
    return sock


class RegisteringServer(uvicorn.Server):
    """A uvicorn server listed in the registry while it listens.

    Args:
        config: uvicorn's configuration.
        model: the model name the server answers to.
        api_key: whether clients must send a key.
        directory: the registry folder (None: the user's).
        register: False: listed by its caller instead (a worker of ``--workers``).
        on_shutdown: called as the shutdown begins, before uvicorn waits for open responses.
    """

    def __init__(
        self,
        config: uvicorn.Config,
        *,
        model: str,
        api_key: bool = False,
        directory: Path | None = None,
        register: bool = True,
        on_shutdown: Callable[[], object] | None = None,
    ) -> None:
        super().__init__(config)
        self.register = register
        self.on_shutdown = on_shutdown
        self.model = model
        self.api_key = api_key
        self.directory = directory
        self.registration: Path | None = None
        """The registry file while the server listens."""

    def bound_port(self) -> int:
        """The port it listens on (the one the OS chose for port 0)."""
        for server in self.servers:
            for sock in server.sockets:
                if sock.family in (socket.AF_INET, socket.AF_INET6):
                    port: int = sock.getsockname()[1]
                    return port
        return self.config.port

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        """Start listening, then register."""
        await super().startup(sockets)
        if self.started and self.register:
            self.registration = register(
                self.config.host, self.bound_port(), self.model, api_key=self.api_key, directory=self.directory
            )

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        """Unregister, run ``on_shutdown``, then stop."""
        self.unregister()
        if self.on_shutdown is not None:
            self.on_shutdown()
        await super().shutdown(sockets)

    def unregister(self) -> None:
        """Remove the registry file (idempotent)."""
        path, self.registration = self.registration, None
        unregister(path)
