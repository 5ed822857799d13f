"""Fetch one page for ``open``: redirects followed by hand and checked, a size cap, a total deadline.

``Fetcher.fetch`` returns the body of an HTML or text page, or raises ``FetchError`` whose message is
one line the model can read (the address was refused, HTTP 404, too large, a redirect loop, timed
out, not a text page...). The guarded transport (``guard``) dials only allowed addresses.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import Literal
from urllib.parse import urljoin

import httpcore
import httpx

from harmony_chat.tools.browser.config import BrowserConfig
from harmony_chat.tools.browser.guard import AddressGuard, BlockedURL, GuardedNetwork, GuardedTransport

REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})
HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})
TEXT_TYPES = frozenset(
    {
        "application/json",
        "application/xml",
        "application/javascript",
        "application/x-javascript",
        "application/ecmascript",
        "application/x-yaml",
        "application/yaml",
        "application/toml",
        "application/x-sh",
        "application/rss+xml",
        "application/atom+xml",
    }
)
SNIFF_BYTES = 4096
BodyKind = Literal["html", "text"]
"""How a downloaded body is read: as HTML, or as plain text."""


class FetchError(Exception):
    """``open`` could not show the page; the message is one line for the model."""

    def __init__(self, message: str, *, timed_out: bool = False) -> None:
        super().__init__(message)
        self.timed_out = timed_out


@dataclass(frozen=True)
class Fetched:
    """A page's body as downloaded."""

    url: str
    """The URL the body came from (after redirects)."""
    kind: BodyKind
    media_type: str
    """The media type the server gave (``text/html``), or ``""``."""
    charset: str | None
    body: bytes
    redirects: list[str] = field(default_factory=list)
    """The URLs redirected through, in order (not including ``url``)."""


def media_type_of(content_type: str | None) -> tuple[str, str | None]:
    """Split a Content-Type header into its lower-case media type and its charset (or None)."""
    if not content_type:
        return "", None
    media, _, params = content_type.partition(";")
    charset = None
    for param in params.split(";"):
        key, _, value = param.strip().partition("=")
        if key.strip().lower() == "charset" and value.strip():
            charset = value.strip().strip("\"'")
    return media.strip().lower(), charset


def _kind_from_type(media: str) -> BodyKind | None:
    if media in HTML_TYPES:
        return "html"
    if media.startswith("text/") or media in TEXT_TYPES or media.endswith(("+json", "+xml")):
        return "text"
    return None


def sniff_kind(media: str, head: bytes) -> BodyKind | None:
    """The kind of page from its media type and first bytes: ``html``, ``text``, or None for binary."""
    if b"\x00" in head[:SNIFF_BYTES]:
        return None
    declared = _kind_from_type(media)
    if declared is not None:
        return declared
    if media and media not in ("application/octet-stream", "binary/octet-stream"):
        return None
    start = head[:SNIFF_BYTES].lstrip().lower()
    if start.startswith((b"<!doctype html", b"<html")) or b"<body" in start:
        return "html"
    try:
        head[:SNIFF_BYTES].decode("utf-8")
    except UnicodeDecodeError as error:
        if error.start < len(head[:SNIFF_BYTES]) - 4:  # not just a character cut at the end
            return None
    return "text"


def _size(count: int) -> str:
    return f"{count / (1024 * 1024):.1f} MiB" if count >= 1024 * 1024 else f"{count / 1024:.0f} KiB"


