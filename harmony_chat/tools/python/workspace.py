"""The python tool's working folder as the host touches it: never through a link, never outside the folder.

The sandboxed code controls every name in its working folder and can change any of them at any
moment (a thread of the kernel keeps running between calls), so the host never uses a path there.
Everything here works through a descriptor of a folder: each step opens one name relative to its
parent with ``O_NOFOLLOW`` (folders also with ``O_DIRECTORY``), files the host creates are opened
with ``O_CREAT | O_EXCL``, only regular files and folders are read or copied (a link, a FIFO or a
device is skipped, never opened through), and every walk is bounded in entries and depth.

In the bubblewrap sandbox the code's folder is a size-limited tmpfs (the quota) that the host
reaches only through the descriptor the launcher hands it; the host keeps a mirror of it in the
data dir, a folder the code never sees (:class:`Mirror`: copied out after each call, copied in
when a kernel starts). The container runner binds the host's folder itself.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import shutil
import stat
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

MAX_ENTRIES = 10_000
"""Files and folders a walk looks at, at most (the sandbox's tmpfs holds no more inodes than this)."""
MAX_DEPTH = 32
"""Folder levels a walk descends, at most (one descriptor is open per level)."""
MAX_NAME_TRIES = 1000
"""Numbered names tried for a new file before giving up (the code may have taken them all)."""
HIDDEN_ENTRIES = frozenset({".home"})
"""Top-level entries of the working folder that belong to the sandbox, never listed as produced."""
MAX_LISTED_FILES = 20
FILE_MODE = 0o600
FOLDER_MODE = 0o700
# Every POSIX system has these flags; the fallback only lets the module import where the tool cannot run (Windows).
NOFOLLOW_CLOEXEC = getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
_DIR_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | NOFOLLOW_CLOEXEC
_READ_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0) | NOFOLLOW_CLOEXEC
_CREATE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | NOFOLLOW_CLOEXEC
_COPY_CHUNK = 1024 * 1024
Stamp = tuple[int, int]
"""(mtime_ns, size) of a regular file: what tells a changed file from an unchanged one."""
Owner = tuple[int, int] | None
"""(uid, gid) given to what the host creates in the sandbox's folder, or None to keep the host's."""


def open_folder(path: Path) -> int:
    """A descriptor of the host folder ``path`` (created if missing); a link as its last name is refused.

    Only for folders whose parents the host owns (the data dir, the host's temp folder): the code
    never controls a parent of ``path``.
    """
    path.mkdir(parents=True, exist_ok=True, mode=FOLDER_MODE)
    return os.open(path, _DIR_FLAGS)


def open_subfolder(dir_fd: int, name: str, *, create: bool = False, owner: Owner = None) -> int:
    """A descriptor of the folder ``name`` in ``dir_fd``; a link or a file there raises ``OSError``.

    With ``create`` a missing folder is made (mode 0700, given to ``owner``).
    """
    if create:
        try:
            os.mkdir(name, FOLDER_MODE, dir_fd=dir_fd)
        except FileExistsError:
            pass
        else:
            _give(dir_fd, name, owner)
    return os.open(name, _DIR_FLAGS, dir_fd=dir_fd)


def _give(dir_fd: int, name: str, owner: Owner) -> None:
    if owner is not None:
        os.chown(name, *owner, dir_fd=dir_fd, follow_symlinks=False)


@contextmanager
def _parent(root_fd: int, relative: str) -> Iterator[tuple[int, str]]:
    """The folder holding ``relative`` (opened one name at a time from ``root_fd``) and the last name."""
    *folders, name = relative.split("/")
    fd = os.dup(root_fd)
    try:
        for folder in folders:
            sub = open_subfolder(fd, folder)
            os.close(fd)
            fd = sub
        yield fd, name
    finally:
        os.close(fd)


def create_file(dir_fd: int, name: str, data: bytes, *, owner: Owner = None) -> None:
    """Write a new file ``name`` in ``dir_fd`` (mode 0600, given to ``owner``).

    ``FileExistsError`` if the name is taken by anything, a dangling link included. A partly
    written file (disk full) is removed and the error raised.
    """
    fd = os.open(name, _CREATE_FLAGS, FILE_MODE, dir_fd=dir_fd)
    try:
        if owner is not None:
            os.fchown(fd, *owner)
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
    except OSError:
        os.close(fd)
        os.unlink(name, dir_fd=dir_fd)
        raise
    os.close(fd)


def save_numbered(dir_fd: int, stem: str, suffix: str, data: bytes, *, first: int = 1, owner: Owner = None) -> str:
    """Save ``data`` as the first free ``<stem>-<n>.<suffix>`` from ``first`` on; return the name.

    Raises ``OSError`` when it cannot be written (the disk is full, or every name is taken).
    """
    for number in range(first, first + MAX_NAME_TRIES):
        name = f"{stem}-{number}.{suffix}"
        try:
            create_file(dir_fd, name, data, owner=owner)
        except FileExistsError:
            continue
        return name
    raise FileExistsError(errno.EEXIST, f"no free name for {stem}-N.{suffix}")


