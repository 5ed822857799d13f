"""Turn a kernel's output messages into the text the model reads: streams, results, errors, images, files.

Text keeps the order it arrived in, the way a notebook cell shows it: printed output, the value of
the last expression, then a traceback if the code raised. Images are saved into the working folder
under a new name (never through a name the code made: see :mod:`workspace`) and named by path.
Collection stops storing text past a bound (an endless ``print`` loop must not fill memory) but
keeps counting, so the cut marker says how much was produced. Everything the model reads shares
one budget, ``limit_bytes``: the text, the list of saved images (past the budget an image is
neither saved nor listed, only counted), the list of written files and the notes of what could not
be saved, so that no flood of displays or files can make a result the context cannot hold.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from harmony_chat.tools.output import OUTPUT_LIMIT_BYTES, cap_output, cut_marker
from harmony_chat.tools.python.workspace import MAX_LISTED_FILES, Owner, save_numbered

_ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07]*\x07")
IMAGE_TYPES = {"image/png": "png", "image/jpeg": "jpg", "image/svg+xml": "svg", "image/gif": "gif"}


def strip_ansi(text: str) -> str:
    """Remove terminal colour and control sequences (tracebacks come coloured)."""
    return _ANSI.sub("", text)


def _plain(data: Mapping[str, Any]) -> str:
    value = data.get("text/plain", "")
    return value if isinstance(value, str) else ""


@dataclass
class CellOutput:
    """Collects one execution's messages into text; ``limit_bytes`` caps what reaches the model."""

    folder_fd: int | None
    """The code's working folder, as the host reaches it (images are saved there); None: not saved."""
    workdir_shown: str
    """The working folder's path as the code sees it (``/mnt/data`` in the sandbox)."""
    limit_bytes: int = OUTPUT_LIMIT_BYTES
    owner: Owner = None
    """Who saved images belong to (the sandbox's user when the kernel runs as ``nobody``)."""
    parts: list[str] = field(default_factory=list)
    images: list[str] = field(default_factory=list)
    unsaved: list[str] = field(default_factory=list)
    """Why images could not be saved (the disk is full): the first reason, with a count of the others."""
    unsaved_count: int = 0
    listed_bytes: int = 0
    """Bytes of the saved images' paths, as the model reads them."""
    left_out: int = 0
    """Displays (images, or their text) past the budget: neither saved nor shown, only counted."""
    error_name: str | None = None
    stored_bytes: int = 0
    dropped_bytes: int = 0

    def _add(self, text: str) -> None:
        data = text.encode("utf-8", errors="replace")
        room = self.limit_bytes + 1 - self.stored_bytes
        if room <= 0:
            self.dropped_bytes += len(data)
            return
        kept = data[:room].decode("utf-8", errors="ignore")
        kept_size = len(kept.encode("utf-8"))
        self.dropped_bytes += len(data) - kept_size
        self.parts.append(kept)
        self.stored_bytes += kept_size

    def add(self, msg: Mapping[str, Any], *, skip_interrupt: bool = False) -> None:
        """Take one iopub message that belongs to this execution."""
        kind = msg.get("msg_type") or msg.get("header", {}).get("msg_type", "")
        content: Mapping[str, Any] = msg.get("content", {})
        if kind == "stream":
            self._add(strip_ansi(str(content.get("text", ""))))
        elif kind in ("execute_result", "display_data"):
            data: Mapping[str, Any] = content.get("data", {})
            if self._spent() >= self.limit_bytes:
                self.left_out += 1
                return
            saved = self._save_image(data)
            if saved:
                self.images.append(saved)
                self.listed_bytes += len(saved.encode("utf-8")) + 2
            else:
                text = _plain(data)
                if text:
                    self._add(text if text.endswith("\n") else text + "\n")
        elif kind == "error":
            name = str(content.get("ename", "Error"))
            if skip_interrupt and name == "KeyboardInterrupt":
                return
            self.error_name = name
            lines = content.get("traceback") or [f"{name}: {content.get('evalue', '')}"]
            self._add(strip_ansi("\n".join(str(line) for line in lines)) + "\n")

    def _save_image(self, data: Mapping[str, Any]) -> str | None:
        for mime, suffix in IMAGE_TYPES.items():
            payload = data.get(mime)
            if not isinstance(payload, str):
                continue
            try:
                raw = payload.encode("utf-8") if suffix == "svg" else base64.b64decode(payload, validate=False)
            except (binascii.Error, ValueError):
                return None
            if self.folder_fd is None:
                return None
            try:
                name = save_numbered(
                    self.folder_fd, "output", suffix, raw, first=len(self.images) + 1, owner=self.owner
                )
            except OSError as error:
                self.unsaved_count += 1
                if not self.unsaved:
                    self.unsaved.append(f"[an image could not be saved: {error.strerror or error}]")
                return None
            return f"{self.workdir_shown}/{name}"
        return None

    def _spent(self) -> int:
        """Bytes of the budget used so far: the text kept and the image paths listed."""
        return self.stored_bytes + self.listed_bytes

    def text(self, *, notes: list[str], files: list[str]) -> tuple[str, bool]:
        """The model's text: output (capped, with the shared marker), then images, files and notes."""
        body = "".join(self.parts)
        if self.dropped_bytes:
            head = body.encode("utf-8")[: self.limit_bytes].decode("utf-8", errors="ignore")
            text = head + cut_marker(len(head.encode("utf-8")), self.stored_bytes + self.dropped_bytes)
            truncated = True
        else:
            capped = cap_output(body, self.limit_bytes)
            text, truncated = capped.text, capped.truncated
        room = max(self.limit_bytes - len(text.encode("utf-8")), 0)
        extra: list[str] = []
        if self.images:
            extra.append(bounded_list("images saved", self.images, room // 2))
        if self.left_out:
            extra.append(
                f"[{self.left_out:,} more displays (images or text) were left out, neither saved nor shown:"
                f" the output limit of {self.limit_bytes // 1024} KiB was reached]"
            )
        saved = set(self.images)
        new_files = [path for path in files if path not in saved]
        if new_files:
            extra.append(bounded_list("files written", new_files, room // 2, most=MAX_LISTED_FILES))
        extra.extend(self.unsaved)
        if self.unsaved_count > 1:
            extra.append(f"[{self.unsaved_count - 1:,} more images could not be saved either]")
        extra.extend(notes)
        if not text.strip() and not extra:
            return "[no output]", truncated
        if extra:
            text = (text.rstrip("\n") + "\n" if text.strip() else "") + "\n".join(extra)
        return text, truncated


def bounded_list(label: str, paths: list[str], room: int, *, most: int | None = None) -> str:
    """``[label: a, b, ...]``: ``most`` paths at most, within about ``room`` bytes, then how many more there were."""
    shown: list[str] = []
    used = len(label) + 4
    for path in paths:
        size = len(path.encode("utf-8")) + 2
        if shown and (used + size > room or len(shown) == most):
            break
        shown.append(path)
        used += size
    more = len(paths) - len(shown)
    tail = f" and {more:,} more" if more else ""
    return f"[{label}: " + ", ".join(shown) + tail + "]"
