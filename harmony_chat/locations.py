"""Where harmony-chat keeps its files: cache, config and data directories."""

from __future__ import annotations

import os
from importlib.resources import files
from pathlib import Path

from platformdirs import user_cache_path, user_config_path, user_data_path

APP_NAME = "harmony-chat"


def cache_dir() -> Path:
    """Return the cache directory (``HARMONY_CHAT_CACHE_DIR`` overrides it)."""
    override = os.environ.get("HARMONY_CHAT_CACHE_DIR")
    return Path(override) if override else user_cache_path(APP_NAME)


def config_dir() -> Path:
    """Return the config directory (``HARMONY_CHAT_CONFIG_DIR`` overrides it)."""
    override = os.environ.get("HARMONY_CHAT_CONFIG_DIR")
    return Path(override) if override else user_config_path(APP_NAME)


def data_dir() -> Path:
    """Return the data directory (``HARMONY_CHAT_DATA_DIR`` overrides it)."""
    override = os.environ.get("HARMONY_CHAT_DATA_DIR")
    return Path(override) if override else user_data_path(APP_NAME)


def vocab_cache_dir() -> Path:
    """Return the folder that holds the cached ``o200k_base.tiktoken``."""
    return cache_dir() / "vocab"


def bundled_theme_dir() -> Path:
    """The shipped ``themes/`` folder (``harmony_chat/_themes`` in a wheel, ``themes/`` in a checkout)."""
    installed = Path(str(files("harmony_chat") / "_themes"))
    return installed if installed.is_dir() else Path(__file__).resolve().parents[1] / "themes"


def user_theme_dir() -> Path:
    """Where users drop their own theme files."""
    return config_dir() / "themes"
