"""One options type for every entry point (the app, ``ask``, ``serve``, ``bench``).

:class:`ChatOptions` is the config file's settings with the command line's options on top. What
model runs, how it samples, how chats start and which tools the model may use are all here; the
factory (:mod:`harmony_chat.chat.factory`) turns them into a backend, tools and a conversation.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from harmony_chat.backends.base import SamplingParams
from harmony_chat.chat.approval import ApprovalMode
from harmony_chat.harmony.effort import Effort

if TYPE_CHECKING:
    from harmony_chat.chat.summary import ReasoningMode
    from harmony_chat.config import Settings
    from harmony_chat.tools.mcp_config import McpServerConfig

MODEL_SOURCES = ("model", "hf_repo", "replay", "demo", "replay_demo", "url")
"""Options that each choose the model; giving one on the command line overrides the config file's."""


@dataclass(slots=True)
class ChatOptions:
    """The model, sampling, chat and tool settings a chat runs with."""

    model: Path | None = None
    """A gpt-oss GGUF file."""
    hf_repo: str | None = None
    hf_file: str | None = None
    replay: Path | None = None
    """Play back a recording instead of running a model."""
    demo: bool = False
    """Chat with the bundled pocket gpt-oss (also what runs when no model is configured)."""
    replay_demo: bool = False
    """Replay the bundled recorded conversations instead of running a model."""
    replay_delay: float = 0.0
    """Seconds between replayed tokens (the app uses a small delay so replays look live)."""
    url: str | None = None
    """A serving engine (llama-server, vLLM, SGLang) to drive at the token level."""
    engine: str | None = None
    api_key: str | None = None
    served_model: str | None = None
    record: Path | None = None
    """Write every generation call's tokens to this recording."""
    context: int = 16384
    gpu_layers: int = 0
    threads: int | None = None
    temperature: float = 1.0
    max_tokens: int = 4096
    seed: int | None = None
    effort: Effort = "medium"
    instructions: str | None = None
    start_date: str | None = None
    """Conversation date for new chats (None: today; the pocket model has its own)."""
    approve: ApprovalMode = "ask"
    always: list[str] = field(default_factory=list)
    max_steps: int = 8
    tool_timeout: float = 60.0
    mcp_servers: dict[str, McpServerConfig] = field(default_factory=dict)
    mcp_files: list[Path] = field(default_factory=list)
    """``{"mcpServers": ...}`` JSON files to read more servers from (``[mcp] import``, ``--mcp-config``)."""
    builtin: list[str] = field(default_factory=list)
    python_timeout: float = 120.0
    python_disk_mb: int = 256
    browser_provider: str = "searxng"
    browser_url: str | None = None
    browser_allow_private: bool = False
    demo_tools: bool = False
    """Give the pocket model its demo tools (the weather MCP server, python) when no tool is configured."""
    config_path: Path | None = None
    """The config file (where "always, saved" approvals are written)."""
    reasoning: ReasoningMode = "hidden"
    """What the user sees of the reasoning; ``summary`` has the model write a summary of each analysis."""
    summarizer: str = "same"
    """Who writes the summaries: ``same`` (the chat's model) or a serving engine's URL."""
    live_summaries: bool = False
    live_every: int = 300
    """Analysis tokens between live summaries (with ``live_summaries``)."""

    @property
    def uses_pocket(self) -> bool:
        """Whether the pocket gpt-oss runs (``--demo``, or nothing else configured)."""
        return self.demo or not (self.model or self.hf_repo or self.replay or self.replay_demo or self.url)

    @property
    def sampling(self) -> SamplingParams:
        """Sampling parameters for each generation call."""
        return SamplingParams(temperature=self.temperature, seed=self.seed, max_tokens=self.max_tokens)

    @property
    def has_tools(self) -> bool:
        """Whether any tool is configured (MCP servers or built-ins)."""
        return bool(self.mcp_servers or self.mcp_files or self.builtin or (self.demo_tools and self.uses_pocket))

    def choose_model(self, *, path: Path | None = None, demo: bool = False, replay_demo: bool = False) -> None:
        """Switch to another model source (the app's model switch): exactly one source stays set."""
        self.model, self.hf_repo, self.hf_file, self.replay, self.url = path, None, None, None, None
        self.demo, self.replay_demo = demo, replay_demo

    @classmethod
    def from_settings(cls, settings: Settings, **overrides: object) -> ChatOptions:
        """Start from the config file's settings and apply every command-line option that was given.

        An option left at None (or a flag left False) keeps the config's value; giving any model
        source replaces the config's model source. ``mcp_files`` given are added to the config's.
        """
        model, tools = settings.model, settings.tools
        options = cls(
            model=Path(model.path).expanduser() if model.path else None,
            hf_repo=model.hf_repo,
            hf_file=model.hf_file,
            url=model.url,
            engine=model.engine,
            api_key=model.api_key,
            served_model=model.served_model,
            context=model.context,
            gpu_layers=model.gpu_layers,
            threads=model.threads,
            temperature=model.temperature,
            max_tokens=model.max_tokens,
            seed=model.seed,
            effort=settings.chat.effort,
            instructions=settings.chat.instructions,
            approve=tools.approve,
            always=list(tools.always),
            max_steps=tools.max_steps,
            tool_timeout=tools.timeout,
            mcp_servers=dict(settings.mcp.servers),
            mcp_files=[Path(settings.mcp.import_file).expanduser()] if settings.mcp.import_file else [],
            builtin=list(tools.builtin),
            python_timeout=tools.python_timeout,
            python_disk_mb=tools.python_disk_mb,
            browser_provider=tools.browser.provider,
            browser_url=tools.browser.url,
            browser_allow_private=tools.browser.allow_private,
            config_path=settings.path,
            reasoning=settings.ui.reasoning,
            summarizer=settings.reasoning.summarizer,
            live_summaries=settings.reasoning.live,
            live_every=settings.reasoning.live_every,
        )
        given = {key: value for key, value in overrides.items() if value is not None and value is not False}
        if any(key in given for key in MODEL_SOURCES):
            options.choose_model()
        extra_files = list(given.pop("mcp_files", []))  # type: ignore[call-overload]
        builtin: list[str] = list(given.pop("builtin", []))  # type: ignore[call-overload]
        for key, value in given.items():
            if not hasattr(options, key):
                raise TypeError(f"ChatOptions has no option {key!r}")
            setattr(options, key, value)
        options.mcp_files += extra_files
        options.builtin = sorted(set(options.builtin) | set(builtin))
        return options
