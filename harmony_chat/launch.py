"""What to run the chat app with: CLI options over the config file, and the backend they name."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from harmony_chat.backends.base import ModelBackend, SamplingParams
from harmony_chat.config import Settings


@dataclass(slots=True)
class LaunchOptions:
    """The model and chat settings the app starts with."""

    model: Path | None = None
    hf_repo: str | None = None
    hf_file: str | None = None
    replay: Path | None = None
    demo: bool = False
    """Chat with the bundled pocket gpt-oss (also what runs when no model is configured)."""
    replay_demo: bool = False
    """Replay the bundled recorded conversations instead of running a model."""
    replay_delay: float = 0.02
    """Seconds between replayed tokens, so a replay looks like a live model."""
    effort: str = "medium"
    instructions: str | None = None
    context: int = 16384
    gpu_layers: int = 0
    threads: int | None = None
    temperature: float = 1.0
    max_tokens: int = 4096
    seed: int | None = None
    start_date: str | None = None
    """Conversation date for new chats (None: today); pinned for repeatable screenshots."""

    @property
    def uses_pocket(self) -> bool:
        """Whether the pocket gpt-oss runs (``--demo``, or nothing else configured)."""
        return self.demo or not (self.model or self.hf_repo or self.replay or self.replay_demo)

    @property
    def sampling(self) -> SamplingParams:
        """Sampling parameters for each turn."""
        return SamplingParams(temperature=self.temperature, seed=self.seed, max_tokens=self.max_tokens)

    @classmethod
    def from_settings(cls, settings: Settings, **overrides: object) -> LaunchOptions:
        """Start from the config file and apply every CLI option that was given (not None)."""
        model = settings.model
        options = cls(
            model=Path(model.path).expanduser() if model.path else None,
            hf_repo=model.hf_repo,
            hf_file=model.hf_file,
            effort=settings.chat.effort,
            instructions=settings.chat.instructions,
            context=model.context,
            gpu_layers=model.gpu_layers,
            threads=model.threads,
            temperature=model.temperature,
            max_tokens=model.max_tokens,
            seed=model.seed,
        )
        given = {key: value for key, value in overrides.items() if value is not None}
        if any(key in given for key in ("model", "hf_repo", "replay", "demo", "replay_demo")):
            options.model = options.hf_repo = options.hf_file = None
        for key, value in given.items():
            setattr(options, key, value)
        return options


def create_backend(options: LaunchOptions) -> tuple[ModelBackend, Path | None]:
    """Build (not load) the backend; download from the Hub first when asked (slow: call from a worker).

    Raises:
        harmony_chat.errors.HarmonyChatError: when the model cannot be found or downloaded.
    """
    from harmony_chat.backends.replay import ReplayBackend
    from harmony_chat.backends.sources import resolve_model

    if options.replay_demo or options.replay:
        from harmony_chat.demo import choose_demo_turn, demo_recording

        path = options.replay or demo_recording()
        name = "demo (replay)" if options.replay_demo else f"replay: {path.name}"
        chooser = choose_demo_turn if options.replay_demo else None
        backend: ModelBackend = ReplayBackend(
            path, delay_s=options.replay_delay, context_size=options.context, name=name, chooser=chooser
        )
        return backend, None
    from harmony_chat.backends.llama_cpp import LlamaCppBackend

    if options.uses_pocket:
        from harmony_chat.pocket import pocket_model_path

        path = pocket_model_path()
        return LlamaCppBackend(path, context_size=options.context, threads=options.threads), path
    model_path = resolve_model(options.model, options.hf_repo, options.hf_file)
    assert model_path is not None

    backend = LlamaCppBackend(
        model_path, context_size=options.context, gpu_layers=options.gpu_layers, threads=options.threads
    )
    return backend, model_path
