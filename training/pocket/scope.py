"""Out-of-scope training prompts for the pocket model: what it must answer with its honest fallback.

:func:`out_of_scope` draws a category (questions on any topic, near misses of the questions the model
knows, requests, questions about the bot, chit-chat, other languages, long pasted texts, noise), fills
one of its templates from word lists (:mod:`scope_words`, :mod:`scope_languages`), then sometimes
roughens it the way people type. :func:`greeting` draws a greeting-only message. Never produced: a
known question, a computation, the weather. Only the ``rng`` passed in is used.
"""

from __future__ import annotations

import json
import random
import re
import string

from training.pocket.scope_languages import FOREIGN, GREETINGS, PASTE
from training.pocket.scope_words import KINDS, SLOTS

Slots = dict[str, tuple[str, ...]]

NOISE = r"""
@word: test|testing|banana|why|help|pizza|what|asdf|python|sandwich|purple|dog|maybe|nothing|something|music|bruh
@word: potato|unicorn|Tuesday|chair|penguin|blue|hmm|umm|what if|tacos|coffee|homework|jazz|spaghetti|yes|no|idk|meh
@word: qwerty|foo|bar|lorem ipsum|abc|xyz|null|undefined|NaN|true|false|404|SELECT|print|sudo|exit|quit|ping|echo
@word: help me|menu|start|continue|more|next|random|anything|everything|settings|???|...|ok?|.. @emoji: 😂|❤️|🤔|🔥|👍
@emoji: 😭|🙏|😎|💀|🎉|🤖|🥲|😅|🙃|🍕|🐱|🌈|⭐|✨|💯|👀|🤷|😡|🥳|🧠|🚀|🐍|☕|🎸|⚽|📚|🌍|🍣|🐶|👻 @punct: ???|...|?!
@punct: !!!|..|?|-|…|:)|:(|;)|:D|xD|<3|¯\_(ツ)_/¯|?!?!|!?|*|~|.|,|o_O|>_<|^_^|:/|:P|T_T @repeat: a|h|m|z|o|l|?|!|.|ha
@repeat: lo|no|w|x|e|u|k @user: sam|alex|maria|dev|ubuntu|jkim|pat|admin @domain: example.com|github.com|youtube.com
@domain: en.wikipedia.org|docs.python.org|bit.ly|news.ycombinator.com|reddit.com|medium.com|stackoverflow.com|arxiv.org
@domain: nytimes.com|bbc.co.uk|amazon.com|drive.google.com|localhost:8000 @path: /watch?v=dQw4w9WgXcQ|/wiki/Platypus
@path: /3/library/asyncio.html|/r/learnpython|/questions/231767|/abs/1706.03762|/item?id=38012345|/search?q=pocket+gpt
@path: /user/settings|/docs/getting-started|/blog/why-we-moved|/dp/B08N5WRWNW @url_q: what is this?|summarize this
@url_q: can you open this?|check this out|read this|is this legit?|what do you think?
@file: C:\Users\{user}\Documents\{fname}|/home/{user}/projects/{fname}|~/Downloads/{fname}|./src/main.rs|/etc/hosts
@file: D:\Games\setup.exe|/var/log/syslog|~/.bashrc|C:\Program Files\App\config.ini|/tmp/output.txt|../data/{fname}
@fname: report_final_v2.docx|notes.txt|budget.xlsx|thesis.pdf|IMG_2043.jpg|main.py|index.html|data.csv|resume.pdf
@mash: asdfgh|jkl|qwerty|zxcv|sdfsdf|hjkl|fghfgh|wasd|lkjh|poiuy|mnbvc|asdasd|jfjfjf|dfgdfg|qweqwe|ghjghj @prefix: hey,
@prefix: hey|ok so|quick question:|um,|so|hi,|yo|hello?|excuse me,|sorry,|question: @suffix: please|pls|thanks
@suffix: thank you|:)|🙏|asap|lol|thx|😊|please and thank you @ask: can you|could you|would you|can u|could you please
@ask: will you|i want you to @imperative: write|give|tell|explain|translate|summarize|make|help|suggest|create|list
@imperative: describe|recommend|plan|draft|compose|fix|rewrite|paraphrase|proofread|teach|brainstorm|recipe|name|roast
@imperative: say|define|act|pretend|quiz @hi: hi|hello|hey|hiya|heya|howdy|yo|greetings|good morning|good afternoon
@hi: good evening|hey there|hi there|heyo|ahoy|hello there|morning|sup|hey hey|hi hi|heyyy|hiii|hellooo|g'day
@hi: hello hello|well hello|evening @name: pocket|Pocket|model|bot|friend|buddy|assistant|chatbot|pocket gpt|everyone
@name: again|mate|pal|you|AI @talk: how are you?|how's it going?|what's up?|nice to meet you|how are you doing?
@talk: how have you been?|how's your day?|how's your day going?|long time no see|hope you're well|how are things?
@talk: good to see you|what's new?|how are you today?|hope you're doing well|how's everything?|what's going on?
@talk: how do you do?|how's life? @wave: 👋|😊|🙂|😄|🤗|✌️|🙋|😃|👋👋|:)|:D|^^ @pad: \n|\n\n|\n @yell: nooo|sooo|hmmm
@yell: okkk|whyyy|wowww|yesss|lolll|plzzz|whaaat|ughhh|helppp
{word} // {word}? // {word}! // {word}... // {punct} // {mash} {mash} // {mash} // https://{domain}{path} // {yell}
https://www.{domain}{path} {url_q} // {url_q} https://{domain}{path} // www.{domain}{path} // {yell}! // {yell}?
{file} // {file}? // open {file} // what is {file} // {file} not found // {pad}{word}{pad} // {word} {word} {word}
{word} // {word} {word} // {word} // 123 // 0 // 42 // 555-0134 // #4521 // v2.3.1 // 007 // 2024
"""
"""Noise, surface politeness and English greetings (same template language as :mod:`scope_words`)."""

