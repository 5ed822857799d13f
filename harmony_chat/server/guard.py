"""What a browser must not do to a local server: the Host and Origin rules and the JSON-only body rule.

A keyless server on 127.0.0.1 is reachable by any web page the user opens: a form or a
``text/plain`` POST needs no CORS preflight, and DNS rebinding lets a page on ``attacker.example``
talk to 127.0.0.1 under its own name (and read the answers). So, before anything else:

- the ``Host`` header must name the server as this machine does (``localhost``, ``127.0.0.1``,
  ``[::1]``, any port) or a name the operator allowed (``--allow-host``); a server bound beyond
  loopback with an API key accepts any name unless names are given (the key is what guards it,
  and a page cannot send it);
- an ``Origin`` header (browsers send one on cross-site requests) must name an accepted host;
- a POST body must be ``application/json`` (which a page can only send after a preflight that
  this server, sending no CORS headers at all, never grants).

:class:`RequestGuard` is plain ASGI, so streamed answers pass through it untouched.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from urllib.parse import urlsplit

from starlette.types import ASGIApp, Receive, Scope, Send

from harmony_chat.server.errors import ApiError
from harmony_chat.server.limits import is_loopback

LOOPBACK_HOSTS: tuple[str, ...] = ("localhost", "127.0.0.1", "::1")
"""Host names (without port or brackets) that always mean this machine."""


def host_rule(bind: str, *, api_key: str | None, allow: Iterable[str]) -> tuple[str, ...] | None:
    """The host names a server bound to ``bind`` accepts (lowercase, no port), or None for any.

    On loopback: the loopback names and ``allow``. Beyond loopback (which needs a key): any name,
    unless ``allow`` names some; then the loopback names and those.
    """
    allowed = tuple(dict.fromkeys(name.strip().lower().strip("[]") for name in allow if name.strip()))
    if not is_loopback(bind) and api_key and not allowed:
        return None
    return tuple(dict.fromkeys((*LOOPBACK_HOSTS, *allowed)))


_HOST = re.compile(r"(?:\[(?P<ipv6>[0-9a-f:.]+)\]|(?P<name>[a-z0-9._-]+|[0-9a-f:]+))(?::[0-9]{1,5})?")
"""``host[:port]`` as RFC 9110 allows it here: a name or IPv4 address, or an IPv6 address in brackets."""


def host_name(value: str) -> str:
    """The name part of a ``Host`` header value or URL authority: no port, no IPv6 brackets, lowercase.

    Anything that is not ``host[:port]`` (userinfo ``a@b``, a path, spaces) gives ``""``, no name.
    """
    value = value.strip().lower()
    if value.count(":") > 1 and not value.startswith("["):  # a bare IPv6 address (an allow-list entry)
        return value if re.fullmatch(r"[0-9a-f:.]+", value) else ""
    match = _HOST.fullmatch(value)
    if match is None:
        return ""
    return match.group("ipv6") or match.group("name")


def _origin_name(origin: str) -> str | None:
    """The host name of an ``Origin`` header, or None when it names no host (``null``, garbage)."""
    try:
        parts = urlsplit(origin.strip())
        return parts.hostname if parts.scheme in ("http", "https") else None
    except ValueError:
        return None


def is_json(content_type: str) -> bool:
    """Whether a ``Content-Type`` value is ``application/json`` (parameters such as ``charset`` allowed)."""
    return content_type.split(";", 1)[0].strip().lower() == "application/json"


class RequestGuard:
    """ASGI middleware: refuse foreign Host names (400), foreign Origins (403) and non-JSON POST bodies (415).

    Args:
        app: the app it guards.
        allowed_hosts: accepted host names (see :func:`host_rule`); None accepts any name.
    """

    def __init__(self, app: ASGIApp, allowed_hosts: Iterable[str] | None) -> None:
        self.app = app
        self.allowed = None if allowed_hosts is None else frozenset(host_name(name) for name in allowed_hosts)

    def check(self, scope: Scope) -> ApiError | None:
        """The error a request gets, or None when it may go on."""
        headers = {key.decode("latin-1").lower(): value.decode("latin-1") for key, value in scope["headers"]}
        host = headers.get("host", "")
        if not host_name(host) or (self.allowed is not None and host_name(host) not in self.allowed):
            shown = host[:100]
            return ApiError(
                400,
                f"the Host {shown!r} is not a name of this server (start it with --allow-host NAME to accept one)",
                code="invalid_host",
            )
        origin = headers.get("origin")
        if origin is not None:
            name = _origin_name(origin)
            accepted = self.allowed if self.allowed is not None else frozenset({host_name(host)})
            if name is None or name not in accepted:
                return ApiError(
                    403, f"requests from the web origin {origin[:100]!r} are not accepted", code="forbidden_origin"
                )
        if scope["method"] == "POST" and not is_json(headers.get("content-type", "")):
            return ApiError(
                415, "the request body must be JSON (Content-Type: application/json)", code="unsupported_media_type"
            )
        return None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Answer a refused request with its error; pass the rest to the app."""
        if scope["type"] == "http":
            error = self.check(scope)
            if error is not None:
                await error.response()(scope, receive, send)
                return
        await self.app(scope, receive, send)
