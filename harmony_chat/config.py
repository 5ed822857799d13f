"""The user's settings: the config file (TOML) and ``HARMONY_CHAT_`` environment variables. No UI imports.

The file is ``config.toml`` in the user config dir (``HARMONY_CHAT_CONFIG_FILE`` points elsewhere).
Settings are pydantic-settings models read from three sources, the first winning: values given in
code, environment variables (``HARMONY_CHAT_MODEL__CONTEXT=8192``: section, two underscores, key),
then the file. Command-line options override them all. Every field's docstring documents it; the
README's config reference is generated from them (:mod:`harmony_chat.config_reference`). A bad
value gives one error naming the file and line (or the environment variable).
"""

from __future__ import annotations

import logging
import os
import tomllib
from collections.abc import Mapping, Sequence
from contextvars import ContextVar
from pathlib import Path
from typing import Annotated, Any, Literal

import tomlkit
from pydantic import AfterValidator, BaseModel, Field, PrivateAttr, ValidationError, model_validator
from pydantic_settings import (
    BaseSettings,
    InitSettingsSource,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    SettingsError,
)
from tomlkit.exceptions import TOMLKitError

from harmony_chat.config_errors import ConfigError, describe, environment_variable, explain, line_of
from harmony_chat.config_section import Section as _Section
from harmony_chat.config_tools import McpSettings, ToolsSettings
from harmony_chat.harmony.effort import Effort
from harmony_chat.harmony.visibility import ReasoningMode
from harmony_chat.locations import bundled_theme_dir, config_dir, user_theme_dir
from harmony_chat.private_files import make_private_dir, replace_text

ENV_PREFIX = "HARMONY_CHAT_"
"""Environment variables ``HARMONY_CHAT_<SECTION>__<KEY>`` set any value (``__`` separates the two)."""
BINDING_IDS = (
    "send",
    "newline",
    "stop",
    "cycle-effort",
    "cycle-reasoning",
    "toggle-debug",
    "new-chat",
    "history",
    "command-palette",
    "help",
    "quit",
)
"""The ids ``[keymap]`` can remap (the same as the app's bindings; a test keeps them in step)."""
DEFAULT_THEME = "harmony-dark"
"""``[ui] theme``'s default, and the theme the app falls back to when the one chosen is unknown."""
MAX_CONTEXT = 1_048_576
"""The largest context (and answer) in tokens a setting may ask for: 2**20, eight times gpt-oss's 131,072."""
MAX_THREADS = 512
"""The most CPU threads llama.cpp runs (ggml's ``GGML_MAX_N_THREADS``; more crashes it)."""
MAX_GPU_LAYERS = 2**31 - 1
"""llama.cpp's layer count is a 32-bit integer; any count above the model's offloads every layer."""
MAX_TEMPERATURE = 2.0
"""The highest sampling temperature (OpenAI's API allows 0 to 2)."""
MAX_SEED = 2**32 - 2
"""llama.cpp's seeds are 32-bit; 2**32 - 1 means "a random seed" there, so it is not a seed to repeat."""
MAX_TOP_K = 2**31 - 1
"""llama.cpp's top_k is a 32-bit integer; a k above the vocabulary's size keeps every token."""
MAX_PENALTY = 2.0
"""The largest frequency or presence penalty, either way (OpenAI's API allows -2 to 2)."""
MOVED_TO_SAMPLING = ("temperature", "max_tokens", "seed")
"""``[model]`` keys that moved to ``[sampling]``: still read there, with a note."""

log = logging.getLogger("harmony_chat.config")

__all__ = [
    "ConfigError",
    "Settings",
    "check_setting",
    "config_file",
    "default_settings",
    "get_setting",
    "load_settings",
    "save_config_value",
    "save_ui_value",
    "set_setting",
]


def theme_names() -> set[str]:
    """Names of the themes the app can use: the shipped and the user's theme files, and Textual's own.

    Reads the theme files' ``name`` (light: no Textual import unless a name is not found there).
    """
    names: set[str] = set()
    for folder in (bundled_theme_dir(), user_theme_dir()):
        for path in sorted(folder.glob("*.toml")) if folder.is_dir() else ():
            try:
                name = tomllib.loads(path.read_text(encoding="utf-8")).get("name")
            except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError, RecursionError):
                continue
            if isinstance(name, str) and name:
                names.add(name)
    return names


