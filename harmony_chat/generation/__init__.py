"""One generation of an assistant turn: render the prompt, generate from a backend, decode, record.

Above :mod:`harmony_chat.harmony` (the format) and :mod:`harmony_chat.backends` (the engines),
below the conversation core: ``turn`` runs a turn, ``constrained`` switches grammars on mid-turn
(tool arguments, a response format, forced calls). No UI imports.
"""