_TOKEN = re.compile(r"\[([^\[\]]*)\]|\{(a:)?(\w+)\}")
_NOT_AN = ("uni", "use", "usu", "eu", "one", "ux", "ufo", "uk")
_UNICODE = ((0x0400, 0x04FF), (0x0370, 0x03FF), (0x4E00, 0x9FFF), (0xAC00, 0xD7A3), (0x2200, 0x22FF), (0x2190, 0x21FF))
_IRREGULAR = {"mouse": "mice", "wolf": "wolves", "mosquito": "mosquitoes", "sheep": "sheep", "deer": "deer"}


def sections(text: str) -> dict[str, str]:
    """A block's sections, each after a ``== name`` line."""
    parts = re.split(r"^== (.+)$", text, flags=re.M)
    return {name.strip(): body for name, body in zip(parts[1::2], parts[2::2], strict=True)}


def parse(block: str) -> tuple[tuple[str, ...], Slots]:
    """A block's templates and slots: ``@name: a|b`` lines (``+`` continues a value), templates split on `` // ``."""
    templates: list[str] = []
    slots: dict[str, list[str]] = {}
    name = ""
    for raw in block.splitlines():
        line = raw.strip()
        if line.startswith("+"):
            slots[name][-1] += raw.lstrip()[1:].replace("\\n", "\n")
        elif line.startswith("@"):
            for definition in re.split(r"\s(?=@\w+:)", line):
                name, _, values = definition[1:].partition(":")
                items = (v.strip().replace("\\n", "\n") for part in values.split(" // ") for v in part.split("|"))
                slots.setdefault(name, []).extend(v for v in items if v)
        elif line:
            templates.extend(t.strip() for t in line.split(" // ") if t.strip())
    return tuple(templates), {key: tuple(values) for key, values in slots.items()}


def _article(word: str) -> str:
    low = word.lower()
    an = (low[:1] in "aeiou" and not low.startswith(_NOT_AN)) or low.startswith(("hour", "honest"))
    an = an or (word[0] in "AEFHILMNORSX" and (len(word) == 1 or not word[1].isalpha()))
    return f"{'an' if an else 'a'} {word}"


