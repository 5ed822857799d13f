"""Errors that reach the user as one clear line instead of a traceback."""

from __future__ import annotations


class HarmonyChatError(Exception):
    """Base class for every error the user should see as a single line.

    The message must say what went wrong and, where possible, what to do.
    """

    exit_code: int = 1


class VocabularyError(HarmonyChatError):
    """The o200k vocabulary that openai-harmony needs could not be found."""


class ModelError(HarmonyChatError):
    """A model file is missing, unreadable, not a GGUF or not gpt-oss."""


class ContextOverflowError(HarmonyChatError):
    """The prompt plus the tokens to generate do not fit in the context."""


class ConversationFileError(HarmonyChatError):
    """A saved conversation could not be read or written."""


class ReplayError(HarmonyChatError):
    """A replay recording could not be read."""


class DownloadError(HarmonyChatError):
    """A model could not be downloaded from the Hugging Face Hub."""


class EngineError(HarmonyChatError):
    """A remote serving engine (llama-server, vLLM, SGLang) failed or refused a request."""


class EngineUnreachableError(EngineError):
    """Nothing answers at the engine's URL (wrong address, server down, or it went away)."""


class EngineAuthError(EngineError):
    """The engine rejected the API key (HTTP 401/403)."""


class EngineTimeoutError(EngineError):
    """The engine did not answer in time."""


class EngineStreamError(EngineError):
    """The token stream broke mid-answer (dropped connection, server restart, error event)."""
