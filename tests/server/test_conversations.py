"""Stored responses and conversations in the server's SQLite store, through the official openai client.

A restart (a new app on the same file) keeps ``previous_response_id`` chains and conversations;
``store: false`` keeps nothing; the Conversations API answers in the shapes ``client.conversations``
reads; ``conversation`` on a response reads the conversation's items and appends its own.
"""

from __future__ import annotations

import stat
from pathlib import Path
from typing import Any

import pytest
from openai import BadRequestError, NotFoundError
from openai_harmony import HarmonyEncoding

from harmony_chat.server.app import ServerLimits
from harmony_chat.server.harmony_request import ServedModel
from harmony_chat.server.response_store import (
    MEMORY,
    ServerStore,
    StoredResponse,
    StoreError,
    default_store_path,
    store_location,
)
from tests.server.conftest import DATE, replay, running
from tests.server.test_chat_completions import AFTER_TOOL, ANSWER, CALL
from tests.server.test_responses import WEATHER

SECOND = "<|channel|>analysis<|message|>Add one.<|end|><|start|>assistant<|channel|>final<|message|>5.<|return|>"


def _served(encoding: HarmonyEncoding, *turns: str) -> tuple[Any, ServedModel]:
    backend = replay(encoding, *turns)
    return backend, ServedModel(backend, encoding, "replay-model", start_date=DATE)


def _prompt(backend: Any, encoding: HarmonyEncoding, index: int = -1) -> str:
    return str(encoding.decode(backend.prompts[index]))


def test_a_restart_keeps_response_chains_and_conversations(encoding: HarmonyEncoding, tmp_path: Path) -> None:
    path = tmp_path / "store" / "serve.sqlite3"
    _, served = _served(encoding, ANSWER)
    with running(served, ServerLimits(store_path=path)) as server:
        client = server.client()
        first = client.responses.create(model="replay-model", input="What is 2 + 2?")
        conversation = client.conversations.create(
            items=[{"type": "message", "role": "user", "content": "Remember: blue."}], metadata={"topic": "colours"}
        )
        unstored = client.responses.create(model="replay-model", input="Private?", store=False)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    backend, served = _served(encoding, SECOND)
    with running(served, ServerLimits(store_path=path)) as server:  # a new app on the same file
        client = server.client()
        assert client.responses.retrieve(first.id).output_text == "2 + 2 = 4."
        second = client.responses.create(model="replay-model", input="And plus one?", previous_response_id=first.id)
        kept = client.conversations.retrieve(conversation.id)
        items = client.conversations.items.list(conversation.id, order="asc")
        with pytest.raises(NotFoundError):
            client.responses.retrieve(unstored.id)
    assert second.output_text == "5."
    assert "<|start|>user<|message|>What is 2 + 2?<|end|>" in _prompt(backend, encoding)
    assert "final<|message|>2 + 2 = 4.<|end|><|start|>user<|message|>And plus one?" in _prompt(backend, encoding)
    assert kept.metadata == {"topic": "colours"} and kept.created_at == conversation.created_at
    assert [item.type for item in items.data] == ["message"]
    first_item: Any = items.data[0]
    assert first_item.content[0].text == "Remember: blue."


def test_the_conversations_api(encoding: HarmonyEncoding) -> None:
    _, served = _served(encoding, ANSWER)
    with running(served) as server:
        client = server.client()
        conversation = client.conversations.create(metadata={"a": "1"})
        assert conversation.object == "conversation" and conversation.id.startswith("conv_")
        added = client.conversations.items.create(
            conversation.id,
            items=[
                {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "One"}]},
                {"type": "message", "role": "assistant", "content": "Two"},
                {"type": "message", "role": "user", "content": "Three"},
            ],
        )
        assert [item.type for item in added.data] == ["message"] * 3 and added.first_id == added.data[0].id
        ids = [str(item.id) for item in added.data]
        newest = client.conversations.items.list(conversation.id, limit=2)
        assert [item.id for item in newest.data] == [ids[2], ids[1]] and newest.has_more
        every = [item.id for item in client.conversations.items.list(conversation.id, limit=1)]  # pages through
        assert every == list(reversed(ids))
        after = client.conversations.items.list(conversation.id, order="asc", after=ids[0])
        assert [item.id for item in after.data] == ids[1:] and not after.has_more
        one = client.conversations.items.retrieve(ids[1], conversation_id=conversation.id)
        assert one.type == "message" and one.role == "assistant" and one.content[0].text == "Two"  # type: ignore[union-attr]
        updated = client.conversations.update(conversation.id, metadata={"b": "2"})
        assert updated.metadata == {"b": "2"}
        left = client.conversations.items.delete(ids[0], conversation_id=conversation.id)
        assert left.id == conversation.id
        assert [item.id for item in client.conversations.items.list(conversation.id, order="asc")] == ids[1:]
        with pytest.raises(NotFoundError):
            client.conversations.items.retrieve(ids[0], conversation_id=conversation.id)
        with pytest.raises(BadRequestError) as too_many:
            client.conversations.items.create(conversation.id, items=[{"role": "user", "content": "x"}] * 21)
        with pytest.raises(BadRequestError) as include:
            client.conversations.items.list(conversation.id, include=["reasoning.encrypted_content"])
        with pytest.raises(BadRequestError) as metadata:
            client.conversations.create(metadata={"k" * 65: "v"})
        deleted = client.conversations.delete(conversation.id)
        assert (deleted.id, deleted.deleted, deleted.object) == (conversation.id, True, "conversation.deleted")
        with pytest.raises(NotFoundError):
            client.conversations.retrieve(conversation.id)
        with pytest.raises(NotFoundError):
            client.conversations.items.list(conversation.id)
    assert too_many.value.param == "items"
    assert include.value.param == "include" and "reasoning.encrypted_content" in include.value.message
    assert metadata.value.param == "metadata"


