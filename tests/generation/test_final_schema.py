"""TurnOptions.final_schema: the final answer (and only it) is generated under the response format's grammar."""

from __future__ import annotations

from collections.abc import Callable, Collection, Generator, Mapping, Sequence

from openai_harmony import HarmonyEncoding

from harmony_chat.backends.base import SamplingParams
from harmony_chat.backends.replay import ReplayBackend
from harmony_chat.generation.turn import TurnOptions, run_turn
from harmony_chat.harmony.events import ContentDelta
from harmony_chat.harmony.session import ChatSession
from tests.helpers import ids

SCHEMA = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
TURN = '<|channel|>analysis<|message|>Count.<|end|><|start|>assistant<|channel|>final<|message|>{"n": 4}<|return|>'


class GrammarReplay(ReplayBackend):
    """A replay that claims grammar support and records the schema of every generate call."""

    supports_json_schema = True

    def __init__(self, turns: Sequence[Sequence[int]]) -> None:
        super().__init__(turns=turns)
        self.schemas: list[Mapping[str, object] | None] = []
        self.starts: list[int] = []

    def generate(
        self,
        prompt: Sequence[int],
        sampling: SamplingParams,
        stop_ids: Collection[int],
        should_stop: Callable[[], bool],
    ) -> Generator[int, None, None]:
        self.schemas.append(sampling.json_schema)
        self.starts.append(len(prompt))
        turn = self._turns[0]
        yield from turn[len(prompt) - self.starts[0] :]  # a restart continues where the turn was


def _run(encoding: HarmonyEncoding, final_schema: Mapping[str, object] | None) -> tuple[GrammarReplay, str]:
    backend = GrammarReplay([ids(encoding, TURN)])
    backend.load()
    session = ChatSession(encoding, start_date="2026-11-21")
    session.add_user("Count to four.")
    options = TurnOptions(sampling=SamplingParams(max_tokens=100), final_schema=final_schema)
    events = list(run_turn(session, backend, options))
    answer = "".join(e.text for e in events if isinstance(e, ContentDelta) and e.channel == "final")
    return backend, answer


def test_the_final_message_switches_the_grammar_on(encoding: HarmonyEncoding) -> None:
    backend, answer = _run(encoding, SCHEMA)
    assert backend.schemas == [None, SCHEMA]  # analysis free, the final under the grammar
    header = ids(encoding, "<|channel|>analysis<|message|>Count.<|end|><|start|>assistant<|channel|>final<|message|>")
    assert backend.starts[1] - backend.starts[0] == len(header)  # restarted right after the final's header
    assert answer == '{"n": 4}'


def test_without_a_schema_nothing_is_constrained(encoding: HarmonyEncoding) -> None:
    backend, answer = _run(encoding, None)
    assert backend.schemas == [None] and answer == '{"n": 4}'
