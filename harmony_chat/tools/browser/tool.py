"""The ``browser`` built-in tool: gpt-oss's ``search`` / ``open`` / ``find``, for one conversation.

``BrowserTool.run`` blocks (call it from a worker thread), never raises, and returns a
``ToolResult`` whose text is what the model reads: a line-numbered page view under a cursor, or one
line saying what went wrong. Network work runs in a helper thread so that ``should_stop`` and the
time limit are honoured at once; pages are kept per conversation so the model can scroll, follow
links by id, ``find`` and cite ``【cursor†Lx-Ly】``.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

import httpx

from harmony_chat.tools.base import ToolResult, ToolStatus
from harmony_chat.tools.browser.calls import ArgumentError, FindCall, OpenCall, SearchCall, as_url, parse_call
from harmony_chat.tools.browser.citations import PageRecord, record_of
from harmony_chat.tools.browser.config import MAX_VIEW_LINES, BrowserConfig
from harmony_chat.tools.browser.extract import extract
from harmony_chat.tools.browser.fetch import Fetcher, FetchError
from harmony_chat.tools.browser.guard import AddressGuard, Resolver
from harmony_chat.tools.browser.pages import BrowserState, Page, UsageError, find_in_page, make_page, render_view
from harmony_chat.tools.browser.pages import search_page as build_search_page
from harmony_chat.tools.browser.search import SearchError, SearchProvider, make_provider
from harmony_chat.tools.output import OUTPUT_LIMIT_BYTES, cap_output

if TYPE_CHECKING:
    import httpcore
    from openai_harmony import ToolNamespaceConfig

POLL_S = 0.05


@dataclass(frozen=True)
class Visit:
    """A search made or a page opened in this conversation (the TUI lists them in the turn)."""

    kind: Literal["search", "open"]
    target: str
    """The query, or the URL asked for."""
    ok: bool
    title: str = ""
    url: str = ""
    """For ``open``: the URL the page came from (after redirects)."""
    note: str = ""
    """Why it failed, or how it went (``3 results``, ``redirected from ...``)."""
    cursor: int | None = None


@dataclass(frozen=True)
class CallPreview:
    """What a call would do, for the approval dialog."""

    text: str
    """One line: ``search the web (SearXNG) for "x"``, ``open https://...``, ``scroll [2] to line 40``."""
    network: bool
    """Whether it reaches the network (scrolling and ``find`` do not)."""
    url: str | None = None


class _Work:
    """Network work started by ``run``: a page or an error, filled in by a helper thread."""

    def __init__(self) -> None:
        self.done = threading.Event()
        self.stop = threading.Event()
        self.page: Page | None = None
        self.error = ""
        self.timed_out = False
        self.note = ""


