"""The container engines the python tool's container runner drives (a setting's allowed values, kept light)."""

from __future__ import annotations

from typing import Literal

Engine = Literal["docker", "podman"]
"""``docker`` or ``podman``: the command that runs the kernel's container."""
