"""What a chat runs with, for every entry point (the app, ``ask``, ``serve``, the benchmarks).

:class:`~harmony_chat.config.Settings` is the one home of every option that has a default: the
config file, the ``HARMONY_CHAT_`` variables and the command line's overrides all land there (see
:mod:`harmony_chat.cli.options`). :class:`ChatOptions` holds those settings and the few choices
that are no setting: a recording or the pocket model as the model, a recording to write, the
pocket demo's tools, more MCP files. The model they name is read into one
:data:`~harmony_chat.chat.model_source.ModelSource` (:attr:`ChatOptions.source`). The factory
(:mod:`harmony_chat.chat.factory`) turns them into a backend, tools and a conversation.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from harmony_chat.backends.base import SamplingParams
from harmony_chat.chat.model_source import ModelSource, Pocket, model_source
from harmony_chat.config import Settings, default_settings
from harmony_chat.errors import HarmonyChatError


@dataclass(slots=True)
class ChatOptions:
    """The settings a chat runs with, and what it runs with that is no setting.

    The model is ``[model] path``, ``hf_repo`` or ``url`` in the settings, or one of the sources
    here (``replay``, ``demo``, ``replay_demo``): these are the inputs as given, and :attr:`source`
    reads them into the one model they name (the model switch sets them with :meth:`choose_model`).
    """

    settings: Settings = field(default_factory=default_settings)
    """Every option with a default, its bound and its help (the config file's, the environment's,
    the command line's on top); the one place they are kept."""
    replay: Path | None = None
    """Play back a recording instead of running a model."""
    demo: bool = False
    """Chat with the bundled pocket gpt-oss (also what runs when no model is configured)."""
    replay_demo: bool = False
    """Replay the bundled recorded conversations instead of running a model."""
    replay_delay: float = 0.0
    """Seconds between replayed tokens (the app uses a small delay so replays look live)."""
    record: Path | None = None
    """Write every generation call's tokens to this recording."""
    start_date: str | None = None
    """Conversation date for new chats (None: today; the pocket model has its own)."""
    demo_tools: bool = False
    """Give the pocket model its demo tools (the weather MCP server, python) when no tool is configured."""
    mcp_files: list[Path] = field(default_factory=list)
    """More ``{"mcpServers": ...}`` JSON files to read servers from (``--mcp-config``), after ``[mcp] import``."""

    @property
    def source(self) -> ModelSource:
        """The one model these options name, read from them on each use (they change with the model switch).

        Raises:
            UsageProblem: when they name more than one model.
            ModelError: when ``--model`` and ``--hf-repo``/``--hf-file`` clash, or ``--hf-repo`` lacks ``--hf-file``.
        """
        return model_source(self)

    @property
    def valid_source(self) -> ModelSource | None:
        """:attr:`source`, or None when the options clash (loading the model reports how)."""
        try:
            return model_source(self)
        except HarmonyChatError:
            return None

    @property
    def model_path(self) -> Path | None:
        """The GGUF file ``[model] path`` names (``~`` expanded), as given."""
        path = self.settings.model.path
        return Path(path).expanduser() if path else None

    @property
    def uses_pocket(self) -> bool:
        """Whether the pocket gpt-oss runs (``--demo``, or nothing else configured).

        Options that clash (loading the model reports it) count as the pocket model's with ``--demo``.
        """
        source = self.valid_source
        return isinstance(source, Pocket) if source is not None else self.demo

    @property
    def conversation_date(self) -> str | None:
        """The date new chats are set on: :attr:`start_date`, else the pocket model's own, else None (today)."""
        if self.start_date is None and self.uses_pocket:
            from harmony_chat.demo.pocket import POCKET_DATE

            return POCKET_DATE
        return self.start_date

    @property
    def sampling(self) -> SamplingParams:
        """Sampling parameters for each generation call: ``[sampling]``, each key the field of its name."""
        return SamplingParams(**self.settings.sampling.model_dump())

    @property
    def mcp_json_files(self) -> list[Path]:
        """Every ``{"mcpServers": ...}`` file to read servers from: ``[mcp] import``, then :attr:`mcp_files`."""
        imported = self.settings.mcp.import_file
        return [Path(imported).expanduser(), *self.mcp_files] if imported else list(self.mcp_files)

    @property
    def has_tools(self) -> bool:
        """Whether any tool is configured (MCP servers or built-ins)."""
        configured = self.settings.mcp.servers or self.mcp_json_files or self.settings.tools.builtin
        return bool(configured or (self.demo_tools and self.uses_pocket))

    def choose_model(self, *, path: Path | None = None, demo: bool = False, replay_demo: bool = False) -> None:
        """Switch to another model source (the app's model switch): exactly one source stays set."""
        model = self.settings.model
        model.path, model.hf_repo, model.hf_file, model.url = str(path) if path else None, None, None, None
        self.replay, self.demo, self.replay_demo = None, demo, replay_demo
