"""An adversarial corpus of real gpt-oss output, ported from other projects' parsing tests.

Each case is one assistant turn in ``tests/data/harmony-corpus/NAME.txt`` (harmony text, special
tokens written out, starting right after the prompt's ``<|start|>assistant``) plus what a careful
streaming client must make of it. The texts were re-typed from the cited tests, not copied code.
Peers usually test a stream whose stop token was already stripped (their servers cut it off);
the recordings keep the ``<|return|>`` or ``<|call|>`` the model emits, so that a forced-token run
on llama.cpp stops where a real one does. Where a peer expects something else, ``differs`` says
why this client does not follow it.

Sources (read on the dates of the cited commits):

* llama.cpp: ``ggml-org/llama.cpp`` ``tests/test-chat.cpp`` at 0042e2079d34, "GPT-OSS format tests".
* openai/harmony: ``openai/harmony`` ``tests/test_harmony.py`` and ``test-data/`` at v0.0.8
  (ec7606df9e87), and ``src/tests.rs`` at the same tag.
* vLLM: ``vllm-project/vllm`` ``tests/parser/test_harmony.py`` at 06cbadc2c809.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from harmony_chat.generation.turn import TurnStats
from harmony_chat.harmony.events import ContentDelta, MessageStarted, NoAnswer, Recovery, StopReason, ToolCall
from harmony_chat.harmony.visibility import Display, display_of

CORPUS = Path(__file__).resolve().parent / "data" / "harmony-corpus"
LLAMA = "llama.cpp tests/test-chat.cpp (GPT-OSS format tests)"
HARMONY = "openai/harmony tests/test_harmony.py v0.0.8"


@dataclass(frozen=True)
class Case:
    """One recorded turn and what the user must (and must not) get from it."""

    name: str
    source: str
    answer: str | None
    """The exact answer text; None when the turn has no answer (a no-answer notice is due)."""
    reason: StopReason = StopReason.RETURN
    hidden: tuple[str, ...] = ()
    """Text that only debug views may show (reasoning, headerless text)."""
    calls: tuple[tuple[str, object, bool], ...] = ()
    """(tool name, parsed JSON arguments or None, runnable) of each tool call."""
    preamble: str = ""
    recoveries: tuple[str, ...] = ()
    """Recovery kinds that must be reported (others may be too)."""
    differs: str = ""
    """Why this expectation differs from the peer's."""

    @property
    def path(self) -> Path:
        """The recording."""
        return CORPUS / f"{self.name}.txt"

    @property
    def no_answer(self) -> bool:
        """Whether the turn must end with a no-answer notice."""
        waiting = any(runnable for _name, _args, runnable in self.calls)
        return self.answer is None and not waiting


HELLO = "Hello, world!\nWhat's up?"
THINKING = "I'm\nthinking"
ARG1 = ("functions.special_function", {"arg1": 1}, True)
TOKYO = ("functions.get_weather", {"location": "Tokyo"}, True)
SORRY = "I'm sorry, but I can't help with that."

