"""The one factory: options in, a backend, tools and a conversation out (for every entry point).

Building may be slow (a download, MCP servers, loading weights): call these from a worker
thread or a command, never from a UI thread.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from harmony_chat.backends.base import ModelBackend, ModelInfo
from harmony_chat.chat.approval import ApprovalPolicy
from harmony_chat.chat.model_source import (
    DemoReplay,
    Engine,
    Gguf,
    HuggingFaceFile,
    ModelSource,
    Pocket,
    Recording,
)
from harmony_chat.chat.model_source import UsageProblem as UsageProblem  # the entry points find it here
from harmony_chat.chat.options import ChatOptions

if TYPE_CHECKING:
    from openai_harmony import HarmonyEncoding

    from harmony_chat.chat.builtins import BuiltinTool
    from harmony_chat.chat.conversation import ChatConversation
    from harmony_chat.chat.summary import Summarizer
    from harmony_chat.chat.tool_calls import ToolRunner
    from harmony_chat.config import ModelSettings
    from harmony_chat.history.store import HistoryStore
    from harmony_chat.tools.base import ToolProvider
    from harmony_chat.tools.mcp_client import McpToolbox
    from harmony_chat.tools.mcp_config import McpServerConfig


_Source = TypeVar("_Source", Gguf, HuggingFaceFile, Engine, Recording, Pocket, DemoReplay)
"""One kind of :data:`~harmony_chat.chat.model_source.ModelSource` (a new kind is added here too)."""

BackendMaker = Callable[[_Source, "ModelSettings"], tuple[ModelBackend, Path | None]]
"""Builds (not loads) the backend for one kind of model source, with its GGUF path if any."""

BACKENDS: dict[type[ModelSource], BackendMaker[Any]] = {}
"""The backend factory for each kind of :data:`~harmony_chat.chat.model_source.ModelSource` (see
:func:`register_backend`); :func:`create_backend` looks the source's type up here."""


def register_backend(kind: type[_Source]) -> Callable[[BackendMaker[_Source]], BackendMaker[_Source]]:
    """Make the decorated function the backend factory for model sources of type ``kind``."""

    def register(make: BackendMaker[_Source]) -> BackendMaker[_Source]:
        BACKENDS[kind] = make
        return make

    return register


def create_backend(options: ChatOptions) -> tuple[ModelBackend, Path | None]:
    """Build (not load) the backend the options name; return it with the GGUF path, if any.

    Raises:
        HarmonyChatError: when the model cannot be found or downloaded, or options clash.
    """
    from harmony_chat.backends.replay import RecordingBackend

    source = options.source
    backend, path = BACKENDS[type(source)](source, options.settings.model)
    if options.record is not None:
        backend = RecordingBackend(backend, options.record)
    return backend, path


@register_backend(Gguf)
def _gguf_backend(source: Gguf, settings: ModelSettings) -> tuple[ModelBackend, Path | None]:
    from harmony_chat.backends.sources import resolve_model

    path = resolve_model(source.path, None, None)  # a missing file is said here, before loading
    assert path is not None
    return _llama_backend(path, settings), path


@register_backend(HuggingFaceFile)
def _hugging_face_backend(source: HuggingFaceFile, settings: ModelSettings) -> tuple[ModelBackend, Path | None]:
    from harmony_chat.backends.sources import download_from_hub

    path = download_from_hub(source.repo, source.file)
    return _llama_backend(path, settings), path


def _llama_backend(path: Path, settings: ModelSettings) -> ModelBackend:
    from harmony_chat.backends.llama_cpp import LlamaCppBackend

    return LlamaCppBackend(
        path, context_size=settings.context, gpu_layers=settings.gpu_layers, threads=settings.threads
    )


@register_backend(Engine)
def _engine_backend(source: Engine, settings: ModelSettings) -> tuple[ModelBackend, Path | None]:
    from harmony_chat.backends.remote import create_remote_backend

    remote = create_remote_backend(
        source.url, engine=source.engine, api_key=source.api_key, model_name=source.model_name
    )
    return remote, None


@register_backend(Recording)
def _recording_backend(source: Recording, settings: ModelSettings) -> tuple[ModelBackend, Path | None]:
    from harmony_chat.backends.replay import ReplayBackend

    name = f"replay: {source.path.name}"
    return ReplayBackend(source.path, delay_s=source.delay, context_size=settings.context, name=name), None


