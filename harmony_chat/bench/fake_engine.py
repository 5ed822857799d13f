"""``bench --fake-engine``: a synthetic engine on loopback that streams token ids at a set pace, for ``bench --serve``.

It answers what harmony-chat asks of vLLM (``/health``, ``/version``, ``/v1/models``, ``/tokenize``
and a streamed ``POST /v1/completions`` with ``return_token_ids``) and of llama-server (``/props``
and a streamed ``POST /completion`` with ``return_tokens``; its slots are :data:`SLOTS`) the way
they do at decode:
after a set time to the first token, ``--tokens-per-event`` ids per server-sent event at
``--rate`` tokens a second per stream. Each answer is an analysis message, then the final
answer, ending in ``<|return|>`` exactly at the request's ``max_tokens`` (the stream is
``ignore_eos``-long either way), so every stream carries the same number of tokens. A prompt
whose 16-token blocks were seen before reports them as ``cached_tokens`` (vLLM's prefix cache).

It measures itself: ``GET /stats`` gives the tokens it streamed and the CPU it spent, so a
benchmark can show that the engine's own cost per token is small beside what it measures.
Events are built from bytes made once; nothing here is meant for anything but benchmarks.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import resource
import sys
from dataclasses import dataclass
from typing import IO, Any

from harmony_chat.harmony import tokens as tk

MODEL = "fake-gpt-oss"
"""The served model's name."""
CONTEXT = 131072
SLOTS = 64
"""The slots it says it has as llama-server (``/props``)."""
BLOCK = 16
"""Prompt tokens per prefix-cache block."""
REASONING_SHARE = 0.25
"""The part of each answer that is analysis."""
ANALYSIS = (
    "The user wants a long story. I should give it characters, places and a clear arc, keep the tone warm, "
    "and make sure each scene follows from the one before. "
)
ANSWER = (
    "Once upon a time, in a town by the sea, a keeper of the old lighthouse climbed the winding stairs each night "
    "to light the lamp. Ships passed safely, the town slept, and the keeper wrote down every storm in a book. "
)
MAX_REQUEST_BYTES = 16 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class FakeEngineSettings:
    """How the synthetic engine streams."""

    rate: float = 200.0
    """Tokens a second per stream."""
    tokens_per_event: int = 1
    ttft_s: float = 0.015
    """Seconds from the request to the first token (the prompt's processing)."""