CASES: tuple[Case, ...] = (
    Case("llamacpp-final-only", f"{LLAMA}: basic content only, final channel", HELLO),
    Case(
        "llamacpp-commentary-only",
        f"{LLAMA}: basic content only, commentary channel",
        None,
        preamble=HELLO,
        differs="llama.cpp returns commentary without a recipient as the message content. In harmony it is a "
        "preamble (shown as such, on stderr or as a quiet line), not the answer; as no final came, the user is "
        "told the model gave no answer instead of getting an empty turn.",
    ),
    Case("llamacpp-analysis-then-final", f"{LLAMA}: analysis channel with final channel", HELLO, hidden=(THINKING,)),
    Case(
        "llamacpp-analysis-only",
        f"{LLAMA}: analysis channel only (partial)",
        None,
        hidden=(THINKING,),
        differs="llama.cpp checks the partial stream for its reasoning; here the stream ends as the model ends it "
        "(<|return|>) and the user gets the no-answer notice, the reasoning only in debug views.",
    ),
    Case(
        "llamacpp-call-recipient-in-role",
        f"{LLAMA}: tool call with recipient in role header",
        None,
        StopReason.CALL,
        calls=(ARG1,),
    ),
    Case(
        "llamacpp-call-recipient-in-channel",
        f"{LLAMA}: tool call with recipient in channel header",
        None,
        StopReason.CALL,
        calls=(ARG1,),
    ),
    Case("llamacpp-call-with-constrain", f"{LLAMA}: tool call with constraint", None, StopReason.CALL, calls=(ARG1,)),
    Case(
        "llamacpp-call-in-commentary", f"{LLAMA}: tool call in commentary channel", None, StopReason.CALL, calls=(ARG1,)
    ),
    Case(
        "llamacpp-analysis-then-call",
        f"{LLAMA}: tool call with reasoning + content",
        None,
        StopReason.CALL,
        hidden=(THINKING,),
        calls=(ARG1,),
    ),
    Case(
        "llamacpp-complex-edit-call",
        f"{LLAMA}: complex tool calling",
        None,
        StopReason.CALL,
        hidden=("Thinking about edit",),
        calls=(
            (
                "functions.edit",
                {"oldString": "if (part < railCount - 1) {", "newString": "if (part < 4) {", "replaceAll": False},
                True,
            ),
        ),
    ),
    Case(
        "llamacpp-structured-output",
        f"{LLAMA}: structured output",
        '{"amount": 123.45, "date": "2025-12-03"}',
        hidden=("invoice details",),
    ),
    Case(
        "llamacpp-builtin-recipient-in-role",
        f"{LLAMA}: unsolicited tool calls, builtin function, recipient in role",
        None,
        StopReason.CALL,
        hidden=("execute python",),
        calls=(("container.exec", None, True),),
        differs="llama.cpp returns empty content because it cannot express a built-in call. A streaming client "
        "reports the call as a tool call (never as answer text); whether an undeclared tool runs is the tool "
        "loop's decision.",
    ),
    Case(
        "llamacpp-builtin-recipient-in-channel",
        f"{LLAMA}: unsolicited tool calls, builtin function, recipient in channel",
        None,
        StopReason.CALL,
        hidden=("execute python",),
        calls=(("python", None, True),),
        differs="As for the recipient-in-role case: reported as a call to python, no answer text.",
    ),
    Case(
        "llamacpp-stray-commentary-before-analysis",
        f"{LLAMA}: edge case, '<|channel|>commentary to=assistant' before reasoning",
        HELLO,
        hidden=(THINKING,),
        recoveries=("restarted-header",),
    ),
    Case(
        "llamacpp-stray-commentary-before-final",
        f"{LLAMA}: edge case, '<|channel|>commentary to=assistant' before final message",
        HELLO,
        hidden=(THINKING,),
        recoveries=("restarted-header",),
    ),
    Case(
        "harmony-tool-call-constrain",
        f"{HARMONY}: test_tool_call_with_constrain_tokenized_correctly",
        None,
        StopReason.CALL,
        calls=(TOKYO,),
    ),
    Case(
        "harmony-tool-call-constrain-adjacent",
        f"{HARMONY}: test_tool_call_with_constrain_marker_adjacent",
        None,
        StopReason.CALL,
        calls=(TOKYO,),
    ),
    Case(
        "harmony-channel-before-recipient",
        f"{HARMONY}: test_tool_call_with_channel_before_recipient_and_constrain_adjacent",
        None,
        StopReason.CALL,
        calls=(("functions.get_weather", {"latitude": 48.8566, "longitude": 2.3522}, True),),
    ),
    Case(
        "harmony-missing-message-token",
        f"{HARMONY}: test_streamable_parser_missing_message_token",
        SORRY,
        hidden=("I must refuse", "We must refuse"),
        recoveries=("missing-message", "headerless"),
        differs="openai-harmony's non-strict parser returns 'I must refuse' as a message without a channel (the "
        "strict one raises). That text has no header, so it is not an answer: it stays hidden like reasoning and "
        "the turn goes on to its real final.",
    ),
    Case(
        "harmony-missing-message-other-header",
        f"{HARMONY}: test_streamable_parser_missing_message_token_other_initial_headers",
        SORRY,
        hidden=("I must refuse", "We must refuse"),
        recoveries=("missing-message",),
    ),
    Case(
        "harmony-missing-message-then-tool-call",
        f"{HARMONY}: test_streamable_parser_missing_message_token_tool_call",
        None,
        StopReason.CALL,
        hidden=("use the tool",),
        calls=(TOKYO,),
        recoveries=("headerless",),
        differs="The leading '... Let's use the tool.' has no header; openai-harmony keeps it as a channel-less "
        "message, here it is hidden and the tool call that follows still happens.",
    ),
    Case(
        "harmony-commentary-missing-message",
        "openai/harmony src/tests.rs v0.0.8: test_missing_message_token_requires_non_strict_mode "
        "(followed here by a final answer)",
        "Hi.",
        preamble="Hello",
        recoveries=("missing-message",),
    ),
    Case(
        "harmony-browser-search",
        f"{HARMONY}: test_streamable_parser (test-data/test_streamable_parser.txt, the generated part up to "
        "<|call|>; the tool message after it is the next prompt's input)",
        None,
        StopReason.CALL,
        hidden=("current US president?",),
        calls=(("browser.search", None, True),),
    ),
    Case(
        "vllm-constrained-final",
        "vLLM tests/parser/test_harmony.py: test_constrained_output_segment_recipient_normalized",
        '{"result":true}',
        StopReason.FINAL,
    ),
    Case(
        "vllm-return-after-analysis",
        "vLLM tests/parser/test_harmony.py: test_malformed_token_does_not_raise",
        None,
        hidden=("think",),
        recoveries=("stray-stop",),
        differs="vLLM feeds the whole chunk and streams 'thinkanswer'. <|return|> is a stop token: generation "
        "ends there on every server, so the later final never arrives, and the reasoning must not be shown as "
        "content. The user gets the no-answer notice.",
    ),
    Case(
        "vllm-commentary-to-assistant-call",
        "vLLM tests/parser/test_harmony.py: test_malformed_header_drops_channel_from_content_type[assistant]",
        None,
        preamble="print(6 * 7)",
        recoveries=("call-without-tool",),
        differs="vLLM keeps 'assistant' as the recipient. 'assistant' is not a tool, so this is commentary to the "
        "user; its <|call|> stops generation (the final after it never arrives) and no tool call is reported.",
    ),
    Case(
        "vllm-repeated-recipient",
        "vLLM tests/parser/test_harmony.py: test_process_chunk_recovers_from_malformed_header",
        None,
        StopReason.CALL,
        calls=(("functions.get_weather", {}, True),),
        differs="vLLM recovers the raw text as a final answer. Both recipients name the same tool, so the call is "
        "unambiguous: it is reported as a call, and no header text reaches the user.",
    ),
    Case("issue9-constrained-final", "harmony-chat issue 9, class 1", '{"result":true}'),
    Case(
        "issue9-recipient-with-markup",
        "harmony-chat issue 9, class 2",
        "Hello",
        hidden=("I'm thinking",),
        recoveries=("restarted-header",),
    ),
    Case(
        "issue9-headerless-then-answer",
        "harmony-chat issue 9, class 3",
        "It is sunny.",
        hidden=("I must refuse", "wants weather"),
        recoveries=("headerless",),
    ),
    Case(
        "issue9-headerless-then-call",
        "harmony-chat issue 9, class 3 (then a tool call)",
        None,
        StopReason.CALL,
        hidden=("I must refuse",),
        calls=(("functions.get_weather", {"location": "SF"}, True),),
        recoveries=("headerless",),
    ),
    Case(
        "issue9-truncated-arguments",
        "harmony-chat issue 9, class 4 (repairable)",
        None,
        StopReason.CALL,
        calls=(("functions.get_weather", {"location": "SF", "options": {"units": "metric"}}, True),),
        recoveries=("repaired-arguments",),
    ),
    Case(
        "issue9-malformed-arguments",
        "harmony-chat issue 9, class 4 (not repairable)",
        None,
        StopReason.CALL,
        calls=(("functions.get_weather", None, False),),
        recoveries=("malformed-arguments",),
    ),
    Case("issue9-analysis-then-return", "harmony-chat issue 9, class 5", None, hidden=("Nothing to add",)),
    Case(
        "issue17-bare-channel-as-header",
        "harmony-chat issue 17, item 3",
        "ok",
        hidden=("SECRET",),
        recoveries=("bare-channel",),
    ),
    Case("issue17-channel-after-role", "harmony-chat issue 17, item 3 (after the role)", "ok", hidden=("SECRET",)),
    Case(
        "own-empty-recipient",
        "harmony-chat: an empty recipient is no tool",
        "Done.",
        hidden=("secret plan",),
        recoveries=("not-a-tool",),
    ),
    Case(
        "own-analysis-to-all", "harmony-chat: analysis addressed to all is analysis", "Done.", hidden=("secret plan",)
    ),
)


