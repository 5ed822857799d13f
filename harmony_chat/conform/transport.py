"""How the checks reach a server: one request (a :class:`Probe`) in, one :class:`Reply` out.

:class:`HttpTransport` talks to a live server with httpx (raw JSON, so fields no client library
knows, like ``reasoning_content``, stay visible), with a time limit on every request and a cap on
what a reply may hold. :class:`RecordingTransport` keeps what a live run saw, and
:class:`ReplayTransport` answers from such a recording, so the same checks run on recorded
servers. Nothing here judges a reply.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import urlsplit

import httpx

from harmony_chat.errors import EngineAuthError, EngineUnreachableError, HarmonyChatError
from harmony_chat.private_files import write_private_text

MAX_REPLY_BYTES = 8_000_000
"""The most a reply may send before it is cut off (a server streaming forever cannot fill memory)."""
MAX_EVENTS = 20_000
"""The most stream events one reply may send."""


class ConformError(HarmonyChatError):
    """The audit cannot run (bad arguments, no model name, an unreadable recording)."""

    exit_code = 2


@dataclass(frozen=True, slots=True)
class Probe:
    """One request the checks send.

    Args:
        name: unique within a run; recordings are keyed by it.
        path: under ``/v1`` (``/chat/completions``, ``/responses``).
        body: the JSON body (None: send ``raw`` instead, or nothing for GET).
        stream: read the reply as server-sent events.
        raw: a body sent as is (a probe of how the server takes broken JSON).
        method: ``POST`` or ``GET``.
    """

    name: str
    path: str
    body: Mapping[str, Any] | None = None
    stream: bool = False
    raw: str | None = None
    method: str = "POST"


@dataclass(slots=True)
class Reply:
    """What came back for a probe.

    ``status`` is 0 when no HTTP answer came (``failure`` says why). ``data`` is the parsed JSON
    body (a streamed request's error body too), ``events`` the parsed ``data:`` objects of a
    stream in order, ``text`` the start of a body that was not JSON.
    """

    probe: str
    status: int
    data: Any = None
    events: list[Any] | None = None
    text: str = ""
    failure: str | None = None

    @property
    def ok(self) -> bool:
        """A 2xx answer that was read whole."""
        return 200 <= self.status < 300 and self.failure is None

    def summary(self) -> str:
        """A short account for evidence: status and the error message or failure."""
        if self.failure:
            return f"{self.probe}: {self.failure}"
        message = error_message(self.data)
        return f"{self.probe}: HTTP {self.status}" + (f" ({message})" if message else "")

    def to_json(self) -> dict[str, Any]:
        """The reply as a recording stores it."""
        out: dict[str, Any] = {"status": self.status}
        if self.data is not None:
            out["json"] = self.data
        if self.events is not None:
            out["events"] = self.events
        if self.text:
            out["text"] = self.text
        if self.failure:
            out["failure"] = self.failure
        return out

    @classmethod
    def from_json(cls, probe: str, stored: Mapping[str, Any]) -> Reply:
        """A reply from a recording."""
        events = stored.get("events")
        return cls(
            probe,
            int(stored.get("status", 0)),
            stored.get("json"),
            list(events) if isinstance(events, list) else None,
            str(stored.get("text", "")),
            stored.get("failure"),
        )


def error_message(data: object) -> str:
    """The message of an error body in OpenAI's shape or a flat one ('' if none)."""
    if not isinstance(data, Mapping):
        return ""
    error = data.get("error")
    if isinstance(error, Mapping) and isinstance(error.get("message"), str):
        return str(error["message"])[:200]
    if isinstance(error, str):
        return error[:200]
    message = data.get("message")
    return message[:200] if isinstance(message, str) else ""


class Transport(Protocol):
    """Sends a probe and returns the reply (never raises for what a server answers)."""

    def send(self, probe: Probe) -> Reply:
        """The reply to ``probe``."""
        ...


def api_base(url: str) -> str:
    """The ``/v1`` base of a server URL (``http://host:8000`` and ``http://host:8000/v1/`` alike).

    Raises:
        ConformError: for anything but an http(s) URL with a host.
    """
    parts = urlsplit(url.strip())
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ConformError(f"{url!r} is not an http(s) URL (for example http://127.0.0.1:8000)")
    base = url.strip().rstrip("/")
    return base if base.endswith("/v1") else base + "/v1"


class HttpTransport:
    """A live server over HTTP.

    Args:
        url: the server (its ``/v1`` is added when missing).
        api_key: sent as a bearer token.
        timeout_s: the most one request may take, stream included.
    """

    def __init__(self, url: str, api_key: str | None = None, *, timeout_s: float = 120.0) -> None:
        self.base = api_base(url)
        self.timeout_s = timeout_s
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        timeout = httpx.Timeout(timeout_s, connect=min(10.0, timeout_s))
        self._client = httpx.Client(base_url=self.base, headers=headers, timeout=timeout, follow_redirects=False)

    def close(self) -> None:
        """Close the connection pool."""
        self._client.close()

    def preflight(self) -> list[str]:
        """``GET /v1/models``: the model ids the server lists.

        Raises:
            EngineUnreachableError: nothing answers at the URL.
            EngineAuthError: the server refuses the key (401/403).
        """
        try:
            response = self._client.get("/models")
        except httpx.TransportError as error:
            raise EngineUnreachableError(f"cannot reach {self.base}: {_reason(error)}") from None
        if response.status_code in (401, 403):
            message = error_message(_json(response.content)) or response.reason_phrase
            raise EngineAuthError(
                f"{self.base} refused the request (HTTP {response.status_code}: {message}); give the key with --api-key"
            )
        data = _json(response.content) if response.status_code == 200 else None
        entries = data.get("data") if isinstance(data, Mapping) else None
        if not isinstance(entries, list):
            return []
        return [str(entry["id"]) for entry in entries if isinstance(entry, Mapping) and "id" in entry]

    def send(self, probe: Probe) -> Reply:
        """Send ``probe``; a timeout, a dropped connection or an oversized reply becomes ``failure``.

        A kept-alive connection the server closed without saying so (it answers nothing) is tried
        once more on a fresh one, as HTTP clients do; any other failure is the reply.
        """
        content: bytes | None = None
        if probe.raw is not None:
            content = probe.raw.encode()
        elif probe.body is not None:
            content = json.dumps(probe.body).encode()
        try:
            try:
                return self._exchange(probe, content)
            except _Unanswered:
                return self._exchange(probe, content)
        except _Unanswered as error:
            return Reply(probe.name, 0, failure=f"connection failed: {error}")
        except httpx.TimeoutException:
            return Reply(probe.name, 0, failure=f"no answer within {self.timeout_s:g} s")
        except httpx.TransportError as error:
            return Reply(probe.name, 0, failure=f"connection failed: {_reason(error)}")
        except _Oversized as error:
            return Reply(probe.name, 0, failure=str(error))

    def _exchange(self, probe: Probe, content: bytes | None) -> Reply:
        deadline = time.monotonic() + self.timeout_s
        headers = {"Content-Type": "application/json"} if content is not None else {}
        request = self._client.build_request(probe.method, probe.path, content=content, headers=headers)
        try:
            response = self._client.send(request, stream=True)
        except httpx.RemoteProtocolError as error:  # no status line came back at all
            raise _Unanswered(_reason(error)) from None
        try:
            if probe.stream and response.status_code == 200:
                return _read_stream(probe.name, response, deadline)
            body = _read_capped(response.iter_bytes(), deadline)
        finally:
            response.close()
        data = _json(body)
        text = "" if data is not None else body[:2000].decode("utf-8", errors="replace")
        return Reply(probe.name, response.status_code, data, text=text)


class _Oversized(Exception):
    """A reply past the size, event or time limit."""


class _Unanswered(Exception):
    """The connection closed before any reply (a kept-alive one the server had dropped)."""


def _reason(error: httpx.TransportError) -> str:
    return str(error) or type(error).__name__


def _json(body: bytes) -> Any:
    try:
        return json.loads(body)
    except ValueError:
        return None


def _read_capped(chunks: Iterator[bytes], deadline: float) -> bytes:
    body = bytearray()
    for chunk in chunks:
        body += chunk
        if len(body) > MAX_REPLY_BYTES:
            raise _Oversized(f"the reply passed {MAX_REPLY_BYTES} bytes and was cut off")
        if time.monotonic() > deadline:
            raise httpx.ReadTimeout("the reply took too long")
    return bytes(body)


def _read_stream(name: str, response: httpx.Response, deadline: float) -> Reply:
    """Parse server-sent events: each event's ``data:`` lines joined, JSON-decoded; ``[DONE]`` ends it."""
    events: list[Any] = []
    data_lines: list[str] = []
    size = 0
    failure: str | None = None
    for line in response.iter_lines():
        size += len(line) + 1
        if size > MAX_REPLY_BYTES or len(events) > MAX_EVENTS:
            raise _Oversized(f"the stream passed {MAX_REPLY_BYTES} bytes or {MAX_EVENTS} events and was cut off")
        if time.monotonic() > deadline:
            raise httpx.ReadTimeout("the stream took too long")
        if line.startswith("data:"):
            data_lines.append(line[5:].removeprefix(" "))
            continue
        if line.strip() or not data_lines:
            continue  # event:, id:, comments; or a blank line with nothing pending
        payload, data_lines = "\n".join(data_lines), []
        if payload.strip() == "[DONE]":
            break
        parsed = _json(payload.encode())
        if parsed is None:
            failure = f"a stream event is not JSON: {payload[:120]!r}"
            break
        events.append(parsed)
    else:
        if data_lines:  # the stream ended without the blank line after its last event
            parsed = _json("\n".join(data_lines).encode())
            if parsed is not None and "\n".join(data_lines).strip() != "[DONE]":
                events.append(parsed)
    return Reply(name, response.status_code, events=events, failure=failure)


@dataclass
class RecordingTransport:
    """Passes probes to ``inner`` and keeps every request and reply (``save`` writes them)."""

    inner: Transport
    exchanges: dict[str, dict[str, Any]] = field(default_factory=dict)

    def send(self, probe: Probe) -> Reply:
        """Send through ``inner`` and keep the exchange."""
        reply = self.inner.send(probe)
        request: dict[str, Any] = {"method": probe.method, "path": probe.path, "stream": probe.stream}
        if probe.body is not None:
            request["body"] = dict(probe.body)
        if probe.raw is not None:
            request["raw"] = probe.raw
        self.exchanges[probe.name] = {"request": request, **reply.to_json()}
        return reply

    def save(self, path: Path, *, server: str, model: str) -> None:
        """Write the recording (JSON) that :class:`ReplayTransport` reads, readable by its owner only."""
        recording = {"server": server, "model": model, "probes": self.exchanges}
        write_private_text(path, json.dumps(recording, indent=1, ensure_ascii=False) + "\n")


class ReplayTransport:
    """Answers from a recording: the reply stored under the probe's name, or a 'not recorded' failure."""

    def __init__(self, recording: Mapping[str, Any]) -> None:
        probes = recording.get("probes")
        if not isinstance(probes, Mapping):
            raise ConformError("the recording has no 'probes' object")
        self.server = str(recording.get("server", "recorded server"))
        self.model = str(recording.get("model", ""))
        self._probes = probes

    @classmethod
    def load(cls, path: Path) -> ReplayTransport:
        """Read a recording file.

        Raises:
            ConformError: the file cannot be read or is not a recording.
        """
        try:
            recording = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as error:
            raise ConformError(f"cannot read the recording {path}: {error}") from None
        if not isinstance(recording, Mapping):
            raise ConformError(f"{path} is not a recording (a JSON object with 'probes')")
        return cls(recording)

    def send(self, probe: Probe) -> Reply:
        """The stored reply."""
        stored = self._probes.get(probe.name)
        if not isinstance(stored, Mapping):
            return Reply(probe.name, 0, failure="not in the recording")
        return Reply.from_json(probe.name, stored)