def _known_theme(name: str) -> str:
    if name in theme_names():
        return name
    from textual.theme import BUILTIN_THEMES  # deferred: only for names that are not harmony-chat's

    if name in BUILTIN_THEMES:
        return name
    shipped = ", ".join(sorted(theme_names()))
    raise ValueError(f"unknown theme {name!r} (themes: {shipped}, or one of Textual's built-in themes)")


def _summarizer(value: str) -> str:
    if value == "same" or value.startswith(("http://", "https://")):
        return value
    raise ValueError(f'must be "same" or the http(s) URL of a serving engine, not {value!r}')


def _known_binding(binding: str) -> str:
    if binding not in BINDING_IDS:
        raise ValueError(f"unknown key binding id {binding!r} in [keymap] (ids: {', '.join(BINDING_IDS)})")
    return binding


KEY_MODIFIERS = ("ctrl", "alt", "shift", "super", "hyper", "meta")


def _is_key(key: str) -> bool:
    """Whether Textual can bind ``key``: modifiers, then one character or a key's name (``ctrl+e``, ``f5``)."""
    from textual.keys import REPLACED_KEYS, Keys, key_to_character  # deferred: only for a configured keymap

    if key in {member.value for member in Keys}:
        return not key.startswith("<")
    *modifiers, name = key.split("+") if len(key) > 1 else [key]
    if not name or any(modifier not in KEY_MODIFIERS for modifier in modifiers):
        return False
    if len(name) == 1:  # Textual names a lone "?" (question_mark), but not one after a modifier
        return name.isalnum() if modifiers else name.isprintable()
    named = {member.value.rpartition("+")[2] for member in Keys if not member.value.startswith("<")}
    return name in named or name in REPLACED_KEYS or key_to_character(name) is not None


def _key_list(keys: str) -> str:
    """A ``[keymap]`` value: one key or several, comma-separated, each one Textual can bind."""
    if not keys.strip() or not all(_is_key(key.strip()) for key in keys.split(",")):
        raise ValueError(f"{keys!r} is not a key or a list of keys (e.g. 'ctrl+e' or 'f5,ctrl+e')")
    return keys


class ModelSettings(_Section):
    """``[model]``: which model and how to run it."""

    path: str | None = None
    """A gpt-oss GGUF file (``~`` is expanded). Without one the app and ``serve`` run the pocket gpt-oss; ``ask``
    needs one (or ``--demo``)."""
    hf_repo: str | None = None
    """A Hugging Face repository to download the model from (with ``hf_file``)."""
    hf_file: str | None = None
    """The file in ``hf_repo`` to download (kept in the Hugging Face cache)."""
    context: int = Field(default=16384, ge=256, le=MAX_CONTEXT)
    """Context size in tokens (the model's own limit applies too)."""
    gpu_layers: int = Field(default=0, ge=-1, le=MAX_GPU_LAYERS)
    """Layers to offload to the GPU (-1: all; a count above the model's also offloads all)."""
    threads: int | None = Field(default=None, ge=1, le=MAX_THREADS)
    """CPU threads (default: llama.cpp's choice; 512 is the most it runs)."""
    url: str | None = None
    """A serving engine running gpt-oss (llama-server, vLLM, SGLang) instead of a GGUF: ``http://HOST:PORT``."""
    engine: Literal["llama-server", "vllm", "sglang"] | None = None
    """The engine at ``url`` (default: found out by asking it)."""
    api_key: str | None = None
    """The engine's API key, sent as a Bearer token (better: the ``HARMONY_CHAT_API_KEY`` variable)."""
    served_model: str | None = None
    """The model name the engine serves, where it needs one (vLLM, SGLang)."""


class SamplingSettings(_Section):
    """``[sampling]``: how tokens are picked (in every chat; ``serve``'s defaults, which a request may override)."""

    # Each key is the backends' SamplingParams field of its name, with its default (a test keeps them equal):
    # ChatOptions.sampling builds one from the keys, so a new key here is the only change it needs.

    temperature: float = Field(default=1.0, ge=0.0, le=MAX_TEMPERATURE)
    """Sampling temperature, as OpenAI's API takes it (1.0 with top_p 1.0 is OpenAI's advice for gpt-oss)."""
    top_p: float = Field(default=1.0, gt=0.0, le=1.0)
    """Nucleus sampling: sample from the most likely tokens whose probabilities add up to top_p (1.0: off)."""
    top_k: int = Field(default=0, ge=0, le=MAX_TOP_K)
    """Sample from the k most likely tokens only (0: off)."""
    min_p: float = Field(default=0.0, ge=0.0, le=1.0)
    """Sample only from tokens at least min_p times as likely as the most likely one (0.0: off)."""
    seed: int | None = Field(default=None, ge=0, le=MAX_SEED)
    """Sampling seed, for repeatable answers (llama.cpp's seeds are 32-bit)."""
    max_tokens: int = Field(default=4096, ge=1, le=MAX_CONTEXT)
    """Most tokens an answer may take (less when the context has less room)."""
    frequency_penalty: float = Field(default=0.0, ge=-MAX_PENALTY, le=MAX_PENALTY)
    """OpenAI's frequency penalty: a token is less likely the more often it was generated (0.0: off)."""
    presence_penalty: float = Field(default=0.0, ge=-MAX_PENALTY, le=MAX_PENALTY)
    """OpenAI's presence penalty: a token is less likely once it was generated (0.0: off)."""


