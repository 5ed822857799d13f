"""The ``python`` built-in tool: gpt-oss's stateful Jupyter kernel, contained.

``PythonTool`` (``tool``) is what the conversation core uses; ``sandbox`` says what this machine
can contain, ``launcher`` is the program that sets the sandbox up, ``kernel`` runs one kernel,
``cell_output`` turns its messages into the model's text, ``container`` is the optional
docker/podman runner.
"""

from __future__ import annotations

from harmony_chat.tools.python.container import ContainerRunner
from harmony_chat.tools.python.kernel import KernelStartError
from harmony_chat.tools.python.sandbox import SandboxLimits, probe_platform
from harmony_chat.tools.python.tool import DEFAULT_TIMEOUT_S, PythonTool, workdir_for

__all__ = [
    "DEFAULT_TIMEOUT_S",
    "ContainerRunner",
    "KernelStartError",
    "PythonTool",
    "SandboxLimits",
    "probe_platform",
    "workdir_for",
]
