"""Search providers for ``browser.search``: a SearXNG instance, Exa or You.com.

Each maps its API's answer to ``WebSearchHit`` (title, URL, snippet). The request and response shapes
follow each service's public API documentation:

- SearXNG: ``GET {url}/search?q=...&format=json`` (the instance must enable the ``json`` format);
  ``results[]`` with ``url``, ``title``, ``content``. No key.
- Exa: ``POST https://api.exa.ai/search`` with header ``x-api-key`` and
  ``{"query", "numResults", "contents": {"highlights": ...}}``; ``results[]`` with ``url``,
  ``title`` (may be null), ``highlights[]``, ``summary``, ``text``. Key: ``EXA_API_KEY``.
- You.com: ``GET https://ydc-index.io/v1/search?query=...&count=N`` with header ``X-API-Key``;
  ``results.web[]`` (``url``, ``title``, ``description``, ``snippets[]``) and ``results.news[]``.
  Key: ``YDC_API_KEY``.

The configured search endpoint is the user's own choice, so it is not subject to ``open``'s
public-address rule (a self-hosted SearXNG usually listens on loopback).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import Any, Protocol

import httpx

from harmony_chat.tools.browser.config import BrowserConfig

EXA_URL = "https://api.exa.ai"
YOU_URL = "https://ydc-index.io"
EXA_KEY_VARIABLE = "EXA_API_KEY"
YOU_KEY_VARIABLE = "YDC_API_KEY"


class SearchError(Exception):
    """The search failed; the message is one line for the model (and the user)."""


@dataclass(frozen=True)
class WebSearchHit:
    """One search result."""

    title: str
    url: str
    snippet: str = ""


class SearchProvider(Protocol):
    """A search service."""

    @property
    def label(self) -> str:
        """The provider's name as shown to the model and the user (``SearXNG``)."""
        ...

    def search(self, client: httpx.Client, query: str, count: int, timeout: float) -> list[WebSearchHit]:
        """Up to ``count`` results for ``query``; raise ``SearchError`` (or ``httpx.HTTPError``)."""
        ...


def _text(value: object) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return " … ".join(item for item in value if isinstance(item, str))
    return ""


def _hits(items: object, snippet_keys: tuple[str, ...]) -> list[WebSearchHit]:
    hits: list[WebSearchHit] = []
    for item in items if isinstance(items, list) else []:
        if not isinstance(item, dict):
            continue
        url = item.get("url")
        if not isinstance(url, str) or not url.startswith(("http://", "https://")):
            continue
        snippet = next((text for key in snippet_keys if (text := _text(item.get(key))).strip()), "")
        hits.append(WebSearchHit(_text(item.get("title")).strip() or url, url, snippet))
    return hits


def _json(response: httpx.Response, limit: int, label: str, secret: str = "") -> Any:
    """The JSON body of a provider's answer, or ``SearchError`` with the status and a short reason."""
    body = response.read()
    if len(body) > limit:
        raise SearchError(f"{label} sent more than {limit:,} bytes")
    if response.status_code != 200:
        detail = body[:300].decode("utf-8", errors="replace").replace("\n", " ").strip()
        if secret:
            detail = detail.replace(secret, "***")
        raise SearchError(f"{label} answered HTTP {response.status_code}" + (f": {detail}" if detail else ""))
    try:
        return json.loads(body)
    except ValueError as error:
        raise SearchError(f"{label} did not answer with JSON ({error})") from error


def _key(variable: str, label: str) -> str:
    key = os.environ.get(variable, "").strip()
    if not key:
        raise SearchError(f"{label} needs an API key: set the environment variable {variable}")
    return key


@dataclass(frozen=True)
class SearxngSearch:
    """A SearXNG instance's JSON API."""

    url: str
    max_bytes: int
    label: str = "SearXNG"

    def search(self, client: httpx.Client, query: str, count: int, timeout: float) -> list[WebSearchHit]:
        """``GET {url}/search?q=...&format=json``."""
        endpoint = self.url.rstrip("/") + "/search"
        params = {"q": query, "format": "json", "pageno": "1"}
        with client.stream("GET", endpoint, params=params, timeout=timeout) as response:
            if response.status_code == 403:
                raise SearchError(
                    "SearXNG refused the JSON format (HTTP 403): enable `json` under search.formats"
                    " in the instance's settings.yml"
                )
            data = _json(response, self.max_bytes, self.label)
        return _hits(data.get("results") if isinstance(data, dict) else None, ("content",))[:count]


@dataclass(frozen=True)
class ExaSearch:
    """Exa's search API (``EXA_API_KEY``)."""

    max_bytes: int
    url: str = EXA_URL
    label: str = "Exa"

    def search(self, client: httpx.Client, query: str, count: int, timeout: float) -> list[WebSearchHit]:
        """``POST {url}/search`` with highlights as snippets."""
        key = _key(EXA_KEY_VARIABLE, self.label)
        payload = {"query": query, "numResults": count, "contents": {"highlights": {"maxCharacters": 600}}}
        headers = {"x-api-key": key, "Content-Type": "application/json"}
        endpoint = self.url.rstrip("/") + "/search"
        with client.stream("POST", endpoint, json=payload, headers=headers, timeout=timeout) as response:
            data = _json(response, self.max_bytes, self.label, key)
        results = data.get("results") if isinstance(data, dict) else None
        return _hits(results, ("highlights", "summary", "text"))[:count]


@dataclass(frozen=True)
class YouSearch:
    """You.com's search API (``YDC_API_KEY``): web results, then news."""

    max_bytes: int
    url: str = YOU_URL
    label: str = "You.com"

    def search(self, client: httpx.Client, query: str, count: int, timeout: float) -> list[WebSearchHit]:
        """``GET {url}/v1/search?query=...&count=N``."""
        key = _key(YOU_KEY_VARIABLE, self.label)
        endpoint = self.url.rstrip("/") + "/v1/search"
        params = {"query": query, "count": str(count)}
        with client.stream("GET", endpoint, params=params, headers={"X-API-Key": key}, timeout=timeout) as response:
            data = _json(response, self.max_bytes, self.label, key)
        results = data.get("results") if isinstance(data, dict) else None
        sections = results if isinstance(results, dict) else {}
        web = _hits(sections.get("web"), ("snippets", "description"))
        news = _hits(sections.get("news"), ("description", "snippets"))
        return (web + news)[:count]


def make_provider(config: BrowserConfig) -> SearchProvider:
    """The provider ``config`` names; raise ``ValueError`` when SearXNG has no ``url``."""
    if config.provider == "searxng":
        if not config.url:
            raise ValueError("the SearXNG search provider needs `url` in [tools.browser]")
        return SearxngSearch(config.url, config.max_search_bytes)
    if config.provider == "exa":
        return ExaSearch(config.max_search_bytes, config.url or EXA_URL)
    if config.provider == "you":
        return YouSearch(config.max_search_bytes, config.url or YOU_URL)
    raise ValueError(f"unknown search provider {config.provider!r}")
