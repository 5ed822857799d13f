"""Find the o200k vocabulary that openai-harmony needs, offline first, and load the encoding.

openai-harmony downloads ``o200k_base.tiktoken`` on first use and fails without network. The
file is resolved in this order and the result is cached in the app's cache dir:

1. ``TIKTOKEN_ENCODINGS_BASE`` when set (and the file is there);
2. the app's cache dir;
3. derived from the tokenizer stored inside the user's gpt-oss GGUF, verified by sha256;
4. derived the same way from the fallback GGUF the caller passes (the app passes the pocket gpt-oss
   that ships inside the package, so a fresh install works offline with nothing else present);
5. harmony's own download (into the app's cache dir), only if the fallback is missing or damaged.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import threading
from pathlib import Path

from openai_harmony import HarmonyEncoding, HarmonyEncodingName, load_harmony_encoding

from harmony_chat.errors import VocabularyError
from harmony_chat.locations import vocab_cache_dir
from harmony_chat.private_files import make_private_dir

VOCAB_FILE = "o200k_base.tiktoken"
"""The file name openai-harmony looks for."""
VOCAB_SHA256 = "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d"
"""The sha256 of OpenAI's published ``o200k_base.tiktoken`` (harmony checks it too)."""
VOCAB_URL = "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken"
"""Where openai-harmony downloads the file from."""
ENV_BASE = "TIKTOKEN_ENCODINGS_BASE"

_lock = threading.Lock()
_encoding: HarmonyEncoding | None = None


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _valid_file(folder: Path) -> bool:
    path = folder / VOCAB_FILE
    return path.is_file() and _sha256(path) == VOCAB_SHA256


def _write_verified(data: bytes, folder: Path) -> Path:
    """Write vocabulary bytes into ``folder`` if they hash right; return the folder."""
    digest = hashlib.sha256(data).hexdigest()
    if digest != VOCAB_SHA256:
        raise VocabularyError(f"the vocabulary derived from the GGUF does not match o200k_base (sha256 {digest[:12]}…)")
    make_private_dir(folder, own=False)  # the app's cache folders are its own: 0700 when it makes them
    temporary = folder / (VOCAB_FILE + ".part")
    temporary.write_bytes(data)
    temporary.replace(folder / VOCAB_FILE)
    return folder


def derive_from_gguf(gguf_path: Path, folder: Path) -> Path:
    """Rebuild ``o200k_base.tiktoken`` from the tokenizer inside a gpt-oss GGUF.

    ``tokenizer.ggml.tokens`` holds GPT-2 byte-level strings whose ids 0..199997 are the tiktoken
    ranks. The rebuilt file is verified against the published sha256 before it is written.

    Raises:
        VocabularyError: if the GGUF has no such tokenizer or the result does not verify.
    """
    from harmony_chat.gguf.inspect import read_string_array
    from harmony_chat.gguf.tokenizer import BASE_VOCAB_SIZE, tiktoken_bytes, token_to_bytes

    try:
        strings = read_string_array(gguf_path, "tokenizer.ggml.tokens", limit=BASE_VOCAB_SIZE)
        if strings is None:
            raise VocabularyError(f"{gguf_path} has no tokenizer.ggml.tokens to derive a vocabulary from")
        ranks = [token_to_bytes(token) for token in strings]
    except (OSError, ValueError, KeyError) as error:
        raise VocabularyError(f"could not read the tokenizer in {gguf_path}: {error}") from error
    return _write_verified(tiktoken_bytes(ranks), folder)


def _download(folder: Path) -> Path:
    """Let openai-harmony download the file into our cache, then keep it under its real name."""
    download_cache = folder / "download"
    make_private_dir(folder, own=False)  # before openai-harmony makes the folders with the umask's mode
    os.environ.pop(ENV_BASE, None)
    os.environ["TIKTOKEN_RS_CACHE_DIR"] = str(download_cache)
    load_harmony_encoding(HarmonyEncodingName.HARMONY_GPT_OSS)
    cached = download_cache / hashlib.sha1(VOCAB_URL.encode()).hexdigest()
    if cached.is_file():
        shutil.copyfile(cached, folder / VOCAB_FILE)
    return folder


def resolve_vocabulary(gguf_path: Path | None = None, fallback_gguf: Path | None = None) -> Path:
    """Return a folder holding a verified ``o200k_base.tiktoken``, trying each source in turn.

    Args:
        gguf_path: the user's gpt-oss GGUF, used to derive the file when nothing is cached.
        fallback_gguf: a gpt-oss GGUF to derive it from next (the app's shipped pocket model);
            skipped when the file is not there (an install that lacks it).

    Raises:
        VocabularyError: one message naming every option when all sources fail.
    """
    env_value = os.environ.get(ENV_BASE)
    if env_value and (Path(env_value) / VOCAB_FILE).is_file():
        return Path(env_value)
    cache = vocab_cache_dir()
    if _valid_file(cache):
        return cache
    problems: list[str] = []
    fallback = fallback_gguf if fallback_gguf is not None and fallback_gguf.is_file() else None
    for source in dict.fromkeys(path for path in (gguf_path, fallback) if path is not None):
        try:
            return derive_from_gguf(source, cache)
        except VocabularyError as error:
            problems.append(str(error))
    try:
        return _download(cache)
    except (RuntimeError, OSError) as error:
        problems.append(f"download failed ({str(error).splitlines()[0]})")
    finally:
        if env_value:
            os.environ[ENV_BASE] = env_value
    detail = "; ".join(problems)
    raise VocabularyError(
        f"no o200k vocabulary: set {ENV_BASE} to a folder holding {VOCAB_FILE}, put the file in "
        f"{cache}, pass a gpt-oss GGUF with --model to derive it, reinstall harmony-chat (its pocket "
        f"GGUF carries the vocabulary), or go online once ({detail})"
    )


def load_encoding(gguf_path: Path | None = None, fallback_gguf: Path | None = None) -> HarmonyEncoding:
    """Return the harmony encoding, resolving the vocabulary offline first (loaded once).

    The GGUFs are those of :func:`resolve_vocabulary`; once loaded, later calls need neither.

    Raises:
        VocabularyError: when no vocabulary can be found or loaded.
    """
    global _encoding
    with _lock:
        if _encoding is None:
            folder = resolve_vocabulary(gguf_path, fallback_gguf)
            os.environ[ENV_BASE] = str(folder)
            try:
                _encoding = load_harmony_encoding(HarmonyEncodingName.HARMONY_GPT_OSS)
            except RuntimeError as error:
                raise VocabularyError(f"openai-harmony could not load the vocabulary in {folder}: {error}") from error
        return _encoding
