"""The sea-otter conversation both built-in tools run end to end in the tests (``ask`` and the app).

A search, an opened page, a python computation and an answer with citations (one of them to a
page that was never read), as a recording with one completion per generation call.
"""

from __future__ import annotations

SEARCH = (
    "<|channel|>analysis<|message|>Let me search.<|end|>"
    '<|start|>assistant<|channel|>analysis to=browser.search code<|message|>{"query": "sea otter weight"}<|call|>'
)
OPEN = '<|channel|>analysis to=browser.open code<|message|>{"id": 0}<|call|>'
COMPUTE = "<|channel|>analysis to=python code<|message|>low, high = 14, 45\nprint((low + high) / 2)<|call|>"
ANSWER = (
    "<|channel|>final<|message|>Adult sea otters weigh 14 to 45 kg【1†L7-L8】, so about 29.5 kg on average【1†L7】;"
    " they also keep kelp forests growing【0†L7】 (not from a made-up source【42†L1】).<|return|>"
)
QUESTION = "How heavy is a sea otter on average?"
SHOWN = (
    "Adult sea otters weigh 14 to 45 kg[1], so about 29.5 kg on average[1];"
    " they also keep kelp forests growing[2] (not from a made-up source)."
)
"""The answer as ``ask`` prints it: citations numbered, the one to an unread page left out."""