@dataclass
class Listing:
    """What a walk found: regular files with their stamps, folders, and bytes they take on disk."""

    files: dict[str, Stamp] = field(default_factory=dict)
    """Relative path of each regular file -> (mtime_ns, size)."""
    folders: list[str] = field(default_factory=list)
    """Relative paths of folders, each after its parent."""
    used_bytes: int = 0
    """Disk blocks the regular files take, in bytes."""
    complete: bool = True
    """False when the walk stopped at a bound (entries, depth) or at an error."""


def scan(dir_fd: int, *, max_entries: int = MAX_ENTRIES, max_depth: int = MAX_DEPTH) -> Listing:
    """Walk the folder ``dir_fd`` without following any link, within the bounds."""
    listing = Listing()
    _scan_into(dir_fd, "", 1, listing, max_entries, max_depth)
    return listing


def _scan_into(dir_fd: int, prefix: str, depth: int, listing: Listing, max_entries: int, max_depth: int) -> None:
    try:
        entries = sorted(os.listdir(dir_fd))
    except OSError:
        listing.complete = False
        return
    for name in entries:
        if len(listing.files) + len(listing.folders) >= max_entries:
            listing.complete = False
            return
        try:
            info = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
        except OSError:
            continue  # gone since the listing
        relative = prefix + name
        if stat.S_ISREG(info.st_mode):
            listing.files[relative] = (info.st_mtime_ns, info.st_size)
            listing.used_bytes += info.st_blocks * 512
        elif stat.S_ISDIR(info.st_mode):
            listing.folders.append(relative)
            if depth >= max_depth:
                listing.complete = False
                continue
            try:
                sub = open_subfolder(dir_fd, name)
            except OSError:
                listing.complete = False  # replaced by a link or a file since the stat: not followed
                continue
            try:
                _scan_into(sub, relative + "/", depth + 1, listing, max_entries, max_depth)
            finally:
                os.close(sub)


def changed_files(before: Mapping[str, Stamp], after: Mapping[str, Stamp], shown: str) -> list[str]:
    """Paths (as the code sees them) of files created or modified between two walks, sorted.

    The sandbox's own ``.home`` is left out; the model's text lists at most :data:`MAX_LISTED_FILES`.
    """
    changed = sorted(
        name
        for name, stamp in after.items()
        if before.get(name) != stamp and name.split("/", 1)[0] not in HIDDEN_ENTRIES
    )
    return [f"{shown}/{name}" for name in changed]


def copy_file(src_fd: int, name: str, dst_fd: int, dst_name: str, *, owner: Owner = None) -> bool:
    """Copy the regular file ``name`` of ``src_fd`` to a new file ``dst_name`` of ``dst_fd``; True if copied.

    The source is opened without following a link and must be a regular file (else nothing is
    copied); at most the size it had when opened is copied, and the copy gets its mtime.
    ``FileExistsError`` if ``dst_name`` is taken; a copy cut short (disk full) is removed.
    """
    try:
        src = os.open(name, _READ_FLAGS, dir_fd=src_fd)
    except OSError:
        return False  # a link (ELOOP), or gone
    try:
        info = os.fstat(src)
        if not stat.S_ISREG(info.st_mode):
            return False
        dst = os.open(dst_name, _CREATE_FLAGS, FILE_MODE, dir_fd=dst_fd)
        try:
            if owner is not None:
                os.fchown(dst, *owner)
            left = info.st_size
            while left > 0 and (chunk := os.read(src, min(left, _COPY_CHUNK))):  # it may shrink meanwhile
                left -= len(chunk)
                view = memoryview(chunk)
                while view:
                    view = view[os.write(dst, view) :]
            os.utime(dst, ns=(info.st_atime_ns, info.st_mtime_ns))
        except BaseException:
            os.close(dst)
            os.unlink(dst_name, dir_fd=dst_fd)
            raise
        os.close(dst)
        return True
    finally:
        os.close(src)


def _remove(dir_fd: int, name: str) -> None:
    """Remove ``name`` from ``dir_fd`` whatever it is (a folder with its contents), never following a link."""
    if stat.S_ISDIR(os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mode):
        shutil.rmtree(name, dir_fd=dir_fd)  # symlink-attack safe where dir_fd is supported (Linux, macOS)
    else:
        os.unlink(name, dir_fd=dir_fd)


@dataclass
class SyncReport:
    """What one copy between the two folders did."""

    listing: Listing
    """The source as walked."""
    skipped: int = 0
    """Files not copied because the destination ran out of room."""


