"""Offline-first vocabulary resolution: env, cache, derived from the GGUF, download, clear failure."""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
from pathlib import Path

import pytest

from harmony_chat.demo.pocket import pocket_model_path
from harmony_chat.errors import VocabularyError
from harmony_chat.harmony import vocab
from harmony_chat.harmony.vocab import VOCAB_FILE, VOCAB_SHA256, resolve_vocabulary


@pytest.fixture
def no_download(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    calls: list[Path] = []

    def refuse(folder: Path) -> Path:
        calls.append(folder)
        raise RuntimeError("failed to download or load vocab file\n(offline)")

    monkeypatch.setattr(vocab, "_download", refuse)
    return calls


@pytest.fixture
def empty_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("HARMONY_CHAT_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("TIKTOKEN_ENCODINGS_BASE", raising=False)
    return tmp_path / "cache" / "vocab"


def test_shared_vocabulary_is_the_published_file(vocab_file: Path) -> None:
    assert hashlib.sha256(vocab_file.read_bytes()).hexdigest() == VOCAB_SHA256


def test_env_variable_wins(vocab_file: Path, monkeypatch: pytest.MonkeyPatch, no_download: list[Path]) -> None:
    monkeypatch.setenv("TIKTOKEN_ENCODINGS_BASE", str(vocab_file.parent))
    assert resolve_vocabulary() == vocab_file.parent
    assert no_download == []


def test_cache_dir_is_used(vocab_file: Path, empty_cache: Path, no_download: list[Path]) -> None:
    empty_cache.mkdir(parents=True)
    shutil.copyfile(vocab_file, empty_cache / VOCAB_FILE)
    assert resolve_vocabulary() == empty_cache
    assert no_download == []


def test_corrupt_cache_is_not_trusted(empty_cache: Path, no_download: list[Path]) -> None:
    empty_cache.mkdir(parents=True)
    (empty_cache / VOCAB_FILE).write_text("garbage")
    with pytest.raises(VocabularyError):
        resolve_vocabulary()
    assert no_download == [empty_cache]


def test_derived_from_gguf_and_cached(tiny_gguf: Path, empty_cache: Path, no_download: list[Path]) -> None:
    folder = resolve_vocabulary(tiny_gguf)
    assert folder == empty_cache
    assert hashlib.sha256((folder / VOCAB_FILE).read_bytes()).hexdigest() == VOCAB_SHA256
    assert no_download == []
    assert resolve_vocabulary() == empty_cache


@pytest.mark.skipif(os.name != "posix", reason="POSIX permission bits")
def test_the_cache_folders_the_app_makes_are_private(
    vocab_file: Path, empty_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(vocab, "_download", lambda folder: vocab._write_verified(vocab_file.read_bytes(), folder))
    old = os.umask(0o022)
    try:
        assert resolve_vocabulary() == empty_cache
    finally:
        os.umask(old)
    assert [stat.S_IMODE(folder.stat().st_mode) for folder in (empty_cache.parent, empty_cache)] == [0o700, 0o700]


def test_gguf_with_a_different_vocabulary_is_refused(
    tmp_path: Path,
    ranks: list[bytes],
    merges: list[str],
    empty_cache: Path,
    no_download: list[Path],
) -> None:
    from harmony_chat.gguf.writer import GptOssShape, random_tensors, write_gpt_oss_gguf

    shape = GptOssShape(hidden_size=32, intermediate_size=32, head_dim=8)
    changed = list(ranks)
    changed[1000], changed[1001] = changed[1001], changed[1000]
    path = write_gpt_oss_gguf(
        tmp_path / "other.gguf", shape, random_tensors(shape), changed, merges=merges, quant_types={}
    )
    with pytest.raises(VocabularyError, match="does not match o200k_base"):
        resolve_vocabulary(path)
    assert not (empty_cache / VOCAB_FILE).exists()


def test_every_option_is_named_when_all_fail(empty_cache: Path, no_download: list[Path]) -> None:
    with pytest.raises(VocabularyError) as raised:
        resolve_vocabulary()
    message = str(raised.value)
    assert "\n" not in message
    for option in ("TIKTOKEN_ENCODINGS_BASE", str(empty_cache), "--model", "online"):
        assert option in message


def test_derived_from_the_shipped_pocket_gguf_when_nothing_else_is_there(
    empty_cache: Path, no_download: list[Path]
) -> None:
    """A fresh install, offline, with no GGUF of its own and nothing beside it still finds the vocabulary."""
    folder = resolve_vocabulary(fallback_gguf=pocket_model_path())
    assert folder == empty_cache
    assert hashlib.sha256((folder / VOCAB_FILE).read_bytes()).hexdigest() == VOCAB_SHA256
    assert no_download == []


def test_the_users_gguf_comes_before_the_fallback(
    tiny_gguf: Path, tmp_path: Path, empty_cache: Path, no_download: list[Path]
) -> None:
    damaged = tmp_path / "pocket.gguf"
    damaged.write_bytes(b"GGUF but not really")
    assert resolve_vocabulary(tiny_gguf, fallback_gguf=damaged) == empty_cache
    assert no_download == []


def test_a_missing_fallback_is_skipped(tmp_path: Path, empty_cache: Path, no_download: list[Path]) -> None:
    """An install that lacks its pocket GGUF goes on to the download; the message does not name the lost file."""
    missing = tmp_path / "pocket-gpt-oss.gguf"
    with pytest.raises(VocabularyError) as raised:
        resolve_vocabulary(fallback_gguf=missing)
    assert no_download == [empty_cache]
    assert str(missing) not in str(raised.value)


def test_a_damaged_shipped_gguf_falls_through_to_the_download(
    tmp_path: Path, empty_cache: Path, no_download: list[Path]
) -> None:
    damaged = tmp_path / "pocket.gguf"
    damaged.write_bytes(b"GGUF but not really")
    with pytest.raises(VocabularyError) as raised:
        resolve_vocabulary(fallback_gguf=damaged)
    assert no_download == [empty_cache]
    assert str(damaged) in str(raised.value) and "\n" not in str(raised.value)


def test_the_vocabulary_module_leaves_the_fallback_to_its_caller() -> None:
    """The format layer knows no demo asset: nothing in it names the pocket model's package."""
    source = Path(vocab.__file__).read_text(encoding="utf-8")
    assert "harmony_chat.demo" not in source and "harmony_chat.pocket" not in source