def check_turn(case: Case, events: Sequence[object]) -> None:
    """Assert what one decoded turn shows, hides and reports, whatever backend produced it."""
    deltas = [e for e in events if isinstance(e, ContentDelta)]
    shown = {
        display: "".join(d.text for d in deltas if display_of(d.channel, d.recipient) is display) for display in Display
    }
    assert shown[Display.ANSWER] == (case.answer or ""), case.name
    assert shown[Display.PREAMBLE] == case.preamble, case.name
    calls = [e for e in events if isinstance(e, ToolCall)]
    assert [(c.name, c.parsed_arguments, c.runnable) for c in calls] == list(case.calls), case.name
    assert len([e for e in events if isinstance(e, NoAnswer)]) == int(case.no_answer), case.name
    stats = events[-1]
    assert isinstance(stats, TurnStats) and stats.reason is case.reason, case.name
    kinds = {e.kind for e in events if isinstance(e, Recovery)}
    assert set(case.recoveries) <= kinds, (case.name, kinds)
    for text in case.hidden:
        assert text in shown[Display.DEBUG], (case.name, text)  # kept for debug views, never lost
        public = shown[Display.ANSWER] + shown[Display.PREAMBLE] + "".join(c.arguments for c in calls)
        assert text not in public, (case.name, text)
    visible_strings = [d.text for d in deltas] + [c.name for c in calls] + [c.arguments for c in calls]
    visible_strings += [e.detail for e in events if isinstance(e, Recovery | NoAnswer)]
    visible_strings += [e.recipient or "" for e in events if isinstance(e, MessageStarted)]
    assert not [s for s in visible_strings if "<|" in s], case.name