class FakeEngine:
    """The synthetic engine's state: its settings, the ids it streams, its prefix cache and its counters."""

    def __init__(self, settings: FakeEngineSettings) -> None:
        from harmony_chat.demo.pocket import pocket_model_path
        from harmony_chat.harmony.vocab import load_encoding

        self.settings = settings
        self.encoding = load_encoding(fallback_gguf=pocket_model_path())
        self.analysis: list[int] = list(self.encoding.encode(ANALYSIS, allowed_special="all"))
        self.answer: list[int] = list(self.encoding.encode(ANSWER, allowed_special="all"))
        self._texts: dict[int, bytes] = {}
        self._blocks: set[int] = set()
        self.requests = 0
        self.tokens = 0
        self.disconnects = 0
        self._cpu_start = _cpu()

    def script(self, max_tokens: int) -> list[int]:
        """The ids of one answer of exactly ``max_tokens`` (analysis, then the answer, then ``<|return|>``)."""
        opening = [tk.CHANNEL, *self.encoding.encode("analysis", allowed_special="all"), tk.MESSAGE]
        switch = self.encoding.encode("<|end|><|start|>assistant<|channel|>final<|message|>", allowed_special="all")
        thinking = max(1, int(max_tokens * REASONING_SHARE))
        ids: list[int] = opening + _cycle(self.analysis, thinking) + switch
        ids += _cycle(self.answer, max(0, max_tokens - len(ids) - 1)) + [tk.RETURN]
        return ids[:max_tokens]

    def cached(self, prompt: list[int]) -> int:
        """Prompt tokens found in the prefix cache (whole blocks from the start); the prompt's blocks are added."""
        found = 0
        hit = True
        for end in range(BLOCK, len(prompt) + 1, BLOCK):
            key = hash(tuple(prompt[:end]))
            if hit and key in self._blocks:
                found = end
            else:
                hit = False
                self._blocks.add(key)
        return min(found, max(0, len(prompt) - 1))

    def text(self, token: int) -> bytes:
        """The JSON string of one token's text (made once per id)."""
        text = self._texts.get(token)
        if text is None:
            decoded = self.encoding.decode([token], errors="replace") if token < tk.FIRST_SPECIAL else ""
            text = self._texts[token] = json.dumps(decoded).encode()
        return text

    def stats(self) -> dict[str, Any]:
        """What it streamed and the CPU it spent since it started."""
        user, system = _cpu()
        return {
            "requests": self.requests,
            "tokens": self.tokens,
            "disconnects": self.disconnects,
            "cpu_user_s": round(user - self._cpu_start[0], 4),
            "cpu_system_s": round(system - self._cpu_start[1], 4),
        }

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        """Serve one connection's requests (HTTP/1.1, kept alive) until the client closes it."""
        try:
            while True:
                request = await _read_request(reader)
                if request is None:
                    return
                method, path, body, close = request
                await self._route(method, path, body, writer)
                if close:
                    return
        except (ConnectionError, asyncio.IncompleteReadError, ValueError):
            self.disconnects += 1
        finally:
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()

    async def _route(self, method: str, path: str, body: Any, writer: asyncio.StreamWriter) -> None:
        if method == "GET" and path == "/health":
            _reply(writer, 200, {})
        elif method == "GET" and path == "/version":
            _reply(writer, 200, {"version": "0.11.0"})
        elif method == "GET" and path == "/v1/models":
            _reply(
                writer, 200, {"object": "list", "data": [{"id": MODEL, "object": "model", "max_model_len": CONTEXT}]}
            )
        elif method == "GET" and path == "/stats":
            _reply(writer, 200, self.stats())
        elif method == "POST" and path == "/tokenize" and isinstance(body, dict):
            text = str(body.get("prompt", body.get("content", "")))  # vLLM's field, llama-server's
            ids = self.encoding.encode(text, allowed_special="all")
            _reply(writer, 200, {"count": len(ids), "max_model_len": CONTEXT, "tokens": ids})
        elif method == "POST" and path == "/v1/completions" and isinstance(body, dict):
            await self._stream(body, writer)
            return
        elif method == "POST" and path == "/completion" and isinstance(body, dict):
            await self._stream(body, writer, llama=True)
            return
        elif method == "GET" and path == "/props":
            settings = {"n_ctx": CONTEXT}
            _reply(writer, 200, {"total_slots": SLOTS, "default_generation_settings": settings, "model_path": MODEL})
        else:
            _reply(writer, 404, {"detail": "Not Found"})
        await writer.drain()

    async def _stream(self, body: dict[str, Any], writer: asyncio.StreamWriter, llama: bool = False) -> None:
        """Stream one completion's ids at the set pace (vLLM's ``/v1/completions``, llama-server's ``/completion``)."""
        self.requests += 1
        prompt = body.get("prompt")
        prompt = prompt if isinstance(prompt, list) else []
        asked = body.get("n_predict" if llama else "max_tokens")
        ids = self.script(asked if isinstance(asked, int) and asked > 0 else 16)
        cached = self.cached(prompt)
        settings = self.settings
        writer.write(
            b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n"
            b"cache-control: no-cache\r\n\r\n"
        )
        loop = asyncio.get_running_loop()
        due = loop.time() + settings.ttft_s
        interval = settings.tokens_per_event / settings.rate
        event = self._llama_event if llama else self._vllm_event
        for start in range(0, len(ids), settings.tokens_per_event):
            group = ids[start : start + settings.tokens_per_event]
            delay = due - loop.time()
            if delay > 0:
                await asyncio.sleep(delay)
            due += interval
            data = event(group, start + len(group), start + len(group) >= len(ids))
            writer.write(b"%x\r\n%s\r\n" % (len(data), data))
            self.tokens += len(group)
            await writer.drain()
        if llama:
            timings = {"cache_n": cached, "prompt_n": len(prompt) - cached, "predicted_n": len(ids)}
            end = {"content": "", "tokens": [], "stop": True, "stop_type": "eos", "tokens_predicted": len(ids)}
            closing = b"data: " + json.dumps({**end, "timings": timings}).encode() + b"\n\n"
        else:
            usage = {
                "prompt_tokens": len(prompt),
                "completion_tokens": len(ids),
                "total_tokens": len(prompt) + len(ids),
                "prompt_tokens_details": {"cached_tokens": cached},
            }
            closing = b"data: " + json.dumps({"id": "cmpl-fake", "choices": [], "usage": usage}).encode() + b"\n\n"
            closing += b"data: [DONE]\n\n"
        writer.write(b"%x\r\n%s\r\n0\r\n\r\n" % (len(closing), closing))
        await writer.drain()

    def _text(self, group: list[int]) -> bytes:
        return b'"' + b"".join(self.text(token)[1:-1] for token in group) + b'"'

    def _vllm_event(self, group: list[int], sent: int, last: bool) -> bytes:
        """One of vLLM's chunks (``return_token_ids``); the last says why it stopped."""
        if not last:
            finish = b'null,"stop_reason":null'
        elif group[-1] == tk.RETURN:
            finish = b'"stop","stop_reason":%d' % tk.RETURN
        else:
            finish = b'"length","stop_reason":null'
        return (
            b'data: {"id":"cmpl-fake","object":"text_completion","created":0,"model":"'
            + MODEL.encode()
            + b'","choices":[{"index":0,"text":'
            + self._text(group)
            + b',"token_ids":['
            + b",".join(b"%d" % token for token in group)
            + b'],"logprobs":null,"finish_reason":'
            + finish
            + b'}],"usage":null}\n\n'
        )

    def _llama_event(self, group: list[int], sent: int, last: bool) -> bytes:
        """One of llama-server's partial results (``return_tokens``); the closing one comes after."""
        return (
            b'data: {"index":0,"content":'
            + self._text(group)
            + b',"tokens":['
            + b",".join(b"%d" % token for token in group)
            + b'],"stop":false,"id_slot":0,"tokens_predicted":%d,"tokens_evaluated":0}\n\n' % sent
        )


