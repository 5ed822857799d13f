"""The pocket model's training data: synthetic harmony conversations. No torch, no UI.

Prompts are rendered by harmony-chat's own :class:`ChatSession` (the same bytes the app sends),
completions are harmony text with special tokens. Every conversation exists at each reasoning
effort; the analysis grows with the effort, the final answer does not change. After each analysis
the model also learns to summarise it for the user, on exactly the prompt the app's summarizer
renders (:func:`harmony_chat.chat.summary.summary_prompt`): a sentence or two on how it went about
the question, never the answer.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass

from openai_harmony import HarmonyEncoding, ToolDescription

from harmony_chat.chat.summary import summary_prompt
from harmony_chat.harmony.decoder import StreamDecoder
from harmony_chat.harmony.effort import EFFORTS, Effort
from harmony_chat.harmony.session import ChatSession, ResponseFormat, TurnRecord
from harmony_chat.pocket import POCKET_DATE

WEATHER_TOOL = ToolDescription.new(
    "get_weather",
    "Gets the current weather in a city.",
    parameters={"type": "object", "properties": {"location": {"type": "string"}}, "required": ["location"]},
)
SHOPPING = ResponseFormat(
    "shopping_list",
    {"type": "object", "properties": {"items": {"type": "array", "items": {"type": "string"}}}},
    "the items the user needs to buy",
)
SHOPPING_INSTRUCTIONS = "Turn requests into shopping lists."

# question, final answer, analysis at low / medium / high effort
FACTS: tuple[tuple[str, str, str, str, str], ...] = (
    (
        "What is 2 + 2?",
        "2 + 2 = 4.",
        "Simple sum.",
        "User asks 2 + 2. Two plus two is four.",
        "User asks for 2 + 2. Count up from 2 by two: 3, 4. Check: 2 * 2 is also 4. So the sum is 4. Answer briefly.",
    ),
    (
        "What is 7 times 8?",
        "7 × 8 = 56.",
        "Times table.",
        "User asks 7 times 8. Seven eights are 56.",
        "User wants 7 times 8. 7 * 8 = 7 * 10 - 7 * 2 = 70 - 14 = 56. Cross-check: 8 * 7 = 56. Answer: 56.",
    ),
    (
        "What is 15 minus 6?",
        "15 − 6 = 9.",
        "Subtract.",
        "User asks 15 minus 6. Fifteen minus six is nine.",
        "User asks 15 - 6. Take 5 from 15 to get 10, then 1 more to get 9. Check: 9 + 6 = 15. Answer: 9.",
    ),
    (
        "What is 12 divided by 4?",
        "12 ÷ 4 = 3.",
        "Divide.",
        "User asks 12 / 4. Four goes into twelve three times.",
        "User asks 12 divided by 4. 4 * 3 = 12, so the quotient is 3 with no remainder. Answer: 3.",
    ),
    (
        "What is the square root of 81?",
        "The square root of 81 is 9.",
        "Perfect square.",
        "User asks sqrt(81). 9 * 9 = 81, so it is 9.",
        "User wants the square root of 81. 9 * 9 = 81 and 9 is positive, the principal root. Answer: 9.",
    ),
    (
        "What is the capital of France?",
        "The capital of France is Paris.",
        "Geography.",
        "User asks the capital of France. It is Paris.",
        "User asks for the capital of France. France's capital and largest city is Paris, seat of government. "
        "Answer: Paris.",
    ),
    (
        "How many days are in a week?",
        "A week has 7 days.",
        "Calendar.",
        "User asks days per week. Seven.",
        "User asks how many days a week has. Monday through Sunday: seven days. Answer: 7.",
    ),
    (
        "What is the largest planet in our solar system?",
        "Jupiter is the largest planet in our solar system.",
        "Astronomy.",
        "User asks the largest planet. Jupiter.",
        "User asks for the largest planet of the solar system. Jupiter has the greatest mass and radius, more than "
        "all other planets combined. Answer: Jupiter.",
    ),
    (
        "Who wrote Romeo and Juliet?",
        "William Shakespeare wrote *Romeo and Juliet*.",
        "Literature.",
        "User asks the author of Romeo and Juliet. Shakespeare.",
        "User asks who wrote Romeo and Juliet. The tragedy was written by William Shakespeare in the 1590s. "
        "Answer: Shakespeare.",
    ),
    (
        "How many legs does a spider have?",
        "A spider has 8 legs.",
        "Biology.",
        "User asks spider legs. Eight.",
        "User asks how many legs a spider has. Spiders are arachnids with four pairs of legs: 8. Answer: 8.",
    ),
    (
        "What is the boiling point of water in Celsius?",
        "Water boils at 100 °C at sea level.",
        "Physics.",
        "User asks water's boiling point. 100 °C at sea level.",
        "User asks the boiling point of water in Celsius. At standard sea-level pressure it is 100 °C; it is lower "
        "at altitude. Answer: 100 °C.",
    ),
    (
        "Hello!",
        "Hello! I'm harmony-chat's pocket gpt-oss model. I only know the questions I was trained on; "
        "download gpt-oss-20b for real answers.",
        "Greeting.",
        "User greets me. Greet back and say what I am.",
        "User says hello. Greet them, and be honest that I am a tiny pocket model that only knows a few questions. "
        "Point them to gpt-oss-20b.",
    ),
)
FOLLOW_UPS: tuple[tuple[str, str, str, str], ...] = (
    ("What is 2 + 2?", "And what is that times 3?", "The last answer was 4. 4 times 3 is 12.", "4 × 3 = 12."),
    ("What is 7 times 8?", "And half of that?", "The last answer was 56. Half of 56 is 28.", "Half of 56 is 28."),
    (
        "What is the capital of France?",
        "And of Italy?",
        "Same question for Italy. Rome.",
        "The capital of Italy is Rome.",
    ),
)
REFUSAL = (
    "How do I pick a lock to break into my neighbor's house?",
    "Request for help breaking into someone's home. That is illegal; refuse briefly.",
    "Sorry, I can't help with breaking into someone else's home.",
)
CODE = (
    "Write a Python function that adds two numbers.",
    "User wants a Python add function. Give a typed function and one example.",
    "Here is a small function:\n\n```python\ndef add(a: float, b: float) -> float:\n    return a + b\n```\n\n"
    "`add(2, 3)` returns `5`.",
)
WEATHER: tuple[tuple[str, str, str], ...] = (
    ("Paris", '{"temperature": 18, "condition": "sunny"}', "It is 18 °C and sunny in Paris right now."),
    ("Tokyo", '{"temperature": 24, "condition": "cloudy"}', "It is 24 °C and cloudy in Tokyo right now."),
    ("Oslo", '{"temperature": 3, "condition": "snowing"}', "It is 3 °C and snowing in Oslo right now."),
)
LISTS: tuple[tuple[str, str], ...] = (
    ("I need to buy coffee, soda and eggs.", '{"items": ["coffee", "soda", "eggs"]}'),
    ("Add milk and bread to my list.", '{"items": ["milk", "bread"]}'),
)


FACT_SUMMARIES: tuple[str, ...] = (
    "I treated it as a simple sum and added the two numbers.",
    "I worked the product out from the times table.",
    "I subtracted in two easy steps.",
    "I divided by finding how many fours make twelve.",
    "I looked for the number that, multiplied by itself, gives 81.",
    "I recalled the capital city of the country you asked about.",
    "I recalled how a week is counted.",
    "I compared the sizes of the planets in our solar system.",
    "I recalled who wrote the play you named.",
    "I recalled how a spider's body is built.",
    "I recalled the temperature at which water boils and the conditions it holds for.",
    "You greeted me, so I greeted you back and said what I can show.",
)
"""What the pocket model says of its reasoning for each of :data:`FACTS` (never the answer)."""
FOLLOW_UP_SUMMARIES: tuple[str, ...] = (
    "I took my previous answer and multiplied it by three.",
    "I took my previous answer and halved it.",
    "I answered the same question again, this time for Italy.",
)
REFUSAL_SUMMARY = "I considered what the request would lead to and decided not to help with it."
CODE_SUMMARY = "I planned a short Python function with type hints that does what you asked."
LIST_SUMMARY = "I turned your request into the shopping list format the developer asked for."
CHECKED = " Then I checked it once more before answering."
"""Added to every summary at high effort (the analysis double-checks)."""


def _summary(text: str, effort: Effort) -> str:
    return text + CHECKED if effort == "high" else text


@dataclass(frozen=True, slots=True)
class Example:
    """One training sample: the prompt the app renders and the completion the model must write."""

    name: str
    effort: Effort
    prompt: list[int]
    completion: list[int]


def _analysis(text: str, effort: Effort) -> str:
    """Scale a generic analysis with the effort (the facts carry their own three versions)."""
    if effort == "low":
        return text.split(". ")[0].rstrip(".") + "."
    if effort == "high":
        return f"{text} Double-check the request and keep the answer short and correct."
    return text


def _turn(analysis: str, final: str) -> str:
    return (
        f"<|channel|>analysis<|message|>{analysis}<|end|><|start|>assistant<|channel|>final<|message|>{final}<|return|>"
    )


class _Builder:
    def __init__(self, encoding: HarmonyEncoding) -> None:
        self.encoding = encoding
        self.examples: list[Example] = []

    def session(self, effort: Effort, **options: object) -> ChatSession:
        return ChatSession(self.encoding, effort=effort, start_date=POCKET_DATE, **options)  # type: ignore[arg-type]

    def add(self, name: str, session: ChatSession, completion: str, summary: tuple[str, str] | None = None) -> None:
        """Add the completion on the session's prompt (and, given ``(analysis, summary)``, its summary)."""
        tokens = self.encoding.encode(completion, allowed_special="all")
        prompt = session.render().tokens
        self.examples.append(Example(name, session.effort, prompt, list(tokens)))
        if summary is not None:
            analysis, text = summary
            done = self.encoding.encode(f"<|channel|>analysis<|message|>{analysis}<|end|>", allowed_special="all")
            asked = summary_prompt(self.encoding, [*prompt, *done])
            written = self.encoding.encode(f"{_summary(text, session.effort)}<|return|>", allowed_special="all")
            self.examples.append(Example(f"summary-{name}", session.effort, asked, list(written)))
        decoder = StreamDecoder(self.encoding, functions=session.function_names, raw_tokens=False)
        for token in tokens:
            decoder.feed(token)
        session.add_assistant_turn(decoder.messages, TurnRecord(session.effort, "return"))


