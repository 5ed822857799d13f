"""Sealed reasoning: the Responses API's ``reasoning.encrypted_content``, which only this server can open.

A stateless client (``store: false``) keeps a turn's chain of thought by sending back the reasoning
item it was given; gpt-oss needs that analysis again while a tool loop runs. With ``include:
["reasoning.encrypted_content"]`` the text goes out sealed instead of in plain text, and comes back
sealed.

A blob is URL-safe base64 (padded) of ``version (1 byte) | nonce (12 bytes) | AES-256-GCM ciphertext
and tag``. The associated data binds it to its purpose, its version and the served model's name, so a
blob from another key, another model or another kind of use fails to open, as does any altered byte.

The key is 256 bits: ``HARMONY_CHAT_REASONING_KEY`` (base64) when set, else ``reasoning.key`` in the
data folder, made once (0600, in a 0700 folder) and kept, so blobs open again after a restart. Several
servers that share the variable (or the data folder) open each other's blobs.
"""

from __future__ import annotations

import base64
import binascii
import os
import tempfile
import threading
from contextlib import suppress
from pathlib import Path
from typing import TYPE_CHECKING

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from harmony_chat.locations import data_dir
from harmony_chat.private_files import make_private_dir, tighten

if TYPE_CHECKING:
    from collections.abc import Mapping

KEY_ENV = "HARMONY_CHAT_REASONING_KEY"
"""The environment variable holding the key (base64 of 32 bytes)."""
KEY_FILE = "reasoning.key"
"""The key's file in the data folder (base64 of 32 bytes and a newline)."""
KEY_BYTES = 32
VERSION = 1
"""The blob format's version: its first byte."""
NONCE_BYTES = 12
TAG_BYTES = 16
PURPOSE = b"harmony-chat/responses/reasoning.encrypted_content"
"""What a blob is for, in its associated data: nothing else sealed with the key opens as reasoning."""


class SealError(ValueError):
    """A blob that does not open: not base64, the wrong version, cut short, altered, or sealed elsewhere."""


class SealKeyError(RuntimeError):
    """The key cannot be had: the variable is not base64 of 32 bytes, or its file cannot be read or made."""


def _decode_key(text: str, source: str) -> bytes:
    try:
        key = base64.b64decode(text.strip(), altchars=b"-_" if ("-" in text or "_" in text) else None, validate=True)
    except (binascii.Error, ValueError):
        raise SealKeyError(f"{source} is not base64") from None
    if len(key) != KEY_BYTES:
        raise SealKeyError(f"{source} holds {len(key)} bytes, not the {KEY_BYTES} of a 256-bit key")
    return key


def new_key_text() -> str:
    """A fresh random key as the variable and the file hold it (base64, no newline)."""
    return base64.b64encode(os.urandom(KEY_BYTES)).decode("ascii")


def key_file(folder: Path | None = None) -> Path:
    """Where the key is kept when the variable is not set (``folder``: the data folder)."""
    return (folder or data_dir()) / KEY_FILE


def load_key(environ: Mapping[str, str] | None = None, folder: Path | None = None) -> bytes:
    """The key: ``HARMONY_CHAT_REASONING_KEY`` when set, else the data folder's ``reasoning.key`` (made if missing).

    A new file is written whole under a temporary name (0600) and linked into place, so two servers
    starting at once agree on one key and none reads half a file. A file others may read is tightened.

    Raises:
        SealKeyError: the variable is not a base64 256-bit key; the file is not one, or cannot be read or made.
    """
    environ = os.environ if environ is None else environ
    given = environ.get(KEY_ENV)
    if given:
        return _decode_key(given, KEY_ENV)
    path = key_file(folder)
    try:
        if not path.exists():
            _make_key_file(path)
        tighten(path)
        text = path.read_text(encoding="ascii")
    except (OSError, UnicodeDecodeError) as error:
        reason = error.strerror if isinstance(error, OSError) and error.strerror else type(error).__name__
        raise SealKeyError(f"the reasoning key file {path} cannot be read or made: {reason}") from None
    return _decode_key(text, f"the reasoning key file {path} (delete it to make a new key)")


def _make_key_file(path: Path) -> None:
    """Write a new key to ``path`` unless another process got there first (then keep theirs)."""
    make_private_dir(path.parent)
    descriptor, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".part")  # 0600
    try:
        with os.fdopen(descriptor, "w", encoding="ascii") as stream:
            stream.write(new_key_text() + "\n")
            stream.flush()
            os.fsync(stream.fileno())
        with suppress(FileExistsError):  # another server made it meanwhile: theirs is the key
            os.link(temporary, path)  # the file appears whole, and never replaces a key already made
    finally:
        with suppress(OSError):
            os.unlink(temporary)


class ReasoningSeal:
    """Seals and opens one served model's reasoning with the server's key.

    Args:
        model: the served model's name (bound into every blob).
        key: the 256-bit key; None: :func:`load_key`, the first time one is needed.
    """

    def __init__(self, model: str, key: bytes | None = None) -> None:
        if key is not None and len(key) != KEY_BYTES:
            raise ValueError(f"the key must be {KEY_BYTES} bytes")
        self.model = model
        self._aead = AESGCM(key) if key is not None else None
        self._lock = threading.Lock()

    @property
    def ready(self) -> bool:
        """Whether the key is loaded (sealing and opening then touch no file)."""
        return self._aead is not None

    def load(self) -> None:
        """Load the key now (a file may be read or made: call it off the event loop).

        Raises:
            SealKeyError: see :func:`load_key`.
        """
        self._cipher()

    def _cipher(self) -> AESGCM:
        if self._aead is None:
            with self._lock:
                if self._aead is None:
                    self._aead = AESGCM(load_key())
        return self._aead

    def _associated(self, version: int) -> bytes:
        return b"%s\x00%d\x00%s" % (PURPOSE, version, self.model.encode("utf-8"))

    def seal(self, text: str) -> str:
        """``text`` as an opaque blob (different each time) that only :meth:`open` with this key and model reads.

        Raises:
            SealKeyError: the key cannot be had.
        """
        nonce = os.urandom(NONCE_BYTES)
        sealed = self._cipher().encrypt(nonce, text.encode("utf-8"), self._associated(VERSION))
        return base64.urlsafe_b64encode(bytes([VERSION]) + nonce + sealed).decode("ascii")

    def open(self, blob: str) -> str:
        """The text sealed in ``blob``.

        Raises:
            SealError: ``blob`` is not one this server sealed for this model with its key, or was altered.
            SealKeyError: the key cannot be had.
        """
        try:
            raw = base64.b64decode(blob, altchars=b"-_", validate=True)
        except (binascii.Error, ValueError):
            raise SealError("it is not base64 (not a blob this server made)") from None
        if raw and raw[0] != VERSION:
            raise SealError(f"its format version is {raw[0]}; this server reads version {VERSION}")
        if len(raw) < 1 + NONCE_BYTES + TAG_BYTES:
            raise SealError("it is too short to be a blob this server made")
        nonce, sealed = raw[1 : 1 + NONCE_BYTES], raw[1 + NONCE_BYTES :]
        try:
            plain = self._cipher().decrypt(nonce, sealed, self._associated(VERSION))
        except InvalidTag:
            raise SealError("it does not open: another server, key or model sealed it, or it was altered") from None
        return plain.decode("utf-8")