def test_a_response_in_a_conversation_reads_and_extends_it(encoding: HarmonyEncoding) -> None:
    backend, served = _served(encoding, CALL, AFTER_TOOL, SECOND)
    with running(served) as server:
        client = server.client()
        conversation = client.conversations.create(
            items=[{"type": "message", "role": "developer", "content": "Answer in English."}]
        )
        first = client.responses.create(
            model="replay-model", input="Weather in Oslo?", tools=[WEATHER], conversation=conversation.id
        )
        call = first.output[-1]
        assert call.type == "function_call" and first.conversation is not None
        assert first.conversation.id == conversation.id
        output: Any = [{"type": "function_call_output", "call_id": call.call_id, "output": "snow"}]
        second = client.responses.create(
            model="replay-model", input=output, tools=[WEATHER], conversation={"id": conversation.id}
        )
        third = client.responses.create(model="replay-model", input="And 4 + 1?", conversation=conversation.id)
        items = list(client.conversations.items.list(conversation.id, order="asc", limit=100))
        with pytest.raises(NotFoundError):
            client.responses.create(model="replay-model", input="Hi", conversation="conv_missing")
        with pytest.raises(BadRequestError) as unstored:
            client.responses.create(model="replay-model", input="Hi", conversation=conversation.id, store=False)
    assert second.output_text == "It is snowing in Oslo." and third.output_text == "5."
    kinds = [item.type for item in items]
    assert kinds == [
        "message",  # the developer message it was created with
        "message",  # first input
        "reasoning",
        "message",  # the preamble
        "function_call",
        "function_call_output",
        "reasoning",
        "message",
        "message",  # third input
        "reasoning",
        "message",
    ]
    assert [item.id for item in items[2:5]] == [item.id for item in first.output]  # output items keep their ids
    second_prompt, third_prompt = _prompt(backend, encoding, 1), _prompt(backend, encoding, 2)
    assert "Answer in English." in second_prompt and "Need the weather tool." in second_prompt
    assert "<|start|>functions.get_weather to=assistant<|channel|>commentary<|message|>snow<|end|>" in second_prompt
    assert "Weather in Oslo?" in third_prompt and "It is snowing in Oslo." in third_prompt
    assert unstored.value.param == "store"
    assert len(backend.prompts) == 3


def test_store_bounds_and_refusals(tmp_path: Path) -> None:
    now = [1000.0]
    store = ServerStore(None, size=2, max_age_s=60, clock=lambda: now[0])
    for name in ("a", "b", "c"):
        store.put(name, StoredResponse({"id": name}, []))
        now[0] += 1
    assert store.get("a") is None and store.get("b") is not None and len(store) == 2  # least recently used out
    now[0] += 61
    assert store.get("c") is None  # unused for longer than the age bound
    foreign = tmp_path / "other.sqlite3"
    import sqlite3

    connection = sqlite3.connect(foreign)
    connection.execute("CREATE TABLE notes (text TEXT)")
    connection.commit()
    connection.close()
    with pytest.raises(StoreError, match="not a harmony-chat server store"):
        ServerStore(foreign)
    text = tmp_path / "text.sqlite3"
    text.write_text("hello")
    with pytest.raises(StoreError, match="not an SQLite database"):
        ServerStore(text)
    assert text.read_text() == "hello"
    with pytest.raises(StoreError, match="directory"):
        ServerStore(tmp_path)
    assert store_location(MEMORY) is None and store_location(None) == default_store_path()
    assert store_location(str(tmp_path / "x.db")) == tmp_path / "x.db"
