"""Several generations at once: the gate's places, the pool's handles, summaries that stay on their turn's handle.

Each replay handle below waits at a barrier at its first generation until every handle has
started one: a server that ran one generation at a time would never get past it.
"""

from __future__ import annotations

import asyncio
import random
import threading
import time
from collections.abc import Callable, Collection, Generator, Sequence
from typing import Any

import httpx
import pytest
from openai.types.responses import ResponseReasoningItem
from openai_harmony import HarmonyEncoding

from harmony_chat.backends.base import SamplingParams
from harmony_chat.server.app import ServerLimits
from harmony_chat.server.backend_pool import BackendPool, LeasedBackend, ParallelError, pool_for, shared_prefix
from harmony_chat.server.channels import Part
from harmony_chat.server.errors import ApiError
from harmony_chat.server.harmony_request import ServedModel
from harmony_chat.server.limits import GenerationGate
from harmony_chat.server.streaming import merged
from harmony_chat.server.turn_output import ItemDone, ItemStarted, OutputEvent, TextAdded
from tests.helpers import ids
from tests.server.conftest import DATE, PromptRecordingReplay, replay, running

BARRIER_S = 20.0
"""Longest wait at the barrier (a bound for a broken server, not a speed check)."""


class Meeting:
    """What handles share: a barrier their first generations meet at, and how many generate at once."""

    def __init__(self, parties: int) -> None:
        self.barrier = threading.Barrier(parties, timeout=BARRIER_S)
        self.lock = threading.Lock()
        self.active = 0
        self.most = 0


class MeetingReplay(PromptRecordingReplay):
    """A replay handle whose first generation waits until every handle has started one."""

    def __init__(self, meeting: Meeting, turns: Sequence[Sequence[int]], delay_s: float = 0.0) -> None:
        super().__init__(turns, delay_s=delay_s, name="replay-model")
        self.meeting = meeting
        self.met = False

    def generate(
        self,
        prompt: Sequence[int],
        sampling: SamplingParams,
        stop_ids: Collection[int],
        should_stop: Callable[[], bool],
    ) -> Generator[int, None, None]:
        meeting = self.meeting
        with meeting.lock:
            meeting.active += 1
            meeting.most = max(meeting.most, meeting.active)
        try:
            if not self.met:
                self.met = True
                meeting.barrier.wait()  # BrokenBarrierError (the turn fails) if the others never come
            yield from super().generate(prompt, sampling, stop_ids, should_stop)
        finally:
            with meeting.lock:
                meeting.active -= 1


def _handles(encoding: HarmonyEncoding, turns_of: Sequence[Sequence[str]], delay_s: float = 0.0) -> list[MeetingReplay]:
    meeting = Meeting(len(turns_of))
    handles = [MeetingReplay(meeting, [ids(encoding, turn) for turn in turns], delay_s) for turns in turns_of]
    for handle in handles:
        handle.load()
    return handles


def _in_threads(count: int, work: Callable[[int], Any]) -> list[Any]:
    """Run ``work(i)`` for each i in threads at once; return the results in order (re-raising any failure)."""
    results: list[Any] = [None] * count
    errors: list[BaseException] = []

    def run(index: int) -> None:
        try:
            results[index] = work(index)
        except BaseException as error:  # reported below
            errors.append(error)

    threads = [threading.Thread(target=run, args=(index,)) for index in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=90)
    assert not errors, errors
    return results


# -- through the server --------------------------------------------------------------------------


def test_three_handles_generate_three_answers_at_once(encoding: HarmonyEncoding) -> None:
    answers = [f"<|channel|>final<|message|>Answer {i}.<|return|>" for i in range(3)]
    handles = _handles(encoding, [[answer] for answer in answers])
    served = ServedModel(handles[0], encoding, "replay-model", start_date=DATE)
    with running(served, pool=BackendPool(handles, "three replays")) as server:

        def ask(index: int) -> str | None:
            messages: Any = [{"role": "user", "content": f"Question {index}?"}]
            completion = server.client(timeout=60).chat.completions.create(model="replay-model", messages=messages)
            return completion.choices[0].message.content

        got = _in_threads(3, ask)
    assert sorted(got) == ["Answer 0.", "Answer 1.", "Answer 2."]
    assert handles[0].meeting.most == 3  # all three generated at once (they met at the barrier)
    assert sorted(len(handle.prompts) for handle in handles) == [1, 1, 1]  # one handle per generation


