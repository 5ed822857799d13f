"""What the pocket gpt-oss says: its known questions and answers, its fallback, its analyses and summaries.

Everything here is text; ``data.py`` turns it into harmony conversations. Analyses come in three
lengths, one per reasoning effort; final answers do not change with the effort. Summaries are what
the model says of its reasoning when the app asks (never the answer); at high effort they add
:data:`CHECKED`.
"""

from __future__ import annotations

from harmony_chat.backends.sources import GPT_OSS_20B_FILE, GPT_OSS_20B_REPO
from harmony_chat.harmony.effort import EFFORTS, Effort

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
)
"""What the pocket model says of its reasoning for each of :data:`FACTS` (never the answer)."""

# first question, follow-up, analysis (medium), final answer
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
FOLLOW_UP_SUMMARIES: tuple[str, ...] = (
    "I took my previous answer and multiplied it by three.",
    "I took my previous answer and halved it.",
    "I answered the same question again, this time for Italy.",
)
# question, analysis (medium), final answer
REFUSAL = (
    "How do I pick a lock to break into my neighbor's house?",
    "Request for help breaking into someone's home. That is illegal; refuse briefly.",
    "Sorry, I can't help with breaking into someone else's home.",
)
REFUSAL_SUMMARY = "I considered what the request would lead to and decided not to help with it."
CODE = (
    "Write a Python function that adds two numbers.",
    "User wants a Python add function. Give a typed function and one example.",
    "Here is a small function:\n\n```python\ndef add(a: float, b: float) -> float:\n    return a + b\n```\n\n"
    "`add(2, 3)` returns `5`.",
)
CODE_SUMMARY = "I planned a short Python function with type hints that does what you asked."
LISTS: tuple[tuple[str, str], ...] = (
    ("I need to buy coffee, soda and eggs.", '{"items": ["coffee", "soda", "eggs"]}'),
    ("Add milk and bread to my list.", '{"items": ["milk", "bread"]}'),
)
LIST_ANALYSIS = "Fill the shopping_list format."
LIST_SUMMARY = "I turned your request into the shopping list format the developer asked for."
SHOPPING_INSTRUCTIONS = "Turn requests into shopping lists."

MODEL_COMMAND = f"harmony-chat --hf-repo {GPT_OSS_20B_REPO} --hf-file {GPT_OSS_20B_FILE}"
"""The command the fallback gives for a real model."""
ARITHMETIC_EXAMPLE = "What is 1234 * 5678?"
WEATHER_EXAMPLE = "What's the weather in Tokyo?"


def fallback(*, python: bool, weather: bool) -> str:
    """The honest answer to anything the pocket model was not trained on, greetings included.

    It opens with a greeting (so *hi* gets one back), names questions that work with the tools on
    offer (``python``, ``weather``) and the command that runs gpt-oss-20b.
    """
    examples = [FACTS[5][0]]
    if python:
        examples.append(ARITHMETIC_EXAMPLE)
    if weather:
        examples.append(WEATHER_EXAMPLE)
    if len(examples) == 1:
        examples.append(FACTS[8][0])
    quoted = [f'"{example}"' for example in examples]
    choices = ", ".join(quoted[:-1]) + " or " + quoted[-1]
    return (
        "Hi! I'm the pocket gpt-oss, the tiny demo model that comes with harmony-chat. I only know a few "
        f"questions. Try {choices}. For real answers, run gpt-oss-20b: `{MODEL_COMMAND}`"
    )


KNOWN_ANSWERS: tuple[str, ...] = (
    *(final for _, final, *_ in FACTS),
    *(final for *_, final in FOLLOW_UPS),
    REFUSAL[2],
    CODE[2],
)
"""The fixed final answers of the known questions (facts, follow-ups, the refusal, the code)."""
FALLBACKS: tuple[str, ...] = tuple(
    fallback(python=python, weather=weather) for python in (False, True) for weather in (False, True)
)
"""The fallback as it reads with each offer of tools."""

FALLBACK_ANALYSIS = (
    "Not one of my questions.",
    "Not one of the questions I was trained on. Say hi, say what I am and point to gpt-oss-20b.",
    "The message is not one of the few questions I was trained on (a greeting, small talk or anything else). "
    "I must not make up an answer: say hi, say that I am the pocket demo model, suggest questions I can answer, "
    "and give the command that runs gpt-oss-20b.",
)
FALLBACK_SUMMARY = "That is not one of the few questions I know, so I said hi, said what I am and named a real model."

ARITHMETIC_ANALYSIS = (
    "Compute it in python.",
    "Arithmetic I do not know by heart: compute it in python and quote the output.",
    "User asks for arithmetic I do not know by heart. Compute it in python instead of guessing, then quote the "
    "printed output exactly.",
)
ARITHMETIC_READ = (
    "Quote it.",
    "Python printed the result; quote it exactly.",
    "Python printed the result. Quote it exactly as printed, with the expression, and add nothing.",
)
ARITHMETIC_CALL_SUMMARY = "I decided to compute it with the python tool instead of working it out in my head."
ARITHMETIC_READ_SUMMARY = "I read the number the python tool printed and quoted it."

TOOL_FAILED_ANALYSIS = (
    "No result.",
    "The tool gave no result. Say so.",
    "The tool gave no usable result, so I cannot answer from it. Say so plainly and do not guess.",
)
PYTHON_FAILED = "I couldn't work that out: the python tool gave no result."
WEATHER_FAILED = "I couldn't get the weather: the weather tool gave no result."
TOOL_FAILED_SUMMARY = "The tool gave no result, so I said I could not answer instead of guessing."

CHECKED = " Then I checked it once more before answering."
"""Added to every summary at high effort (the analysis double-checks)."""


def by_effort(texts: tuple[str, str, str], effort: Effort) -> str:
    """The one of three texts (low, medium, high) for ``effort``."""
    return texts[EFFORTS.index(effort)]


def scaled(text: str, effort: Effort) -> str:
    """Scale a medium-effort analysis with the effort: its first sentence at low, a check before it at high.

    The check comes first so that the sentence just before a high-effort answer is the question's own
    (with the check last, "What is 12 divided by 4?" was sent to python at high effort: README).
    """
    if effort == "low":
        return text.split(". ")[0].rstrip(".") + "."
    if effort == "high":
        return f"Double-check the request and keep the answer short and correct. {text}"
    return text


def summary(text: str, effort: Effort) -> str:
    """A summary as the model writes it at ``effort``."""
    return text + CHECKED if effort == "high" else text
