"""What ``open`` may reach: only http(s) URLs, and only public addresses unless the config allows others.

Every host is resolved and *every* address it resolves to is checked, before the first request and
before each redirect (``AddressGuard.check_url``). The connection itself goes through
``GuardedTransport``, whose network backend resolves and checks again and then dials one of the
addresses it checked, so a name that resolves to a public address for the check and to a private one
a moment later (DNS rebinding) still cannot reach the private one.
"""

from __future__ import annotations

import ipaddress
import socket
import ssl
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from urllib.parse import urlsplit

import httpcore
import httpx

Resolver = Callable[[str, int], list[str]]
"""Resolve ``(host, port)`` to IP address strings; tests point names where they like."""

ALLOWED_SCHEMES = ("http", "https")
IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address


class BlockedURL(Exception):
    """A URL ``open`` refuses to fetch; the message says why, in one line the model can read."""


def system_resolver(host: str, port: int) -> list[str]:
    """The operating system's resolver: every address ``host`` has, in its order, without repeats."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError) as error:
        raise BlockedURL(f"the host name {host!r} could not be resolved ({error})") from error
    addresses: list[str] = []
    for _family, _type, _proto, _name, sockaddr in infos:
        address = str(sockaddr[0]).split("%", 1)[0]
        if address not in addresses:
            addresses.append(address)
    return addresses


def non_public_kind(address: IPAddress) -> str | None:
    """Why ``address`` is not a public internet address (``"loopback"``, ``"private-network"``...), or None."""
    if isinstance(address, ipaddress.IPv6Address):
        for embedded in (address.ipv4_mapped, address.sixtofour, address.teredo[1] if address.teredo else None):
            if embedded is not None and (kind := non_public_kind(embedded)):
                return kind
    if address.is_loopback:
        return "loopback"
    if address.is_link_local:
        return "link-local"
    if address.is_unspecified:
        return "unspecified"
    if address.is_multicast:
        return "multicast"
    if address.is_private:
        return "private-network"
    if not address.is_global or address.is_reserved:
        return "reserved (non-public)"
    return None


def address_phrase(kind: str) -> str:
    """``kind`` (of :func:`non_public_kind`) as a noun phrase with its article: ``an unspecified address``."""
    return f"{'an' if kind.startswith(('a', 'e', 'i', 'o', 'u')) else 'a'} {kind} address"


def split_url(url: str) -> tuple[str, str, int]:
    """The scheme, host and port of an http(s) URL; raise ``BlockedURL`` for any other kind."""
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError as error:
        raise BlockedURL(f"not a valid URL: {url!r} ({error})") from error
    scheme = parts.scheme.lower()
    if scheme not in ALLOWED_SCHEMES:
        shown = f"{scheme}:" if scheme else "a URL without a scheme"
        raise BlockedURL(f"only http and https URLs can be opened, not {shown} ({url!r})")
    host = parts.hostname
    if not host:
        raise BlockedURL(f"the URL has no host: {url!r}")
    return scheme, host, port or (443 if scheme == "https" else 80)


class AddressGuard:
    """Decides which hosts ``open`` may connect to (thread-safe, no state)."""

    def __init__(self, *, allow_private: bool = False, resolver: Resolver | None = None) -> None:
        self.allow_private = allow_private
        self.resolver: Resolver = resolver or system_resolver

    def vet(self, host: str, port: int) -> list[str]:
        """The addresses of ``host`` that may be dialled; raise ``BlockedURL`` when any is not allowed."""
        try:
            addresses = [ipaddress.ip_address(host.strip("[]"))]
        except ValueError:
            try:
                addresses = [ipaddress.ip_address(text) for text in self.resolver(host, port)]
            except ValueError as error:
                raise BlockedURL(f"the host name {host!r} resolved to something that is not an address") from error
        if not addresses:
            raise BlockedURL(f"the host name {host!r} could not be resolved (no addresses)")
        if not self.allow_private:
            for address in addresses:
                if kind := non_public_kind(address):
                    if str(address) == host.strip("[]"):
                        what = f"{address} is {address_phrase(kind)}"
                    else:
                        what = f"{host!r} resolves to {address}, which is {address_phrase(kind)}"
                    raise BlockedURL(
                        f"refused: {what}, and this browser only opens public internet addresses"
                        " (the config's [tools.browser] allow_private = true allows them)"
                    )
        return [str(address) for address in addresses]

    def check_url(self, url: str) -> None:
        """Raise ``BlockedURL`` unless ``url`` is http(s) and its host is allowed."""
        _scheme, host, port = split_url(url)
        self.vet(host, port)


class GuardedNetwork(httpcore.NetworkBackend):
    """A network backend that dials only addresses the guard allowed, for the host asked for."""

    def __init__(self, guard: AddressGuard, inner: httpcore.NetworkBackend | None = None) -> None:
        self.guard = guard
        self.inner = inner or httpcore.SyncBackend()

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.NetworkStream:
        """Resolve and check ``host``, then connect to the first of its addresses that answers."""
        last: Exception | None = None
        for address in self.guard.vet(host, port):
            try:
                return self.inner.connect_tcp(address, port, timeout, local_address, socket_options)
            except httpcore.ConnectError as error:
                last = error
        raise last or httpcore.ConnectError(f"no address of {host} could be reached")

    def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.NetworkStream:
        """Never: the browser speaks only TCP."""
        raise BlockedURL("unix sockets cannot be opened")

    def sleep(self, seconds: float) -> None:
        """Sleep as the inner backend does."""
        self.inner.sleep(seconds)


@contextmanager
def _httpx_errors(request: httpx.Request) -> Iterator[None]:
    """Raise httpcore's errors as httpx's error of the same name (``ReadTimeout``, ``ConnectError``...)."""
    try:
        yield
    except httpcore.TimeoutException as error:
        kind = getattr(httpx, type(error).__name__, httpx.TimeoutException)
        raise kind(str(error) or type(error).__name__, request=request) from error
    except (httpcore.NetworkError, httpcore.ProtocolError, httpcore.UnsupportedProtocol) as error:
        kind = getattr(httpx, type(error).__name__, httpx.TransportError)
        raise kind(str(error) or type(error).__name__, request=request) from error


class _Body(httpx.SyncByteStream):
    def __init__(self, response: httpcore.Response, request: httpx.Request) -> None:
        self._response = response
        self._request = request

    def __iter__(self) -> Iterator[bytes]:
        with _httpx_errors(self._request):
            yield from self._response.iter_stream()

    def close(self) -> None:
        self._response.close()


class GuardedTransport(httpx.BaseTransport):
    """An httpx transport whose every connection goes through a ``GuardedNetwork``."""

    def __init__(self, network: GuardedNetwork, ssl_context: ssl.SSLContext | None = None) -> None:
        self._pool = httpcore.ConnectionPool(
            ssl_context=ssl_context or httpx.create_ssl_context(),
            network_backend=network,
            max_connections=8,
            keepalive_expiry=30.0,
        )

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        """Send ``request`` through the guarded pool."""
        url = request.url
        core_request = httpcore.Request(
            method=request.method,
            url=httpcore.URL(scheme=url.raw_scheme, host=url.raw_host, port=url.port, target=url.raw_path),
            headers=request.headers.raw,
            content=request.stream,
            extensions=request.extensions,
        )
        with _httpx_errors(request):
            response = self._pool.handle_request(core_request)
        return httpx.Response(
            status_code=response.status,
            headers=response.headers,
            stream=_Body(response, request),
            extensions=response.extensions,
        )

    def close(self) -> None:
        """Close every pooled connection."""
        self._pool.close()