def _plural(word: str) -> str:
    if word in _IRREGULAR or word.endswith("fish"):
        return _IRREGULAR.get(word, word)
    if word.endswith("y") and word[-2] not in "aeiou":
        return word[:-1] + "ies"
    return word + ("es" if word.endswith(("s", "x", "ch", "sh")) else "s")


def fill(template: str, slots: Slots, rng: random.Random) -> str:
    """The template with its slots and ``[a|b]`` alternatives drawn; a slot used twice gets two values."""
    used: set[str] = set()

    def expand(match: re.Match[str]) -> str:
        options: str | None = match.group(1)
        if options is not None:
            return rng.choice(options.split("|"))
        values = slots[match.group(3)]
        value = rng.choice(values)
        for _ in range(4):
            if value not in used:
                break
            value = rng.choice(values)
        used.add(value)
        return _article(value) if match.group(2) else value

    for _ in range(6):
        if "{" not in template and "[" not in template:
            break
        template = _TOKEN.sub(expand, template)
    return template


_SLOTS = parse(SLOTS)[1]
_SLOTS["animals"] = tuple(_plural(a) for a in _SLOTS["animal"])
_SLOTS["fcountry"] = tuple(c for c in _SLOTS["country"] if c != "Italy")
_KINDS = {kind: parse(body)[0] for kind, body in sections(KINDS).items()}
_FOREIGN = {language: parse(body) for language, body in sections(FOREIGN).items()}
_PASTE = {**_SLOTS, **parse(PASTE)[1]}
_NOISE_FORMS, _NOISE = parse(NOISE)
_IMPERATIVE = frozenset(_NOISE["imperative"])
_GREETINGS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {}
for _line in GREETINGS.replace(" ## ", "\n").strip().splitlines():
    _language, _, _rest = _line.partition(" = ")
    _words, _, _talk = _rest.partition(" ;; ")
    _GREETINGS[_language] = (tuple(_words.split("|")), tuple(t for t in _talk.split("|") if t))


def _english(kind: str, rng: random.Random) -> str:
    template = rng.choice(_KINDS[kind])
    text = fill(template, _SLOTS, rng)
    return text[:1].upper() + text[1:] if template[0] in "{[" else text


def _foreign(rng: random.Random, language: str = "") -> str:
    templates, slots = _FOREIGN[language or rng.choice(tuple(_FOREIGN))]
    return fill(rng.choice(templates), slots, rng)


def _greeting_plus(rng: random.Random) -> str:
    """A greeting, then a request, in English or in another language."""
    if rng.random() < 0.3:
        language = rng.choice(tuple(_FOREIGN))
        hello, sep, body = (
            rng.choice(_GREETINGS[language][0]),
            rng.choice(("! ", ", ", " ", "!\n")),
            _foreign(rng, language),
        )
        return hello + sep + (body[:1].lower() + body[1:] if sep in (", ", " ") else body)
    hello = rng.choice(_NOISE["hi"])
    if " " not in hello and rng.random() < 0.3:
        hello += " " + rng.choice(_NOISE["name"])
    body = _english(rng.choice(("question", "near_miss", "task", "task", "about_bot", "code")), rng)
    sep = rng.choice(("! ", ", ", " ", "!\n", ". ", " - ", "!! ", " :) "))
    text = (
        hello
        + sep
        + (body[:1].lower() + body[1:] if rng.random() < (0.9 if sep in (", ", " ", " - ") else 0.5) else body)
    )
    return text[:1].upper() + text[1:] if rng.random() < 0.5 else text


def _frame(text: str, rng: random.Random, follow: str = "follow", lead: str = "lead") -> str:
    """The pasted text, maybe after a lead-in line, maybe followed by a question."""
    if rng.random() < 0.4:
        text = f"{rng.choice(_PASTE[lead])}\n\n{text}"
    return f"{text}\n\n{rng.choice(_PASTE[follow])}" if rng.random() < 0.65 else text


