"""``serve --workers N``: N processes answer on one listening socket, so one machine's ``serve`` uses its cores.

One Python process decodes on one core; in front of a GPU engine that streams to many clients at
once, that core would set the pace. The parent binds the socket, opens the store once (so its schema
is made once), then starts N fresh interpreters (multiprocessing's ``spawn``: nothing of the
parent's threads or connections is copied) that each load the model as ``serve`` does (for an
engine: connect and check it) and run the app on the inherited socket; the kernel hands each new
connection to one of them. Every worker opens the same SQLite store (WAL, a busy timeout), so a
``previous_response_id`` or a conversation is served by any worker, and a worker that dies loses
nothing stored. The parent stays the server in the registry, starts a new worker when one dies,
and on Ctrl+C or SIGTERM stops them all; a parent killed outright takes its workers with it (Linux's
parent-death signal).

Only engines without per-handle state can be split this way: vLLM and SGLang schedule requests
themselves. llama-server pins each handle to a slot whose cache is its own, and the in-process
model has one context; both run one worker.
"""

from __future__ import annotations

import contextlib
import ctypes
import multiprocessing
import os
import signal
import socket
import sys
import time
from dataclasses import dataclass, replace
from multiprocessing.connection import wait
from typing import TYPE_CHECKING

from harmony_chat.errors import HarmonyChatError

if TYPE_CHECKING:
    from multiprocessing.process import BaseProcess

    from harmony_chat.backends.base import ModelBackend
    from harmony_chat.chat.options import ChatOptions
    from harmony_chat.server.app import ServerLimits
    from harmony_chat.server.backend_pool import BackendPool

MAX_WORKERS = 64
"""The most ``--workers`` may ask for."""
AUTO_WORKERS_CAP = 4
"""The most workers chosen by default (one per core up to this)."""
STOP_GRACE_S = 10.0
"""How long stopping workers get to finish their streams before they are killed."""
QUICK_DEATH_S = 10.0
"""A worker that dies this soon after it started counts towards :data:`QUICK_DEATHS`."""
QUICK_DEATHS = 3
"""Workers dying quickly this many times in a row stop the server (something is wrong, not bad luck)."""


class WorkersError(HarmonyChatError):
    """``--workers`` cannot be honoured, or the workers keep failing."""

    exit_code = 2


def default_workers(splittable: bool) -> int:
    """Workers without ``--workers``: one per core up to :data:`AUTO_WORKERS_CAP` where the engine allows several."""
    if not splittable:
        return 1
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        cores = os.cpu_count() or 1
    return max(1, min(cores, AUTO_WORKERS_CAP))


@dataclass(frozen=True, slots=True)
class WorkerSpec:
    """What a worker needs to serve as the parent would (picklable: it crosses into a fresh interpreter)."""

    options: ChatOptions
    name: str | None
    host: str
    port: int
    api_key: str | None
    limits: ServerLimits
    allow_hosts: tuple[str, ...]
    parallel: int
    """Generations at once in each worker (the connections a kernel hands out are never evenly spread, so each
    worker may take the whole ``--parallel``; vLLM and SGLang queue what is beyond their batch)."""
    index: int = 0
    count: int = 1
    parent: int = 0
    """The supervisor's process id (0: none to follow)."""


def worker_main(spec: WorkerSpec, sock: socket.socket) -> None:
    """Run in a worker process: load the model quietly, then serve on ``sock`` until told to stop."""
    from harmony_chat.chat.factory import load_model
    from harmony_chat.server.app import run_server
    from harmony_chat.server.harmony_request import ServedModel

    _end_with_parent(spec.parent)
    try:
        loaded = load_model(spec.options, lambda _step: None)
    except HarmonyChatError as error:
        print(f"error: worker {spec.index + 1}: {error}", file=sys.stderr)
        sys.exit(1)
    options = spec.options
    with ServedModel(
        loaded.backend,
        loaded.encoding,
        spec.name or loaded.info.name,
        sampling=options.sampling,
        effort=options.settings.chat.effort,
        start_date=options.conversation_date,
        context_size=loaded.info.context_size,
    ) as served:
        run_server(
            served,
            host=spec.host,
            port=spec.port,
            api_key=spec.api_key,
            limits=replace(spec.limits, workers=spec.count),
            allow_hosts=spec.allow_hosts,
            pool=_worker_pool(loaded.backend, spec),
            sock=sock,
            register=False,
        )