class Fetcher:
    """Downloads pages for one browser; thread-safe; ``close`` releases its connections."""

    def __init__(
        self,
        config: BrowserConfig,
        guard: AddressGuard,
        *,
        network: httpcore.NetworkBackend | None = None,
    ) -> None:
        self.config = config
        self.guard = guard
        transport = GuardedTransport(GuardedNetwork(guard, network))
        self._client = httpx.Client(
            transport=transport,
            follow_redirects=False,
            trust_env=False,  # no proxies or .netrc from the environment: they would bypass the checks
            headers={
                "User-Agent": config.user_agent,
                "Accept": "text/html,application/xhtml+xml,text/plain;q=0.9,*/*;q=0.5",
            },
        )

    def fetch(self, url: str, *, deadline: float, stop: threading.Event | None = None) -> Fetched:
        """Download ``url`` (following at most ``max_redirects`` redirects); raise ``FetchError``."""
        seen = [url]
        current = url
        for _hop in range(self.config.max_redirects + 1):
            try:
                self.guard.check_url(current)
                target = self._get(current, deadline, stop)
            except BlockedURL as error:
                raise FetchError(str(error)) from error
            except httpx.TimeoutException as error:
                raise FetchError(f"timed out fetching {current} (the server was too slow)", timed_out=True) from error
            except httpx.HTTPError as error:
                raise FetchError(f"could not fetch {current}: {_reason(error)}") from error
            if isinstance(target, Fetched):
                return Fetched(target.url, target.kind, target.media_type, target.charset, target.body, seen[1:])
            if target in seen:
                loop = " → ".join([*seen[seen.index(target) :], target])
                raise FetchError(f"redirect loop: {loop}")
            seen.append(target)
            current = target
        raise FetchError(f"too many redirects (more than {self.config.max_redirects}), last to {current}")

    def _timeout(self, deadline: float) -> httpx.Timeout:
        left = deadline - time.monotonic()
        if left <= 0:
            raise httpx.TimeoutException("deadline passed")
        return httpx.Timeout(
            connect=min(self.config.connect_timeout_s, left),
            read=min(self.config.read_timeout_s, left),
            write=min(self.config.read_timeout_s, left),
            pool=min(self.config.connect_timeout_s, left),
        )

    def _get(self, url: str, deadline: float, stop: threading.Event | None) -> Fetched | str:
        """One request: the page, or the URL a redirect points to."""
        with self._client.stream("GET", url, timeout=self._timeout(deadline)) as response:
            if response.status_code in REDIRECT_STATUSES and "location" in response.headers:
                return urljoin(str(response.url), response.headers["location"].strip())
            if response.status_code >= 400:
                phrase = f" {response.reason_phrase}" if response.reason_phrase else ""
                raise FetchError(f"HTTP {response.status_code}{phrase} for {url}")
            if response.status_code >= 300:
                raise FetchError(f"HTTP {response.status_code} without a usable Location header for {url}")
            media, charset = media_type_of(response.headers.get("content-type"))
            limit = self.config.max_page_bytes
            declared = response.headers.get("content-length", "")
            if declared.isdigit() and int(declared) > limit:
                raise FetchError(f"the page is too large: {_size(int(declared))}, the limit is {_size(limit)} ({url})")
            if media and _kind_from_type(media) is None and media not in ("application/octet-stream", ""):
                raise FetchError(_not_text(media, url))
            body = bytearray()
            for chunk in response.iter_bytes():
                body += chunk
                if len(body) > limit:
                    raise FetchError(f"the page is too large: over {_size(limit)}, the limit ({url})")
                if time.monotonic() > deadline:
                    raise httpx.ReadTimeout("deadline passed", request=response.request)
                if stop is not None and stop.is_set():
                    raise FetchError("stopped")
            kind = sniff_kind(media, bytes(body[:SNIFF_BYTES]))
            if kind is None:
                raise FetchError(_not_text(media or "binary data", url))
            return Fetched(str(response.url), kind, media, charset, bytes(body))

    def close(self) -> None:
        """Close the connections (safe to call twice)."""
        self._client.close()


def _not_text(media: str, url: str) -> str:
    return f"refused: {url} is {media}, not an HTML or text page; the browser shows only HTML and plain text"


def _reason(error: httpx.HTTPError) -> str:
    text = str(error).strip() or type(error).__name__
    return text.splitlines()[0][:300]
