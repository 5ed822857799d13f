"""The ``python`` built-in tool: a stateful, contained Jupyter kernel per conversation.

The model addresses it as ``python`` (on the analysis channel) with code as the message body.
``PythonTool.run`` blocks (call it from a worker thread), never raises, and returns a
``ToolResult`` whose text is what the model reads: printed output, the last expression's value,
the traceback of an error, saved images and written files by path, and a note when the code
timed out, was stopped, took the kernel down, or filled the working folder's quota. The kernel
starts on the first call and again after it dies; variables persist between calls in between.
"""

from __future__ import annotations

import contextlib
import threading
import time
import uuid
from collections.abc import Callable
from pathlib import Path

from openai_harmony import ToolNamespaceConfig

from harmony_chat.locations import data_dir
from harmony_chat.private_files import make_private_dir
from harmony_chat.tools.base import ToolResult, ToolStatus
from harmony_chat.tools.output import OUTPUT_LIMIT_BYTES
from harmony_chat.tools.python.cell_output import CellOutput
from harmony_chat.tools.python.container import ContainerRunner
from harmony_chat.tools.python.kernel import LAUNCHER, MAX_MESSAGE_BYTES, KernelProcess, Outcome
from harmony_chat.tools.python.sandbox import (
    MNT_DATA,
    LaunchPlan,
    Platform,
    SandboxLimits,
    build_plan,
    describe,
    probe_platform,
)
from harmony_chat.tools.python.workspace import Listing, changed_files, free_bytes, scan

DEFAULT_TIMEOUT_S = 120.0
FULL_MARGIN_BYTES = 64 * 1024
"""With less than this (or 1 % of the quota) left, the working folder counts as full."""
_MIB = 1024**2
RECIPIENTS = frozenset({"python", "python.exec", "python.run", "python.execute", "python.python"})


def workdir_for(conversation_id: str) -> Path:
    """The working folder of one conversation's kernel, under the data dir."""
    safe = "".join(char if char.isalnum() or char in "-_" else "_" for char in conversation_id) or "default"
    return data_dir() / "python" / safe


def python_namespace(timeout_s: float, workdir_shown: str, *, network_blocked: bool) -> ToolNamespaceConfig:
    """Harmony's ``python`` declaration with this machine's timeout, working folder and network made true."""
    config = ToolNamespaceConfig.python()
    text = config.description.replace("120.0 seconds", f"{float(timeout_s):.1f} seconds")
    if workdir_shown != MNT_DATA:
        text = text.replace("'/mnt/data'", repr(workdir_shown))
    if network_blocked:
        text = text.replace(
            "Internet access for this session is UNKNOWN. Depends on the cluster.",
            "Internet access for this session is disabled.",
        )
    return ToolNamespaceConfig(name=config.name, description=text, tools=list(config.tools))


class PythonTool:
    """A Jupyter kernel in a sandbox, for one conversation; thread-safe, one call at a time."""

    def __init__(
        self,
        conversation_id: str | None = None,
        *,
        workdir: Path | None = None,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        limits: SandboxLimits | None = None,
        container: ContainerRunner | None = None,
        output_limit_bytes: int = OUTPUT_LIMIT_BYTES,
        platform: Platform | None = None,
    ) -> None:
        self._workdir = workdir or workdir_for(conversation_id or uuid.uuid4().hex)
        self.timeout_s = timeout_s
        self.limits = limits or SandboxLimits()
        self.container = container
        self.output_limit_bytes = output_limit_bytes
        self._lock = threading.Lock()
        self._kernel: KernelProcess | None = None
        self._closed = False
        self._pending_note = ""
        self._platform = platform

    @property
    def workdir(self) -> Path:
        """The working folder on this machine (the code sees it as ``workdir_shown``)."""
        return self._workdir

    @property
    def platform(self) -> Platform:
        """What this machine allows (probed once per process unless given)."""
        return self._platform or probe_platform()

    @property
    def workdir_shown(self) -> str:
        """The working folder's path as the code sees it: ``/mnt/data`` when the sandbox maps it."""
        if self.container is not None:
            return MNT_DATA
        plan = self._kernel.plan if self._kernel else None
        return plan.workdir_inside if plan is not None else MNT_DATA

    def namespace(self) -> ToolNamespaceConfig:
        """The ``python`` tool as the system message declares it (timeout, folder and network made true)."""
        blocked = self.container.network == "none" if self.container else self.platform.network_blocked
        return python_namespace(self.timeout_s, self.workdir_shown, network_blocked=blocked)

    @staticmethod
    def handles(recipient: str) -> bool:
        """True for the recipients gpt-oss uses for this tool: ``python`` and ``python.<verb>``."""
        name = recipient.strip().split(" ", 1)[0].split("<", 1)[0]
        return name in RECIPIENTS or name.startswith("python.")

    def containment(self) -> str:
        """What is contained on this machine, for the approval dialog's warning."""
        if self.container is not None:
            return self.container.describe(self.limits)
        return describe(self.platform, self.limits, self.workdir_shown)

    def _plan(self, private_dir: Path, kernel_argv_for: Callable[[str], list[str]]) -> LaunchPlan:
        if self.container is not None:
            return self.container.plan(
                self.limits, workdir=self._workdir, private_dir=private_dir, kernel_argv_for=kernel_argv_for
            )
        return build_plan(
            self.platform, self.limits, private_dir=private_dir, kernel_argv_for=kernel_argv_for, launcher=LAUNCHER
        )

    def _disk_note(self, kernel: KernelProcess, after: Listing) -> str:
        """The note that the working folder is full, when it is (empty otherwise)."""
        quota = self.limits.disk_bytes
        plan = kernel.plan
        if plan is not None and plan.view and kernel.folder_fd is not None:
            full = free_bytes(kernel.folder_fd) < max(FULL_MARGIN_BYTES, quota // 100)
            what = f"{plan.workdir_inside} and /tmp hold at most {quota / _MIB:g} MiB together"
        else:
            full = after.used_bytes >= quota
            what = f"it may hold {quota / _MIB:g} MiB"
        if not full:
            return ""
        return f"[the working folder is full: {what} (the quota, [tools] python_disk_mb); delete files to make room]"

    def _ensure_kernel(self) -> KernelProcess:
        kernel = self._kernel
        if kernel is not None and kernel.alive():
            return kernel
        if kernel is not None:
            self._pending_note = (
                f"[note: the Python kernel had stopped ({kernel.exit_note()}); this ran in a fresh kernel,"
                " earlier variables are gone]"
            )
            kernel.close()
            self._kernel = None
        make_private_dir(self._workdir)
        kernel = KernelProcess(self._plan, self._workdir)
        self._kernel = kernel
        try:
            kernel.start()
        except BaseException:
            kernel.close()
            self._kernel = None
            raise
        if kernel.pushed is not None and kernel.pushed.skipped:
            self._pending_note = " ".join(
                filter(
                    None,
                    [
                        self._pending_note,
                        f"[note: {kernel.pushed.skipped} files of the working folder did not fit in its quota;"
                        " they are kept on the host only]",
                    ],
                )
            )
        return kernel

    def start(self) -> None:
        """Start the kernel now (it otherwise starts on the first call); raise ``KernelStartError``."""
        with self._lock:
            self._ensure_kernel()

    def run(self, code: str, *, timeout_s: float | None = None, should_stop: Callable[[], bool]) -> ToolResult:
        """Run ``code`` in the kernel and block until it ends; never raises."""
        started = time.monotonic()
        limit = self.timeout_s if timeout_s is None else timeout_s
        with self._lock:
            if self._closed:
                return ToolResult("[the python tool is closed]", "failed", elapsed_s=0.0)
            if self.container is None and not self.platform.available:
                return ToolResult(f"[the python tool is unavailable: {self.platform.reason}]", "failed", elapsed_s=0.0)
            try:
                kernel = self._ensure_kernel()
            except Exception as error:  # noqa: BLE001 - KernelStartError, OSError, or ZeroMQ failing: all one line
                return ToolResult(
                    f"[the Python kernel could not start: {error}]", "failed", elapsed_s=time.monotonic() - started
                )
            notes = [self._pending_note] if self._pending_note else []
            self._pending_note = ""
            shown = kernel.plan.workdir_inside if kernel.plan else str(self._workdir)
            assert kernel.folder_fd is not None  # a started kernel has its folder
            before = scan(kernel.folder_fd)
            owner = kernel.plan.owner if kernel.plan else None
            output = CellOutput(kernel.folder_fd, shown, self.output_limit_bytes, owner)
            try:
                deadline = time.monotonic() + limit  # the kernel's start does not count against the code
                outcome = kernel.run_code(code, output, deadline=deadline, should_stop=should_stop)
            except Exception as error:  # noqa: BLE001 - a broken channel must not reach the UI
                kernel.kill()
                outcome = Outcome("died", f"the connection to it failed: {error}")
            after = scan(kernel.folder_fd)  # the descriptor outlives the kernel: read before it is closed
            files = changed_files(before.files, after.files, shown)
            disk_note = self._disk_note(kernel, after)
            if kernel.mirror is not None:
                with contextlib.suppress(OSError):
                    kernel.mirror.pull()
            status, note = self._ending(outcome, limit, kernel)
            lost = (
                f"[some output was lost: a message from the kernel over {MAX_MESSAGE_BYTES // _MIB} MiB is refused]"
                if outcome.output_lost
                else ""
            )
            notes.extend(filter(None, [disk_note, lost, note]))
            text, truncated = output.text(notes=notes, files=files)
            if status == "done" and output.error_name:
                status = "failed"
            return ToolResult(text, status, truncated, time.monotonic() - started)

    def _ending(self, outcome: Outcome, limit: float, kernel: KernelProcess) -> tuple[ToolStatus, str]:
        if outcome.ending == "idle":
            return "done", ""
        if self._closed:
            kernel.close()
            self._kernel = None
            return "cancelled", "[the python tool was closed while the code ran]"
        if outcome.ending in ("timeout", "cancelled"):
            what = f"timed out after {limit:g} s" if outcome.ending == "timeout" else "was stopped by the user"
            return (
                outcome.ending,
                f"[execution {what}: the code was interrupted; the kernel and its variables are kept]",
            )
        if outcome.ending == "stuck":
            kernel.close()
            self._kernel = None
            return "timeout", (
                "[execution did not stop when interrupted: the kernel was restarted and its variables are lost]"
            )
        kernel.close()
        self._kernel = None
        self._pending_note = ""
        return "failed", (
            f"[the Python kernel died ({outcome.exit_note or 'no exit status'}); its variables are lost,"
            " the next call starts a fresh kernel]"
        )

    def restart(self) -> None:
        """Throw the kernel away (variables and all); the next call starts a fresh one."""
        with self._lock:
            if self._kernel is not None:
                self._kernel.close()
                self._kernel = None
            self._pending_note = ""

    def close(self) -> None:
        """Stop the kernel and every process it started; safe to call twice, from any thread."""
        self._closed = True
        kernel = self._kernel
        if kernel is not None:
            kernel.kill()
        with self._lock:
            if self._kernel is not None:
                self._kernel.close()
                self._kernel = None
