"""The clauses the conformance checks test, each with where it is written.

Two guides say how a gpt-oss server must carry the model's reasoning: OpenAI's harmony guide
(``harmony-format.md``, headings cited as written) and the raw chain-of-thought guide ("How to
handle the raw chain of thought in gpt-oss", OpenAI's cookbook; the project keeps it in Chinese,
so its sections are cited by their English names with the original heading beside them). A few
checks test OpenAI's own API conventions, which the raw-CoT guide tells servers to follow.
"""

from __future__ import annotations

from dataclasses import dataclass

RAW_COT = "raw-CoT guide"
HARMONY = "harmony guide"
OPENAI_API = "OpenAI API"


@dataclass(frozen=True, slots=True)
class Clause:
    """One rule a check tests.

    Args:
        source: the document (:data:`RAW_COT`, :data:`HARMONY` or :data:`OPENAI_API`).
        section: where in it, as a reader finds it (``Chat Completions API, point 2``).
        rule: what it says, in a line.
    """

    source: str
    section: str
    rule: str

    @property
    def citation(self) -> str:
        """``source § section``."""
        return f"{self.source} § {self.section}"


CHAT_REASONING_FIELD = Clause(
    RAW_COT,
    "Chat Completions API, point 2",
    "the raw CoT is the `reasoning` property of the output message",
)
CHAT_REASONING_DELTA = Clause(
    RAW_COT,
    "Chat Completions API, point 3",
    "in streamed deltas the CoT is the delta's `reasoning` property",
)
CHAT_REASONING_EXCLUDE = Clause(
    RAW_COT,
    "Chat Completions API, point 1",
    "the raw CoT is returned unless the request says `reasoning: {exclude: true}`",
)
CHAT_REASONING_INPUT = Clause(
    RAW_COT,
    "Chat Completions API, point 4",
    "later turns may send earlier reasoning back as `reasoning`, handled by the chat-template rule",
)
COT_DROPPED_AFTER_FINAL = Clause(
    RAW_COT,
    "Harmony / chat template handling (Harmony / 聊天模板处理), point 2",
    "after a message on the final channel, earlier analysis is dropped from the next prompt",
)
COT_KEPT_IN_TOOL_LOOP = Clause(
    RAW_COT,
    "Harmony / chat template handling (Harmony / 聊天模板处理), point 3",
    "while the last assistant message is a tool call, the analysis since the last final stays in the prompt",
)
RESPONSES_REASONING_ITEM = Clause(
    RAW_COT,
    "Responses API, points 1-2 and item type changes (项目类型更改)",
    "a `reasoning` item holds the raw CoT as `content: [{type: reasoning_text}]` beside a `summary` array",
)
RESPONSES_REASONING_EVENTS = Clause(
    RAW_COT,
    "Responses API, point 3 and event changes (事件更改)",
    "the CoT streams as `response.reasoning_text.delta` then `.done`, with sequence_number, item_id, "
    "output_index, content_index",
)
RESPONSES_REASONING_INPUT = Clause(
    RAW_COT,
    "Responses API, point 4",
    "later turns may send earlier reasoning back, handled by the chat-template rule",
)
RESPONSES_CONTINUE = Clause(
    OPENAI_API,
    "Responses, previous_response_id",
    "a request naming `previous_response_id` continues that response's conversation",
)
NO_MARKUP = Clause(
    HARMONY,
    "Harmony renderer library / Receiving tool calls",
    "harmony tokens (`<|channel|>`, `<|message|>`, `<|constrain|>`...) are parsed, never shown as text",
)
NO_ANALYSIS_IN_ANSWER = Clause(
    HARMONY,
    "Concepts › Channels (analysis)",
    "analysis messages are the CoT: avoid showing them to end users (they are not the answer)",
)
TOOL_CALL_PARSED = Clause(
    HARMONY,
    "Function calling › Receiving tool calls",
    "a call is `to=functions.NAME` with JSON after `<|constrain|>json`: the client gets NAME and JSON arguments",
)
TOOL_RESULT_ROUND_TRIP = Clause(
    HARMONY,
    "Function calling › Handling tool calls",
    "the tool's output goes back to the model as a tool message after the call, and sampling continues",
)
PREAMBLE_IS_CONTENT = Clause(
    HARMONY,
    "Function calling › Preambles",
    "a preamble (commentary without a recipient) is meant for the user, unlike the CoT",
)
EFFORT = Clause(
    HARMONY,
    "Reasoning",
    "the system message's `Reasoning: low|medium|high` sets how much the model reasons",
)
STRUCTURED_OUTPUT = Clause(
    HARMONY,
    "Structured output",
    "a response format in the developer message, enforced by a grammar, makes the answer JSON of the schema",
)
ERROR_SHAPE = Clause(
    OPENAI_API,
    "Error codes / error object",
    'a bad request gets a 4xx with `{"error": {"message", "type", "param", "code"}}`',
)