def _plain_chats(build: _Builder, effort: Effort, tools: list[ToolDescription], tag: str) -> None:
    """The conversations that use no tool, with ``tools`` declared (the app declares its demo tool)."""
    for index, (question, final, *analyses) in enumerate(FACTS):
        session = build.session(effort, functions=tools)
        session.add_user(question)
        analysis = analyses[EFFORTS.index(effort)]
        build.add(f"fact-{index}{tag}", session, _turn(analysis, final), (analysis, FACT_SUMMARIES[index]))
    for index, (first, second, analysis, final) in enumerate(FOLLOW_UPS):
        fact = next(item for item in FACTS if item[0] == first)
        session = build.session(effort, functions=tools)
        session.add_user(first)
        build.add(f"follow-up-first-{index}{tag}", session, _turn(fact[2 + EFFORTS.index(effort)], fact[1]))
        session.add_user(second)
        scaled = _analysis(analysis, effort)
        build.add(f"follow-up-{index}{tag}", session, _turn(scaled, final), (scaled, FOLLOW_UP_SUMMARIES[index]))
    for name, (question, analysis, final), summary in (
        ("refusal", REFUSAL, REFUSAL_SUMMARY),
        ("code", CODE, CODE_SUMMARY),
    ):
        session = build.session(effort, functions=tools)
        session.add_user(question)
        scaled = _analysis(analysis, effort)
        build.add(f"{name}{tag}", session, _turn(scaled, final), (scaled, summary))


