"""vLLM started with ``--skip-tokenizer-init``: ``/tokenize`` is refused, token-id completions still work.

The refusal's body is the one vLLM 0.32.0 (CPU) answers (``tests/engines`` runs the real server).
The vocabulary cannot be checked there, and probing it with harmony's ids would kill an engine
serving a smaller vocabulary, so a model whose name says gpt-oss is trusted with a note, any other
is refused.
"""

from __future__ import annotations

import copy
import logging
from collections.abc import Iterator
from typing import Any

import pytest
from openai_harmony import HarmonyEncoding

from harmony_chat.backends.base import SamplingParams
from harmony_chat.backends.remote import VllmBackend, create_remote_backend
from harmony_chat.errors import EngineError, ModelError
from harmony_chat.harmony import tokens as tk
from harmony_chat.harmony.session import ChatSession
from tests.support.fake_engine import FakeEngine, load_fixture

NO_TOKENIZER = {
    "status": 400,
    "body": {
        "error": {
            "message": "Tokenizer not available when `skip_tokenizer_init=True`",
            "type": "BadRequestError",
            "param": None,
            "code": 400,
        }
    },
}
"""vLLM 0.32.0's answer to ``POST /tokenize`` under ``--skip-tokenizer-init``."""


@pytest.fixture
def serve() -> Iterator[Any]:
    engines: list[FakeEngine] = []

    def start(model: str | None = None, tokenize: dict[str, Any] | None = None) -> FakeEngine:
        fixture = copy.deepcopy(load_fixture("vllm"))
        if model is not None:
            card = fixture["endpoints"]["GET /v1/models"]["body"]["data"][0]
            card["id"] = card["root"] = model
        fake = FakeEngine(fixture, "answer", overrides={"POST /tokenize": tokenize or NO_TOKENIZER})
        engines.append(fake)
        return fake

    yield start
    for fake in engines:
        fake.close()


def test_a_gpt_oss_model_is_trusted_with_a_note_and_generates(
    serve: Any, encoding: HarmonyEncoding, caplog: pytest.LogCaptureFixture
) -> None:
    fake = serve()
    backend = create_remote_backend(fake.url, "vllm")
    assert isinstance(backend, VllmBackend)
    with caplog.at_level(logging.WARNING, logger="harmony_chat.backends"):
        info = backend.load()
    assert info.name == "openai/gpt-oss-120b"
    assert backend.vocabulary_note is not None and "--skip-tokenizer-init" in backend.vocabulary_note
    assert "the vocabulary was not checked" in caplog.text
    assert backend.supports_json_schema is False  # vLLM refuses grammars without its tokenizer
    assert [r.path for r in fake.requests].count("/tokenize") == 1
    assert [r for r in fake.requests if r.path == "/v1/completions"] == []  # no id probe: it could kill an engine
    session = ChatSession(encoding)
    session.add_user("Hi")
    tokens = list(backend.generate(session.render().tokens, SamplingParams(max_tokens=50), tk.GENERATION_STOPS,
                                   lambda: False))  # fmt: skip
    assert tokens[-1] == tk.RETURN
    backend.close()


@pytest.mark.parametrize("model", ["meta-llama/Llama-3.1-8B-Instruct", "my-model"])
def test_a_model_whose_name_does_not_say_gpt_oss_is_refused(serve: Any, model: str) -> None:
    with pytest.raises(ModelError, match="--skip-tokenizer-init.*restart vLLM without"):
        create_remote_backend(serve(model).url, "vllm").load()


def test_other_tokenize_errors_still_fail(serve: Any) -> None:
    broken = {"status": 400, "body": {"error": {"message": "something else", "type": "BadRequestError"}}}
    with pytest.raises(EngineError, match="HTTP 400 while checking the vocabulary: something else"):
        create_remote_backend(serve(tokenize=broken).url, "vllm").load()
