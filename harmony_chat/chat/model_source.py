"""Where the chat's model comes from: one tagged type, read once from the options.

The command line and the config file name the model with six inputs: ``[model] path``,
``hf_repo`` (with ``hf_file``) and ``url`` in the settings, and the flags ``--replay``, ``--demo``
and ``--replay-demo`` (:class:`~harmony_chat.chat.options.ChatOptions` keeps them as given).
:func:`model_source` reads them into one :data:`ModelSource`, refusing a combination that names
more than one model; whatever asks "which kind of model is this" asks the source
(``match source:`` where every kind matters, ``isinstance`` where one does), and the factory
builds the backend by looking the source's type up in its registry
(:data:`harmony_chat.chat.factory.BACKENDS`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from harmony_chat.errors import HarmonyChatError, ModelError

if TYPE_CHECKING:
    from harmony_chat.config import Settings


class UsageProblem(HarmonyChatError):
    """Options that do not make sense together."""

    exit_code = 2


@dataclass(frozen=True, slots=True)
class Gguf:
    """A gpt-oss GGUF file on this machine (``--model``, ``[model] path``), run by llama.cpp."""

    path: Path
    """The file, ``~`` expanded (whether it exists is found out when the backend is made)."""


@dataclass(frozen=True, slots=True)
class HuggingFaceFile:
    """A GGUF downloaded from Hugging Face (``--hf-repo`` with ``--hf-file``), run by llama.cpp."""

    repo: str
    file: str


@dataclass(frozen=True, slots=True)
class Engine:
    """A serving engine running gpt-oss (``--url``): llama-server, vLLM or SGLang."""

    url: str
    engine: str | None = None
    """``llama-server``, ``vllm`` or ``sglang``; None asks the server."""
    api_key: str | None = field(default=None, repr=False)
    """Sent as a Bearer token; None reads ``$HARMONY_CHAT_API_KEY``."""
    model_name: str | None = None
    """The served model's name (``[model] served_model``)."""


@dataclass(frozen=True, slots=True)
class Recording:
    """A recorded stream played back as if a model produced it (``--replay FILE``)."""

    path: Path
    delay: float = 0.0
    """Seconds between replayed tokens."""


@dataclass(frozen=True, slots=True)
class Pocket:
    """The bundled pocket gpt-oss, run by llama.cpp (``--demo``, or no model configured)."""

    fallback: bool = False
    """No model was configured (the app's and ``serve``'s default; ``ask`` wants one named)."""


@dataclass(frozen=True, slots=True)
class DemoReplay:
    """The bundled recorded gpt-oss conversations, each answer picked by the question (``--replay-demo``)."""

    delay: float = 0.0
    """Seconds between replayed tokens."""


ModelSource = Gguf | HuggingFaceFile | Engine | Recording | Pocket | DemoReplay
"""Every kind of model a chat can run on; each has a backend factory (:data:`harmony_chat.chat.factory.BACKENDS`)."""


class SourceOptions(Protocol):
    """The inputs :func:`model_source` reads (:class:`~harmony_chat.chat.options.ChatOptions` has them)."""

    settings: Settings
    """``[model]``: ``path``, ``hf_repo``, ``hf_file``, ``url``, ``engine``, ``api_key``, ``served_model``."""
    replay: Path | None
    """``--replay FILE``."""
    demo: bool
    """``--demo``."""
    replay_demo: bool
    """``--replay-demo``."""
    replay_delay: float
    """Seconds between replayed tokens."""


def model_source(options: SourceOptions) -> ModelSource:
    """The one model the options name.

    ``--replay-demo`` wins over ``--demo`` given with it; ``hf_file`` counts only with ``hf_repo``.

    Raises:
        UsageProblem: when two of ``--model``, ``--replay``, ``--url`` are given, or one with ``--demo``
            or ``--replay-demo``.
        ModelError: when ``--model`` comes with ``--hf-repo``/``--hf-file``, or ``--hf-repo`` without ``--hf-file``.
    """
    model = options.settings.model
    chosen = {"--model": model.path, "--replay": options.replay, "--url": model.url}  # --hf-repo: below
    given = [flag for flag, value in chosen.items() if value]
    if len(given) > 1 or (given and (options.demo or options.replay_demo)):
        extra = " and --demo" if options.demo else " and --replay-demo" if options.replay_demo else ""
        raise UsageProblem(f"give one model source, not {', '.join(given)}{extra}")
    if options.replay_demo:
        return DemoReplay(options.replay_delay)
    if options.replay is not None:
        return Recording(options.replay, options.replay_delay)
    if model.url:
        return Engine(model.url, model.engine, model.api_key, model.served_model)
    if options.demo or not (model.path or model.hf_repo):
        return Pocket(fallback=not options.demo)
    if model.path and (model.hf_repo or model.hf_file):
        raise ModelError("give either --model or --hf-repo/--hf-file, not both")
    if model.hf_repo and model.hf_file:
        return HuggingFaceFile(model.hf_repo, model.hf_file)
    if model.hf_repo:
        raise ModelError("--hf-repo and --hf-file go together")
    assert model.path
    return Gguf(Path(model.path).expanduser())
