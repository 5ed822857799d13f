"""harmony-chat: a terminal chat app that speaks gpt-oss's harmony format over a local GGUF."""

__version__ = "0.1.0"