class ChatSettings(_Section):
    """``[chat]``: how conversations start."""

    effort: Effort = "medium"
    """Reasoning effort of a new chat: low, medium or high."""
    instructions: str | None = None
    """Developer instructions for every chat."""


class UiSettings(_Section):
    """``[ui]``: how the app looks."""

    theme: Annotated[str, AfterValidator(_known_theme)] = DEFAULT_THEME
    """Colour theme: a shipped one, one of yours in the themes folder, or a Textual theme."""
    debug: bool = False
    """Start in debug mode (analysis and token inspector visible)."""
    cursor_blink: bool = True
    """Blink the prompt's cursor."""
    reasoning: ReasoningMode = "hidden"
    """What you see of the model's reasoning: ``hidden`` (a thinking line), ``summary`` (a short account
    the model writes for you after it thinks; costs an extra generation per turn, see ``[reasoning]``), or
    ``raw`` (the raw chain of thought, not reviewed for safety: for debugging). The app's only: ``ask`` shows
    reasoning only when its own ``--reasoning`` asks."""


class ReasoningSettings(_Section):
    """``[reasoning]``: how reasoning summaries are written (``[ui] reasoning = "summary"``)."""

    summarizer: Annotated[str, AfterValidator(_summarizer)] = "same"
    """``"same"``: the chat's own model writes the summaries, reusing its KV cache; or the URL of a serving
    engine running gpt-oss (llama-server, vLLM, SGLang) that writes them instead."""
    live: bool = False
    """Also summarise long reasoning while it goes on, every ``live_every`` analysis tokens."""
    live_every: int = Field(default=300, ge=32, le=MAX_CONTEXT)
    """Analysis tokens between two live summaries."""


class HistorySettings(_Section):
    """``[history]``: where conversations are kept and what is kept."""

    path: str | None = None
    """The SQLite file (default: ``history.sqlite3`` in the user data dir)."""
    store_analysis: bool = False
    """Also store the raw chain of thought, labelled, for debugging."""


BindingId = Annotated[str, AfterValidator(_known_binding)]
KeyList = Annotated[str, AfterValidator(_key_list)]

_reading: ContextVar[_ConfigFileSource | None] = ContextVar("harmony_chat_config_file", default=None)


class _ConfigFileSource(InitSettingsSource):
    """The config file as a settings source; keeps its text so that errors can name lines.

    Built on pydantic-settings' public ``InitSettingsSource`` (the file is read here, once), so no
    private method of the library is overridden.
    """

    def __init__(self, settings_cls: type[BaseSettings], path: Path) -> None:
        self.path = path
        self.text = ""
        self.moved: list[tuple[str, str]] = []
        """The ``[model]`` keys read as ``[sampling]``'s (:data:`MOVED_TO_SAMPLING`), and where each was given."""
        super().__init__(settings_cls, self._read(path))

    def where(self, section: str, key: str) -> str:
        """Where ``[section] key`` was given: its environment variable, or this file's line."""
        variable = environment_variable((section, key), ENV_PREFIX)
        if variable is not None:
            return f"environment variable {variable}"
        line = line_of(self.text, section, key)
        return f"config file {self.path}, line {line}" if line else f"config file {self.path}"

    def _read(self, path: Path) -> dict[str, Any]:
        if not path.exists():
            return {}
        try:
            self.text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as error:
            raise ConfigError(f"cannot read config file {path}: {error}") from error
        try:
            return tomllib.loads(self.text)
        except tomllib.TOMLDecodeError as error:
            raise ConfigError(f"config file {path}: {error}") from error
        except RecursionError as error:  # arrays or tables nested deeper than Python's stack
            raise ConfigError(f"config file {path}: its values nest too deeply") from error


