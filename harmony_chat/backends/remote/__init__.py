"""Remote serving engines (llama-server, vLLM, SGLang) driven with token ids over HTTP.

:func:`create_remote_backend` builds the backend for a URL, probing which engine answers when
none is named. Ollama and TGI take no token ids, so they are not supported.
"""

from __future__ import annotations

import os
from urllib.parse import urlsplit

from harmony_chat.backends.remote.engine import RemoteBackend
from harmony_chat.backends.remote.llama_server import LlamaServerBackend
from harmony_chat.backends.remote.sglang import SglangBackend
from harmony_chat.backends.remote.transport import API_KEY_ENV, EngineClient
from harmony_chat.backends.remote.vllm import VllmBackend
from harmony_chat.errors import EngineError

ENGINES: dict[str, type[RemoteBackend]] = {
    "llama-server": LlamaServerBackend,
    "vllm": VllmBackend,
    "sglang": SglangBackend,
}
"""The supported engines by name."""
_ALIASES = {"llama.cpp": "llama-server", "llamacpp": "llama-server", "llama_server": "llama-server"}

__all__ = [
    "API_KEY_ENV",
    "ENGINES",
    "LlamaServerBackend",
    "RemoteBackend",
    "SglangBackend",
    "VllmBackend",
    "create_remote_backend",
    "detect_engine",
    "normalize_url",
]


def normalize_url(url: str) -> str:
    """Return ``url`` with a scheme and without a trailing slash.

    Raises:
        EngineError: when it is not an http(s) URL with a host.
    """
    text = url.strip()
    if "://" not in text:
        text = "http://" + text
    parts = urlsplit(text)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise EngineError(f"{url!r} is not an http(s) URL of a serving engine (e.g. http://127.0.0.1:8080)")
    return text.rstrip("/")


def detect_engine(client: EngineClient) -> str:
    """Tell which engine answers at the client's URL from endpoints only that engine has.

    llama-server answers ``/health`` with a JSON status; SGLang has ``/get_model_info`` (behind
    its API key); vLLM has ``/version``. Each probe is one GET.

    Raises:
        EngineError: when nothing answers or no engine can be recognized.
    """
    status, body = client.probe("/health")
    if isinstance(body, dict) and ("status" in body or "error" in body):
        return "llama-server"
    status, body = client.probe("/get_model_info")
    if status in (401, 403) or (status == 200 and isinstance(body, dict) and "model_path" in body):
        return "sglang"
    status, body = client.probe("/version")
    if status == 200 and isinstance(body, dict) and "version" in body:
        return "vllm"
    raise EngineError(
        f"cannot tell which engine serves {client.url} (not llama-server, vLLM or SGLang); "
        "name it with --engine llama-server|vllm|sglang"
    )


def create_remote_backend(
    url: str,
    engine: str | None = None,
    api_key: str | None = None,
    model_name: str | None = None,
    *,
    timeout: float = 120.0,
    connect_timeout: float = 10.0,
) -> RemoteBackend:
    """Build the backend for the engine at ``url`` (call ``load()`` on it to connect and check it).

    Args:
        url: the engine's base URL (``http://`` is assumed when no scheme is given).
        engine: ``llama-server``, ``vllm`` or ``sglang``; None probes the server to find out.
        api_key: sent as a Bearer token; None reads ``$HARMONY_CHAT_API_KEY``.
        model_name: the served model's name (vLLM routes by it; others only show it).
        timeout: seconds to wait for an answer or the next streamed token.
        connect_timeout: seconds to wait for the connection.

    Raises:
        EngineError: for an unknown engine, a bad URL, or a server that cannot be recognized.
    """
    base = normalize_url(url)
    key = api_key or os.environ.get(API_KEY_ENV) or None
    kind = None if engine is None else _ALIASES.get(engine.lower(), engine.lower())
    if kind is not None and kind not in ENGINES:
        raise EngineError(f"unknown engine {engine!r}; choose one of {', '.join(ENGINES)}")
    client = EngineClient(base, kind or "server", api_key=key, timeout=timeout, connect_timeout=connect_timeout)
    if kind is None:
        try:
            kind = detect_engine(client)
        except EngineError:
            client.close()
            raise
        client.engine = kind
    return ENGINES[kind](client, model_name=model_name)
