"""The o200k vocabulary in its two spellings: tiktoken ranks and GGUF's GPT-2 byte-level strings.

A gpt-oss GGUF stores its vocabulary as ``tokenizer.ggml.tokens``: GPT-2 byte-level strings whose
ids 0..199997 equal the tiktoken ranks of ``o200k_base``. This module converts between the two,
derives BPE merges from the ranks and writes the tiktoken file format.
"""

from __future__ import annotations

import base64
from collections.abc import Iterable, Sequence
from functools import cache
from pathlib import Path

from harmony_chat.harmony import tokens as tk

TOKEN_TYPE_NORMAL = 1
"""GGUF token type of ordinary text tokens."""
TOKEN_TYPE_CONTROL = 3
"""GGUF token type of special tokens."""

BASE_VOCAB_SIZE = 199998
"""Number of ordinary tokens in ``o200k_base`` (ranks 0..199997)."""


@cache
def byte_to_unicode() -> dict[int, str]:
    """Return GPT-2's reversible map from each byte to a printable character."""
    printable = (
        list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    )
    mapping = {b: chr(b) for b in printable}
    extra = 0
    for b in range(256):
        if b not in mapping:
            mapping[b] = chr(256 + extra)
            extra += 1
    return mapping


@cache
def unicode_to_byte() -> dict[str, int]:
    """Return the inverse of :func:`byte_to_unicode`."""
    return {char: b for b, char in byte_to_unicode().items()}


def bytes_to_token(data: bytes) -> str:
    """Spell raw token bytes the way GGUF stores them."""
    table = byte_to_unicode()
    return "".join(table[b] for b in data)


def token_to_bytes(token: str) -> bytes:
    """Turn a GGUF byte-level token string back into its raw bytes.

    Raises:
        KeyError: if ``token`` contains a character outside the byte-level alphabet.
    """
    table = unicode_to_byte()
    return bytes(table[char] for char in token)


def read_tiktoken(path: Path) -> list[bytes]:
    """Read a ``.tiktoken`` file and return the token bytes in rank order."""
    ranked: dict[int, bytes] = {}
    for line in path.read_bytes().splitlines():
        if line:
            encoded, rank = line.split()
            ranked[int(rank)] = base64.b64decode(encoded)
    return [ranked[rank] for rank in range(len(ranked))]


def tiktoken_bytes(ranks: Iterable[bytes]) -> bytes:
    """Return the tiktoken file format for token bytes given in rank order."""
    lines = (base64.b64encode(data) + b" " + str(rank).encode() for rank, data in enumerate(ranks))
    return b"\n".join(lines) + b"\n"


def _last_merge(data: bytes, rank_of: dict[bytes, int], max_rank: int) -> tuple[bytes, bytes] | None:
    """Run tiktoken's BPE on ``data`` with ranks below ``max_rank``; return the final two parts."""
    parts = [data[i : i + 1] for i in range(len(data))]
    while len(parts) > 2:
        best, best_rank = -1, max_rank
        for i in range(len(parts) - 1):
            rank = rank_of.get(parts[i] + parts[i + 1])
            if rank is not None and rank < best_rank:
                best, best_rank = i, rank
        if best < 0:
            return None
        parts[best : best + 2] = [parts[best] + parts[best + 1]]
    return (parts[0], parts[1]) if len(parts) == 2 else None


def derive_merges(ranks: Sequence[bytes]) -> list[str]:
    """Derive GGUF BPE merges from tiktoken ranks: one merge per multi-byte token.

    Each token's merge is the last step of tiktoken's own BPE on its bytes (ranks below its own).
    Inside any text, the merges within a token's span happen in the same rank order as for the
    token alone, so applying these merges by token rank reproduces tiktoken exactly.
    """
    rank_of = {data: rank for rank, data in enumerate(ranks)}
    merges: list[str] = []
    for rank, data in enumerate(ranks):
        if len(data) > 1 and (pair := _last_merge(data, rank_of, rank)) is not None:
            merges.append(f"{bytes_to_token(pair[0])} {bytes_to_token(pair[1])}")
    return merges


def harmony_vocabulary(ranks: Sequence[bytes]) -> tuple[list[str], list[int]]:
    """Return the GGUF token strings and token types of the full o200k_harmony vocabulary.

    Ids below ``BASE_VOCAB_SIZE`` are the byte-level spellings of the ranks; the rest up to
    ``VOCAB_SIZE`` are harmony's special and reserved tokens, typed as control tokens.
    """
    if len(ranks) != BASE_VOCAB_SIZE:
        raise ValueError(f"expected {BASE_VOCAB_SIZE} ranks, got {len(ranks)}")
    strings = [bytes_to_token(data) for data in ranks]
    types = [TOKEN_TYPE_NORMAL] * len(strings)
    for token in range(BASE_VOCAB_SIZE, tk.VOCAB_SIZE):
        strings.append(tk.special_name(token))
        types.append(TOKEN_TYPE_CONTROL)
    return strings, types