def _part(style: str, words: int, rng: random.Random) -> str:
    """About ``words`` words (at most the style's whole pool) of an article, email, story, notes or reviews."""
    sentences: list[str] = []
    for template in rng.sample(_PASTE[style], len(_PASTE[style])):
        if sum(len(sentence.split()) for sentence in sentences) >= words:
            break
        sentences.append(fill(template, _PASTE, rng))
    if style == "notes":
        head = f"{rng.choice(('Meeting notes', 'Notes', 'Standup', 'Weekly sync'))}, {rng.choice(_PASTE['weekday'])}"
        return f"{head}\nAttendees: {', '.join(rng.sample(_PASTE['pname'], 4))}\n\n" + "\n".join(sentences)
    step = rng.randint(3, 6)
    text = "\n\n".join(" ".join(sentences[i : i + step]) for i in range(0, len(sentences), step))
    if style != "email":
        return text
    hello = fill(rng.choice(("Hi {pname},", "Dear {pname},", "Hello team,", "Hi all,", "Hey {pname},")), _PASTE, rng)
    bye = rng.choice(("Best,", "Thanks,", "Kind regards,", "Cheers,", "Best wishes,"))
    return f"{hello}\n\n{text}\n\n{bye}\n{rng.choice(_PASTE['pname'])}"


def _prose(rng: random.Random) -> str:
    """Pasted prose of 60 to 500 words: one text, or several pasted one after the other when long."""
    heads = {"article": "Related:", "email": "-----Original Message-----", "story": "* * *", "notes": "Previous notes:"}
    heads["review"] = "More reviews:"
    target, parts = rng.randint(60, 500), list[str]()
    for style in rng.sample(list(heads), len(heads)):
        done = sum(len(part.split()) for part in parts)
        if done >= target:
            break
        text = _part(style, target - done, rng)
        parts.append(f"{heads[style]}\n\n{text}" if parts else text)
    return _frame("\n\n".join(parts), rng)


def _code(rng: random.Random) -> str:
    """One to three snippets in one language, maybe fenced, mostly with a question."""
    language = rng.choice(("python", "python", "javascript", "sql"))
    blocks = _PASTE[language]
    names = {key: rng.choice(_PASTE[key]) for key in ("func", "arg", "attr", "noun", "key", "Class", "status", "table")}
    chosen = rng.sample(blocks, rng.randint(1, min(3, len(blocks))))
    text = "\n\n".join(string.Template(block).safe_substitute(names) for block in chosen)
    if rng.random() < 0.4:
        text = f"```{language if rng.random() < 0.7 else ''}\n{text}\n```"
    return _frame(text, rng, "code_q", rng.choice(("code_lead", "code_q")))


def _trace(rng: random.Random) -> str:
    """A Python traceback or a JavaScript stack, or some lines of a server log."""
    pick = {key: rng.choice(_PASTE[key]) for key in ("func", "arg", "attr", "Class", "user", "proj", "error")}
    lines: list[str] = []
    form = rng.randrange(3)
    for depth in range(rng.randint(2, 5) if form < 2 else rng.randint(5, 25)):
        if form == 0:
            where = f"/home/{pick['user']}/{pick['proj']}/{rng.choice(('main', 'utils', 'app', 'models'))}.py"
            code = rng.choice(("main()", f"{pick['func']}({pick['arg']})", f"return self.{pick['attr']}[key]", "run()"))
            lines += [f'  File "{where}", line {rng.randint(3, 400)}, in {pick["func"]}', f"    {code}"]
        elif form == 1:
            where = f"src/components/{pick['Class']}.jsx:{rng.randint(2, 300)}:{rng.randint(1, 40)}"
            lines.append(f"    at {rng.choice((pick['func'], 'renderWithHooks', 'Array.map'))} ({where})")
        else:
            level = rng.choice(("INFO", "INFO", "INFO", "WARN", "ERROR", "DEBUG"))
            stamp = f"2025-06-{depth // 9 + 10} 14:{depth + 20}:{rng.randint(10, 59)},{rng.randint(100, 999)}"
            extra = rng.choice(("", f" duration_ms={rng.randint(2, 4000)}", f" user_id={rng.randint(100, 99999)}"))
            lines.append(f"{stamp} {level} [{rng.choice(_PASTE['svc'])}] {rng.choice(_PASTE['log'])}{extra}")
    if form == 0:
        lines = ["Traceback (most recent call last):", *lines, pick["error"]]
    elif form == 1:
        lines.insert(0, rng.choice(_PASTE["js_error"]))
    return _frame("\n".join(lines), rng, "log_q", rng.choice(("code_lead", "lead")))