def test_more_clients_than_handles_wait_their_turn_without_loss(encoding: HarmonyEncoding) -> None:
    answer = "<|channel|>final<|message|>2 + 2 = 4.<|return|>"
    handles = _handles(encoding, [[answer], [answer]], delay_s=0.005)
    served = ServedModel(handles[0], encoding, "replay-model", start_date=DATE)
    with running(served, pool=BackendPool(handles, "two replays")) as server:

        def ask(index: int) -> str | None:
            messages: Any = [{"role": "user", "content": f"Question {index}: what is 2 + 2?"}]
            completion = server.client(timeout=60).chat.completions.create(model="replay-model", messages=messages)
            return completion.choices[0].message.content

        got = _in_threads(7, ask)
    assert got == ["2 + 2 = 4."] * 7
    assert handles[0].meeting.most == 2  # never more than the two handles at once
    prompts = [encoding.decode(prompt) for handle in handles for prompt in handle.prompts]
    asked = sorted(prompt.split("Question ", 1)[1].split(":", 1)[0] for prompt in prompts)
    assert asked == sorted(str(i) for i in range(7))  # each request was generated once, none lost


def test_each_summary_is_written_on_its_own_turns_handle(encoding: HarmonyEncoding) -> None:
    """A summary pauses its turn and is written on the same handle (the same KV cache); the turn resumes there."""
    turns_of = [
        [
            f"<|channel|>analysis<|message|>Thinking {i}.<|end|>",
            f"Summary {i}.<|return|>",
            f"<|start|>assistant<|channel|>final<|message|>Answer {i}.<|return|>",
        ]
        for i in range(3)
    ]
    handles = _handles(encoding, turns_of, delay_s=0.005)
    served = ServedModel(handles[0], encoding, "replay-model", start_date=DATE)
    with running(served, pool=BackendPool(handles, "three replays")) as server:

        def ask(index: int) -> tuple[str, str]:
            response = server.client(timeout=60).responses.create(
                model="replay-model", input=f"Question {index}?", reasoning={"summary": "auto"}
            )
            reasoning = response.output[0]
            assert isinstance(reasoning, ResponseReasoningItem)
            return reasoning.summary[0].text, response.output_text

        got = _in_threads(3, ask)
    assert sorted(got) == [(f"Summary {i}.", f"Answer {i}.") for i in range(3)]
    assert handles[0].meeting.most == 3
    for handle in handles:  # turn, summary, resumed turn: all three on one handle, the summary from the turn's prefix
        assert len(handle.prompts) == 3 and handle.prompts[2][: len(handle.prompts[0])] == handle.prompts[0]


def test_health_counts_the_generations_and_the_line(encoding: HarmonyEncoding) -> None:
    long = "<|channel|>final<|message|>" + " ".join(f"word{i}" for i in range(400)) + "<|return|>"
    meeting = Meeting(1)
    handles = [MeetingReplay(meeting, [ids(encoding, long)], delay_s=0.01) for _ in range(2)]
    for handle in handles:
        handle.load()
    served = ServedModel(handles[0], encoding, "replay-model", start_date=DATE)
    user: Any = [{"role": "user", "content": "Go on."}]

    def health() -> dict[str, Any]:
        body: dict[str, Any] = httpx.get(server.url + "/health", timeout=10).json()
        return body

    with running(served, pool=BackendPool(handles, "two replays for the test")) as server:
        idle = health()
        streams = [
            server.client().chat.completions.create(model="replay-model", messages=user, stream=True) for _ in range(2)
        ]
        for stream in streams:
            next(iter(stream))  # both generate now
        full = health()
        waiting = threading.Thread(target=_give_up_after, args=(server.url, user, 1.5))
        waiting.start()
        deadline = time.monotonic() + 10
        while health()["waiting"] != 1 and time.monotonic() < deadline:
            time.sleep(0.02)
        queued = health()
        waiting.join(timeout=10)
        for stream in streams:
            stream.close()
    assert idle == {
        "status": "ok",
        "model": "replay-model",
        "busy": False,
        "waiting": 0,
        "generating": 0,
        "parallel": 2,
        "parallel_reason": "two replays for the test",
        "workers": 1,
    }
    assert (full["generating"], full["busy"], full["waiting"]) == (2, True, 0)
    assert (queued["generating"], queued["busy"], queued["waiting"]) == (2, True, 1)


def _give_up_after(url: str, messages: Any, seconds: float) -> None:
    try:
        httpx.post(url + "/v1/chat/completions", json={"model": "replay-model", "messages": messages}, timeout=seconds)
    except httpx.ReadTimeout:
        pass


