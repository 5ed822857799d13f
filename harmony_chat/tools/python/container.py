"""An optional container runner for the python tool: the kernel in ``docker`` or ``podman``.

For users who want more than the built-in sandbox. The image must have Python with ``ipykernel``
(for example ``quay.io/jupyter/base-notebook``). The container gets no network, no capabilities,
a read-only root, a private ``/tmp`` of the quota's size, the working folder at ``/mnt/data`` and
the socket folder at its own path; the kernel runs as the user's uid so files it writes belong to
the user. The working folder is a bind of the host's, so its quota is only checked after each
call (and each file is bounded by the per-file limit). Unix sockets through a bind mount need the
engine on this machine's kernel (Linux), not in a VM.
"""

from __future__ import annotations

import os
import secrets
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from harmony_chat.tools.container_engine import Engine
from harmony_chat.tools.python.sandbox import MNT_DATA, LaunchPlan, SandboxLimits


@dataclass(frozen=True)
class ContainerRunner:
    """How to run the kernel in a container: the engine, the image and the network mode."""

    engine: Engine = "docker"
    image: str = "quay.io/jupyter/base-notebook"
    python: str = "python"
    """The Python command inside the image."""
    network: str = "none"

    def available(self) -> bool:
        """True when the engine's command is on PATH (the engine itself may still be down)."""
        return shutil.which(self.engine) is not None

    def command(
        self, limits: SandboxLimits, *, workdir: Path, ipc_dir: Path, kernel_argv: list[str], name: str
    ) -> list[str]:
        """The full ``docker run`` / ``podman run`` command line that starts the kernel."""
        uid, gid = (os.getuid(), os.getgid()) if hasattr(os, "getuid") else (1000, 1000)
        argv = [self.engine, "run", "--rm", "-i", "--init", "--name", name, "--network", self.network]
        argv += ["--cap-drop", "ALL", "--security-opt", "no-new-privileges", "--read-only"]
        argv += ["--memory", str(limits.memory_bytes), "--pids-limit", str(limits.processes)]
        argv += ["--ulimit", f"fsize={limits.file_bytes}", "--ulimit", f"nofile={limits.open_files}"]
        argv += ["--ulimit", f"cpu={limits.cpu_s}", "--tmpfs", f"/tmp:rw,size={limits.disk_bytes}"]
        argv += ["-v", f"{workdir.resolve()}:{MNT_DATA}", "-v", f"{ipc_dir}:{ipc_dir}", "-w", MNT_DATA]
        if self.engine == "podman":
            argv += ["--userns=keep-id"]
        argv += ["--user", f"{uid}:{gid}", "-e", f"HOME={MNT_DATA}/.home", "-e", "TMPDIR=/tmp"]
        argv += ["-e", "PYDEVD_DISABLE_FILE_VALIDATION=1", "-e", "JUPYTER_PLATFORM_DIRS=1"]
        return [*argv, self.image, self.python, *kernel_argv[1:]]

    def plan(
        self, limits: SandboxLimits, *, workdir: Path, private_dir: Path, kernel_argv_for: Callable[[str], list[str]]
    ) -> LaunchPlan:
        """The launch plan: the engine's command line, and how to remove the container afterwards."""
        name = f"harmony-chat-python-{secrets.token_hex(6)}"
        ipc_dir = private_dir / "sock"
        kernel_argv = kernel_argv_for(f"{ipc_dir}/connection.json")
        argv = self.command(limits, workdir=workdir, ipc_dir=ipc_dir, kernel_argv=kernel_argv, name=name)
        return LaunchPlan(
            argv,
            {"view": None},
            MNT_DATA,
            str(ipc_dir),
            env=dict(os.environ),
            cleanup_argv=[self.engine, "rm", "--force", name],
            handshake=False,
            socket_uid=os.getuid(),
        )

    def describe(self, limits: SandboxLimits) -> str:
        """What the container contains, for the approval dialog."""
        network = "no network" if self.network == "none" else f"network mode {self.network!r}"
        return (
            f"Contained in a {self.engine} container ({self.image}): {network}; no capabilities; read-only system;"
            f" only the working folder at {MNT_DATA}; limits: {limits.memory_bytes // 1024**2} MiB memory,"
            f" {limits.processes} processes, {limits.file_bytes // 1024**2} MiB per file; the working folder's"
            f" {limits.disk_bytes // 1024**2} MiB quota is only checked after each call."
        )
