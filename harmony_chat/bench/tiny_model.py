"""The tiny random-weight gpt-oss GGUF ``bench --tiny`` measures: made here once, kept in the cache dir.

Two layers, 64 wide, random weights and the full o200k_harmony vocabulary with its BPE merges: the
per-token work of harmony-chat's pipeline weighs most on such a model, and no download is needed
(the vocabulary comes from the shipped pocket GGUF when it is not cached).
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from collections.abc import Callable
from pathlib import Path

from harmony_chat.demo.pocket import pocket_model_path
from harmony_chat.gguf.tokenizer import derive_merges, read_tiktoken
from harmony_chat.gguf.writer import GptOssShape, random_tensors, write_gpt_oss_gguf
from harmony_chat.harmony.vocab import VOCAB_FILE, resolve_vocabulary
from harmony_chat.locations import cache_dir
from harmony_chat.private_files import make_private_dir

SEED = 1
"""The random weights' seed: every machine makes the same model."""


def tiny_model_path(progress: Callable[[str], None] = lambda line: None) -> Path:
    """The tiny model's path, written first if this machine has none (about a minute, once, said on ``progress``)."""
    vocab = resolve_vocabulary(fallback_gguf=pocket_model_path()) / VOCAB_FILE
    shape = GptOssShape()
    key = hashlib.sha256(f"{shape!r} {SEED}".encode() + vocab.read_bytes()).hexdigest()[:12]
    folder = make_private_dir(cache_dir() / "bench")
    path = folder / f"tiny-gpt-oss-{key}.gguf"
    if path.is_file():
        return path
    progress(f"making the tiny benchmark model once (about a minute): {path}")
    ranks = read_tiktoken(vocab)
    handle, partial = tempfile.mkstemp(dir=folder, suffix=".partial")
    os.close(handle)
    try:
        write_gpt_oss_gguf(Path(partial), shape, random_tensors(shape, seed=SEED), ranks, merges=derive_merges(ranks))
        os.replace(partial, path)
    finally:
        Path(partial).unlink(missing_ok=True)
    return path