@register_backend(DemoReplay)
def _demo_replay_backend(source: DemoReplay, settings: ModelSettings) -> tuple[ModelBackend, Path | None]:
    from harmony_chat.backends.replay import ReplayBackend
    from harmony_chat.demo import choose_demo_turn, demo_recording

    replay = ReplayBackend(
        demo_recording(),
        delay_s=source.delay,
        context_size=settings.context,
        name="demo (replay)",
        chooser=choose_demo_turn,
    )
    return replay, None


@register_backend(Pocket)
def _pocket_backend(source: Pocket, settings: ModelSettings) -> tuple[ModelBackend, Path | None]:
    from harmony_chat.backends.llama_cpp import LlamaCppBackend
    from harmony_chat.demo.pocket import pocket_model_path

    path = pocket_model_path()
    return LlamaCppBackend(path, context_size=settings.context, threads=settings.threads), path


@dataclass(slots=True)
class LoadedModel:
    """A loaded backend, what it is, and the harmony encoding that goes with it."""

    backend: ModelBackend
    info: ModelInfo
    encoding: HarmonyEncoding
    path: Path | None


BackendFactory = Callable[[ChatOptions], tuple[ModelBackend, Path | None]]
"""Builds (not loads) the backend the options name, with its GGUF path (tests pass their own)."""


def load_model(
    options: ChatOptions,
    progress: Callable[[str], None] = lambda step: None,
    factory: BackendFactory | None = None,
) -> LoadedModel:
    """Create and load the backend and the harmony vocabulary (slow: a worker thread or a command).

    ``factory`` builds the backend (default: :func:`create_backend`).

    Raises:
        HarmonyChatError: with one line saying what went wrong.
    """
    from harmony_chat.demo.pocket import pocket_model_path
    from harmony_chat.harmony.vocab import load_encoding

    downloads = isinstance(options.valid_source, HuggingFaceFile)
    progress("finding the model" + (" (downloading from Hugging Face)" if downloads else ""))
    backend, path = (factory or create_backend)(options)
    progress("loading the harmony vocabulary")
    encoding = load_encoding(path, fallback_gguf=pocket_model_path())
    progress("loading weights and checking the tokenizer")
    try:
        info = backend.load()
    except BaseException:
        backend.close()
        raise
    return LoadedModel(backend, info, encoding, path)


def demo_servers() -> dict[str, McpServerConfig]:
    """The pocket model's demo tool: its ``get_weather``, served by a real MCP server (stdio)."""
    import sys

    from harmony_chat.tools.mcp_config import McpServerConfig

    return {"weather": McpServerConfig(command=sys.executable, args=["-m", "harmony_chat.demo.weather_server"])}


def mcp_servers(options: ChatOptions) -> dict[str, McpServerConfig]:
    """Every configured MCP server: the config file's tables, then the imported JSON files'.

    The app's pocket demo (``demo_tools``) gets the demo weather server when nothing is configured.

    Raises:
        McpConfigError: when an imported file cannot be read.
    """
    from harmony_chat.tools.mcp_config import load_mcp_json

    servers: dict[str, McpServerConfig] = {}
    base = options.settings.path.parent if options.settings.path else None
    for name, server in options.settings.mcp.servers.items():
        if server.cwd and base is not None and not Path(server.cwd).expanduser().is_absolute():
            server = server.model_copy(update={"cwd": str(base / server.cwd)})
        servers[name] = server
    for path in options.mcp_json_files:
        servers.update(load_mcp_json(path))
    if options.demo_tools and options.uses_pocket and not servers:
        servers = demo_servers()
    return servers


def configured_servers(options: ChatOptions) -> set[str]:
    """The MCP servers the user named (the config file's tables and imported files'), not the demo's.

    Only their tools may be approved for good ("always, saved"); an imported file that cannot be
    read names none (starting the tools reports it).
    """
    from harmony_chat.tools.mcp_config import McpConfigError, load_mcp_json

    names = set(options.settings.mcp.servers)
    for path in options.mcp_json_files:
        try:
            names.update(load_mcp_json(path))
        except McpConfigError:
            continue
    return names


def start_tools(options: ChatOptions, on_notice: Callable[[str], None] | None = None) -> list[ToolProvider]:
    """Start the configured tool providers (MCP servers connect in the background).

    Raises:
        McpConfigError: when an imported MCP file cannot be read.
    """
    providers: list[ToolProvider] = []
    servers = mcp_servers(options)
    if servers:
        from harmony_chat.tools.mcp_client import McpToolbox

        toolbox: McpToolbox = McpToolbox(servers, on_notice=on_notice)
        toolbox.start()
        providers.append(toolbox)
    return providers


