"""The host's file work in the code's folder, against crafted links, races, FIFOs, bounds and a full disk.

The code controls every name in its working folder; these tests plant what it could plant and
check that the host never writes, reads or lists anything outside the folder through it.
"""

from __future__ import annotations

import errno
import os
import stat
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from harmony_chat.tools.python import workspace
from harmony_chat.tools.python.transcript import Transcript
from harmony_chat.tools.python.workspace import (
    Mirror,
    changed_files,
    copy_file,
    create_file,
    free_bytes,
    open_folder,
    open_subfolder,
    save_numbered,
    scan,
    sync,
)

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="the python tool's folders are POSIX")


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A folder outside the working folder with a file the code must not reach through the host."""
    folder = tmp_path / "outside"
    folder.mkdir()
    (folder / "secret.txt").write_text("host secret", encoding="utf-8")
    return folder


@pytest.fixture
def work(tmp_path: Path) -> Path:
    return tmp_path / "work"


@pytest.fixture
def folder(work: Path) -> Iterator[int]:
    fd = open_folder(work)
    yield fd
    os.close(fd)


def _tree(root: Path) -> dict[str, str]:
    """Every entry under ``root``, links as ``-> target``, files by content, folders as ``/``."""
    found = {}
    for path in sorted(root.rglob("*")):
        relative = str(path.relative_to(root))
        if path.is_symlink():
            found[relative] = "-> " + os.readlink(path)
        elif path.is_dir():
            found[relative] = "/"
        else:
            found[relative] = path.read_text(encoding="utf-8", errors="replace")
    return found


def test_a_new_file_never_goes_through_a_link(folder: int, work: Path, outside: Path) -> None:
    (work / "output-1.png").symlink_to(outside / "authorized_keys")  # dangling
    (work / "output-2.png").symlink_to(outside / "secret.txt")  # an existing file outside
    (work / "output-3.png").mkdir()
    name = save_numbered(folder, "output", "png", b"image", first=1)
    assert name == "output-4.png" and (work / name).read_bytes() == b"image"
    assert _tree(outside) == {"secret.txt": "host secret"}  # nothing created, nothing overwritten
    assert stat.S_IMODE((work / name).stat().st_mode) == 0o600
    with pytest.raises(FileExistsError):
        create_file(folder, "output-1.png", b"x")
    assert not (outside / "authorized_keys").exists()


def test_numbered_names_give_up_when_the_code_took_them_all(folder: int, work: Path) -> None:
    for number in range(1, workspace.MAX_NAME_TRIES + 1):
        (work / f"output-{number}.svg").symlink_to("/nowhere")
    with pytest.raises(FileExistsError):
        save_numbered(folder, "output", "svg", b"<svg/>")
    assert save_numbered(folder, "output", "svg", b"<svg/>", first=workspace.MAX_NAME_TRIES + 1).endswith("1001.svg")


def test_the_transcript_saves_images_beside_the_codes_links_and_says_when_it_cannot(
    folder: int, work: Path, outside: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (work / "output-1.svg").symlink_to(outside / "authorized_keys")
    transcript = Transcript(folder, "/mnt/data")
    transcript.add({"msg_type": "display_data", "content": {"data": {"image/svg+xml": "<svg>a</svg>"}}})
    assert transcript.images == ["/mnt/data/output-2.svg"] and not (outside / "authorized_keys").exists()

    def full(*_args: object) -> int:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(workspace.os, "write", full)
    transcript.add({"msg_type": "display_data", "content": {"data": {"image/png": "aGVsbG8=", "text/plain": "<Img>"}}})
    text, _ = transcript.text(notes=[], files=[])
    assert "<Img>" in text and "[an image could not be saved: No space left on device]" in text
    assert sorted(os.listdir(work)) == ["output-1.svg", "output-2.svg"]  # the partial file was removed


def test_a_walk_lists_regular_files_only_and_never_follows_a_link(folder: int, work: Path, outside: Path) -> None:
    (work / "sub").mkdir()
    (work / "sub" / "data.csv").write_bytes(os.urandom(100_000))
    (work / "sub" / "evil").symlink_to(outside / "secret.txt")
    (work / "tree").symlink_to(outside)
    (work / "loop").symlink_to(work)
    os.mkfifo(work / "pipe")
    listing = scan(folder)
    assert sorted(listing.files) == ["sub/data.csv"] and listing.folders == ["sub"] and listing.complete
    assert listing.files["sub/data.csv"][1] == 100_000 and listing.used_bytes >= 100_000


def test_a_folder_swapped_for_a_link_mid_walk_is_not_followed(
    folder: int, work: Path, outside: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (work / "sub").mkdir()
    (work / "sub" / "mine.txt").write_text("mine")
    real = workspace.open_subfolder

    def swapped(dir_fd: int, name: str, **kwargs: object) -> int:
        if name == "sub" and (work / "sub").is_dir() and not (work / "sub").is_symlink():
            (work / "sub").rename(work / "moved")  # the code swaps the folder for a link after the check
            (work / "sub").symlink_to(outside)
        return real(dir_fd, name, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(workspace, "open_subfolder", swapped)
    listing = scan(folder)
    assert "sub/secret.txt" not in listing.files and not listing.complete
    assert all(not name.endswith("secret.txt") for name in listing.files)


def test_walks_are_bounded_in_depth_and_entries(folder: int, work: Path) -> None:
    deep = work
    for _ in range(workspace.MAX_DEPTH + 3):
        deep = deep / "d"
    deep.mkdir(parents=True)
    (deep / "bottom.txt").write_text("x")
    listing = scan(folder)
    assert len(listing.folders) == workspace.MAX_DEPTH and not listing.complete and not listing.files
    for number in range(30):
        (work / f"f{number:02}.txt").write_text("y")
    capped = scan(folder, max_entries=10)
    assert len(capped.files) + len(capped.folders) == 10 and not capped.complete


def test_a_subfolder_that_is_a_link_or_a_file_is_refused(folder: int, work: Path, outside: Path) -> None:
    (work / "link").symlink_to(outside)
    (work / "file").write_text("f")
    for name in ("link", "file"):
        with pytest.raises(OSError):
            open_subfolder(folder, name)
        with pytest.raises(OSError):
            open_subfolder(folder, name, create=True)
    created = open_subfolder(folder, "new", create=True)
    os.close(created)
    assert stat.S_IMODE((work / "new").stat().st_mode) == 0o700


def test_copy_reads_only_regular_files_and_keeps_the_mtime(folder: int, work: Path, outside: Path) -> None:
    (work / "link").symlink_to(outside / "secret.txt")
    os.mkfifo(work / "pipe")
    (work / "plain.txt").write_text("content")
    os.utime(work / "plain.txt", ns=(1_000_000_000, 2_000_000_000))
    target = open_folder(outside / "copies")
    try:
        assert copy_file(folder, "link", target, "link") is None
        assert copy_file(folder, "pipe", target, "pipe") is None  # returns at once: opened without blocking
        assert copy_file(folder, "gone", target, "gone") is None
        stamp = copy_file(folder, "plain.txt", target, "plain.txt")
        with pytest.raises(FileExistsError):
            copy_file(folder, "plain.txt", target, "plain.txt")
    finally:
        os.close(target)
    assert stamp == (2_000_000_000, 7)
    assert _tree(outside / "copies") == {"plain.txt": "content"}


def _sandbox_and_host(tmp_path: Path) -> tuple[Path, Path, int, int]:
    sandbox, host = tmp_path / "sandbox", tmp_path / "host"
    return sandbox, host, open_folder(sandbox), open_folder(host)


def test_the_mirror_copies_files_and_folders_never_links_or_what_they_point_to(tmp_path: Path, outside: Path) -> None:
    sandbox, host, sandbox_fd, host_fd = _sandbox_and_host(tmp_path)
    (sandbox / "sub" / "deeper").mkdir(parents=True)
    (sandbox / "sub" / "deeper" / "result.txt").write_text("42")
    (sandbox / "sub" / "evil").symlink_to(outside / "secret.txt")
    (sandbox / "tree").symlink_to(outside)
    (sandbox / "empty").mkdir()
    os.mkfifo(sandbox / "pipe")
    mirror = Mirror(sandbox_fd, host_fd, None)
    report = mirror.pull()
    assert _tree(host) == {"empty": "/", "sub": "/", "sub/deeper": "/", "sub/deeper/result.txt": "42"}
    assert (report.copied, report.skipped, report.full) == (1, 0, False)
    assert mirror.pull().copied == 0  # nothing changed: nothing copied again
    assert _tree(outside) == {"secret.txt": "host secret"}


def test_the_mirror_follows_changes_and_deletions_but_keeps_what_the_user_put_there(tmp_path: Path) -> None:
    sandbox, host, sandbox_fd, host_fd = _sandbox_and_host(tmp_path)
    (sandbox / "a.txt").write_text("one")
    (sandbox / "gone.txt").write_text("bye")
    (sandbox / "old").mkdir()
    (sandbox / "becomes-file").mkdir()
    (sandbox / "becomes-file" / "x").write_text("x")
    mirror = Mirror(sandbox_fd, host_fd, None)
    mirror.pull()
    (host / "from-user.csv").write_text("the user's own")
    (sandbox / "a.txt").write_text("two, longer")
    (sandbox / "gone.txt").unlink()
    (sandbox / "old").rmdir()
    (sandbox / "becomes-file" / "x").unlink()
    (sandbox / "becomes-file").rmdir()
    (sandbox / "becomes-file").write_text("now a file")
    report = mirror.pull()
    assert _tree(host) == {"a.txt": "two, longer", "becomes-file": "now a file", "from-user.csv": "the user's own"}
    assert report.removed >= 2


def test_a_file_changed_on_the_host_since_the_last_copy_is_not_deleted(tmp_path: Path) -> None:
    sandbox, host, sandbox_fd, host_fd = _sandbox_and_host(tmp_path)
    (sandbox / "notes.txt").write_text("from the code")
    mirror = Mirror(sandbox_fd, host_fd, None)
    mirror.pull()
    (host / "notes.txt").write_text("edited by the user")
    (sandbox / "notes.txt").unlink()
    mirror.pull()
    assert (host / "notes.txt").read_text() == "edited by the user"


def test_push_fills_a_new_kernels_folder_and_keeps_what_is_there(tmp_path: Path, outside: Path) -> None:
    sandbox, host, sandbox_fd, host_fd = _sandbox_and_host(tmp_path)
    (host / "keep.txt").write_text("kept from last time")
    (host / ".home").mkdir()
    (host / ".home" / "config").write_text("host's copy")
    (sandbox / ".home").mkdir()
    (sandbox / ".home" / "config").write_text("the kernel's own")
    (sandbox / "evil.txt").symlink_to(outside / "written-through")
    (host / "evil.txt").write_text("must not go through the link")
    report = Mirror(sandbox_fd, host_fd, None).push()
    assert (sandbox / "keep.txt").read_text() == "kept from last time"
    assert (sandbox / ".home" / "config").read_text() == "the kernel's own"
    assert (sandbox / "evil.txt").is_symlink() and not (outside / "written-through").exists()
    assert (report.copied, report.kept, report.skipped) == (1, 2, 0)


def test_a_full_destination_stops_the_copy_and_says_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    sandbox, host, sandbox_fd, host_fd = _sandbox_and_host(tmp_path)
    for name in ("a", "b", "c"):
        (host / f"{name}.bin").write_bytes(b"z" * 10)
    real_write = os.write
    written: list[int] = []

    def small_disk(fd: int, data: bytes | memoryview) -> int:
        if sum(written) >= 10:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        written.append(len(data))
        return real_write(fd, data)

    monkeypatch.setattr(workspace.os, "write", small_disk)
    report = sync(host_fd, sandbox_fd, previous=None, replace=False)
    assert report.full and (report.copied, report.skipped) == (1, 2)
    assert sorted(os.listdir(sandbox)) == ["a.bin"]  # no partial file left behind


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="giving files away needs root")
def test_what_the_host_creates_in_the_sandbox_belongs_to_the_sandbox_user(tmp_path: Path) -> None:
    sandbox, host, sandbox_fd, host_fd = _sandbox_and_host(tmp_path)
    (host / "sub").mkdir()
    (host / "sub" / "in.txt").write_text("i")
    Mirror(sandbox_fd, host_fd, (65534, 65534)).push()
    name = save_numbered(sandbox_fd, "output", "png", b"p", owner=(65534, 65534))
    for path in (sandbox / "sub", sandbox / "sub" / "in.txt", sandbox / name):
        assert (path.stat().st_uid, path.stat().st_gid) == (65534, 65534)


def test_changed_files_leave_out_the_sandbox_home_and_are_bounded() -> None:
    before = {"same.txt": (1, 1), "edited.txt": (1, 1)}
    after = {"same.txt": (1, 1), "edited.txt": (2, 1), ".home/x": (3, 3), ".homework": (1, 1)}
    assert changed_files(before, after, "/w") == ["/w/.homework", "/w/edited.txt"]
    many = {f"f{number:02}": (1, 1) for number in range(25)}
    listed = changed_files({}, many, "/w")
    assert len(listed) == workspace.MAX_LISTED_FILES + 1 and listed[-1] == "and 5 more"
    assert listed[0] == "/w/f00" and changed_files({}, dict(list(many.items())[:20]), "/w")[-1] == "/w/f19"


def test_free_bytes_reads_the_folders_file_system(folder: int, work: Path) -> None:
    info = os.statvfs(work)
    assert abs(free_bytes(folder) - info.f_bavail * info.f_frsize) < 64 * 1024**2


def _open_fds() -> int:
    return len(os.listdir("/proc/self/fd" if os.path.isdir("/proc/self/fd") else "/dev/fd"))


def test_no_descriptor_is_left_open(tmp_path: Path, outside: Path) -> None:
    sandbox, host, sandbox_fd, host_fd = _sandbox_and_host(tmp_path)
    (sandbox / "a" / "b").mkdir(parents=True)
    (sandbox / "a" / "b" / "c.txt").write_text("c")
    (sandbox / "a" / "link").symlink_to(outside)
    opened = _open_fds()
    mirror = Mirror(sandbox_fd, host_fd, None)
    mirror.pull()
    scan(sandbox_fd)
    save_numbered(sandbox_fd, "output", "png", b"p")
    (sandbox / "a" / "b" / "c.txt").unlink()
    mirror.pull()
    assert _open_fds() == opened