def _data(rng: random.Random) -> str:
    """A JSON document, a CSV file or a markdown list."""
    form = rng.randrange(3)
    if form == 0:
        records = []
        for _ in range(rng.randint(1, 4)):
            name = rng.choice(_PASTE["pname"])
            record = {
                "id": rng.randint(1, 99999),
                "name": name,
                "email": f"{name.lower()}@example.com",
                "active": rng.random() < 0.5,
                "roles": rng.sample(["admin", "editor", "viewer", "owner", "guest"], rng.randint(1, 3)),
                "created": fill("2024-{month2}-{day2}T09:30:00Z", _PASTE, rng),
                "city": rng.choice(_PASTE["city"]),
                "version": f"{rng.randint(0, 4)}.{rng.randint(0, 20)}.{rng.randint(0, 9)}",
                "settings": {"theme": rng.choice(("dark", "light")), "notifications": rng.random() < 0.5},
            }
            records.append({key: record[key] for key in rng.sample(list(record), rng.randint(3, len(record)))})
        data = records[0] if len(records) == 1 else records
        text = json.dumps(data, indent=rng.choice((2, 4, None)), ensure_ascii=False)
    else:
        head, _, row = rng.choice(_PASTE["csv" if form == 1 else "md"]).partition(" => ")
        rows = list(dict.fromkeys(fill(row, _PASTE, rng) for _ in range(rng.randint(3, 12))))
        if form == 1:
            text = "\n".join([head, *rows])
        else:
            bullet = rng.choice(("- ", "* ", "- [ ] ", ""))
            lines = (f"{bullet or f'{i}. '}{line}" for i, line in enumerate(rows, 1))
            text = f"## {fill(head, _PASTE, rng)}\n\n" + "\n".join(lines)
    return _frame(text, rng, ("json_q", "csv_q", "md_q")[form])


def _noise(rng: random.Random) -> str:
    """Not a sentence: a word, emoji, punctuation, keyboard mash, unicode, a URL, a path, repeated letters."""
    form = rng.randrange(8)
    if form == 0:
        row = rng.choice(("qwertyuiop", "asdfghjkl", "zxcvbnm", "asdfjkl;", "qwerasdf"))
        return " ".join("".join(rng.choices(row, k=rng.randint(3, 9))) for _ in range(rng.randint(1, 3)))
    if form == 1:
        start, end = rng.choice(_UNICODE)
        chars = (chr(rng.randint(start, end)) if rng.random() < 0.85 else " " for _ in range(rng.randint(1, 20)))
        return "".join(chars).strip() or chr(start)
    if form == 2:
        return rng.choice(("", " ")).join(rng.choices(_NOISE["emoji"], k=rng.randint(1, 6)))
    if form == 3:
        return rng.choice(_NOISE["repeat"]) * rng.randint(3, 12)
    return fill(rng.choice(_NOISE_FORMS), _NOISE, rng)


def _typo(text: str, rng: random.Random) -> str:
    """One letter swapped, dropped or doubled in one word."""
    words = text.split(" ")
    spots = [i for i, w in enumerate(words) if len(w) >= 4 and w.isalpha()]
    if not spots:
        return text
    i = rng.choice(spots)
    w, j = words[i], rng.randrange(1, len(words[i]) - 1)
    words[i] = rng.choice((w[: j - 1] + w[j] + w[j - 1] + w[j + 1 :], w[:j] + w[j + 1 :], w[:j] + w[j] + w[j:]))
    return " ".join(words)


def _polite(text: str, rng: random.Random) -> str:
    """A request made polite ("can you ...?", "please ...") or a question given a prefix or a suffix."""
    lowered = text[:1].lower() + text[1:]
    if text.split(" ", 1)[0].lower() in _IMPERATIVE and rng.random() < 0.7:
        if rng.random() < 0.6:
            asked = f"{rng.choice(_NOISE['ask'])} {lowered}"
            return asked[:-1] + "?" if asked.endswith(".") else asked
        return f"please {lowered}" if rng.random() < 0.6 else f"{text.rstrip('.')} please"
    if rng.random() < 0.6:
        return f"{rng.choice(_NOISE['prefix'])} {lowered if rng.random() < 0.8 else text}"
    return f"{text} {rng.choice(_NOISE['suffix'])}"


