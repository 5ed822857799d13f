"""Arithmetic the pocket gpt-oss hands to the ``python`` tool: questions, the code it writes, the answer.

One operation (+, -, *, /) on two whole numbers, asked the many ways people type it. The model
writes ``print(a op b)`` (a quotient rounded to 4 places), the tool prints the result, and the answer
quotes it: ``1234 × 5678 = 7006652.`` The questions of the times table the model knows by heart
(:data:`~training.pocket.texts.FACTS`) are never generated here.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass

SYMBOLS = {"+": "+", "-": "−", "*": "×", "/": "÷"}
"""How the answer writes each operator."""
_WORDS = {
    "+": ("+", "+", "+", "plus", "plus"),
    "-": ("-", "-", "-", "minus", "minus"),
    "*": ("*", "*", "x", "×", "times", "times", "multiplied by"),
    "/": ("/", "/", "÷", "divided by", "divided by", "over"),
}
_FRAMES = (
    ("What is ", "?"),
    ("What is ", "?"),
    ("What is ", ""),
    ("What's ", "?"),
    ("what is ", "?"),
    ("whats ", ""),
    ("Calculate ", ""),
    ("calculate ", "."),
    ("Compute ", ""),
    ("Compute ", "."),
    ("How much is ", "?"),
    ("how much is ", ""),
    ("Please calculate ", "."),
    ("Can you calculate ", "?"),
    ("Could you work out ", "?"),
    ("Work out ", ""),
    ("Quick question: what is ", "?"),
    ("Tell me ", ""),
    ("Evaluate ", ""),
    ("Can you tell me what ", " is?"),
    ("what does ", " equal?"),
    ("What is ", " equal to?"),
    ("", " is what?"),
    ("What's the answer to ", "?"),
    ("solve ", ""),
    ("Hey, what is ", "?"),
    ("Do you know what ", " is?"),
    ("How much does ", " make?"),
    ("Find ", "."),
    ("calc ", ""),
    ("Result of ", "?"),
    ("What is the result of ", "?"),
    ("Quick math: ", ""),
    ("Help me with ", ", please"),
    ("What do I get for ", "?"),
    ("I need ", "."),
    ("", ""),
    ("", "?"),
    ("", " = ?"),
    ("", "=?"),
    ("", "="),
    ("", " please"),
    ("What is ", "? Thanks!"),
    ("What's ", "? Thank you."),
)
"""How people ask for a sum around it (before, after)."""
_PHRASES = (
    ("+", "What is the sum of {a} and {b}?"),
    ("+", "Add {a} and {b}."),
    ("+", "add {a} and {b}"),
    ("+", "What do you get when you add {a} and {b}?"),
    ("*", "What is the product of {a} and {b}?"),
    ("*", "what's {a} multiplied by {b}"),
    ("+", "What is {a} added to {b}?"),
    ("+", "What's the total of {a} and {b}?"),
    ("-", "Take {b} away from {a}."),
    ("/", "How many times does {b} go into {a}?"),
    ("*", "Multiply {a} by {b}."),
    ("*", "multiply {a} and {b}"),
    ("*", "What do you get if you multiply {a} by {b}?"),
    ("-", "What is the difference between {a} and {b}?"),
    ("-", "Subtract {b} from {a}."),
    ("-", "What is {b} less than {a}?"),
    ("/", "Divide {a} by {b}."),
    ("/", "What is the quotient of {a} and {b}?"),
    ("/", "divide {a} by {b}"),
)
_TABLE = {(2, "+", 2), (7, "*", 8), (15, "-", 6), (12, "/", 4), (8, "*", 7)}
"""Sums the model answers from memory (its facts), never sent to python."""
_DIGITS = (1, 2, 2, 2, 3, 3, 3, 4, 4, 4, 5, 5, 6)


@dataclass(frozen=True, slots=True)
class Arithmetic:
    """One arithmetic question and everything the pocket model writes about it."""

    question: str
    a: int
    op: str
    b: int

    @property
    def expression(self) -> str:
        """``a op b`` as python reads it."""
        return f"{self.a} {self.op} {self.b}"

    @property
    def code(self) -> str:
        """What the model sends to python."""
        if self.op == "/":
            return f"print(round({self.expression}, 4))"
        return f"print({self.expression})"

    @property
    def output(self) -> str:
        """What python prints for :attr:`code`."""
        value: float
        if self.op == "+":
            value = self.a + self.b
        elif self.op == "-":
            value = self.a - self.b
        elif self.op == "*":
            value = self.a * self.b
        else:
            value = round(self.a / self.b, 4)
        return f"{value}\n"

    def final(self, output: str) -> str:
        """The answer, quoting python's ``output`` exactly."""
        relation = "≈" if self.op == "/" else "="
        return f"{self.a} {SYMBOLS[self.op]} {self.b} {relation} {output.strip()}."