def test_the_in_process_model_runs_one_generation_at_a_time_and_says_why(encoding: HarmonyEncoding) -> None:
    backend = replay(encoding, "<|channel|>final<|message|>Hi.<|return|>")
    pool = pool_for(backend, None)
    assert pool.size == 1 and pool.reason == "the in-process replay model runs one generation at a time"
    assert pool_for(backend, 1).size == 1
    with pytest.raises(ParallelError, match=r"--parallel 2: the in-process replay model runs one generation at a time"):
        pool_for(backend, 2)
    served = ServedModel(backend, encoding, "replay-model", start_date=DATE)
    with pytest.raises(ParallelError, match="llama-server --parallel N"):
        with running(served, ServerLimits(parallel=4)):
            pass


# -- the gate ------------------------------------------------------------------------------------


async def _never_gone() -> bool:
    return False


async def test_the_gate_lets_in_up_to_its_capacity_then_first_come_first_served() -> None:
    gate = GenerationGate(max_waiting=8, capacity=2)
    first = await gate.acquire(_never_gone)
    second = await gate.acquire(_never_gone)
    assert (gate.running, gate.busy, gate.waiting) == (2, True, 0)
    order: list[int] = []

    async def wait(number: int) -> Callable[[], None]:
        release = await gate.acquire(_never_gone)
        order.append(number)
        return release

    waiters = []
    for number in range(3):
        waiters.append(asyncio.create_task(wait(number)))
        await asyncio.sleep(0)  # each joins the line in turn
    await asyncio.sleep(0.01)
    assert gate.waiting == 3 and order == []
    first()
    first()  # a second call gives back nothing more
    third = await waiters[0]
    assert order == [0] and (gate.running, gate.waiting) == (2, 2)
    second()
    third()
    fourth, fifth = await asyncio.gather(waiters[1], waiters[2])
    assert order == [0, 1, 2] and (gate.running, gate.waiting) == (2, 0)
    fourth()
    fifth()
    assert (gate.running, gate.busy) == (0, False)


async def test_a_full_line_is_refused_with_retry_after() -> None:
    gate = GenerationGate(max_waiting=1, capacity=2)
    held = [await gate.acquire(_never_gone) for _ in range(2)]
    waiter = asyncio.create_task(gate.acquire(_never_gone))
    await asyncio.sleep(0.01)
    with pytest.raises(ApiError) as refused:
        await gate.acquire(_never_gone)
    assert refused.value.status == 429 and int(refused.value.headers["Retry-After"]) >= 1
    held[0]()
    (await waiter)()
    held[1]()
    assert gate.running == 0


async def test_a_place_handed_to_a_request_that_just_left_goes_to_the_next() -> None:
    gate = GenerationGate(max_waiting=4, capacity=1)
    release = await gate.acquire(_never_gone)
    leaving = asyncio.create_task(gate.acquire(_never_gone))
    staying = asyncio.create_task(gate.acquire(_never_gone))
    await asyncio.sleep(0.01)
    release()  # the place goes to the longest waiter...
    leaving.cancel()  # ...which is cancelled before it runs again
    with pytest.raises(asyncio.CancelledError):
        await leaving
    (await asyncio.wait_for(staying, 5))()
    assert (gate.running, gate.waiting) == (0, 0)


async def test_a_waiting_client_that_disconnects_leaves_the_line() -> None:
    gate = GenerationGate(max_waiting=4, capacity=1)
    release = await gate.acquire(_never_gone)

    async def gone() -> bool:
        return True

    with pytest.raises(ApiError) as left:
        await gate.acquire(gone)
    assert left.value.code == "client_gone" and gate.waiting == 0
    release()
    assert gate.running == 0


# -- the pool ------------------------------------------------------------------------------------


def test_shared_prefix_counts_the_leading_tokens_in_common() -> None:
    rng = random.Random(5)
    for _ in range(300):
        first = [rng.randrange(3) for _ in range(rng.randrange(12))]
        second = first[: rng.randrange(len(first) + 1)] + [rng.randrange(3) for _ in range(rng.randrange(12))]
        naive = 0
        while naive < min(len(first), len(second)) and first[naive] == second[naive]:
            naive += 1
        assert shared_prefix(first, second) == naive


def _drain(lease: LeasedBackend, prompt: list[int]) -> None:
    for _ in lease.generate(prompt, SamplingParams(max_tokens=50), set(), lambda: False):
        pass


