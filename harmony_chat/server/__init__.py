"""``harmony-chat serve``: an OpenAI-compatible HTTP server over the token-level engine.

Chat Completions and the Responses API carry gpt-oss reasoning as the raw-CoT guide says
(``reasoning`` on messages and deltas; ``reasoning`` items with ``reasoning_text`` parts). Each
request builds its own harmony session from what the client sends; the app's chain-of-thought
rule applies to it whatever the client sends back.
"""

from __future__ import annotations

SERVE_API_KEY_ENV = "HARMONY_CHAT_SERVE_API_KEY"
"""The environment variable that holds the server's API key when ``--api-key`` is not given.

Not ``HARMONY_CHAT_API_KEY``: that one is a remote engine's key (``--url``), which a server
must not silently take as the key its own clients have to send."""
