"""The server's store in bytes and pages: bounded items, conversations, responses and file; pages read in SQL.

A client may post as much as its key allows: each item, each conversation, each stored response and
the whole store have a bound in bytes, reached with a clear 4xx that names it. A page of a long
conversation is read with ``LIMIT``, and the store's work runs off the event loop, so ``/health``
answers while a slow store query runs.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from openai_harmony import HarmonyEncoding

from harmony_chat.server.app import ServerLimits
from harmony_chat.server.harmony_request import ServedModel
from harmony_chat.server.response_store import ServerStore, StoredResponse, StoreFull, StoreLimits
from tests.server.conftest import DATE, replay, running
from tests.server.test_chat_completions import ANSWER

KIB = 1024


def _item(number: int, size: int = 10) -> dict[str, Any]:
    return {
        "id": f"msg_{number}",
        "type": "message",
        "role": "user",
        "content": [{"type": "input_text", "text": "x" * size}],
    }


def test_an_item_over_its_bound_is_refused_and_nothing_is_stored() -> None:
    store = ServerStore(limits=StoreLimits(item_bytes=2 * KIB))
    store.create_conversation("conv_1", {}, [_item(1)])
    with pytest.raises(StoreFull, match="over the 2,048 an item may hold") as refused:
        store.add_items("conv_1", [_item(2), _item(3, 4 * KIB)])
    assert refused.value.code == "item_too_large"
    assert [item["id"] for item in store.items("conv_1") or []] == ["msg_1"]  # all or nothing


def test_a_conversation_holds_a_bounded_number_of_bytes_and_deleting_makes_room() -> None:
    store = ServerStore(limits=StoreLimits(conversation_bytes=10 * KIB))
    store.create_conversation("conv_1", {}, [])
    for number in range(4):
        store.add_items("conv_1", [_item(number, 2 * KIB)])
    with pytest.raises(StoreFull, match="at most 10,240 bytes of items") as full:
        store.add_items("conv_1", [_item(9, 2 * KIB)])
    assert full.value.code == "conversation_full"
    assert store.delete_item("conv_1", "msg_0")
    store.add_items("conv_1", [_item(9, 2 * KIB)])  # the deleted item's bytes are free again


def test_the_whole_store_is_bounded_in_bytes() -> None:
    store = ServerStore(limits=StoreLimits(store_bytes=512 * KIB))
    store.create_conversation("conv_1", {}, [])
    with pytest.raises(StoreFull, match="the server's store is full") as full:
        for number in range(1000):
            store.add_items("conv_1", [_item(number, 8 * KIB)])
    assert full.value.code == "store_full"
    with pytest.raises(StoreFull) as response_full:
        store.put("resp_1", StoredResponse({"id": "resp_1"}, [_item(1, 64 * KIB)]))
    assert response_full.value.code == "store_full"


def test_a_stored_response_over_its_bound_is_refused() -> None:
    store = ServerStore(limits=StoreLimits(response_bytes=16 * KIB))
    store.put("resp_small", StoredResponse({"id": "resp_small"}, [_item(1)]))
    with pytest.raises(StoreFull) as refused:
        store.put("resp_big", StoredResponse({"id": "resp_big"}, [_item(2, 32 * KIB)]))
    assert refused.value.code == "response_too_large"
    assert store.get("resp_small") is not None and store.get("resp_big") is None


def test_pages_come_from_sql_in_either_order_after_an_item() -> None:
    store = ServerStore()
    store.create_conversation("conv_1", {}, [_item(number) for number in range(10)])
    ids = lambda page: [item["id"] for item in page[0]]  # noqa: E731
    newest = store.items_page("conv_1", limit=3)
    assert newest is not None and ids(newest) == ["msg_9", "msg_8", "msg_7"] and newest[1] is True
    after = store.items_page("conv_1", limit=3, after="msg_7")
    assert after is not None and ids(after) == ["msg_6", "msg_5", "msg_4"]
    oldest = store.items_page("conv_1", limit=4, after="msg_6", newest_first=False)
    assert oldest is not None and ids(oldest) == ["msg_7", "msg_8", "msg_9"] and oldest[1] is False
    assert store.items_page("conv_none", limit=3) is None
    with pytest.raises(KeyError):
        store.items_page("conv_1", limit=3, after="msg_none")


def test_a_version_1_store_is_counted_once_and_keeps_its_items(tmp_path: Path) -> None:
    path = tmp_path / "serve.sqlite3"
    db = sqlite3.connect(path)
    db.executescript(
        """
        CREATE TABLE responses (id TEXT PRIMARY KEY, used_at REAL NOT NULL, response_json TEXT NOT NULL,
            items_json TEXT NOT NULL);
        CREATE TABLE conversations (id TEXT PRIMARY KEY, created_at INTEGER NOT NULL, used_at REAL NOT NULL,
            metadata_json TEXT NOT NULL);
        CREATE TABLE conversation_items (seq INTEGER PRIMARY KEY AUTOINCREMENT, conversation_id TEXT NOT NULL
            REFERENCES conversations(id) ON DELETE CASCADE, id TEXT NOT NULL, item_json TEXT NOT NULL,
            UNIQUE (conversation_id, id));
        PRAGMA application_id = 1751348086;
        PRAGMA user_version = 1;
        """
    )
    now = time.time()
    db.execute("INSERT INTO conversations VALUES ('conv_1', 1, ?, '{}')", (now,))
    db.execute(
        "INSERT INTO conversation_items (conversation_id, id, item_json) VALUES ('conv_1', 'msg_1', ?)",
        (json.dumps(_item(1, 3000)),),
    )
    db.commit()
    db.close()
    store = ServerStore(path, limits=StoreLimits(conversation_bytes=4 * KIB))
    assert [item["id"] for item in store.items("conv_1") or []] == ["msg_1"]
    with pytest.raises(StoreFull, match="3,0"):  # the old item's bytes were counted on opening
        store.add_items("conv_1", [_item(2, 2 * KIB)])
    store.close()
    assert sqlite3.connect(path).execute("PRAGMA user_version").fetchone()[0] == 2


def _served(encoding: HarmonyEncoding) -> ServedModel:
    return ServedModel(replay(encoding, ANSWER), encoding, "replay-model", start_date=DATE)


def test_the_api_answers_each_bound_with_a_clear_4xx(encoding: HarmonyEncoding) -> None:
    limits = ServerLimits(store_limits=StoreLimits(item_bytes=4 * KIB, conversation_bytes=12 * KIB))
    with running(_served(encoding), limits) as server:
        base = server.url + "/v1/conversations"
        conversation = httpx.post(base, json={"items": [_item(1)]}, timeout=10).json()
        items_url = f"{base}/{conversation['id']}/items"
        too_large = httpx.post(items_url, json={"items": [_item(2, 8 * KIB)]}, timeout=10)
        added = [httpx.post(items_url, json={"items": [_item(number, 3 * KIB)]}, timeout=10) for number in range(3, 6)]
        full = httpx.post(items_url, json={"items": [_item(9, 3 * KIB)]}, timeout=10)
        page = httpx.get(items_url, params={"limit": 2}, timeout=10).json()
    assert too_large.status_code == 413 and too_large.json()["error"]["code"] == "item_too_large"
    assert full.status_code == 400 and full.json()["error"]["code"] == "conversation_full"
    assert [response.status_code for response in added] == [200, 200, 200]
    newest = [response.json()["data"][0]["id"] for response in reversed(added)]
    assert [item["id"] for item in page["data"]] == newest[:2] and page["has_more"] is True


def test_a_slow_store_never_holds_up_health(encoding: HarmonyEncoding, monkeypatch: pytest.MonkeyPatch) -> None:
    """The store runs in the thread pool: a page that takes 2 s leaves ``/health`` answering at once."""
    original = ServerStore.items_page
    entered = threading.Event()

    def slow(self: ServerStore, *args: Any, **kwargs: Any) -> Any:
        entered.set()
        time.sleep(2.0)
        return original(self, *args, **kwargs)

    monkeypatch.setattr(ServerStore, "items_page", slow)
    with running(_served(encoding)) as server:
        conversation = httpx.post(server.url + "/v1/conversations", json={}, timeout=10).json()
        url = f"{server.url}/v1/conversations/{conversation['id']}/items"
        reader = threading.Thread(target=lambda: httpx.get(url, timeout=10), daemon=True)
        reader.start()
        assert entered.wait(5)
        started = time.monotonic()
        health = httpx.get(server.url + "/health", timeout=10)
        took = time.monotonic() - started
        reader.join(10)
    assert health.status_code == 200 and took < 1.0
