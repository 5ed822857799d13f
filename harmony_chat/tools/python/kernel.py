"""One sandboxed IPython kernel: start it, run code in it, interrupt it, kill it.

The kernel speaks the Jupyter protocol over ZeroMQ on Unix sockets (``transport="ipc"``): they
work across the sandbox's network namespace, where the parent's ``127.0.0.1`` is out of reach.
``jupyter_client``'s ``BlockingKernelClient`` talks to it; the process is started and stopped
here, not by a ``KernelManager``, because it runs under the launcher and bubblewrap.

The host keeps a private folder per kernel (the launcher's spec and log, never shown to the
code) and a socket pair with the launcher: the launcher says on it when the sandbox is ready,
handing over descriptors of the code's working and socket folders (the host reaches the files
only through :mod:`workspace`), and the sandbox ends when the host's end closes, which the OS does
however the host dies.

The host never resolves a path the sandbox can change: once the kernel has made its five sockets,
each is opened without following links (``O_PATH | O_NOFOLLOW``), checked to be a socket of the
sandbox's user, and reached from then on, reconnects included, through ``/proc/self/fd/N`` of that
descriptor (by links in the host's private folder), so renaming or replacing them inside changes
nothing. Every socket the host reads refuses messages over :data:`MAX_MESSAGE_BYTES`. Not
thread-safe: the owner serialises calls.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import json
import os
import queue
import secrets
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, cast

from harmony_chat.tools.python.cell_output import CellOutput
from harmony_chat.tools.python.sandbox import LaunchPlan
from harmony_chat.tools.python.workspace import NOFOLLOW_CLOEXEC, Mirror, SyncReport, open_folder, open_subfolder

if TYPE_CHECKING:
    from jupyter_client.blocking.client import BlockingKernelClient
    from jupyter_client.connect import KernelConnectionInfo

LAUNCHER = Path(__file__).with_name("launcher.py")
START_TIMEOUT_S = 60.0
INTERRUPT_GRACE_S = 3.0
POLL_S = 0.05
LOG_TAIL_BYTES = 4096
MAX_MESSAGE_BYTES = 16 * 1024**2
"""The largest message the host takes from the kernel; ZeroMQ drops the connection on a larger one."""
REPLY_GRACE_S = 5.0
"""How long after the kernel's reply its output may still arrive before the rest counts as lost."""
SOCKET_NAMES = tuple(f"k-{port}" for port in range(1, 6))
_SPAWNER = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="python-sandbox-spawn")
"""Starts every sandbox: bubblewrap's --die-with-parent follows the thread that started it, which must live
as long as the app (a worker thread that ends would take the kernel with it)."""
_LOG_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | NOFOLLOW_CLOEXEC
STREAM_FLUSH = 'exec("import sys\\nfor stream in (sys.stdout, sys.stderr): stream.flush_interval = 0.02", {})'
"""Run at the kernel's start: printed output goes out every 20 ms (ipykernel's default: 200 ms), so an endless
``print`` makes many messages the host can cut, not one over :data:`MAX_MESSAGE_BYTES` that it must refuse."""
KERNEL_FLAGS = (
    f"--IPKernelApp.exec_lines={STREAM_FLUSH}",
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
    output_lost: bool = False
    """The kernel replied but its output stopped arriving (a message over the size limit was refused)."""


def short_temp_root() -> str:
    """A temp folder whose paths stay well under the 107-byte Unix socket limit."""
    root = tempfile.gettempdir()
    return root if len(root) <= 40 else "/tmp"


def kernel_argv(connection_file: str) -> list[str]:
    """The kernel's command line, for its connection file's path as the kernel sees it."""
    return [sys.executable, "-m", "ipykernel_launcher", "-f", connection_file, *KERNEL_FLAGS]


def connection_info(ipc_dir: str) -> dict[str, Any]:
    """The Jupyter connection info for a kernel listening on Unix sockets ``<ipc_dir>/k-1`` .. ``k-5``."""
    return {
        "transport": "ipc",
        "ip": f"{ipc_dir}/k",
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


PlanFor = Callable[[Path, Callable[[str], list[str]]], LaunchPlan]
"""Makes the launch plan for a kernel from its private folder and its command's maker."""


class KernelProcess:
    """A kernel running under a launch plan, with a client connected over Unix sockets."""

    def __init__(self, plan_for: PlanFor, workdir: Path) -> None:
        self._plan_for = plan_for
        self.workdir = workdir
        """The working folder on the host (with a view: the host's copy of the code's folder)."""
        self.private_dir: Path | None = None
        self.process: subprocess.Popen[bytes] | None = None
        self.client: BlockingKernelClient | None = None
        self.plan: LaunchPlan | None = None
        self.folder_fd: int | None = None
        """The code's working folder, as the host reaches it (with a view, only through this)."""
        self.mirror: Mirror | None = None
        """With a view: keeps the host's copy of the working folder in step."""
        self.pushed: SyncReport | None = None
        """With a view: what was copied into the new kernel's folder from the host's copy."""
        self._channel: socket.socket | None = None
        self._ipc_fd: int | None = None
        self._pinned: list[int] = []
        self._context: Any = None

    def start(self) -> None:
        """Start the kernel and wait until it answers; raise ``KernelStartError`` if it does not."""
        import zmq
        from jupyter_client.blocking.client import BlockingKernelClient  # loads ZeroMQ: only when needed

        private = Path(tempfile.mkdtemp(prefix="hc-py-", dir=short_temp_root()))
        self.private_dir = private
        plan = self._plan_for(private, kernel_argv)
        self.plan = plan
        info = connection_info(plan.ipc_inside)
        launcher_end: socket.socket | None = None
        if plan.handshake:
            self._channel, launcher_end = socket.socketpair()
        spec = dict(plan.spec, connection=json.dumps(info))
        if plan.view:
            assert launcher_end is not None
            spec["init"] = dict(spec["init"], channel=launcher_end.fileno())
            if spec.get("become"):
                private.chmod(0o711)  # the sandbox's user passes through to the quota's folders, lists nothing
        _write_private(private / "launch.json", json.dumps(spec))
        if not plan.view:
            sockets = Path(plan.ipc_inside)
            sockets.mkdir(mode=0o700, exist_ok=True)
            _write_private(sockets / "connection.json", json.dumps(info))
            self.folder_fd = open_folder(self.workdir)
            with contextlib.ExitStack() as stack:
                home = open_subfolder(self.folder_fd, ".home", create=True)
                stack.callback(os.close, home)
                os.close(open_subfolder(home, "tmp", create=True))
        log = os.fdopen(os.open(private / "kernel.log", os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "wb")
        try:
            self.process = _SPAWNER.submit(
                subprocess.Popen,
                plan.argv,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=log,
                cwd="/" if plan.view else self.workdir,
                env=plan.env,
                start_new_session=True,
                pass_fds=((launcher_end.fileno(),) if launcher_end else ()) + plan.pass_fds,
            ).result()
        except OSError as error:
            raise KernelStartError(f"could not start the Python kernel: {error}") from error
        finally:
            log.close()
            if launcher_end is not None:
                launcher_end.close()
            for fd in plan.pass_fds:
                os.close(fd)
        deadline = time.monotonic() + START_TIMEOUT_S
        if self._channel is not None:
            handed = self._wait_launcher(self._channel, deadline)
            if plan.view:
                self.folder_fd, self._ipc_fd = handed
        if self._ipc_fd is None:
            self._ipc_fd = open_folder(Path(plan.ipc_inside))
        host_ip = self._pin_sockets(self._ipc_fd, plan.socket_uid, private, deadline)
        self._context = zmq.Context()
        self._context.setsockopt(zmq.MAXMSGSIZE, MAX_MESSAGE_BYTES)
        client = BlockingKernelClient(context=self._context)
        client.load_connection_info(cast("KernelConnectionInfo", dict(info, ip=host_ip)))
        client.start_channels()
        self.client = client
        self._wait_ready(max(deadline - time.monotonic(), 1.0))
        if plan.view and self.folder_fd is not None:
            self.mirror = Mirror(self.folder_fd, open_folder(self.workdir), plan.owner)
            self.pushed = self.mirror.push()

    def _pin_sockets(self, ipc_fd: int, uid: int, private: Path, deadline: float) -> str:
        """Wait for the kernel's sockets, pin each by a checked descriptor; return the host's path prefix.

        The links ``<private>/pin/k-N`` point at ``/proc/self/fd/<descriptor>``: ZeroMQ connects and
        reconnects by them, always to the socket first found, whatever happens to the name inside.
        """
        pin = private / "pin"
        pin.mkdir(mode=0o700)
        for name in SOCKET_NAMES:
            while True:
                try:
                    fd = os.open(name, os.O_PATH | NOFOLLOW_CLOEXEC, dir_fd=ipc_fd)
                except FileNotFoundError:
                    if time.monotonic() > deadline or not self.alive():
                        raise KernelStartError(f"the Python kernel did not start: {self.log_tail()}") from None
                    time.sleep(POLL_S)
                    continue
                break
            self._pinned.append(fd)
            info = os.fstat(fd)
            if not stat.S_ISSOCK(info.st_mode) or (uid >= 0 and info.st_uid != uid):
                raise KernelStartError(f"the Python kernel's socket {name} is not a socket of the sandbox's user")
            os.symlink(f"/proc/self/fd/{fd}", pin / name)
        return str(pin / "k")

    def _wait_launcher(self, channel: socket.socket, deadline: float) -> list[int]:
        """Wait for the launcher's "ready" and the folders it hands over (two with a view, else none)."""
        expected = 2 if self.plan and self.plan.view else 0
        channel.settimeout(POLL_S)
        try:
            while time.monotonic() < deadline:
                try:
                    message, fds, _flags, _address = socket.recv_fds(channel, 64, 4)
                except TimeoutError:
                    if not self.alive():
                        break
                    continue
                if message == b"ready" and len(fds) == expected:
                    return fds
                for fd in fds:
                    os.close(fd)
                break  # the launcher ended (it failed) or said something else
            else:
                raise KernelStartError(f"the Python sandbox was not ready within {START_TIMEOUT_S:.0f} s")
        finally:
            channel.settimeout(None)
        self._wait_exit(5.0)
        raise KernelStartError(f"the Python kernel did not start: {self.log_tail()}")

    def _wait_exit(self, timeout_s: float) -> None:
        if self.process is not None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.process.wait(timeout_s)

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
        """The last line the launcher or the kernel wrote to stderr (why it failed to start)."""
        if self.private_dir is None:
            return "no log"
        lines: list[str] = []
        with contextlib.suppress(OSError):
            lines = _tail(os.open(self.private_dir / "kernel.log", _LOG_FLAGS))
        if not lines and self._ipc_fd is not None:  # with a view the kernel's stderr stays in the sandbox
            with contextlib.suppress(OSError):
                lines = _tail(os.open("kernel.log", _LOG_FLAGS, dir_fd=self._ipc_fd))
        code = self.process.poll() if self.process else None
        tail = lines[-1] if lines else "no message"
        return tail if code is None else f"{tail} ({describe_exit(code, via_init=self._via_init())})"

    def _via_init(self) -> bool:
        return bool(self.plan and self.plan.handshake)

    def alive(self) -> bool:
        """True while the kernel process runs."""
        return self.process is not None and self.process.poll() is None

    def exit_note(self) -> str:
        """How the kernel process ended (empty while it runs)."""
        code = self.process.poll() if self.process else None
        return "" if code is None else describe_exit(code, via_init=self._via_init())

    def run_code(self, code: str, output: CellOutput, *, deadline: float, should_stop: Callable[[], bool]) -> Outcome:
        """Run ``code``, feeding its messages to ``output``; interrupt on the deadline or ``should_stop``."""
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
        replied_at: float | None = None
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
            if replied_at is None and self._replied(msg_id):
                replied_at = now
            if replied_at is not None and now - replied_at > REPLY_GRACE_S:
                return Outcome(ending or "idle", output_lost=True)  # the idle status never came: output was lost
            try:
                msg = client.get_iopub_msg(timeout=POLL_S)
            except queue.Empty:
                continue
            if replied_at is not None:
                replied_at = time.monotonic()  # messages still arrive: the grace counts from the last one
            if msg.get("parent_header", {}).get("msg_id") != msg_id:
                continue
            if msg["msg_type"] == "status" and msg["content"].get("execution_state") == "idle":
                return Outcome(ending or "idle")
            output.add(msg, skip_interrupt=ending is not None)

    def _replied(self, msg_id: str) -> bool:
        """True once the kernel's reply to ``msg_id`` arrived on the shell channel (others are dropped)."""
        assert self.client is not None
        while True:
            try:
                reply = self.client.get_shell_msg(timeout=0)
            except queue.Empty:
                return False
            if reply.get("parent_header", {}).get("msg_id") == msg_id:
                return True

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
        """Kill the kernel, bring its last files to the host, close everything, remove the private folder."""
        self.kill()
        if self.mirror is not None:
            with contextlib.suppress(OSError):  # the descriptor keeps the sandbox's files readable
                self.mirror.pull()
            os.close(self.mirror.host_fd)
            self.mirror = None
        if self.client is not None:
            self.client.stop_channels()
            self.client = None
        if self._context is not None:
            self._context.destroy(linger=0)
            self._context = None
        for fd in self._pinned:
            os.close(fd)
        self._pinned = []
        if self.plan is not None and self.plan.cgroup is not None:
            self.plan.cgroup.remove()
        if self.plan is not None and self.plan.cleanup_argv:
            try:
                subprocess.run(self.plan.cleanup_argv, capture_output=True, timeout=30, check=False)
            except (OSError, subprocess.SubprocessError):
                pass
        if self._channel is not None:
            self._channel.close()
            self._channel = None
        for folder in (self.folder_fd, self._ipc_fd):
            if folder is not None:
                os.close(folder)
        self.folder_fd = self._ipc_fd = None
        if self.private_dir is not None:
            shutil.rmtree(self.private_dir, ignore_errors=True)  # removes links, never follows them (Linux, macOS)
            self.private_dir = None


def _write_private(path: Path, text: str) -> None:
    """Write a new file only its owner may read (the spec and connection file hold the kernel's key)."""
    handle = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | NOFOLLOW_CLOEXEC, 0o600)
    with os.fdopen(handle, "w", encoding="utf-8") as stream:
        stream.write(text)


def _tail(fd: int) -> list[str]:
    """The last lines of a regular file (a bounded read from its end); the descriptor is closed."""
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return []
        os.lseek(fd, max(0, info.st_size - LOG_TAIL_BYTES), os.SEEK_SET)
        data = os.read(fd, LOG_TAIL_BYTES)
    finally:
        os.close(fd)
    return data.decode("utf-8", errors="replace").strip().splitlines()
