"""A bounded soak of ``serve`` on loopback: honest clients beside slow bodies, floods and a store pushed to its bounds.

For about twenty seconds, attackers hold connections with half headers and trickling bodies, and post
items past the store's bounds, while honest clients run chat completions, stored responses and a
conversation. Every honest request must be answered, ``/health`` must answer within a second
throughout, and everything stored for the honest clients must still be there at the end.
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from typing import Any

import httpx
from openai_harmony import HarmonyEncoding

from harmony_chat.server.app import ServerLimits
from harmony_chat.server.harmony_request import ServedModel
from harmony_chat.server.response_store import StoreLimits
from tests.server.conftest import DATE, replay, running
from tests.server.test_chat_completions import ANSWER

SOAK_S = 20.0
"""How long the attackers and the honest clients run side by side."""
KIB = 1024
HALF_HEADER = b"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Ty"
SLOW_BODY = (
    b"POST /v1/responses HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
    b"Content-Length: 100000\r\n\r\n{"
)


def _attack_connections(port: int, stop: threading.Event, payload: bytes, count: int) -> None:
    """Keep ``count`` connections that sent ``payload`` and then one byte now and then; reopen closed ones."""
    held: list[socket.socket] = []
    try:
        while not stop.is_set():
            while len(held) < count and not stop.is_set():
                with contextlib.suppress(OSError):
                    sock = socket.create_connection(("127.0.0.1", port), timeout=2)
                    sock.sendall(payload)
                    held.append(sock)
            for sock in list(held):
                try:
                    sock.sendall(b" ")
                except OSError:
                    held.remove(sock)
                    sock.close()
            stop.wait(1.0)
    finally:
        for sock in held:
            sock.close()


def _store_flood(base: str, stop: threading.Event, refused: list[int]) -> None:
    """Post items past their bound and fill a conversation past its bytes: every answer must be a 4xx."""
    with httpx.Client(timeout=10) as client:
        conversation = client.post(f"{base}/v1/conversations", json={}).json()["id"]
        url = f"{base}/v1/conversations/{conversation}/items"
        size = 40 * KIB  # past the item bound, then under it until the conversation is full
        while not stop.is_set():
            big = {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "x" * size}]}
            with contextlib.suppress(httpx.HTTPError):
                status = client.post(url, json={"items": [big]}).status_code
                if status >= 400:
                    refused.append(status)
            size = 20 * KIB if size == 40 * KIB else 40 * KIB
            stop.wait(0.05)


def test_honest_clients_are_answered_and_health_stays_quick_under_attack(encoding: HarmonyEncoding) -> None:
    served = ServedModel(replay(encoding, ANSWER), encoding, "replay-model", start_date=DATE)
    limits = ServerLimits(
        max_connections=48,
        header_timeout_s=3.0,
        store_limits=StoreLimits(item_bytes=32 * KIB, conversation_bytes=256 * KIB, store_bytes=32 * 1024 * KIB),
    )
    with running(served, limits) as server:
        port = int(server.url.rsplit(":", 1)[1])
        stop = threading.Event()
        refused: list[int] = []
        attackers = [
            threading.Thread(target=_attack_connections, args=(port, stop, HALF_HEADER, 60), daemon=True),
            threading.Thread(target=_attack_connections, args=(port, stop, SLOW_BODY, 60), daemon=True),
            threading.Thread(target=_store_flood, args=(server.url, stop, refused), daemon=True),
        ]
        for thread in attackers:
            thread.start()
        health: list[float] = []
        answered: list[int] = []
        stored: list[str] = []
        items: list[str] = []
        body: dict[str, Any] = {"model": "replay-model", "messages": [{"role": "user", "content": "2 + 2?"}]}
        deadline = time.monotonic() + SOAK_S
        with httpx.Client(timeout=10) as client:
            conversation = client.post(f"{server.url}/v1/conversations", json={}).json()["id"]
            while time.monotonic() < deadline:
                started = time.monotonic()
                health.append(
                    time.monotonic() - started
                    if client.get(f"{server.url}/health").status_code == 200
                    else float("inf")
                )
                answered.append(client.post(f"{server.url}/v1/chat/completions", json=body).status_code)
                response = client.post(f"{server.url}/v1/responses", json={"model": "replay-model", "input": "2 + 2?"})
                answered.append(response.status_code)
                if response.status_code == 200:
                    stored.append(response.json()["id"])
                item = {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "honest"}]}
                added = client.post(f"{server.url}/v1/conversations/{conversation}/items", json={"items": [item]})
                answered.append(added.status_code)
                if added.status_code == 200:
                    items.append(added.json()["data"][0]["id"])
                time.sleep(0.1)  # a person's pace, not a flood of its own
            stop.set()
            for thread in attackers:
                thread.join(10)
            kept = [client.get(f"{server.url}/v1/responses/{response_id}").status_code for response_id in stored]
            listed = client.get(f"{server.url}/v1/conversations/{conversation}/items", params={"limit": 100}).json()
    assert len(answered) >= 30 and set(answered) == {200}, sorted(set(answered))
    assert health and max(health) < 1.0, max(health)
    assert {413, 400} <= set(refused) and all(400 <= status < 500 for status in refused)  # the bounds, as 4xx
    assert kept == [200] * len(stored)
    assert {item["id"] for item in listed["data"]} >= set(items[-100:])  # nothing honest was lost