def sync(
    src_fd: int, dst_fd: int, *, previous: Listing | None, owner: Owner = None, replace: bool = True
) -> SyncReport:
    """Make the folder ``dst_fd`` hold the regular files and folders of ``src_fd``.

    A file is copied when the destination lacks it, or (with ``replace``) when its stamp differs
    from the destination's; what ``previous`` (the last walk of the source) held and the source no
    longer holds is removed from the destination if it is unchanged there since, so a file put
    there by someone else is never lost. Links and special files are not copied, a file whose
    folder could not be made is left out, and nothing is removed when a walk was cut short.
    """
    source = scan(src_fd)
    target = scan(dst_fd)
    report = SyncReport(source)
    full = False
    for folder in source.folders:
        try:
            _make_folder(dst_fd, folder, owner=owner, replace=replace)
        except OSError as error:
            if _out_of_room(error):
                full = True
                break
    for relative, stamp in source.files.items():
        if target.files.get(relative) == stamp:
            continue
        if not full:
            try:
                _copy_one(src_fd, dst_fd, relative, owner=owner, replace=replace)
                continue
            except OSError as error:
                if not _out_of_room(error):
                    continue  # raced away (a link now, or gone): not the destination's fault
                full = True
        report.skipped += 1
    if previous is not None and source.complete and target.complete and previous.complete:
        _remove_gone(dst_fd, previous, source, target)
    return report


def _make_folder(dst_fd: int, folder: str, *, owner: Owner, replace: bool) -> None:
    """Make the folder ``folder`` (its parents exist) in ``dst_fd``; with ``replace`` a file there gives way."""
    with _parent(dst_fd, folder) as (parent, name):
        mode = _mode(parent, name)
        if mode is not None and not stat.S_ISDIR(mode):
            if not replace:
                return
            _remove(parent, name)
        os.close(open_subfolder(parent, name, create=True, owner=owner))


def _mode(dir_fd: int, name: str) -> int | None:
    """The type and mode of ``name`` in ``dir_fd`` (a link's own), or None when there is none."""
    try:
        return os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mode
    except FileNotFoundError:
        return None


def _out_of_room(error: OSError) -> bool:
    return error.errno in (errno.ENOSPC, errno.EDQUOT)


def _copy_one(src_fd: int, dst_fd: int, relative: str, *, owner: Owner, replace: bool) -> None:
    """Copy one file by its relative path (its folder exists in the destination).

    Without ``replace`` a name the destination has keeps what it holds; with it, the file goes to
    a temporary name first and then takes the place of what was there.
    """
    with (
        _parent(src_fd, relative) as (src_parent, name),
        _parent(dst_fd, relative) as (dst_parent, dst_name),
    ):
        mode = _mode(dst_parent, dst_name)
        if mode is None:
            copy_file(src_parent, name, dst_parent, dst_name, owner=owner)
            return
        if not replace:
            return
        temporary = f".hc-copy-{secrets.token_hex(8)}"
        if not copy_file(src_parent, name, dst_parent, temporary, owner=owner):
            return
        if stat.S_ISDIR(mode):
            _remove(dst_parent, dst_name)
        os.rename(temporary, dst_name, src_dir_fd=dst_parent, dst_dir_fd=dst_parent)  # replaces a file or link


def _remove_gone(dst_fd: int, previous: Listing, source: Listing, target: Listing) -> None:
    """Remove from the destination what the source held at ``previous`` and no longer holds."""
    source_folders, target_folders = set(source.folders), set(target.folders)
    for relative, stamp in previous.files.items():
        if relative in source.files or target.files.get(relative) != stamp:
            continue
        with contextlib.suppress(OSError), _parent(dst_fd, relative) as (parent, name):
            os.unlink(name, dir_fd=parent)
    for folder in reversed(previous.folders):
        if folder in source_folders or folder not in target_folders:
            continue
        with contextlib.suppress(OSError), _parent(dst_fd, folder) as (parent, name):
            os.rmdir(name, dir_fd=parent)  # only when empty: what else is there stays


class Mirror:
    """The host's copy (in the data dir) of the code's folder (a tmpfs in the sandbox), kept in step.

    ``push`` fills a new kernel's folder from the copy; ``pull`` brings the code's changes back
    after each call and when the kernel ends (the descriptor keeps the tmpfs readable after the
    sandbox is gone). The copy is bounded by the quota: it never holds more than the folder did.
    """

    def __init__(self, sandbox_fd: int, host_fd: int, owner: Owner) -> None:
        self.sandbox_fd = sandbox_fd
        self.host_fd = host_fd
        self.owner = owner
        self._last: Listing | None = None

    def push(self) -> SyncReport:
        """Copy the host's files into the sandbox's folder (files already there are kept)."""
        report = sync(self.host_fd, self.sandbox_fd, previous=None, owner=self.owner, replace=False)
        self._last = scan(self.sandbox_fd)
        return report

    def pull(self) -> SyncReport:
        """Copy what the code wrote back to the host, and remove there what it deleted."""
        report = sync(self.sandbox_fd, self.host_fd, previous=self._last)
        self._last = report.listing
        return report


def free_bytes(dir_fd: int) -> int:
    """Bytes still free on the file system of ``dir_fd`` (for the sandbox's tmpfs: left in the quota)."""
    info = os.fstatvfs(dir_fd)
    return info.f_bavail * info.f_frsize
