"""Cheap reads of a model file's GGUF header: is it a GGUF, which architecture, one string list.

Reading the architecture walks only the first metadata entries of the header (it is the first
key every converter writes), so a 60 GB file is refused in microseconds instead of after a load.
``gguf.GGUFReader`` would parse the whole 200k-token vocabulary first; :func:`read_string_array`
reads one list (the tokenizer's tokens) walking the header once, without it.
"""

from __future__ import annotations

import struct
from pathlib import Path
from typing import BinaryIO

from harmony_chat.errors import ModelError

GGUF_MAGIC = b"GGUF"
_SCALAR_SIZES = {0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8}
_STRING, _ARRAY = 8, 9
_MAX_ENTRIES = 64


def _read(stream: BinaryIO, size: int) -> bytes:
    data = stream.read(size)
    if len(data) != size:
        raise EOFError("truncated GGUF header")
    return data


def _read_string(stream: BinaryIO) -> str:
    (length,) = struct.unpack("<Q", _read(stream, 8))
    if length > 1 << 20:
        raise ValueError("implausible string length in GGUF header")
    return _read(stream, length).decode("utf-8", errors="replace")


def _skip_value(stream: BinaryIO, value_type: int) -> None:
    if value_type == _STRING:
        _read_string(stream)
    elif value_type == _ARRAY:
        item_type, count = struct.unpack("<IQ", _read(stream, 12))
        if item_type in _SCALAR_SIZES:
            stream.seek(_SCALAR_SIZES[item_type] * count, 1)
        else:
            for _ in range(count):
                _skip_value(stream, item_type)
    elif value_type in _SCALAR_SIZES:
        stream.seek(_SCALAR_SIZES[value_type], 1)
    else:
        raise ValueError(f"unknown GGUF value type {value_type}")


def read_architecture(stream: BinaryIO) -> str | None:
    """Return ``general.architecture`` from a GGUF header positioned after the magic."""
    version, _tensors, entries = struct.unpack("<IQQ", _read(stream, 20))
    if version < 2:
        raise ValueError(f"GGUF version {version} is too old")
    for _ in range(min(entries, _MAX_ENTRIES)):
        key = _read_string(stream)
        (value_type,) = struct.unpack("<I", _read(stream, 4))
        if key == "general.architecture" and value_type == _STRING:
            return _read_string(stream)
        _skip_value(stream, value_type)
    return None


def read_string_array(path: Path, key: str, limit: int | None = None) -> list[str] | None:
    """The first ``limit`` strings (all when None) of the string-array entry ``key``, or None if absent.

    Raises:
        OSError: when the file cannot be read.
        ValueError: when it is not a GGUF file, its header is damaged, or ``key`` is not a string array.
    """
    try:
        with path.open("rb") as stream:
            if stream.read(4) != GGUF_MAGIC:
                raise ValueError(f"{path} is not a GGUF file")
            version, _tensors, entries = struct.unpack("<IQQ", _read(stream, 20))
            if version < 2:
                raise ValueError(f"GGUF version {version} is too old")
            for _ in range(entries):
                name = _read_string(stream)
                (value_type,) = struct.unpack("<I", _read(stream, 4))
                if name != key:
                    _skip_value(stream, value_type)
                    continue
                if value_type != _ARRAY:
                    raise ValueError(f"{key} is not a list")
                item_type, count = struct.unpack("<IQ", _read(stream, 12))
                if item_type != _STRING:
                    raise ValueError(f"{key} is not a list of strings")
                wanted = count if limit is None else min(count, limit)
                return [_read_exact_string(stream) for _ in range(wanted)]
    except (EOFError, struct.error) as error:
        raise ValueError(f"damaged GGUF header ({error})") from error
    return None


def _read_exact_string(stream: BinaryIO) -> str:
    """A header string that must be valid UTF-8 (a token's text)."""
    (length,) = struct.unpack("<Q", _read(stream, 8))
    if length > 1 << 20:
        raise ValueError("implausible string length in GGUF header")
    return _read(stream, length).decode("utf-8")


def check_gguf_file(path: Path) -> str:
    """Check that ``path`` is a readable GGUF file and return its architecture.

    Raises:
        ModelError: one line saying what is wrong with the file.
    """
    if not path.exists():
        raise ModelError(f"model file not found: {path}")
    if path.is_dir():
        raise ModelError(f"{path} is a folder; pass the .gguf file itself")
    try:
        with path.open("rb") as stream:
            if stream.read(4) != GGUF_MAGIC:
                raise ModelError(f"{path} is not a GGUF file")
            architecture = read_architecture(stream)
    except OSError as error:
        raise ModelError(f"cannot read model file {path}: {error.strerror}") from error
    except (EOFError, ValueError, struct.error) as error:
        raise ModelError(f"{path} has a damaged GGUF header ({error})") from error
    if architecture is None:
        raise ModelError(f"{path} names no architecture in its GGUF header")
    return architecture
