"""A turn's tokens generated on a thread of their own, while the caller decodes the ones before.

In process, the model spends most of each token in llama.cpp, which releases the GIL; decoding,
dispatching and printing the tokens already generated can run on another core meanwhile instead
of between two tokens (:attr:`ModelBackend.native_generation` says which backends do).
Harmony's structure still acts at once: after a group that ends with a special token (a header
closes, a message ends) the thread waits until the caller has handled that group's events and
asks for the next, so a grammar switched on by ``<|message|>``, a forced call's header or the end
of the turn applies before another token is generated, exactly as when both run on one thread.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Generator

from harmony_chat.generation.batches import token_batches
from harmony_chat.harmony import tokens as tk

_END = object()
"""Handed over after the last group (after an error, when there was one)."""


def batches_in_background(
    tokens: Generator[int, None, None], stopping: threading.Event
) -> Generator[list[int], None, None]:
    """Yield :func:`token_batches` of ``tokens``, generated on a thread of their own.

    The thread starts with the first request for a group and stops at the next token once
    ``stopping`` is set, which this generator does when it is closed (the turn ended, or the
    caller stopped reading): pass ``stopping.is_set`` to the backend's ``should_stop`` so a
    token under way is its last. Closing waits for the thread, so the backend is free when it
    returns. An error from ``tokens`` is raised here after the groups generated before it. The
    thread stays at most one group ahead of the caller (a fast stream is not generated far past
    what was shown when the user stops it).
    """
    handed: queue.Queue[object] = queue.Queue(maxsize=1)
    """At most one group waits for the caller: the thread never runs far ahead of what was shown."""
    resume = threading.Semaphore(0)
    ended = False

    def produce() -> None:
        batches = token_batches(tokens)
        try:
            for batch in batches:
                handed.put(batch)
                if batch[-1] >= tk.FIRST_SPECIAL:
                    resume.acquire()  # the caller acts on harmony's structure before the next token
                if stopping.is_set():
                    break
        except BaseException as error:  # handed to the caller, never raised in this thread
            handed.put(error)
        finally:
            batches.close()
            tokens.close()
            handed.put(_END)

    thread = threading.Thread(target=produce, name="harmony-chat-tokens", daemon=True)
    thread.start()
    try:
        while True:
            item = handed.get()
            if item is _END:
                ended = True
                return
            if isinstance(item, BaseException):
                raise item
            assert isinstance(item, list)
            yield item
            if item[-1] >= tk.FIRST_SPECIAL:
                resume.release()
    finally:
        stopping.set()
        resume.release()  # a thread waiting at a special token sees ``stopping`` and ends
        while not ended:  # a thread waiting to hand over a group gets on to its end
            ended = handed.get() is _END
        thread.join()
