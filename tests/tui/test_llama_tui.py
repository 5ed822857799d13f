"""The chat app on the real llama.cpp backend with the tiny test GGUF (tokens forced)."""

from __future__ import annotations

from pathlib import Path

import pytest

from harmony_chat.backends.llama_cpp import LlamaCppBackend
from harmony_chat.chat.factory import create_backend
from harmony_chat.harmony.events import StopReason
from harmony_chat.tui.widgets.turn import AssistantTurn
from tests.helpers import ForceTokens, ids
from tests.tui.harness import make_app, send, settle


@pytest.mark.llama
async def test_chat_through_llama_cpp(tiny_gguf: Path) -> None:
    app = make_app(
        factory=create_backend,
        replay_demo=False,
        values={"model.path": str(tiny_gguf), "model.context": 1024, "sampling.max_tokens": 64},
    )
    async with app.run_test(size=(110, 32)) as pilot:
        await settle(pilot)
        assert app.chat.conversation is not None
        backend = app.chat.conversation.backend
        assert isinstance(backend, LlamaCppBackend)
        assert app.chat.status.model == "tiny-gpt-oss" and app.chat.status.device == "CPU"
        assert app.chat.status.context_size == 1024
        session = app.chat.conversation.session
        assert session is not None
        backend.logits_processor = ForceTokens(
            ids(
                session.encoding,
                (
                    "<|channel|>analysis<|message|>Say hello.<|end|><|start|>assistant"
                    "<|channel|>final<|message|>Hello from **llama.cpp**!<|return|>"
                ),
            )
        )
        await send(pilot, "Hi")
        turn = app.chat.query_one(AssistantTurn)
        assert turn.final_text == "Hello from **llama.cpp**!"
        assert turn.stop_reason is StopReason.RETURN
        assert app.chat.status.speed > 0 and app.chat.status.context_used > 50
        backend.logits_processor = ForceTokens(ids(session.encoding, "<|channel|>final<|message|>Again.<|return|>"))
        await send(pilot, "Once more")
        assert app.chat.inspector.reused > 50