def _cycle(ids: list[int], count: int) -> list[int]:
    return [ids[index % len(ids)] for index in range(count)]


def _cpu() -> tuple[float, float]:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime, usage.ru_stime


async def _read_request(reader: asyncio.StreamReader) -> tuple[str, str, Any, bool] | None:
    """One request: method, path, JSON body (None when empty), and whether the client asked to close."""
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except asyncio.IncompleteReadError:
        return None
    lines = head.decode("latin-1").split("\r\n")
    method, path, _ = (lines[0].split(" ") + ["", ""])[:3]
    headers = {name.strip().lower(): value.strip() for name, _, value in (line.partition(":") for line in lines[1:])}
    length = int(headers.get("content-length") or 0)
    if length > MAX_REQUEST_BYTES:
        raise ValueError("request too large")
    raw = await reader.readexactly(length) if length else b""
    body = json.loads(raw) if raw else None
    return method, path.split("?")[0], body, headers.get("connection", "").lower() == "close"


def _reply(writer: asyncio.StreamWriter, status: int, body: Any) -> None:
    data = json.dumps(body).encode()
    reason = b"OK" if status == 200 else b"Not Found"
    writer.write(
        b"HTTP/1.1 %d %s\r\ncontent-type: application/json\r\ncontent-length: %d\r\n\r\n%s"
        % (status, reason, len(data), data)
    )


async def start_fake_engine(settings: FakeEngineSettings, port: int = 0) -> tuple[asyncio.Server, FakeEngine]:
    """Start the engine on 127.0.0.1 at ``port`` (0: a free one); return the server and the engine."""
    engine = FakeEngine(settings)
    server = await asyncio.start_server(engine.handle, "127.0.0.1", port, limit=MAX_REQUEST_BYTES)
    return server, engine


def run_fake_engine(settings: FakeEngineSettings, port: int, out: IO[str] = sys.stdout) -> None:
    """``bench --fake-engine``: serve until Ctrl+C, then print what it streamed and its CPU per token."""
    engines: list[FakeEngine] = []

    async def serve() -> None:
        server, engine = await start_fake_engine(settings, port)
        engines.append(engine)
        bound = server.sockets[0].getsockname()[1]
        print(
            f"fake vLLM engine on http://127.0.0.1:{bound} ({settings.rate:g} tokens/s a stream, "
            f"{settings.tokens_per_event} per event, first token after {settings.ttft_s * 1000:g} ms); Ctrl+C stops it",
            file=out,
            flush=True,
        )
        async with server:
            await server.serve_forever()

    with contextlib.suppress(KeyboardInterrupt), asyncio.Runner() as runner:
        runner.run(serve())
    if engines:
        figures = engines[0].stats()
        per_token = (figures["cpu_user_s"] + figures["cpu_system_s"]) / max(1, figures["tokens"]) * 1e6
        print(
            f"{figures['tokens']} tokens in {figures['requests']} streams, {per_token:.1f} us of CPU per token",
            file=out,
        )