def _surface(text: str, rng: random.Random, polite: bool, english: bool) -> str:
    """Half the time, the prompt as people type it: case, punctuation, spaces, a typo, politeness, a line break."""
    if rng.random() < 0.5:
        return text
    for _ in range(rng.choice((1, 1, 1, 2, 2, 3))):
        op = rng.random()
        if op < 0.25:
            text = text.lower()
        elif op < 0.43:
            text = text.rstrip(".?!。？！;؟ ") or text
        elif op < 0.5:
            text = text.rstrip(".?!") + rng.choice(("!!!", "??", "?!", "!!", "???", "!?"))
        elif op < 0.57:
            text = rng.choice(("", " ", "  ", "\n")) + text + rng.choice(("", " ", "   ", "\n"))
        elif op < 0.72:
            text = _typo(text, rng) if english else text
        elif op < 0.92:
            text, polite = (_polite(text, rng) if polite else text), False
        elif op < 0.97 and " " in text:
            head, _, tail = text.partition(" ") if rng.random() < 0.5 else text.rpartition(" ")
            text = f"{head}\n{tail}"
        elif op >= 0.97:
            text = text.upper()
    return text


_WEIGHTS = {"question": 14, "near_miss": 14, "harmful": 4, "task": 12, "code": 5, "about_bot": 6, "chitchat": 6}
_WEIGHTS |= {"foreign": 12, "greeting_plus": 4, "long_paste": 9, "noise": 8}
OUT_OF_SCOPE_KINDS: tuple[str, ...] = tuple(_WEIGHTS)
"""The categories :func:`out_of_scope` draws from (English template kinds first)."""


def out_of_scope(rng: random.Random) -> str:
    """One random prompt the pocket model must answer with its fallback."""
    kind = rng.choices(OUT_OF_SCOPE_KINDS, tuple(_WEIGHTS.values()))[0]
    if kind == "long_paste":
        return long_paste(rng)
    if kind == "noise":
        return _noise(rng)
    if kind == "foreign":
        return _surface(_foreign(rng), rng, polite=False, english=False)
    if kind == "greeting_plus":
        return _surface(_greeting_plus(rng), rng, polite=False, english=True)
    return _surface(_english(kind, rng), rng, polite=kind != "chitchat", english=True)


def long_paste(rng: random.Random) -> str:
    """One random pasted text (prose, code, a trace or data), maybe with a lead-in and a question."""
    text = rng.choice((_prose, _prose, _prose, _prose, _code, _code, _trace, _trace, _data, _data))(rng)
    return rng.choice(("", "", "", " ", "\n")) + text + rng.choice(("", "", "\n", " "))


def greeting(rng: random.Random) -> str:
    """One random greeting-only message (optionally with small talk like 'how are you?')."""
    if rng.random() < 0.45:
        hello = rng.choice(_NOISE["hi"])
        if " " not in hello and rng.random() < 0.3:
            hello += " " + rng.choice(_NOISE["name"])
        talks = _NOISE["talk"]
    else:
        words, talks = _GREETINGS[rng.choice(tuple(_GREETINGS))]
        hello = rng.choice(words)
    if talks and rng.random() < 0.4:
        text = hello + rng.choice((", ", "! ", " ", ". ", "!! ")) + rng.choice(talks)
    else:
        text = hello + rng.choice(("", "!", ".", "!!", " !", "~", "!!!", " :)", ","))
    if rng.random() < 0.15:
        text += rng.choice(("", " ")) + rng.choice(_NOISE["wave"])
    case = rng.random()
    text = text[:1].upper() + text[1:] if case < 0.4 else text.upper() if case < 0.44 else text
    return rng.choice((" ", "\n")) + text + rng.choice(("", " ", "\n")) if rng.random() < 0.05 else text