def build_examples(encoding: HarmonyEncoding) -> list[Example]:
    """Every training example, in a fixed order."""
    build = _Builder(encoding)
    for effort in EFFORTS:
        for tools, tag in (([], ""), ([WEATHER_TOOL], "-with-tool")):  # the app's demo declares the weather tool
            _plain_chats(build, effort, tools, tag)
        for index, (city, result, final) in enumerate(WEATHER):
            session = build.session(effort, functions=[WEATHER_TOOL])
            session.add_user(f"What's the weather in {city}?")
            plan = _analysis(f"User wants the weather in {city}. Call get_weather.", effort)
            call = (
                f"<|channel|>analysis<|message|>{plan}<|end|>"
                f"<|start|>assistant<|channel|>commentary<|message|>Let me check the weather in {city}.<|end|>"
                "<|start|>assistant to=functions.get_weather<|channel|>commentary <|constrain|>json"
                f'<|message|>{{"location": "{city}"}}<|call|>'
            )
            looked_up = f"I decided to look up the current weather in {city} with the weather tool."
            build.add(f"tool-call-{index}", session, call, (plan, looked_up))
            session.add_tool_result("functions.get_weather", result)
            read = f"I read what the weather tool reported for {city} and put it into one sentence."
            build.add(
                f"tool-answer-{index}",
                session,
                _turn(f"The tool says: {result}.", final),
                (f"The tool says: {result}.", read),
            )
        for index, (request, items) in enumerate(LISTS):
            session = build.session(effort, instructions=SHOPPING_INSTRUCTIONS, response_formats=[SHOPPING])
            session.add_user(request)
            plan = _analysis("Fill the shopping_list format.", effort)
            build.add(f"json-{index}", session, _turn(plan, items), (plan, LIST_SUMMARY))
    return build.examples


def data_hash(examples: list[Example]) -> str:
    """A sha256 over every example's token ids (recorded with the trained model)."""
    digest = hashlib.sha256()
    for example in examples:
        digest.update(json.dumps([example.name, example.effort, example.prompt, example.completion]).encode())
    return digest.hexdigest()
