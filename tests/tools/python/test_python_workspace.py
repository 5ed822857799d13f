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
from harmony_chat.tools.python.cell_output import CellOutput
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
    with pytest.raises(FileExistsError, match="no free name for output-N.svg") as taken:
        save_numbered(folder, "output", "svg", b"<svg/>")
    assert taken.value.errno == errno.EEXIST
    assert save_numbered(folder, "output", "svg", b"<svg/>", first=workspace.MAX_NAME_TRIES + 1).endswith("1001.svg")


def test_the_cell_output_saves_images_beside_the_codes_links_and_says_when_it_cannot(
    folder: int, work: Path, outside: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (work / "output-1.svg").symlink_to(outside / "authorized_keys")
    output = CellOutput(folder, "/mnt/data")
    output.add({"msg_type": "display_data", "content": {"data": {"image/svg+xml": "<svg>a</svg>"}}})
    assert output.images == ["/mnt/data/output-2.svg"] and not (outside / "authorized_keys").exists()

    def full(*_args: object) -> int:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "write", full)
    output.add({"msg_type": "display_data", "content": {"data": {"image/png": "aGVsbG8=", "text/plain": "<Img>"}}})
    text, _ = output.text(notes=[], files=[])
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
    (work / "zz.txt").write_text("after the swapped folder")
    real = workspace.open_subfolder

    def swapped(dir_fd: int, name: str, **kwargs: object) -> int:
        if name == "sub" and (work / "sub").is_dir() and not (work / "sub").is_symlink():
            (work / "sub").rename(work / "moved")  # the code swaps the folder for a link after the check
            (work / "sub").symlink_to(outside)
        return real(dir_fd, name, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(workspace, "open_subfolder", swapped)
    listing = scan(folder)
    assert list(listing.files) == ["zz.txt"] and not listing.complete  # the rest is still walked


def test_walks_are_bounded_in_depth_and_entries(folder: int, work: Path) -> None:
    deep = work
    for _ in range(workspace.MAX_DEPTH + 3):
        deep = deep / "d"
    deep.mkdir(parents=True)
    (deep / "bottom.txt").write_text("x")
    last_walked = work.joinpath(*["d"] * (workspace.MAX_DEPTH - 1))
    (last_walked / "z.txt").write_text("beside the folder cut off")
    listing = scan(folder)
    assert len(listing.folders) == workspace.MAX_DEPTH and not listing.complete
    assert list(listing.files) == ["/".join(["d"] * (workspace.MAX_DEPTH - 1) + ["z.txt"])]
    for number in range(30):
        (work / f"f{number:02}.txt").write_text("y")
    capped = scan(folder, max_entries=10)
    assert len(capped.files) + len(capped.folders) == 10 and not capped.complete


def test_the_hosts_folder_is_made_private_with_its_parents(tmp_path: Path) -> None:
    fd = open_folder(tmp_path / "data" / "python" / "c1")
    os.close(fd)
    assert stat.S_IMODE((tmp_path / "data" / "python" / "c1").stat().st_mode) == 0o700
    (tmp_path / "link").symlink_to(tmp_path / "data")
    with pytest.raises(OSError):
        open_folder(tmp_path / "link")


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
    (work / "one.txt").write_text("1")
    (work / "big.bin").write_bytes(os.urandom(2 * workspace._COPY_CHUNK + 5))
    target = open_folder(outside / "copies")
    try:
        assert not copy_file(folder, "link", target, "link")
        assert not copy_file(folder, "pipe", target, "pipe")  # returns at once: opened without blocking
        assert not copy_file(folder, "gone", target, "gone")
        assert copy_file(folder, "plain.txt", target, "plain.txt")
        assert copy_file(folder, "one.txt", target, "one.txt")
        assert copy_file(folder, "big.bin", target, "big.bin")
        with pytest.raises(FileExistsError):
            copy_file(folder, "plain.txt", target, "plain.txt")
    finally:
        os.close(target)
    copies = outside / "copies"
    assert sorted(os.listdir(copies)) == ["big.bin", "one.txt", "plain.txt"]
    assert (copies / "plain.txt").read_text() == "content" and (copies / "one.txt").read_text() == "1"
    assert (copies / "big.bin").read_bytes() == (work / "big.bin").read_bytes()  # several chunks, all of them
    assert (copies / "plain.txt").stat().st_mtime_ns == 2_000_000_000
    assert stat.S_IMODE((copies / "plain.txt").stat().st_mode) == 0o600  # never readable to others


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
    assert mirror.pull().skipped == 0
    expected = {"empty": "/", "sub": "/", "sub/deeper": "/", "sub/deeper/result.txt": "42"}
    assert _tree(host) == expected
    stamp = (host / "sub" / "deeper" / "result.txt").stat().st_ino
    mirror.pull()  # nothing changed: nothing copied or removed again
    assert _tree(host) == expected and (host / "sub" / "deeper" / "result.txt").stat().st_ino == stamp
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
    mirror.pull()
    assert _tree(host) == {"a.txt": "two, longer", "becomes-file": "now a file", "from-user.csv": "the user's own"}
    (sandbox / "becomes-file").unlink()
    (sandbox / "becomes-file").mkdir()  # and back to a folder
    (sandbox / "becomes-file" / "inside.txt").write_text("in")
    mirror.pull()
    assert _tree(host)["becomes-file"] == "/" and _tree(host)["becomes-file/inside.txt"] == "in"


def test_a_link_in_the_hosts_copy_gives_way_without_being_followed(tmp_path: Path, outside: Path) -> None:
    sandbox, host, sandbox_fd, host_fd = _sandbox_and_host(tmp_path)
    (host / "results").symlink_to(outside)  # someone put links in the host's copy
    (host / "notes.txt").symlink_to(outside / "secret.txt")
    (sandbox / "results").mkdir()
    (sandbox / "results" / "r.txt").write_text("r")
    (sandbox / "notes.txt").write_text("the code's notes")
    Mirror(sandbox_fd, host_fd, None).pull()
    assert _tree(host) == {"notes.txt": "the code's notes", "results": "/", "results/r.txt": "r"}
    assert _tree(outside) == {"secret.txt": "host secret"}


def test_a_file_growing_while_it_is_copied_is_copied_to_the_size_it_had(
    folder: int, work: Path, outside: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (work / "log.txt").write_bytes(b"x" * (workspace._COPY_CHUNK + 10))
    real_read = os.read

    def growing(fd: int, size: int) -> bytes:
        with open(work / "log.txt", "ab") as more:  # the code keeps writing meanwhile
            more.write(b"y" * workspace._COPY_CHUNK)
        return real_read(fd, size)

    monkeypatch.setattr(os, "read", growing)
    target = open_folder(outside / "copies")
    try:
        assert copy_file(folder, "log.txt", target, "log.txt")
    finally:
        os.close(target)
    assert (outside / "copies" / "log.txt").read_bytes() == b"x" * (workspace._COPY_CHUNK + 10)


def test_only_the_changed_files_are_copied_again(tmp_path: Path) -> None:
    sandbox, host, sandbox_fd, host_fd = _sandbox_and_host(tmp_path)
    for name in ("a.txt", "b.txt", "c.txt"):
        (sandbox / name).write_text(name)
    mirror = Mirror(sandbox_fd, host_fd, None)
    mirror.pull()
    inodes = {name: (host / name).stat().st_ino for name in ("a.txt", "b.txt")}
    (sandbox / "c.txt").write_text("changed")
    mirror.pull()
    assert (host / "c.txt").read_text() == "changed"
    assert {name: (host / name).stat().st_ino for name in ("a.txt", "b.txt")} == inodes


def test_deletions_reach_the_host_folder_by_folder_and_never_make_folders(tmp_path: Path) -> None:
    sandbox, host, sandbox_fd, host_fd = _sandbox_and_host(tmp_path)
    for folder in ("a", "b", "keep", "user-gone"):
        (sandbox / folder).mkdir()
        (sandbox / folder / "f.txt").write_text(folder)
    mirror = Mirror(sandbox_fd, host_fd, None)
    mirror.pull()
    (host / "b" / "added-by-user.txt").write_text("mine")  # b stays on the host: it holds the user's file
    (host / "user-gone" / "f.txt").unlink()
    (host / "user-gone").rmdir()  # the user removed it on the host
    for folder in ("a", "b", "user-gone"):
        (sandbox / folder / "f.txt").unlink()
        (sandbox / folder).rmdir()
    mirror.pull()
    assert _tree(host) == {"b": "/", "b/added-by-user.txt": "mine", "keep": "/", "keep/f.txt": "keep"}


def test_a_folder_that_cannot_be_read_keeps_its_host_copy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    sandbox, host, sandbox_fd, host_fd = _sandbox_and_host(tmp_path)
    (sandbox / "locked").mkdir()
    (sandbox / "locked" / "data.csv").write_text("1,2")
    (sandbox / "z.txt").write_text("z")
    mirror = Mirror(sandbox_fd, host_fd, None)
    mirror.pull()
    real_listdir = os.listdir

    def locked(fd: int) -> list[str]:
        if os.path.samestat(os.fstat(fd), os.stat(sandbox / "locked")):
            raise PermissionError(errno.EACCES, "denied")  # the code made it unreadable
        return real_listdir(fd)

    monkeypatch.setattr(os, "listdir", locked)
    (sandbox / "z.txt").unlink()
    listing = mirror.pull().listing
    assert not listing.complete and (host / "locked" / "data.csv").read_text() == "1,2"
    assert (host / "z.txt").exists()  # a walk cut short removes nothing


def test_a_file_gone_mid_walk_does_not_hide_the_rest(folder: int, work: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("a.txt", "b.txt", "c.txt"):
        (work / name).write_text(name)
    real_stat = os.stat

    def vanishing(name: str, **kwargs: object) -> os.stat_result:
        if name == "a.txt":
            raise FileNotFoundError(errno.ENOENT, "gone")
        return real_stat(name, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "stat", vanishing)
    assert sorted(scan(folder).files) == ["b.txt", "c.txt"]


def test_the_walk_counts_the_blocks_the_files_take(folder: int, work: Path) -> None:
    (work / "a.bin").write_bytes(os.urandom(50_000))
    (work / "sub").mkdir()
    (work / "sub" / "b.bin").write_bytes(os.urandom(70_000))
    blocks = sum(path.stat().st_blocks for path in (work / "a.bin", work / "sub" / "b.bin"))
    assert scan(folder).used_bytes == blocks * 512


def test_a_folder_the_code_removes_mid_copy_is_never_made_again_in_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sandbox, host, sandbox_fd, host_fd = _sandbox_and_host(tmp_path)
    (sandbox / "sub").mkdir()
    (sandbox / "sub" / "f.txt").write_text("f")
    (sandbox / "z.txt").write_text("z")
    real_scan = workspace.scan

    def then_removed(dir_fd: int, **kwargs: int) -> workspace.Listing:
        listing = real_scan(dir_fd, **kwargs)
        if dir_fd == sandbox_fd and (sandbox / "sub").exists():
            (sandbox / "sub" / "f.txt").unlink()
            (sandbox / "sub").rmdir()
        return listing

    monkeypatch.setattr(workspace, "scan", then_removed)
    Mirror(sandbox_fd, host_fd, None).pull()
    assert not (sandbox / "sub").exists() and (host / "z.txt").read_text() == "z"


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
    (host / "was-folder").mkdir()
    (host / "was-folder" / "x").write_text("x")
    (sandbox / "was-folder").write_text("the kernel's file")
    (host / "zz").mkdir()
    (host / "zz" / "later.txt").write_text("later")
    mirror = Mirror(sandbox_fd, host_fd, None)
    assert mirror.push().skipped == 0
    assert (sandbox / "keep.txt").read_text() == "kept from last time"
    assert (sandbox / ".home" / "config").read_text() == "the kernel's own"
    assert (sandbox / "evil.txt").is_symlink() and not (outside / "written-through").exists()
    assert (sandbox / "was-folder").read_text() == "the kernel's file"  # what is there stays
    assert (sandbox / "zz" / "later.txt").read_text() == "later"
    (sandbox / "keep.txt").unlink()  # the code deletes a file it was given: the host's copy goes too
    mirror.pull()
    assert not (host / "keep.txt").exists() and (host / "zz" / "later.txt").exists()


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

    monkeypatch.setattr(os, "write", small_disk)
    report = sync(host_fd, sandbox_fd, previous=None, replace=False)
    assert report.skipped == 2
    assert sorted(os.listdir(sandbox)) == ["a.bin"]  # no partial file left behind


def test_once_the_destination_is_full_no_later_file_is_tried(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    sandbox, host, sandbox_fd, host_fd = _sandbox_and_host(tmp_path)
    (host / "a-big.bin").write_bytes(b"z" * 100)
    (host / "b-small.bin").write_bytes(b"z")  # would fit in what is left, but the copy has stopped
    real_write = os.write
    tried: list[int] = []

    def fifty_bytes_left(fd: int, data: bytes | memoryview) -> int:
        tried.append(len(data))
        if len(data) > 50:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real_write(fd, data)

    monkeypatch.setattr(os, "write", fifty_bytes_left)
    assert sync(host_fd, sandbox_fd, previous=None, replace=False).skipped == 2
    assert tried == [100] and os.listdir(sandbox) == []


def test_no_room_for_a_folder_leaves_its_files_out_and_counts_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sandbox, host, sandbox_fd, host_fd = _sandbox_and_host(tmp_path)
    (host / "a").mkdir()
    (host / "a" / "one.txt").write_text("1")
    (host / "b").mkdir()
    (host / "b" / "two.txt").write_text("2")

    def no_room(*_args: object, **_kwargs: object) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "mkdir", no_room)
    assert sync(host_fd, sandbox_fd, previous=None, replace=False).skipped == 2
    assert os.listdir(sandbox) == []


needs_root = pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="giving files away needs root")


@needs_root
def test_what_the_host_creates_in_the_sandbox_belongs_to_the_sandbox_user(tmp_path: Path) -> None:
    sandbox, host, sandbox_fd, host_fd = _sandbox_and_host(tmp_path)
    (host / "sub").mkdir()
    (host / "sub" / "in.txt").write_text("i")
    Mirror(sandbox_fd, host_fd, (65534, 65534)).push()
    name = save_numbered(sandbox_fd, "output", "png", b"p", owner=(65534, 65534))
    output = CellOutput(sandbox_fd, "/mnt/data", owner=(65534, 65534))
    output.add({"msg_type": "display_data", "content": {"data": {"image/gif": "R0lG"}}})
    for path in (sandbox / "sub", sandbox / "sub" / "in.txt", sandbox / name, sandbox / "output-1.gif"):
        assert (path.stat().st_uid, path.stat().st_gid) == (65534, 65534)


@needs_root
def test_a_new_folder_swapped_for_a_link_is_not_given_away(
    folder: int, work: Path, outside: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_mkdir = os.mkdir

    def swapped(name: str, mode: int, *, dir_fd: int) -> None:
        real_mkdir(name, mode, dir_fd=dir_fd)
        os.rmdir(work / name)
        (work / name).symlink_to(outside / "secret.txt")  # the code swaps the new folder for a link

    monkeypatch.setattr(os, "mkdir", swapped)
    with pytest.raises(OSError):
        open_subfolder(folder, "new", create=True, owner=(65534, 65534))
    assert (outside / "secret.txt").stat().st_uid == os.geteuid()  # chown did not go through the link


def test_changed_files_leave_out_the_sandbox_home_and_are_sorted() -> None:
    before = {"same.txt": (1, 1), "edited.txt": (1, 1)}
    after = {"same.txt": (1, 1), "edited.txt": (2, 1), ".home/x": (3, 3), ".home/.cache/y": (1, 1), ".homework": (1, 1)}
    assert changed_files(before, after, "/w") == ["/w/.homework", "/w/edited.txt"]
    many = {f"f{number:02}": (1, 1) for number in range(25)}
    assert changed_files({}, many, "/w") == [f"/w/f{number:02}" for number in range(25)]


def test_the_model_reads_at_most_twenty_written_files_and_never_an_image_twice() -> None:
    output = CellOutput(None, "/w")
    output.images = ["/w/output-1.png", "/w/output-2.png"]
    files = [*output.images, *(f"/w/f{number:02}" for number in range(25))]
    text, _ = output.text(notes=[], files=files)
    assert "[images saved: /w/output-1.png, /w/output-2.png]" in text
    listed = ", ".join(f"/w/f{number:02}" for number in range(workspace.MAX_LISTED_FILES))
    assert f"[files written: {listed} and 5 more]" in text
    only_images, _ = output.text(notes=[], files=list(output.images))
    assert "files written" not in only_images


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