class Settings(BaseSettings):
    """Everything the config file and the environment can set."""

    model_config = SettingsConfigDict(
        env_prefix=ENV_PREFIX,
        env_nested_delimiter="__",
        extra="forbid",
        use_attribute_docstrings=True,
        validate_default=False,
    )

    model: ModelSettings = Field(default_factory=ModelSettings)
    """``[model]``"""
    sampling: SamplingSettings = Field(default_factory=SamplingSettings)
    """``[sampling]``"""
    chat: ChatSettings = Field(default_factory=ChatSettings)
    """``[chat]``"""
    ui: UiSettings = Field(default_factory=UiSettings)
    """``[ui]``"""
    reasoning: ReasoningSettings = Field(default_factory=ReasoningSettings)
    """``[reasoning]``"""
    history: HistorySettings = Field(default_factory=HistorySettings)
    """``[history]``"""
    tools: ToolsSettings = Field(default_factory=ToolsSettings)
    """``[tools]``"""
    mcp: McpSettings = Field(default_factory=McpSettings)
    """``[mcp]``"""
    keymap: dict[BindingId, KeyList] = Field(default_factory=dict)
    """Binding id = keys, e.g. ``cycle-effort = "ctrl+e"``."""
    _path: Path | None = PrivateAttr(default=None)
    _notices: tuple[str, ...] = PrivateAttr(default=())

    @property
    def path(self) -> Path | None:
        """The config file these settings were read from (None: not from a file)."""
        return self._path

    @property
    def notices(self) -> tuple[str, ...]:
        """One-line notes about how the settings were written (a key read at its old place), for the user."""
        return self._notices

    @model_validator(mode="before")
    @classmethod
    def _read_moved_keys(cls, data: Any) -> Any:
        """Read ``[model] temperature``, ``max_tokens`` and ``seed`` (and their variables) as ``[sampling]``'s.

        Raises:
            ConfigError: when a key is given at both places, naming both.
        """
        model = data.get("model") if isinstance(data, dict) else None
        if not isinstance(model, dict) or not (moved := [key for key in MOVED_TO_SAMPLING if key in model]):
            return data
        source = _reading.get()

        def where(section: str, key: str) -> str:
            return source.where(section, key) if source is not None else "given in code"

        sampling = data.get("sampling", {})
        if isinstance(sampling, SamplingSettings):
            sampling = sampling.model_dump(exclude_unset=True)
        if isinstance(sampling, dict):  # else the error is that [sampling] is no table
            for key in moved:
                if key in sampling:
                    raise ConfigError(
                        f"[model] {key} ({where('model', key)}) and [sampling] {key} ({where('sampling', key)}) "
                        f"are one setting: [model] {key} moved to [sampling], keep only [sampling] {key}"
                    )
            sampling = {**sampling, **{key: model[key] for key in moved}}
        if source is not None:
            source.moved += [(key, where("model", key)) for key in moved]
        return {**data, "model": {key: value for key, value in model.items() if key not in moved}, "sampling": sampling}

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        """Values given in code, then ``HARMONY_CHAT_`` variables, then the config file being loaded."""
        file_source = _reading.get()
        return (init_settings, env_settings) if file_source is None else (init_settings, env_settings, file_source)


def config_file() -> Path:
    """Return the config file's path."""
    override = os.environ.get("HARMONY_CHAT_CONFIG_FILE")
    return Path(override) if override else config_dir() / "config.toml"


def load_settings(path: Path | None = None) -> Settings:
    """Read the config file (a missing file means defaults) and the ``HARMONY_CHAT_`` variables.

    Raises:
        ConfigError: one line naming the file and line, or the environment variable, of the
            first bad value.
    """
    path = path or config_file()
    if path.exists() and not path.is_file():
        raise ConfigError(f"config file {path} is not a file")
    source = _ConfigFileSource(Settings, path)
    token = _reading.set(source)
    try:
        settings = Settings()
    except ValidationError as error:
        renamed = {("sampling", key): ("model", key) for key, _ in source.moved}
        raise explain(error, path, source.text, ENV_PREFIX, renamed) from None
    except SettingsError as error:  # an environment variable that is not valid JSON for a table
        raise ConfigError(f"environment: {str(error).splitlines()[0]}") from error
    finally:
        _reading.reset(token)
    settings._path = path
    if source.moved:
        settings._notices = (_moved_notice(source.moved),)
        log.warning("note: %s", settings._notices[0])
    return settings