def test_a_conversation_goes_back_to_the_handle_that_holds_its_prefix(encoding: HarmonyEncoding) -> None:
    turns = [ids(encoding, "<|channel|>final<|message|>Hi.<|return|>")]
    handles = [PromptRecordingReplay(turns, name="replay-model") for _ in range(3)]
    for handle in handles:
        handle.load()
    pool = BackendPool(handles, "three replays")
    first_turns = [[1, 2, 3, 10 + index] for index in range(3)]
    for prompt in first_turns:  # one after the other: each takes the least recently used free handle
        lease = pool.lease()
        _drain(lease, prompt)
        lease.release()
    assert [handle.prompts for handle in handles] == [[first_turns[0]], [first_turns[1]], [first_turns[2]]]
    # the second turn of conversation 1 (its prompt continues the first turn and its answer) goes back to handle 1
    follow_up = first_turns[1] + turns[0] + [7, 7]
    lease = pool.lease()
    _drain(lease, follow_up)
    assert lease.handle_index == 1 and handles[1].prompts[-1] == follow_up
    assert lease.last_stats is handles[1].last_stats  # the figures are the handle's
    # while it is busy, the same conversation's prompt gets another handle (the least recently used one)
    other = pool.lease()
    _drain(other, follow_up)
    assert other.handle_index == 0
    other.release()
    lease.release()
    lease.release()  # again: nothing
    assert pool.busy_handles == 0


def test_a_lease_keeps_its_handle_for_every_call_of_its_turn(encoding: HarmonyEncoding) -> None:
    turns = [ids(encoding, "<|channel|>final<|message|>Hi.<|return|>")]
    handles = [PromptRecordingReplay(turns, name="replay-model") for _ in range(2)]
    for handle in handles:
        handle.load()
    pool = BackendPool(handles, "two replays")
    lease = pool.lease()
    assert lease.handle is None
    _drain(lease, [5, 6])
    taken = lease.handle_index
    _drain(lease, [9, 9, 9])  # a summary or a grammar restart: unrelated prompt, same handle
    assert lease.handle_index == taken and pool.busy_handles == 1
    assert len(handles[taken or 0].prompts) == 2
    busy = pool.lease()
    _drain(busy, [5, 6])
    assert busy.handle_index != taken
    with pytest.raises(RuntimeError, match="every handle"):
        _drain(pool.lease(), [1])


# -- batches -------------------------------------------------------------------------------------


def test_a_fast_models_text_reaches_the_client_in_few_chunks_and_whole(encoding: HarmonyEncoding) -> None:
    words = " ".join(f"word{i}" for i in range(300))
    answer = f"<|channel|>final<|message|>{words}<|return|>"
    backend = replay(encoding, answer)  # no delay: the whole answer is there within a few milliseconds
    served = ServedModel(backend, encoding, "replay-model", start_date=DATE)
    user: Any = [{"role": "user", "content": "Count."}]
    with running(served) as server:
        stream = server.client().chat.completions.create(model="replay-model", messages=user, stream=True)
        deltas = [
            chunk.choices[0].delta.content for chunk in stream if chunk.choices and chunk.choices[0].delta.content
        ]
    assert "".join(deltas) == words
    assert len(deltas) <= len(ids(encoding, words)) // 4  # joined in batches, not one chunk per token


def test_text_runs_are_joined_per_item_and_nothing_else_moves() -> None:
    outputs: list[OutputEvent] = [
        ItemStarted(0, Part.REASONING, "analysis"),
        TextAdded(0, Part.REASONING, "a"),
        TextAdded(0, Part.REASONING, "b"),
        ItemDone(0, Part.REASONING, "analysis", "ab", False),
        ItemStarted(1, Part.CONTENT, "final"),
        TextAdded(1, Part.CONTENT, "c"),
        TextAdded(1, Part.CONTENT, "d"),
        TextAdded(1, Part.CONTENT, "e"),
    ]
    assert merged(outputs) == [
        outputs[0],
        TextAdded(0, Part.REASONING, "ab"),
        outputs[3],
        outputs[4],
        TextAdded(1, Part.CONTENT, "cde"),
    ]
    assert merged([TextAdded(0, Part.REASONING, "a"), TextAdded(1, Part.CONTENT, "b")]) == [
        TextAdded(0, Part.REASONING, "a"),
        TextAdded(1, Part.CONTENT, "b"),
    ]