PR_SET_PDEATHSIG = 1
"""prctl(2)'s option: the signal this process gets when its parent dies."""


def _end_with_parent(parent: int) -> None:
    """Get SIGTERM (uvicorn's graceful stop) when the supervisor dies, also when it was killed outright (Linux)."""
    if not parent or not sys.platform.startswith("linux"):
        return
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    if os.getppid() != parent:  # it died before the signal was asked for
        os.kill(os.getpid(), signal.SIGTERM)


def _worker_pool(backend: ModelBackend, spec: WorkerSpec) -> BackendPool:
    from harmony_chat.server.backend_pool import pool_for

    pool = pool_for(backend, spec.parallel)
    pool.reason = f"{pool.reason} in each of {spec.count} workers"
    return pool


class Supervisor:
    """Starts the workers, starts a new one when one dies, stops them all at the end.

    Args:
        spec: what each worker serves (its ``index`` is set per worker).
        count: how many workers.
        sock: the bound, listening socket they share.
    """

    def __init__(self, spec: WorkerSpec, count: int, sock: socket.socket) -> None:
        self.spec = spec
        self.count = count
        self.sock = sock
        self._context = multiprocessing.get_context("spawn")
        self.workers: dict[int, BaseProcess] = {}
        self._started: dict[int, float] = {}
        self._quick_deaths = 0
        self._stopping = False

    @property
    def pids(self) -> list[int]:
        """The live workers' process ids."""
        return [worker.pid for worker in self.workers.values() if worker.pid is not None and worker.is_alive()]

    def _start(self, index: int) -> None:
        spec = replace(self.spec, index=index, count=self.count, parent=os.getpid())
        worker = self._context.Process(
            target=worker_main, args=(spec, self.sock), name=f"harmony-chat-serve-{index + 1}", daemon=False
        )
        worker.start()
        self.workers[index] = worker
        self._started[index] = time.monotonic()

    def run(self) -> None:
        """Start the workers and watch them until Ctrl+C or SIGTERM (then stop them all).

        Raises:
            WorkersError: when workers keep dying right after they start.
        """
        previous = signal.signal(signal.SIGTERM, _raise_interrupt)
        try:
            for index in range(self.count):
                self._start(index)
            while True:
                sentinels = {worker.sentinel: index for index, worker in self.workers.items()}
                for ready in wait(list(sentinels), timeout=1.0):
                    if isinstance(ready, int) and not self._stopping:
                        self._restart(sentinels[ready])
        except KeyboardInterrupt:
            pass
        finally:
            self.stop()
            signal.signal(signal.SIGTERM, previous)

    def _restart(self, index: int) -> None:
        worker = self.workers[index]
        worker.join()
        lived = time.monotonic() - self._started[index]
        self._quick_deaths = self._quick_deaths + 1 if lived < QUICK_DEATH_S else 0
        if self._quick_deaths >= QUICK_DEATHS:
            raise WorkersError(
                f"worker {index + 1} exited with code {worker.exitcode} {QUICK_DEATHS} times in a row right after "
                "starting; stopping (its error is above)"
            )
        print(
            f"worker {index + 1} (pid {worker.pid}) exited with code {worker.exitcode}; starting another",
            file=sys.stderr,
        )
        self._start(index)

    def stop(self) -> None:
        """Ask every worker to stop (SIGTERM: uvicorn finishes its streams), then kill what is left."""
        self._stopping = True
        for worker in self.workers.values():
            if worker.is_alive() and worker.pid is not None:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(worker.pid, signal.SIGTERM)
        deadline = time.monotonic() + STOP_GRACE_S
        for worker in self.workers.values():
            worker.join(max(0.0, deadline - time.monotonic()))
            if worker.is_alive():
                worker.kill()
                worker.join()


def _raise_interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt
