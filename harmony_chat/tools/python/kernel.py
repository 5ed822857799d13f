"""One sandboxed IPython kernel: start it, run code in it, interrupt it, kill it.

The kernel speaks the Jupyter protocol over ZeroMQ on Unix sockets in a private folder
(``transport="ipc"``): they work across the sandbox's network namespace, where the parent's
``127.0.0.1`` is out of reach. ``jupyter_client``'s ``BlockingKernelClient`` talks to it; the
process is started and stopped here, not by a ``KernelManager``, because it runs under the
launcher and ``unshare``. Not thread-safe: the owner serialises calls.
"""

from __future__ import annotations

import json
import os
import queue
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, cast

from harmony_chat.tools.python.sandbox import LaunchPlan
from harmony_chat.tools.python.transcript import Transcript

if TYPE_CHECKING:
    from jupyter_client.blocking.client import BlockingKernelClient
    from jupyter_client.connect import KernelConnectionInfo

LAUNCHER = Path(__file__).with_name("launcher.py")
START_TIMEOUT_S = 60.0
INTERRUPT_GRACE_S = 3.0
POLL_S = 0.05
KERNEL_FLAGS = (
    "--HistoryManager.hist_file=:memory:",
    "--InteractiveShell.xmode=Plain",
    "--InteractiveShell.colors=nocolor",
    "--IPKernelApp.log_level=ERROR",
)
Ending = Literal["idle", "timeout", "cancelled", "died", "stuck"]
"""How an execution ended: ``idle`` (it finished), ``timeout``/``cancelled`` (interrupted, the
kernel lives on), ``died`` (the kernel process ended), ``stuck`` (it ignored the interrupt)."""


class KernelStartError(RuntimeError):
    """The kernel did not come up; the message says why in one line."""


@dataclass(frozen=True)
class Outcome:
    """The end of one execution."""

    ending: Ending
    exit_note: str = ""
    """For ``died``: how the process ended (exit status or signal)."""


def short_temp_root() -> str:
    """A temp folder whose paths stay well under the 107-byte Unix socket limit."""
    root = tempfile.gettempdir()
    return root if len(root) <= 40 else "/tmp"


def connection_info(ipc_dir: Path) -> dict[str, Any]:
    """The Jupyter connection info for a kernel listening on Unix sockets ``<ipc_dir>/k-1`` .. ``k-5``."""
    return {
        "transport": "ipc",
        "ip": str(ipc_dir / "k"),
        "shell_port": 1,
        "iopub_port": 2,
        "stdin_port": 3,
        "control_port": 4,
        "hb_port": 5,
        "key": secrets.token_hex(32),
        "signature_scheme": "hmac-sha256",
        "kernel_name": "python3",
    }


def describe_exit(code: int, *, via_init: bool) -> str:
    """Words for how the kernel process ended."""
    signum = -code if code < 0 else (code - 128 if via_init and code > 128 else 0)
    if signum:
        try:
            name = signal.Signals(signum).name
        except ValueError:
            name = f"signal {signum}"
        if signum == signal.SIGXCPU or name == "SIGXCPU":
            return "it used up its CPU time limit"
        if signum == signal.SIGKILL:
            return "it was killed (SIGKILL; out of memory or CPU time, or stopped from outside)"
        return f"it was stopped by {name}"
    return f"it exited with status {code}"


