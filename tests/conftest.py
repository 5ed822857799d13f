"""Test fixtures: the offline vocabulary, an isolated cache dir, and a tiny gpt-oss GGUF.

The suite needs nothing beside the repository and no network: the vocabulary is derived from the
pocket GGUF that ships in ``harmony_chat/demo/`` (or taken from ``TIKTOKEN_ENCODINGS_BASE`` when set).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from openai_harmony import HarmonyEncoding

DATA = Path(__file__).resolve().parent / "data"
CHAT_TEMPLATE = DATA / "chat-template" / "gpt-oss-chat-template.jinja"
"""The chat template gpt-oss GGUFs carry (see the README beside it for its source and licence)."""


@pytest.fixture(scope="session", autouse=True)
def isolated_dirs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Keep the app's cache, config and data dirs out of the developer's home."""
    root = tmp_path_factory.mktemp("app-dirs")
    saved = {
        key: os.environ.get(key)
        for key in ("HARMONY_CHAT_CACHE_DIR", "HARMONY_CHAT_CONFIG_DIR", "HARMONY_CHAT_DATA_DIR")
    }
    os.environ["HARMONY_CHAT_CACHE_DIR"] = str(root / "cache")
    os.environ["HARMONY_CHAT_CONFIG_DIR"] = str(root / "config")
    os.environ["HARMONY_CHAT_DATA_DIR"] = str(root / "data")
    yield
    for key, value in saved.items():
        if value is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = value


@pytest.fixture(scope="session")
def encoding() -> HarmonyEncoding:
    """The harmony encoding, loaded through harmony-chat's offline vocabulary resolution."""
    from harmony_chat.demo.pocket import pocket_model_path
    from harmony_chat.harmony.vocab import load_encoding

    return load_encoding(fallback_gguf=pocket_model_path())


@pytest.fixture(scope="session")
def vocab_file(encoding: HarmonyEncoding) -> Path:
    """The verified ``o200k_base.tiktoken`` the suite runs with."""
    from harmony_chat.harmony.vocab import VOCAB_FILE

    return Path(os.environ["TIKTOKEN_ENCODINGS_BASE"]) / VOCAB_FILE


@pytest.fixture(scope="session")
def ranks(vocab_file: Path) -> list[bytes]:
    """The o200k_base token bytes in rank order."""
    from harmony_chat.gguf.tokenizer import read_tiktoken

    return read_tiktoken(vocab_file)


@pytest.fixture(scope="session")
def merges(ranks: list[bytes]) -> list[str]:
    """BPE merges derived once for every GGUF the suite writes."""
    from harmony_chat.gguf.tokenizer import derive_merges

    return derive_merges(ranks)


@pytest.fixture(scope="session")
def tiny_gguf(tmp_path_factory: pytest.TempPathFactory, ranks: list[bytes], merges: list[str]) -> Path:
    """A 2-layer, 64-wide gpt-oss GGUF with random weights and the full o200k vocabulary."""
    from harmony_chat.gguf.writer import GptOssShape, random_tensors, write_gpt_oss_gguf

    shape = GptOssShape()
    path = tmp_path_factory.mktemp("gguf") / "tiny-gpt-oss.gguf"
    chat_template = CHAT_TEMPLATE.read_text(encoding="utf-8")
    return write_gpt_oss_gguf(
        path, shape, random_tensors(shape, seed=1), ranks, merges=merges, chat_template=chat_template
    )


@pytest.fixture
def isolated_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("HF_HOME", str(home / "hf"))
    monkeypatch.delenv("HF_HUB_CACHE", raising=False)
    monkeypatch.setenv("LLAMA_CACHE", str(home / "llama"))
    monkeypatch.setenv("HARMONY_CHAT_CONFIG_DIR", str(home / "config"))
    return home
