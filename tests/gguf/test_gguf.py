"""GGUF helpers: byte-level tokens, merges, the header check."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest
from gguf import GGUFWriter

from harmony_chat.errors import ModelError
from harmony_chat.gguf.inspect import check_gguf_file, read_string_array
from harmony_chat.gguf.tokenizer import (
    BASE_VOCAB_SIZE,
    TOKEN_TYPE_CONTROL,
    bytes_to_token,
    derive_merges,
    harmony_vocabulary,
    tiktoken_bytes,
    token_to_bytes,
)
from harmony_chat.harmony import tokens as tk


def test_byte_level_spelling_round_trips_every_byte() -> None:
    data = bytes(range(256))
    spelled = bytes_to_token(data)
    assert len(spelled) == 256 and " " not in spelled and "\n" not in spelled
    assert token_to_bytes(spelled) == data
    assert bytes_to_token(b" hello") == "Ġhello"


def test_tiktoken_file_round_trip(ranks: list[bytes], vocab_file: Path) -> None:
    assert len(ranks) == BASE_VOCAB_SIZE
    assert tiktoken_bytes(ranks) == vocab_file.read_bytes()


def test_merges_follow_ranks() -> None:
    ranks = [b"a", b"b", b"c", b"ab", b"bc", b"abc", b"cab"]
    # "abc" forms from "ab"+"c" (ab outranks bc); "cab" from "c"+"ab".
    assert derive_merges(ranks) == ["a b", "b c", "ab c", "c ab"]


def test_harmony_vocabulary_has_special_tokens(ranks: list[bytes]) -> None:
    strings, types = harmony_vocabulary(ranks)
    assert len(strings) == len(types) == tk.VOCAB_SIZE
    assert strings[tk.START] == "<|start|>" and types[tk.START] == TOKEN_TYPE_CONTROL
    assert strings[200020] == "<|reserved_200020|>"
    with pytest.raises(ValueError):
        harmony_vocabulary(ranks[:10])


def _header_only(path: Path, architecture: str) -> Path:
    writer = GGUFWriter(str(path), architecture)
    writer.add_block_count(1)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.close()
    return path


def test_check_gguf_file(tmp_path: Path, tiny_gguf: Path) -> None:
    assert check_gguf_file(tiny_gguf) == "gpt-oss"
    assert check_gguf_file(_header_only(tmp_path / "llama.gguf", "llama")) == "llama"


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "not found"),
        (b"", "is not a GGUF file"),
        (b"PK\x03\x04zipfile", "is not a GGUF file"),
        (b"GGUF" + struct.pack("<I", 3), "damaged GGUF header"),
        ("dir", "is a folder"),
    ],
)
def test_bad_model_files(tmp_path: Path, content: bytes | str | None, message: str) -> None:
    path = tmp_path / "model.gguf"
    if content == "dir":
        path.mkdir()
    elif isinstance(content, bytes):
        path.write_bytes(content)
    with pytest.raises(ModelError, match=message):
        check_gguf_file(path)


def test_one_string_list_is_read_from_the_header_without_parsing_the_rest(tmp_path: Path) -> None:
    path = tmp_path / "lists.gguf"
    writer = GGUFWriter(str(path), "gpt-oss")
    writer.add_array("numbers", [1, 2, 3])
    writer.add_array("words", ["héllo", "Ġworld", "<|end|>"])
    writer.add_string("lone", "text")
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.close()
    assert read_string_array(path, "words") == ["héllo", "Ġworld", "<|end|>"]
    assert read_string_array(path, "words", limit=2) == ["héllo", "Ġworld"]
    assert read_string_array(path, "absent") is None
    with pytest.raises(ValueError, match="not a list of strings"):
        read_string_array(path, "numbers")
    with pytest.raises(ValueError, match="not a list"):
        read_string_array(path, "lone")
    path.write_bytes(path.read_bytes()[:60])
    with pytest.raises(ValueError, match="damaged GGUF header"):
        read_string_array(path, "words")
    with pytest.raises(ValueError, match="not a GGUF file"):
        read_string_array(_write(tmp_path / "zip.gguf", b"PK\x03\x04"), "words")


def _write(path: Path, content: bytes) -> Path:
    path.write_bytes(content)
    return path
