"""The settings with the command line's flags on top, and the factory that turns them into backend and tools."""

from __future__ import annotations

from pathlib import Path

import pytest

from harmony_chat.chat.builtins import PythonBuiltin
from harmony_chat.chat.factory import (
    UsageProblem,
    builtin_names,
    builtin_tools,
    create_backend,
    mcp_servers,
    start_tools,
)
from harmony_chat.chat.options import ChatOptions
from harmony_chat.config import default_settings, load_settings, set_setting
from harmony_chat.config_errors import ConfigError
from tests.support.flags import options_from
from tests.tools.python.helpers import needs_sandbox
from training.pocket.data import WEATHER_TOOL


def _config(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "config.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_the_command_line_wins_over_the_config_and_a_model_source_replaces_the_config_one(tmp_path: Path) -> None:
    config = _config(
        tmp_path,
        '[model]\npath = "/models/a.gguf"\nmax_tokens = 100\ntemperature = 0.5\n'
        '[tools]\napprove = "none"\nmax_steps = 3\nalways = ["w.get_weather"]\nbuiltin = ["python"]\n',
    )
    options = options_from("--config", str(config))
    sampling, tools = options.settings.sampling, options.settings.tools
    assert (options.model_path, sampling.max_tokens, sampling.temperature) == (Path("/models/a.gguf"), 100, 0.5)
    assert (tools.approve, tools.max_steps, tools.always, tools.builtin) == ("none", 3, ["w.get_weather"], ["python"])
    options = options_from("--config", str(config), "--max-tokens", "7", "--demo", "--yes", "--tool", "browser")
    sampling, tools = options.settings.sampling, options.settings.tools
    assert options.model_path is None and options.demo and sampling.max_tokens == 7 and sampling.temperature == 0.5
    assert tools.approve == "all" and tools.builtin == ["browser", "python"]
    with pytest.raises(TypeError):
        set_setting(load_settings(config), "model.no_such_option", 1)


@needs_sandbox
def test_the_python_quota_goes_from_the_config_to_the_tool(tmp_path: Path) -> None:
    options = ChatOptions(load_settings(_config(tmp_path, '[tools]\nbuiltin = ["python"]\npython_disk_mb = 8\n')))
    assert options.settings.tools.python_disk_mb == 8
    (tool,) = builtin_tools(options)
    assert isinstance(tool, PythonBuiltin) and tool.disk_mb == 8
    assert "8 MiB quota" in tool.warning()  # the approval dialog names it; nothing starts
    assert ChatOptions(load_settings(tmp_path / "none.toml")).settings.tools.python_disk_mb == 256
    with pytest.raises(ConfigError, match="python_disk_mb"):
        load_settings(_config(tmp_path, "[tools]\npython_disk_mb = 0\n"))


def test_one_model_source_at_a_time(tmp_path: Path) -> None:
    with pytest.raises(UsageProblem, match="one model source"):
        create_backend(ChatOptions(default_settings({"model.url": "http://127.0.0.1:9"}), replay=tmp_path / "a.txt"))
    with pytest.raises(UsageProblem, match="--demo"):
        create_backend(ChatOptions(default_settings({"model.path": str(tmp_path / "a.gguf")}), demo=True))


def test_relative_mcp_cwd_is_the_config_files_folder(tmp_path: Path) -> None:
    config = _config(tmp_path, '[mcp.servers.local]\ncommand = "server"\ncwd = "tools"\n')
    (server,) = mcp_servers(ChatOptions(load_settings(config))).values()
    assert server.cwd == str(tmp_path / "tools")


def test_the_pocket_demo_offers_python_only_when_no_tool_is_configured() -> None:
    assert builtin_names(ChatOptions(demo=True)) == []  # only the app asks for the demo tools
    assert builtin_names(ChatOptions(demo=True, demo_tools=True)) == ["python"]
    assert builtin_names(ChatOptions(demo_tools=True)) == ["python"]  # no model configured: the pocket model
    assert builtin_names(ChatOptions(default_settings({"model.path": "a.gguf"}), demo_tools=True)) == []
    browser = default_settings({"tools.builtin": ["browser"]})
    assert builtin_names(ChatOptions(browser, demo=True, demo_tools=True)) == ["browser"]
    servers = mcp_servers(ChatOptions(demo=True, demo_tools=True))
    assert builtin_names(ChatOptions(default_settings({"mcp.servers": servers}), demo=True, demo_tools=True)) == []


def test_the_pocket_demo_gets_its_weather_tool_from_a_real_mcp_server() -> None:
    assert mcp_servers(ChatOptions(demo=True)) == {}  # only the app asks for the demo tools
    options = ChatOptions(demo=True, demo_tools=True)
    assert options.has_tools and list(mcp_servers(options)) == ["weather"]
    assert mcp_servers(ChatOptions(default_settings({"model.path": "a.gguf"}), demo_tools=True)) == {}
    (toolbox,) = start_tools(options)
    try:
        assert toolbox.wait_ready(30.0)  # type: ignore[attr-defined]
        (spec,) = toolbox.specs()
        assert (spec.name, spec.description, spec.parameters) == (
            WEATHER_TOOL.name,
            WEATHER_TOOL.description,
            WEATHER_TOOL.parameters,
        )  # exactly what the pocket model was trained on
        result = toolbox.call("get_weather", {"location": "Paris"}, timeout_s=10, should_stop=lambda: False)
        assert result.text == '{"temperature": 18, "condition": "sunny"}'
    finally:
        toolbox.close()
