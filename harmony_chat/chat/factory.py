"""The one factory: options in, a backend, tools and a conversation out (for every entry point).

Building may be slow (a download, MCP servers, loading weights): call these from a worker
thread or a command, never from a UI thread.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from harmony_chat.backends.base import ModelBackend, ModelInfo
from harmony_chat.chat.approval import ApprovalPolicy, Approver
from harmony_chat.chat.options import ChatOptions
from harmony_chat.errors import HarmonyChatError

if TYPE_CHECKING:
    from openai_harmony import HarmonyEncoding

    from harmony_chat.chat.builtins import BuiltinTool
    from harmony_chat.chat.conversation import ChatConversation
    from harmony_chat.chat.summary import Summarizer
    from harmony_chat.chat.tool_calls import ToolRunner
    from harmony_chat.history.store import HistoryStore
    from harmony_chat.tools.base import ToolProvider
    from harmony_chat.tools.mcp_client import McpToolbox
    from harmony_chat.tools.mcp_config import McpServerConfig


class UsageProblem(HarmonyChatError):
    """Options that do not make sense together."""

    exit_code = 2


def create_backend(options: ChatOptions) -> tuple[ModelBackend, Path | None]:
    """Build (not load) the backend the options name; return it with the GGUF path, if any.

    Raises:
        HarmonyChatError: when the model cannot be found or downloaded, or options clash.
    """
    from harmony_chat.backends.replay import RecordingBackend

    backend, path = _model_backend(options)
    if options.record is not None:
        backend = RecordingBackend(backend, options.record)
    return backend, path


def _model_backend(options: ChatOptions) -> tuple[ModelBackend, Path | None]:
    from harmony_chat.backends.replay import ReplayBackend

    settings = options.settings.model
    chosen = {"--model": settings.path, "--replay": options.replay, "--url": settings.url}  # --hf-repo: below
    sources = [flag for flag, source in chosen.items() if source]
    if len(sources) > 1 or (sources and (options.demo or options.replay_demo)):
        given = ", ".join(sources)
        extra = " and --demo" if options.demo else " and --replay-demo" if options.replay_demo else ""
        raise UsageProblem(f"give one model source, not {given}{extra}")
    if options.replay_demo or options.replay:
        from harmony_chat.demo import choose_demo_turn, demo_recording

        path = options.replay or demo_recording()
        name = "demo (replay)" if options.replay_demo else f"replay: {path.name}"
        chooser = choose_demo_turn if options.replay_demo else None
        replay = ReplayBackend(
            path, delay_s=options.replay_delay, context_size=settings.context, name=name, chooser=chooser
        )
        return replay, None
    if settings.url:
        from harmony_chat.backends.remote import create_remote_backend

        remote = create_remote_backend(
            settings.url, engine=settings.engine, api_key=settings.api_key, model_name=settings.served_model
        )
        return remote, None
    from harmony_chat.backends.llama_cpp import LlamaCppBackend
    from harmony_chat.backends.sources import resolve_model

    if options.uses_pocket:
        from harmony_chat.demo.pocket import pocket_model_path

        path = pocket_model_path()
        return LlamaCppBackend(path, context_size=settings.context, threads=settings.threads), path
    model_path = resolve_model(options.model_path, settings.hf_repo, settings.hf_file)
    assert model_path is not None
    backend = LlamaCppBackend(
        model_path, context_size=settings.context, gpu_layers=settings.gpu_layers, threads=settings.threads
    )
    return backend, model_path


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

    progress("finding the model" + (" (downloading from Hugging Face)" if options.settings.model.hf_repo else ""))
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


def tool_runner(options: ChatOptions, providers: list[ToolProvider], approver: Approver | None) -> ToolRunner:
    """The tool runner for ``providers`` and the built-in tools, under the options' approval mode."""
    from harmony_chat.chat.tool_calls import ToolRunner
    from harmony_chat.chat.toolset import ToolSet

    settings = options.settings.tools
    policy = ApprovalPolicy.from_config(settings.approve, settings.always, configured_servers(options))
    return ToolRunner(
        ToolSet(providers, builtin_tools(options)),
        policy,
        approver,
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