def _number(rng: random.Random) -> int:
    """A whole number as people type them: often round (500, 250000) or a pattern (999, 1111, 12345)."""
    digits = rng.choice(_DIGITS)
    roll = rng.random()
    if roll < 0.25 and digits > 1:
        kept = rng.randint(1, digits - 1)
        return int(rng.randint(1, 10**kept - 1) * 10 ** (digits - kept))
    if roll < 0.33:
        return int(str(rng.randint(1, 9)) * digits)
    if roll < 0.38:
        start = rng.randint(1, 9 - min(digits, 9) + 1)
        run = "".join(str((start + offset) % 10) for offset in range(digits))
        return int(run[::-1] if rng.random() < 0.5 else run)
    return rng.randint(0 if digits == 1 else 10 ** (digits - 1), 10**digits - 1)


_TABLE_WORDS = {"+": "+", "-": "minus", "*": "times", "/": "divided by"}


def near_table_question(rng: random.Random) -> Arithmetic:
    """A small sum asked like the ones the model knows by heart (``What is 2 + 3?``), which it must compute."""
    while True:
        op = rng.choice("+-*/")
        a, b = rng.randint(1, 20), rng.randint(1, 12)
        if (a, op, b) not in _TABLE:
            question = f"What is {a} {_TABLE_WORDS[op]} {b}?"
            return Arithmetic(rng.choice((question, question.lower(), question.rstrip("?"))), a, op, b)


def arithmetic_question(rng: random.Random) -> Arithmetic:
    """A random arithmetic question (never one of the times table the model knows)."""
    if rng.random() < 0.15:
        return near_table_question(rng)
    while True:
        a, b = _number(rng), _number(rng)
        if rng.random() < 0.25:
            op, template = rng.choice(_PHRASES)
            question = template.format(a=a, b=b)
        else:
            op = rng.choice("+-*/")
            word = rng.choice(_WORDS[op])
            gap = " " if word[0].isalpha() or rng.random() < 0.75 else ""
            before, after = rng.choice(_FRAMES)
            question = f"{before}{a}{gap}{word}{gap}{b}{after}"
            if rng.random() < 0.1:
                question = question.capitalize()
        if (a, op, b) in _TABLE or (op == "/" and b == 0):
            continue
        return Arithmetic(question, a, op, b)


_INFIX = {
    "+": "+",
    "plus": "+",
    "added to": "+",
    "-": "-",
    "−": "-",
    "minus": "-",
    "*": "*",
    "x": "*",
    "×": "*",
    "times": "*",
    "multiplied by": "*",
    "/": "/",
    "÷": "/",
    "divided by": "/",
    "over": "/",
}
_LEADING: tuple[tuple[str, str], ...] = (
    ("sum", "+"),
    ("total", "+"),
    ("add", "+"),
    ("product", "*"),
    ("multiply", "*"),
    ("difference", "-"),
    ("quotient", "/"),
    ("divide", "/"),
)


def parse_question(question: str) -> Arithmetic | None:
    """Read a question's two numbers and operation (how an evaluation knows the right result); None if unsure."""
    found = list(re.finditer(r"\d+", question))
    if len(found) != 2:
        return None
    a, b = int(found[0].group()), int(found[1].group())
    between = question[found[0].end() : found[1].start()].strip().lower()
    before = question[: found[0].start()].lower()
    if between in _INFIX:
        return Arithmetic(question, a, _INFIX[between], b)
    if between in ("less than", "away from") or ("subtract" in before and between == "from"):
        return Arithmetic(question, b, "-", a)
    if between == "go into":
        return Arithmetic(question, b, "/", a)
    for word, op in _LEADING:
        if word in before and between in ("and", "by", "to", "from"):
            return Arithmetic(question, a, op, b)
    return None
