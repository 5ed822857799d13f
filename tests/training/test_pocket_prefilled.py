"""The pocket gpt-oss's prefilled examples: answers whose start is already in the prompt (``pocket/prefilled.py``)."""

from __future__ import annotations

from openai_harmony import HarmonyEncoding

from harmony_chat.harmony import tokens as tk
from training.pocket.data import build_examples
from training.pocket.texts import FALLBACKS, KNOWN_ANSWERS


def test_committed_answers_finish_the_known_answer_they_begin(encoding: HarmonyEncoding) -> None:
    """An answer begun with enough of a known answer to tell which (a sum: all but its result) is finished as such."""
    examples = build_examples(
        encoding, conversations=120, copies=0, bare_copies=0, unseen=0, committed=40, quoted=0, unanalysed=0, seed=4
    )
    committed = [example for example in examples if example.name == "committed"]
    assert len(committed) == 40
    known, fallbacks = set(KNOWN_ANSWERS), set(FALLBACKS)
    marker = encoding.encode("<|channel|>final<|message|>", allowed_special="all")
    for example in committed:
        at = max(i + len(marker) for i in range(len(example.prompt)) if example.prompt[i : i + len(marker)] == marker)
        begun, rest = example.prompt[at:], example.completion
        assert len(begun) >= 2 and rest[-1] == tk.RETURN and len(rest) >= 2
        answer = encoding.decode([*begun, *rest[:-1]])
        assert answer in known | fallbacks, answer
        if answer in fallbacks:
            continue  # its own fallback (the setup's tools decide which), begun anywhere
        if answer[0].isdigit():
            assert encoding.decode(begun).endswith(("= ", "=")) or len(rest) == 2, answer
        else:
            starting = [other for other in known | fallbacks if other.startswith(encoding.decode(begun))]
            assert starting == [answer], (encoding.decode(begun), starting)


def test_unanalysed_finals_open_the_final_channel_right_after_the_user(encoding: HarmonyEncoding) -> None:
    """The answer written with no analysis before it: the same chat's prompt, then the final channel's header."""
    examples = build_examples(
        encoding, conversations=120, copies=20, bare_copies=10, unseen=10, quoted=0, unanalysed=40, seed=4
    )
    unanalysed = [example for example in examples if example.name.startswith("unanalysed-")]
    assert len(unanalysed) == 40
    kinds = {example.name.removeprefix("unanalysed-").split("-")[0] for example in unanalysed}
    assert kinds <= {"fact", "follow", "fallback", "greeting", "refusal", "code"} and "fallback" in kinds
    header = encoding.encode("<|start|>assistant<|channel|>final<|message|>", allowed_special="all")
    marker = header[2:]  # what is added to the chat's own prompt, which ends in <|start|>assistant
    originals = {(tuple(example.prompt), tuple(example.completion)) for example in examples}
    for example in unanalysed:
        prompt = example.prompt
        assert prompt[-len(header) :] == header
        assert prompt[-len(header) - 1] == tk.END  # the user's message ends right before it: no analysis
        user = max(i for i in range(len(prompt) - 1) if prompt[i] == tk.START and prompt[i + 1] == tk.USER)
        assert tk.ASSISTANT not in prompt[user + 2 : -len(header)]
        assert example.completion[-1] == tk.RETURN
        answer = encoding.decode(example.completion[:-1])
        assert answer in set(KNOWN_ANSWERS) | set(FALLBACKS), answer
        asked = prompt[: -len(marker)]  # the chat it comes from, answered the same after its analysis
        sources = [completion for before, completion in originals if list(before) == asked]
        assert sources, answer
        assert all(list(completion[-len(example.completion) :]) == example.completion for completion in sources)
        assert all(encoding.decode(list(completion)).startswith("<|channel|>analysis") for completion in sources)


def test_misled_finals_answer_the_user_after_an_analysis_gone_astray(encoding: HarmonyEncoding) -> None:
    """An analysis of another question, or a blend of two, in the prompt: the final answer is still the right one."""
    examples = build_examples(
        encoding, conversations=120, copies=0, bare_copies=0, unseen=0, quoted=0, unanalysed=0, misled=40, seed=4
    )
    misled = [example for example in examples if example.name.startswith("misled-")]
    assert len(misled) == 40
    own = {tuple(example.prompt): list(example.completion) for example in examples}
    opening = encoding.encode("<|start|>assistant<|channel|>analysis<|message|>", allowed_special="all")
    header = encoding.encode("<|end|><|start|>assistant<|channel|>final<|message|>", allowed_special="all")
    strayed = 0
    for example in misled:
        assert example.prompt[-len(header) :] == header
        at = max(i for i in range(len(example.prompt)) if example.prompt[i : i + len(opening)] == opening)
        completion = own[tuple(example.prompt[: at + 2])]  # the chat's own prompt ends in <|start|>assistant
        answer = encoding.decode(example.completion)
        assert encoding.decode(completion).endswith(f"<|channel|>final<|message|>{answer}")
        assert answer.removesuffix("<|return|>") in set(KNOWN_ANSWERS) | set(FALLBACKS)
        analysis = example.prompt[at + len(opening) : -len(header)]
        strayed += analysis != completion[len(opening) - 2 : len(opening) - 2 + len(analysis)]
    assert strayed >= 35  # another question's analysis or a blend (a blend may end as its own, rarely)