def builtin_names(options: ChatOptions) -> list[str]:
    """The built-in tools on offer: the configured ones; with none configured, the pocket demo gets ``python``.

    The app's pocket demo (``demo_tools``) shows both tool loops when the user configured no tool at
    all: the demo weather server (:func:`mcp_servers`) and the python tool, each asking first.
    """
    configured = options.settings.tools.builtin
    if configured:
        return list(configured)
    if options.demo_tools and options.uses_pocket and not (options.settings.mcp.servers or options.mcp_json_files):
        return ["python"]
    return []


def builtin_tools(options: ChatOptions) -> list[BuiltinTool]:
    """The built-in tools the options turn on (nothing starts until a call needs it)."""
    from harmony_chat.chat.builtins import PythonBuiltin

    names, settings = builtin_names(options), options.settings.tools
    tools: list[BuiltinTool] = []
    if "python" in names:
        container = (
            (settings.python_container_engine, settings.python_container_image)
            if settings.python_runner == "container"
            else None
        )
        tools.append(PythonBuiltin(settings.python_timeout, disk_mb=settings.python_disk_mb, container=container))
    if "browser" in names:
        from harmony_chat.chat.builtins import BrowserBuiltin

        browser = settings.browser
        tools.append(BrowserBuiltin(browser.provider, browser.url, allow_private=browser.allow_private))
    return tools


def tool_runner(options: ChatOptions, providers: list[ToolProvider], asks: bool) -> ToolRunner:
    """The tool runner for ``providers`` and the built-in tools, under the options' approval mode.

    ``asks``: the reader of the turns' events answers their approval requests (False: nobody can
    be asked, and calls that need asking are declined).
    """
    from harmony_chat.chat.tool_calls import ToolRunner
    from harmony_chat.chat.toolset import ToolSet

    settings = options.settings.tools
    policy = ApprovalPolicy.from_config(settings.approve, settings.always, configured_servers(options))
    return ToolRunner(
        ToolSet(providers, builtin_tools(options)),
        policy,
        asks,
        settings.timeout,
        {"python": settings.python_timeout},
    )


def create_summarizer(options: ChatOptions, model: LoadedModel) -> Summarizer:
    """The summarizer the options name: the chat's own model (``same``), or a serving engine at a URL.

    A remote engine is only reached when the first summary is due (if it cannot be, no summary is
    shown); it gets no API key but ``$HARMONY_CHAT_API_KEY``, never the chat model's ``api_key``.
    """
    from harmony_chat.chat.summary import Summarizer

    settings = options.settings.reasoning
    live_every = settings.live_every if settings.live else 0
    if settings.summarizer == "same":
        return Summarizer(model.encoding, live_every=live_every)
    from harmony_chat.backends.remote import create_remote_backend

    url = settings.summarizer
    return Summarizer(model.encoding, connect=lambda: create_remote_backend(url), live_every=live_every)


def create_conversation(
    options: ChatOptions,
    model: LoadedModel,
    *,
    store: HistoryStore | None = None,
    tools: ToolRunner | None = None,
    raw_tokens: bool = True,
) -> ChatConversation:
    """A new conversation on ``model`` with the options' chat settings.

    The conversation owns the model (and ``tools``) from here on: it closes them when it closes
    (``with create_conversation(...) as conversation:``), and here, if it cannot be made.
    """
    from harmony_chat.chat.conversation import ChatConversation
    from harmony_chat.harmony.session import ChatSession

    try:
        session = ChatSession(
            model.encoding,
            effort=options.settings.chat.effort,
            instructions=options.settings.chat.instructions,
            context_size=model.info.context_size,
            start_date=options.conversation_date,
        )
        summarizer = create_summarizer(options, model) if options.settings.ui.reasoning == "summary" else None
    except BaseException:
        if tools is not None:
            tools.tools.close()
        model.backend.close()
        raise
    return ChatConversation(
        session,
        model.backend,
        model_name=model.info.name,
        store=store,
        tools=tools,
        sampling=options.sampling,
        max_steps=options.settings.tools.max_steps,
        raw_tokens=raw_tokens,
        summarizer=summarizer,
    )
