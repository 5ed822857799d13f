"""Which harmony-chat process owns a turn still being generated, and whether that process is gone.

Each process that records turns holds an OS file lock (``filelock``) on a file of its own beside
the database, ``<database>.instances/<id>.lock``, and writes its id into the turns it starts. The
operating system releases the lock when the process ends, however it ends, so another process can
tell a live turn (lock held) from one a killed process left behind (lock free), with no clock and
no process ids that could be reused. The folder is 0700 and the lock files 0600, like the history.
"""

from __future__ import annotations

import atexit
import uuid
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

from filelock import FileLock, SoftFileLock, Timeout

from harmony_chat.private_files import PRIVATE_FILE, make_private_dir

SUFFIX = ".lock"


def instances_folder(database: Path) -> Path:
    """Where the lock files of the processes using ``database`` live."""
    return database.with_name(database.name + ".instances")


def _lock(path: Path) -> FileLock:
    return FileLock(path, timeout=0, mode=PRIVATE_FILE, thread_local=False)


def _remove(path: Path) -> None:
    with suppress(OSError):  # Windows refuses while the file is open; filelock removes it on release there
        path.unlink(missing_ok=True)


def _os_locked(lock: FileLock) -> bool:
    """Whether ``lock``, just acquired, is an OS lock (released when its process ends).

    Where the file system has no locks, filelock falls back to a lock file that outlives a killed
    process: such a lock tells nothing, so it is given back at once.
    """
    if isinstance(lock, SoftFileLock):
        lock.release()
        return False
    return True


class InstanceLock:
    """A process's claim on the turns it generates; taken on the first turn, held until exit."""

    def __init__(self, database: Path) -> None:
        self.folder = instances_folder(database)
        self.id = uuid.uuid4().hex
        self._lock: FileLock | None = None

    def claim(self) -> str | None:
        """Hold this instance's lock; return its id (None where the file system has no locks)."""
        if self._lock is None:
            lock = _lock(self.folder / f"{self.id}{SUFFIX}")
            try:
                make_private_dir(self.folder)
                lock.acquire()
            except (OSError, NotImplementedError, Timeout):
                return None
            if not _os_locked(lock):
                return None
            self._lock = lock
            atexit.register(self.release)
        return self.id

    def release(self) -> None:
        """Give up the claim (its turns become recoverable) and remove the lock file."""
        lock, self._lock = self._lock, None
        if lock is not None:
            _remove(self.folder / f"{self.id}{SUFFIX}")
            lock.release()


@contextmanager
def if_gone(folder: Path, instance: str) -> Iterator[bool]:
    """Yield True, holding its lock, when the process of ``instance`` has ended; False while it runs.

    The lock file of an ended process is removed on the way out.
    """
    path = folder / f"{instance}{SUFFIX}"
    lock = _lock(path)
    try:
        make_private_dir(folder)
        lock.acquire()
    except Timeout:
        yield False
        return
    except (OSError, NotImplementedError):
        yield False  # no way to tell here: leave the turn alone rather than risk a live one
        return
    if not _os_locked(lock):
        yield False
        return
    try:
        yield True
    finally:
        _remove(path)
        lock.release()


def sweep(folder: Path, keep: str) -> None:
    """Remove the lock files that ended processes left behind (all but ``keep``'s and the live ones)."""
    if not folder.is_dir():
        return
    for path in folder.glob(f"*{SUFFIX}"):
        if path.stem != keep:
            with if_gone(folder, path.stem):
                pass
