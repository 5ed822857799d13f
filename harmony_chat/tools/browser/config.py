"""The browser's settings: which search provider, what ``open`` may reach, and its limits. No UI imports.

The config file's ``[tools.browser]`` table gives ``provider``, ``url`` and ``allow_private``; the
limits are constants with defaults that tests (and, later, the config) can change.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

ProviderName = Literal["searxng", "exa", "you"]
PROVIDERS: tuple[ProviderName, ...] = ("searxng", "exa", "you")

FETCH_TIMEOUT_S = 20.0
"""Seconds one ``open`` may take in all (connecting, every redirect, reading the body)."""
CONNECT_TIMEOUT_S = 10.0
"""Seconds to connect to one server."""
READ_TIMEOUT_S = 10.0
"""Seconds a server may stay silent while a response is read."""
SEARCH_TIMEOUT_S = 20.0
"""Seconds one ``search`` may take."""
MAX_PAGE_BYTES = 5 * 1024 * 1024
"""The most bytes ``open`` downloads for one page; a larger page is refused."""
MAX_SEARCH_BYTES = 2 * 1024 * 1024
"""The most bytes a search provider's answer may have."""
MAX_REDIRECTS = 5
"""Redirects ``open`` follows at most (each one checked like the first address)."""
MAX_SEARCH_RESULTS = 10
"""Search results shown at most (the model's ``topn`` can ask for fewer)."""
VIEW_CHARS = 4000
"""About how many characters one page view shows when the model gives no ``num_lines`` (~1000 tokens)."""
MAX_VIEW_LINES = 200
"""The most lines one page view shows, whatever ``num_lines`` asks."""
LINE_WIDTH = 80
"""Page text is wrapped to lines this wide; citations count these lines."""
USER_AGENT = "Mozilla/5.0 (compatible; harmony-chat browser tool)"
"""The User-Agent ``open`` and ``search`` send."""


@dataclass(frozen=True)
class BrowserConfig:
    """Everything the browser needs to know; the defaults are the safe ones."""

    provider: ProviderName = "searxng"
    """Search provider: ``searxng`` (``url``, no key), ``exa`` (``EXA_API_KEY``) or ``you`` (``YDC_API_KEY``)."""
    url: str | None = None
    """The SearXNG instance (``http://127.0.0.1:8888``); for Exa and You.com, another API base (tests)."""
    allow_private: bool = False
    """Let ``open`` reach loopback, private-network, link-local and other non-public addresses."""
    fetch_timeout_s: float = FETCH_TIMEOUT_S
    connect_timeout_s: float = CONNECT_TIMEOUT_S
    read_timeout_s: float = READ_TIMEOUT_S
    search_timeout_s: float = SEARCH_TIMEOUT_S
    max_page_bytes: int = MAX_PAGE_BYTES
    max_search_bytes: int = MAX_SEARCH_BYTES
    max_redirects: int = MAX_REDIRECTS
    max_search_results: int = MAX_SEARCH_RESULTS
    view_chars: int = VIEW_CHARS
    line_width: int = LINE_WIDTH
    user_agent: str = USER_AGENT

    @classmethod
    def from_options(cls, provider: str, url: str | None, allow_private: bool) -> BrowserConfig:
        """Build from the config file's ``[tools.browser]`` values; an unknown provider is a ``ValueError``."""
        if provider not in PROVIDERS:
            raise ValueError(f"unknown search provider {provider!r} (choose one of: {', '.join(PROVIDERS)})")
        name: ProviderName = provider
        return cls(provider=name, url=url, allow_private=allow_private)