def _moved_notice(moved: Sequence[tuple[str, str]]) -> str:
    """One line naming the ``[model]`` keys read as ``[sampling]``'s (key, where it was given), and what to do."""
    keys = ", ".join(key for key, _ in moved)
    places = "; ".join(f"{key}: {where}" if len(moved) > 1 else where for key, where in moved)
    them = "them" if len(moved) > 1 else "it"
    return f"[model] {keys} moved to [sampling] ({places}): still read, but write {them} under [sampling]"


def default_settings(values: Mapping[str, object] | None = None) -> Settings:
    """Every setting at its default (no config file, no environment variable), with ``values`` set.

    ``values`` maps settings' dotted paths to values (``{"model.context": 4096}``), each checked by
    its setting's rule. For code that runs a chat without the user's config: benchmarks, tests, the
    pocket model's evaluation.

    Raises:
        ConfigError: when a value breaks its setting's rule.
    """
    settings = Settings.model_construct()
    for path, value in (values or {}).items():
        set_setting(settings, path, value)
    return settings


def _section_model(path: str) -> tuple[type[_Section], str]:
    """The section model that holds the setting at ``path`` (``"tools.browser.url"``), and its key.

    Raises:
        TypeError: when ``path`` names no setting (a mistake in the code, not the user's).
    """
    *sections, key = path.split(".")
    model: object = Settings
    for name in sections:
        fields = model.model_fields if isinstance(model, type) and issubclass(model, BaseModel) else {}
        model = fields[name].annotation if name in fields else None
    if not (sections and isinstance(model, type) and issubclass(model, _Section) and key in model.model_fields):
        raise TypeError(f"{path!r} is not a setting")
    return model, key


def _section_of(settings: Settings, path: str) -> tuple[_Section, str]:
    """The section of ``settings`` that holds the setting at ``path``, and its key."""
    _, key = _section_model(path)
    section: Any = settings
    for name in path.split(".")[:-1]:
        section = getattr(section, name)
    return section, key


def check_setting(path: str, value: object, name: str) -> Any:
    """Check ``value`` by the rule of the setting at ``path`` (``"model.threads"``); return it as the setting holds it.

    The command-line options that set a setting (``--threads`` sets ``[model] threads``) are checked
    here, so the file, the environment and the command line share one rule and one bound.

    Raises:
        ConfigError: ``"{name} must be at most 512"``: one line, naming the value as ``name``.
    """
    section_model, key = _section_model(path)
    try:
        checked = section_model.__pydantic_validator__.validate_assignment(section_model.model_construct(), key, value)
    except ValidationError as error:
        first = error.errors()[0]
        first["loc"] = (name,)
        raise ConfigError(describe(first)) from None
    return getattr(checked, key)


def get_setting(settings: Settings, path: str) -> Any:
    """The value of the setting at ``path`` (``"chat.effort"``)."""
    section, key = _section_of(settings, path)
    return getattr(section, key)


def set_setting(settings: Settings, path: str, value: object) -> None:
    """Set the setting at ``path`` (``"model.context"``) to ``value``, checked by its rule.

    Raises:
        ConfigError: ``"model.context must be at least 256"``: one line naming the setting.
    """
    section, key = _section_of(settings, path)
    try:
        section.__pydantic_validator__.validate_assignment(section, key, value)
    except ValidationError as error:
        first = error.errors()[0]
        first["loc"] = (path,)
        raise ConfigError(describe(first)) from None


def save_ui_value(path: Path, key: str, value: str) -> None:
    """Set ``[ui] key = "value"`` in the config file, keeping everything else, comments included.

    Raises:
        ConfigError: when the file is not valid TOML or its ``ui`` is not a table.
        OSError: when the file cannot be written.
    """
    save_config_value(path, "ui", key, value)


def save_config_value(path: Path, section: str, key: str, value: object) -> None:
    """Set ``key = value`` in ``[section]`` of the config file, keeping everything else, comments included.

    The file is rewritten atomically and keeps its mode and owner (a config holding an API key
    stays 0600); a symbolic link (dotfiles) stays a link and its target is what changes. A new file
    is made 0600, in a new 0700 folder if its folder is missing.

    Raises:
        ConfigError: when the file is not valid TOML or ``section`` is not a table.
        OSError: when the file cannot be written.
    """
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    try:
        document = tomlkit.parse(text)
        table = document.get(section)
        if table is None:
            document.add(section, tomlkit.table())
            table = document[section]
        if not isinstance(table, dict):
            raise ConfigError(f"config file {path}: {section} must be a table")
        table[key] = value
    except TOMLKitError as error:
        raise ConfigError(f"config file {path}: {error}") from error
    make_private_dir(Path(os.path.realpath(path)).parent, own=False)
    replace_text(path, tomlkit.dumps(document))
