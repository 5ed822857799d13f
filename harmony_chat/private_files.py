"""Files only their owner may read: the history, the config (it may hold an API key), exports.

Folders the app makes are 0700 and files it makes are 0600, whatever the umask. Files and folders of
the app's own that are found looser lose their group and other permissions. A folder the user chose
(the one holding a ``--history-db`` file, say) is never changed: only the files written into it are.
The config file is rewritten atomically, through a symbolic link to its target, keeping its mode and
owner.
"""

from __future__ import annotations

import os
import stat
import tempfile
from contextlib import suppress
from pathlib import Path

PRIVATE_FILE = 0o600
"""Read and write for the owner only."""
PRIVATE_DIR = 0o700
"""Enter, list and write for the owner only."""
_OTHERS = 0o077
"""The group's and everyone else's permission bits."""


def make_private_dir(folder: Path, *, own: bool = True) -> Path:
    """Create ``folder`` and the missing folders above it, each 0700; return it.

    With ``own`` (a folder of the app's own: its data folder, the history's lock folder), an existing
    ``folder`` that others may read is tightened too; without it an existing folder is left as it is.

    Raises:
        OSError: when a folder cannot be made (a file in the way, a read-only place).
    """
    missing: list[Path] = []
    current = folder
    while not current.exists() and current != current.parent:
        missing.append(current)
        current = current.parent
    for path in reversed(missing):
        try:
            path.mkdir(mode=PRIVATE_DIR)
        except FileExistsError:
            if not path.is_dir():
                raise
            continue  # made by another process meanwhile
        with suppress(OSError):
            path.chmod(PRIVATE_DIR)  # exactly 0700, whatever the umask
    if own and not missing:
        tighten(folder)
    if not folder.is_dir():
        raise NotADirectoryError(20, "Not a directory", str(folder))
    return folder


def tighten(path: Path) -> None:
    """Take the group's and others' permissions off ``path`` if it has any (the owner's stay).

    Only regular files and folders are changed (never a device such as ``/dev/stdout``). Nothing
    happens when ``path`` is missing or cannot be changed (another user's file, a read-only file
    system): the caller goes on with it as it is.
    """
    with suppress(OSError):
        status = path.stat()
        mode = stat.S_IMODE(status.st_mode)
        if mode & _OTHERS and (stat.S_ISREG(status.st_mode) or stat.S_ISDIR(status.st_mode)):
            path.chmod(mode & ~_OTHERS)


def create_private_file(path: Path) -> None:
    """Create ``path`` empty and 0600 if it does not exist; tighten it if it does.

    Raises:
        OSError: when it cannot be created.
    """
    try:
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, PRIVATE_FILE)
    except FileExistsError:
        tighten(path)
        return
    os.close(descriptor)
    with suppress(OSError):
        path.chmod(PRIVATE_FILE)  # exactly 0600, whatever the umask


def write_private_text(path: Path, text: str) -> None:
    """Write ``text`` (UTF-8) to ``path``, which ends up 0600 (an existing file is tightened).

    Raises:
        OSError: when it cannot be written (a missing folder, a folder in the way, no permission).
    """
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, PRIVATE_FILE)
    with os.fdopen(descriptor, "w", encoding="utf-8") as stream:
        tighten(path)  # before a word is written
        stream.write(text)


def replace_text(path: Path, text: str) -> Path:
    """Replace the file at ``path`` with ``text`` atomically; return the file actually written.

    A symbolic link is followed to its target, which is replaced (the link stays). The new file is
    made 0600 beside the target, synced, given the old file's mode and (where allowed) owner, and
    renamed over it; a new file stays 0600. A crash leaves the old file or the new one, never half.

    Raises:
        OSError: when the file cannot be written.
    """
    target = Path(os.path.realpath(path))
    try:
        old: os.stat_result | None = target.stat()
    except FileNotFoundError:
        old = None
    descriptor, temporary = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".part")
    try:
        with os.fdopen(descriptor, "w", encoding="utf-8") as stream:
            stream.write(text)
            stream.flush()
            os.fsync(stream.fileno())
        if old is not None:
            if hasattr(os, "chown"):
                with suppress(OSError):  # only root may give a file away; the mode is what matters
                    os.chown(temporary, old.st_uid, old.st_gid)
            os.chmod(temporary, stat.S_IMODE(old.st_mode))
        os.replace(temporary, target)
    except BaseException:
        with suppress(OSError):
            os.unlink(temporary)
        raise
    _sync_folder(target.parent)
    return target


def _sync_folder(folder: Path) -> None:
    """Make a rename in ``folder`` durable (where the platform can)."""
    with suppress(OSError):
        descriptor = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(descriptor)
        finally:
            os.close(descriptor)