class KernelProcess:
    """A kernel running under a launch plan, with a client connected over Unix sockets."""

    def __init__(self, plan_for: Callable[[Path, list[str]], LaunchPlan], workdir: Path) -> None:
        self._plan_for = plan_for
        self.workdir = workdir
        self.ipc_dir: Path | None = None
        self.process: subprocess.Popen[bytes] | None = None
        self.client: BlockingKernelClient | None = None
        self.plan: LaunchPlan | None = None

    def start(self) -> None:
        """Start the kernel and wait until it answers; raise ``KernelStartError`` if it does not."""
        from jupyter_client.blocking.client import BlockingKernelClient  # loads ZeroMQ: only when needed

        ipc_dir = Path(tempfile.mkdtemp(prefix="hc-py-", dir=short_temp_root()))
        self.ipc_dir = ipc_dir
        info = connection_info(ipc_dir)
        connection_file = ipc_dir / "connection.json"
        connection_file.write_text(json.dumps(info), encoding="utf-8")
        kernel_argv = [sys.executable, "-m", "ipykernel_launcher", "-f", str(connection_file), *KERNEL_FLAGS]
        plan = self._plan_for(ipc_dir, kernel_argv)
        self.plan = plan
        (ipc_dir / "launch.json").write_text(json.dumps(plan.spec), encoding="utf-8")
        home = self.workdir / ".home"
        (home / "tmp").mkdir(parents=True, exist_ok=True)
        if plan.owner:
            _hand_over([ipc_dir, self.workdir], *plan.owner)
        log = (ipc_dir / "kernel.log").open("wb")
        try:
            self.process = subprocess.Popen(
                plan.argv,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=log,
                cwd=self.workdir,
                env=plan.env,
                start_new_session=True,
            )
        except OSError as error:
            raise KernelStartError(f"could not start the Python kernel: {error}") from error
        finally:
            log.close()
        client = BlockingKernelClient()
        client.load_connection_info(cast("KernelConnectionInfo", info))
        client.start_channels()
        self.client = client
        self._wait_ready(START_TIMEOUT_S)

    def _wait_ready(self, timeout_s: float) -> None:
        client = self.client
        assert client is not None
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if not self.alive():
                raise KernelStartError(f"the Python kernel did not start: {self.log_tail()}")
            msg_id = client.kernel_info()
            until = time.monotonic() + 1.0
            while time.monotonic() < until:
                try:
                    msg = client.get_iopub_msg(timeout=POLL_S)
                except queue.Empty:
                    continue
                if msg.get("parent_header", {}).get("msg_id") == msg_id:
                    self._drain_shell()
                    return
        raise KernelStartError(f"the Python kernel did not answer within {timeout_s:.0f} s")

    def _drain_shell(self) -> None:
        assert self.client is not None
        while True:
            try:
                self.client.get_shell_msg(timeout=0)
            except queue.Empty:
                return

    def log_tail(self) -> str:
        """The last line the kernel process wrote to stderr (why it failed to start)."""
        if self.ipc_dir is None:
            return "no log"
        try:
            lines = (self.ipc_dir / "kernel.log").read_text(encoding="utf-8", errors="replace").strip().splitlines()
        except OSError:
            lines = []
        code = self.process.poll() if self.process else None
        tail = lines[-1] if lines else "no message"
        return tail if code is None else f"{tail} ({describe_exit(code, via_init=self._via_init())})"

    def _via_init(self) -> bool:
        return bool(self.plan and self.plan.spec.get("init"))

    def alive(self) -> bool:
        """True while the kernel process runs."""
        return self.process is not None and self.process.poll() is None

    def exit_note(self) -> str:
        """How the kernel process ended (empty while it runs)."""
        code = self.process.poll() if self.process else None
        return "" if code is None else describe_exit(code, via_init=self._via_init())

    def run_code(
        self, code: str, transcript: Transcript, *, deadline: float, should_stop: Callable[[], bool]
    ) -> Outcome:
        """Run ``code``, feeding output to ``transcript``; interrupt on the deadline or ``should_stop``."""
        client = self.client
        assert client is not None
        self._drain_shell()
        request = client.session.msg(
            "execute_request",
            {
                "code": code,
                "silent": False,
                "store_history": True,
                "user_expressions": {},
                "allow_stdin": False,
                "stop_on_error": False,
            },
        )
        client.shell_channel.send(request)
        msg_id = request["header"]["msg_id"]
        ending: Ending | None = None
        grace_until = 0.0
        while True:
            if not self.alive():
                return Outcome("died", self.exit_note())
            now = time.monotonic()
            if ending is None:
                if should_stop():
                    ending = "cancelled"
                elif now >= deadline:
                    ending = "timeout"
                if ending is not None:
                    self.interrupt()
                    grace_until = now + INTERRUPT_GRACE_S
            elif now >= grace_until:
                return Outcome("stuck")
            try:
                msg = client.get_iopub_msg(timeout=POLL_S)
            except queue.Empty:
                continue
            if msg.get("parent_header", {}).get("msg_id") != msg_id:
                continue
            if msg["msg_type"] == "status" and msg["content"].get("execution_state") == "idle":
                return Outcome(ending or "idle")
            transcript.add(msg, skip_interrupt=ending is not None)

    def interrupt(self) -> None:
        """Ask the kernel to interrupt the running code (a message on the control channel)."""
        if self.client is not None:
            self.client.control_channel.send(self.client.session.msg("interrupt_request", {}))

    def kill(self) -> None:
        """Stop the kernel and everything it started (SIGTERM to the launcher, then SIGKILL); repeatable."""
        process = self.process
        if process is None or process.poll() is not None:
            return
        for signum, wait_s in ((signal.SIGTERM, 3.0), (signal.SIGKILL, 10.0)):
            try:
                os.killpg(process.pid, signum)
            except (ProcessLookupError, PermissionError):
                process.send_signal(signum)
            try:
                process.wait(timeout=wait_s)
                return
            except subprocess.TimeoutExpired:
                continue

    def close(self) -> None:
        """Kill the kernel, reap it, close the client and remove the socket folder."""
        self.kill()
        if self.client is not None:
            self.client.stop_channels()
            self.client = None
        if self.plan is not None and self.plan.cleanup_argv:
            try:
                subprocess.run(self.plan.cleanup_argv, capture_output=True, timeout=30, check=False)
            except (OSError, subprocess.SubprocessError):
                pass
        if self.ipc_dir is not None:
            shutil.rmtree(self.ipc_dir, ignore_errors=True)
            self.ipc_dir = None


def _hand_over(folders: list[Path], uid: int, gid: int) -> None:
    """Give ``folders`` (recursively) to the sandbox user, so the kernel can write there."""
    for folder in folders:
        os.chown(folder, uid, gid)
        for root, dirs, files in os.walk(folder):
            for name in dirs + files:
                try:
                    os.lchown(os.path.join(root, name), uid, gid)
                except OSError:
                    continue