class BrowserTool:
    """gpt-oss's browser for one conversation; thread-safe, one call at a time."""

    def __init__(
        self,
        config: BrowserConfig | None = None,
        *,
        resolver: Resolver | None = None,
        network: httpcore.NetworkBackend | None = None,
        search_provider: SearchProvider | None = None,
        output_limit_bytes: int = OUTPUT_LIMIT_BYTES,
    ) -> None:
        self.config = config or BrowserConfig()
        self.guard = AddressGuard(allow_private=self.config.allow_private, resolver=resolver)
        self._fetcher = Fetcher(self.config, self.guard, network=network)
        self._search_client = httpx.Client(trust_env=False, headers={"User-Agent": self.config.user_agent})
        self._provider_error = ""
        self.provider: SearchProvider | None = search_provider
        if search_provider is None:
            try:
                self.provider = make_provider(self.config)
            except ValueError as error:
                self._provider_error = f"search is not available: {error}"
        self.output_limit_bytes = output_limit_bytes
        self._state = BrowserState()
        self._visits: list[Visit] = []
        self._lock = threading.Lock()
        """Guards the pages and visits: held only for moments, so ``visited()`` never waits on the network."""
        self._call_lock = threading.Lock()
        """One call at a time."""
        self._closed = False
        self._active: _Work | None = None

    def namespace(self) -> ToolNamespaceConfig:
        """The ``browser`` tool as the system message declares it."""
        from openai_harmony import ToolNamespaceConfig

        return ToolNamespaceConfig.browser()

    @staticmethod
    def handles(recipient: str) -> bool:
        """True for ``browser.<function>`` recipients (unknown functions get an error result)."""
        return recipient.strip().startswith("browser.")

    def safety_note(self) -> str:
        """What ``open`` may reach, in one line (for the approval dialog)."""
        reach = (
            "any address, loopback and private networks included (allow_private = true)"
            if self.config.allow_private
            else "public internet addresses only"
        )
        return f"The browser fetches over http(s) from {reach}; pages up to {self.config.max_page_bytes:,} bytes."

    def reset(self) -> None:
        """Forget every page, cursor and visit (a new conversation); waits for a call in progress."""
        with self._call_lock, self._lock:
            self._state = BrowserState()
            self._visits.clear()

    def visited(self) -> list[Visit]:
        """Every search and page opened in this conversation, oldest first."""
        with self._lock:
            return list(self._visits)

    def sources(self) -> dict[int, PageRecord]:
        """The pages under each cursor, for ``citations.find_citations``."""
        with self._lock:
            return {cursor: record_of(page) for cursor, page in enumerate(self._state.pages)}

    def preview(self, recipient: str, arguments: str) -> CallPreview:
        """What the call would do, in one line (for approval); never raises."""
        try:
            call = parse_call(recipient, arguments)
        except ArgumentError as error:
            return CallPreview(f"{recipient.strip()}: {error}", False)
        if isinstance(call, SearchCall):
            label = self.provider.label if self.provider else "no provider configured"
            return CallPreview(f"search the web ({label}) for {call.query!r}", True)
        if isinstance(call, FindCall):
            return CallPreview(f"find {call.pattern!r} on page [{self._cursor_shown(call.cursor)}]", False)
        with self._lock:
            try:
                url = self._target(call)
            except UsageError as error:
                return CallPreview(f"browser.open: {error}", False)
            cached = url is not None and isinstance(call.id, int) and url in self._state.fetched
        if url is None:
            return CallPreview(f"scroll page [{self._cursor_shown(call.cursor)}] to line {max(call.loc, 0)}", False)
        return CallPreview(f"open {url}" + (" (already fetched)" if cached else ""), not cached, url)

    def _cursor_shown(self, cursor: int) -> int:
        return self._state.current if cursor < 0 else cursor

    def run(self, recipient: str, arguments: str, *, timeout_s: float, should_stop: Callable[[], bool]) -> ToolResult:
        """Run one browser call and block until it ends; never raises."""
        started = time.monotonic()
        try:
            with self._call_lock:
                if self._closed:
                    return ToolResult("[the browser tool is closed]", "failed")
                text, status = self._run(recipient, arguments, started + timeout_s, should_stop)
        except Exception as error:  # noqa: BLE001 - whatever breaks, the model gets one line
            text, status = f"Error: the browser failed unexpectedly ({type(error).__name__}: {error})", "failed"
        capped = cap_output(text, self.output_limit_bytes)
        return ToolResult(capped.text, status, capped.truncated, time.monotonic() - started)

    def _run(
        self, recipient: str, arguments: str, deadline: float, should_stop: Callable[[], bool]
    ) -> tuple[str, ToolStatus]:
        try:
            call = parse_call(recipient, arguments)
            if isinstance(call, SearchCall):
                return self._search(call, deadline, should_stop)
            if isinstance(call, FindCall):
                return self._find(call)
            return self._open(call, deadline, should_stop)
        except (ArgumentError, UsageError) as error:
            return f"Error: {error}", "failed"

    def _show(self, page: Page, loc: int = 0, num_lines: int = -1) -> str:
        """Render ``page``'s view under the next cursor and push it (nothing is pushed if ``loc`` is wrong)."""
        cursor = self._state.current + 1
        text = render_view(page, cursor, loc, num_lines, view_chars=self.config.view_chars, max_lines=MAX_VIEW_LINES)
        with self._lock:
            self._state.push(page)
        return text

    def _record(self, visit: Visit) -> None:
        with self._lock:
            self._visits.append(visit)

    def _wait(
        self, work: _Work, task: Callable[[_Work], None], deadline: float, should_stop: Callable[[], bool]
    ) -> ToolStatus | None:
        """Run ``task`` in a helper thread; None when it finished, else ``timeout`` / ``cancelled``."""

        def body() -> None:
            try:
                task(work)
            except Exception as error:  # noqa: BLE001 - reported to the model as one line
                work.error = f"{type(error).__name__}: {error}"
            finally:
                work.done.set()

        self._active = work
        threading.Thread(target=body, name="browser-fetch", daemon=True).start()
        try:
            while not work.done.wait(POLL_S):
                if should_stop() or self._closed:
                    work.stop.set()
                    return "cancelled"
                if time.monotonic() > deadline:
                    work.stop.set()
                    return "timeout"
            return None
        finally:
            self._active = None

    def _search(self, call: SearchCall, deadline: float, should_stop: Callable[[], bool]) -> tuple[str, ToolStatus]:
        provider = self.provider
        if provider is None:
            self._record(Visit("search", call.query, False, note=self._provider_error))
            return f"Error: {self._provider_error}", "failed"
        count = min(call.topn or self.config.max_search_results, self.config.max_search_results)
        limit = min(self.config.search_timeout_s, max(deadline - time.monotonic(), 0.1))

        def task(work: _Work) -> None:
            try:
                hits = provider.search(self._search_client, call.query, count, limit)
            except SearchError as error:
                work.error = str(error)
                return
            except httpx.TimeoutException:
                work.error, work.timed_out = f"{provider.label} did not answer within {limit:g} s", True
                return
            except httpx.HTTPError as error:
                work.error = f"could not reach {provider.label}: {str(error).strip() or type(error).__name__}"
                return
            rows = [(hit.title, hit.url, hit.snippet) for hit in hits]
            work.page = build_search_page(call.query, provider.label, rows, self.config.line_width)
            work.note = f"{len(hits)} result{'s' if len(hits) != 1 else ''}"

        work = _Work()
        ended = self._wait(work, task, min(deadline, time.monotonic() + limit + 1.0), should_stop)
        if ended is not None:
            what = "timed out" if ended == "timeout" else "was stopped"
            self._record(Visit("search", call.query, False, note=what))
            return f"Error: the search for {call.query!r} {what}", ended
        if work.page is None:
            self._record(Visit("search", call.query, False, note=work.error))
            return f"Error during search for {call.query!r}: {work.error}", "timeout" if work.timed_out else "failed"
        text = self._show(work.page)
        self._record(Visit("search", call.query, True, note=work.note, cursor=self._state.current))
        return text, "done"

    def _target(self, call: OpenCall) -> str | None:
        """The URL an ``open`` call fetches, or None when it scrolls a page already shown."""
        if isinstance(call.id, str):
            return as_url(call.id)
        if call.id < 0:
            self._state.page(call.cursor)
            return None
        page = self._state.page(call.cursor)
        link = page.links.get(call.id)
        if link is None:
            raise UsageError(f"Invalid link id `{call.id}` on page [{self._cursor_shown(call.cursor)}].")
        return link.url

    def _open(self, call: OpenCall, deadline: float, should_stop: Callable[[], bool]) -> tuple[str, ToolStatus]:
        url = self._target(call)
        if url is None:
            page = self._state.page(call.cursor)
            return self._show(page, max(call.loc, 0), call.num_lines), "done"
        loc = call.loc
        if loc < 0 and isinstance(call.id, int):
            line = self._state.page(call.cursor).links[call.id].line
            loc = max(line - 4, 0) if line is not None else 0
        cached = None if isinstance(call.id, str) or call.view_source else self._state.fetched.get(url)
        if cached is not None:
            text = self._show(cached, max(loc, 0), call.num_lines)
            self._record(Visit("open", url, True, cached.title, cached.url, "shown again", self._state.current))
            return text, "done"
        limit = min(self.config.fetch_timeout_s, max(deadline - time.monotonic(), 0.1))

        def task(work: _Work) -> None:
            try:
                fetched = self._fetcher.fetch(url, deadline=time.monotonic() + limit, stop=work.stop)
            except FetchError as error:
                work.error, work.timed_out = str(error), error.timed_out
                return
            extracted = extract(fetched, view_source=call.view_source)
            work.page = make_page(fetched.url, extracted.title, extracted.text, extracted.links, self.config.line_width)
            if fetched.redirects:
                work.note = "redirected to " + fetched.url

        work = _Work()
        ended = self._wait(work, task, min(deadline, time.monotonic() + limit + 1.0), should_stop)
        if ended is not None:
            what = f"timed out after {limit:g} s" if ended == "timeout" else "was stopped"
            self._record(Visit("open", url, False, note=what))
            return f"Error fetching URL `{url}`: {what}", ended
        fetched = work.page
        if fetched is None:
            self._record(Visit("open", url, False, note=work.error))
            return f"Error fetching URL `{url}`: {work.error}", "timeout" if work.timed_out else "failed"
        if not call.view_source:
            with self._lock:
                self._state.fetched[url] = self._state.fetched[fetched.url] = fetched
        text = self._show(fetched, max(loc, 0), call.num_lines)
        self._record(Visit("open", url, True, fetched.title, fetched.url, work.note, self._state.current))
        return text, "done"

    def _find(self, call: FindCall) -> tuple[str, ToolStatus]:
        page = self._state.page(call.cursor)
        if page.kind != "page":
            raise UsageError("Cannot run `find` on search results page or find results page")
        return self._show(find_in_page(page, call.pattern)), "done"

    def close(self) -> None:
        """Stop a call in progress and close every connection; safe to call twice, from any thread."""
        self._closed = True
        work = self._active
        if work is not None:
            work.stop.set()
        self._fetcher.close()
        self._search_client.close()
