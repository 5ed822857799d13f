"""McpToolbox against the real test MCP server (official SDK) over stdio and streamable HTTP."""

from __future__ import annotations

import json
import re
import sys
import threading
import time
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest
from openai_harmony import HarmonyEncoding

from harmony_chat.tools.base import ToolResult
from harmony_chat.tools.mcp_client import McpToolbox
from harmony_chat.tools.mcp_config import McpServerConfig, load_mcp_json, parse_servers
from harmony_chat.tools.output import OUTPUT_LIMIT_BYTES
from tests.tools.conftest import SERVER_SCRIPT, http_server, render_tools, stdio_toml
from tests.tools.mcp_test_server import BIG_LINE, forecast

READY_S = 30.0
BAD_COMMAND = "/nonexistent/harmony-chat-test/mcp-server"


def never() -> bool:
    return False


def call(box: McpToolbox, name: str, arguments: dict[str, object] | None = None, timeout_s: float = 20) -> ToolResult:
    return box.call(name, arguments or {}, timeout_s=timeout_s, should_stop=never)


def wait_for(path: Path, timeout_s: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if path.exists():
            return True
        time.sleep(0.02)
    return False


def process_gone(pid: int) -> bool:
    """True when ``pid`` no longer exists (or is a zombie nobody will reap, which counts as a leak)."""
    stat = Path(f"/proc/{pid}/stat")
    return not stat.exists()


PREFIXES = {"local": "", "web": "web_", "old": "old_", "oldweb": "oldweb_"}
"""The ready servers of the module's toolbox and the prefix their (identical) tools get."""


@pytest.fixture(scope="module")
def toolbox(markers: Path, http_url: str, legacy_http_url: str) -> Iterator[McpToolbox]:
    """A toolbox from a config file's ``[mcp.servers]``: both transports and protocol eras, one off, one broken."""
    text = (
        stdio_toml("local", markers)
        + f"[mcp.servers.web]\nurl = {http_url!r}\nheaders = {{ X-Test-Token = 'secret-42' }}\n"
        + stdio_toml("old", markers, legacy=True)
        + f"[mcp.servers.oldweb]\nurl = {legacy_http_url!r}\n"
        + stdio_toml("off", markers, enabled=False)
        + f"[mcp.servers.broken]\ncommand = {BAD_COMMAND!r}\nargs = ['--serve']\n"
    )
    servers = parse_servers(tomllib.loads(text)["mcp"]["servers"], "config.toml")
    box = McpToolbox(servers)
    box.start()
    assert box.wait_ready(READY_S)
    yield box
    box.close()


def test_servers_speak_both_protocol_eras(toolbox: McpToolbox) -> None:
    protocols = {status.name: status.protocol for status in toolbox.servers_status()}
    assert protocols == {"local": "2026-07-28", "web": "2026-07-28", "old": "2025-11-25", "oldweb": "2025-11-25"} | {
        "off": None,
        "broken": None,
    }


def test_tools_are_listed_with_unique_names_and_every_schema_renders(
    toolbox: McpToolbox, encoding: HarmonyEncoding
) -> None:
    specs = {spec.name: spec for spec in toolbox.specs()}
    assert specs["get_weather"].server == "local" and specs["get_weather"].remote_name == "get_weather"
    # The HTTP server offers the same tools later in config order: they get the server prefix.
    assert specs["web_get_weather"].server == "web" and specs["web_get_weather"].remote_name == "get_weather"
    assert specs["get_weather"].recipient == "functions.get_weather"
    assert {spec.server for spec in specs.values()} == set(PREFIXES)
    assert [name for name in specs if name.endswith("get_weather")] == [f"{p}get_weather" for p in PREFIXES.values()]
    for spec in specs.values():
        rendered = render_tools(encoding, [spec])
        assert f"type {spec.name} = (" in rendered
        raw_properties = (spec.input_schema or {}).get("properties", {})
        assert isinstance(raw_properties, dict)
        for field, raw in raw_properties.items():
            line = re.search(rf"^{field}(\??): ?(.*)$", rendered, re.MULTILINE)
            assert line is not None, f"{spec.name}.{field} missing from\n{rendered}"
            typed = set(raw) - {"title", "default", "description"}
            if typed:  # only a field with no constraints at all may render as `any`
                assert line.group(2) != "any,", f"{spec.name}.{field} renders as any:\n{rendered}"
    weather = render_tools(encoding, [specs["get_weather"]])
    assert "location: string," in weather and 'unit?: "celsius" | "fahrenheit"' in weather
    trip = render_tools(encoding, [specs["plan_trip"]])
    assert "city: string" in trip and "nights?: number" in trip and "notes?: any" in trip
    assert "Title" not in trip and "$ref" not in trip


@pytest.mark.parametrize("prefix", PREFIXES.values())
def test_calls_over_stdio_and_http(toolbox: McpToolbox, prefix: str) -> None:
    result = call(toolbox, f"functions.{prefix}get_weather", {"location": "Paris"})
    assert (result.status, result.text, result.truncated, result.is_error) == ("done", forecast("Paris"), False, False)
    result = call(toolbox, f"{prefix}get_weather", {"location": "Tromsø", "unit": "fahrenheit"})
    assert (result.status, result.text) == ("done", forecast("Tromsø", "fahrenheit"))
    assert result.elapsed_s > 0


def test_config_env_and_headers_reach_the_server(toolbox: McpToolbox) -> None:
    assert call(toolbox, "read_env", {"name": "GREETING"}).text == "hello from the config"
    assert call(toolbox, "web_read_header", {"name": "X-Test-Token"}).text == "secret-42"


def test_error_results_and_bad_calls_become_failed_results(toolbox: McpToolbox) -> None:
    failed = call(toolbox, "fail", {"reason": "disk on fire"})
    assert failed.status == "failed" and failed.is_error and "disk on fire" in failed.text
    invalid = call(toolbox, "get_weather", {"unit": "kelvin"})
    assert invalid.status == "failed" and "location" in invalid.text
    unknown = call(toolbox, "launch_rockets")
    assert unknown.status == "failed" and "no tool named launch_rockets" in unknown.text
    assert "get_weather" in unknown.text


def test_images_become_a_placeholder_line(toolbox: McpToolbox) -> None:
    result = call(toolbox, "picture")
    assert result.status == "done"
    assert result.text.splitlines() == ["here is a picture", "[image: image/png, 67 bytes, not shown]"]


def test_a_server_that_fails_to_start_is_one_notice_naming_its_command(toolbox: McpToolbox) -> None:
    notices = toolbox.notices()
    assert len(notices) == 1
    assert "'broken'" in notices[0] and f"{BAD_COMMAND} --serve" in notices[0] and "did not start" in notices[0]
    broken = next(status for status in toolbox.servers_status() if status.name == "broken")
    assert broken.state == "failed" and broken.error and "No such file" in broken.error


def test_disabled_server_is_not_started_and_its_tools_are_not_listed(toolbox: McpToolbox) -> None:
    states = {status.name: (status.state, status.tool_count) for status in toolbox.servers_status()}
    assert states == {name: ("ready", 10) for name in PREFIXES} | {"off": ("disabled", 0), "broken": ("failed", 0)}
    assert not [spec for spec in toolbox.specs() if spec.server in ("off", "broken")]


def test_a_hanging_tool_times_out_and_the_server_is_told(toolbox: McpToolbox, markers: Path) -> None:
    result = toolbox.call("hang", {"tag": "timeout"}, timeout_s=1.0, should_stop=never)
    assert result.status == "timeout" and result.is_error
    assert "did not finish within 1 s" in result.text
    assert 1.0 <= result.elapsed_s < 10
    assert (markers / "timeout.started").exists()
    assert wait_for(markers / "timeout.cancelled"), "the MCP request was not cancelled on the server"
    assert call(toolbox, "get_weather", {"location": "Rome"}).text == forecast("Rome")


@pytest.mark.parametrize("tool", [f"{prefix}hang" for prefix in PREFIXES.values()])
def test_should_stop_cancels_the_call(toolbox: McpToolbox, markers: Path, tool: str) -> None:
    stop = threading.Event()
    threading.Timer(0.3, stop.set).start()
    result = toolbox.call(tool, {"tag": f"stop-{tool}"}, timeout_s=60, should_stop=stop.is_set)
    assert result.status == "cancelled"
    assert result.elapsed_s < 10
    assert wait_for(markers / f"stop-{tool}.cancelled"), "the MCP request was not cancelled on the server"
    assert toolbox.call(tool, {}, timeout_s=60, should_stop=lambda: True).status == "cancelled"


def test_ten_megabytes_are_capped_with_a_marker(toolbox: McpToolbox) -> None:
    result = call(toolbox, "big", {"megabytes": 10}, timeout_s=60)
    assert result.status == "done" and result.truncated
    body, marker = result.text.rsplit("\n[output cut: ", 1)
    assert len(body.encode()) == OUTPUT_LIMIT_BYTES
    assert body.startswith("0123456789abcdef")
    total = 10 * 1024 * 1024 // len(BIG_LINE) * len(BIG_LINE)
    left_out = total - OUTPUT_LIMIT_BYTES
    assert marker == f"{left_out:,} of {total:,} bytes left out; only the first 65,536 bytes are shown]"


@pytest.mark.parametrize("tool", ["web_big", "oldweb_big"])
def test_http_results_larger_than_the_sdk_default_event_size_arrive(toolbox: McpToolbox, tool: str) -> None:
    # 2025-protocol servers answer over server-sent events, which the SDK caps at 1 MiB by default.
    result = call(toolbox, tool, {"megabytes": 2}, timeout_s=60)
    assert result.status == "done" and result.truncated


def test_crash_mid_call_fails_and_other_servers_keep_working(http_url: str) -> None:
    servers = {
        "crashy": McpServerConfig(command=sys.executable, args=[str(SERVER_SCRIPT)]),
        "web": McpServerConfig(url=http_url),
    }
    seen: list[str] = []
    with McpToolbox(servers, on_notice=seen.append) as box:
        assert box.wait_ready(READY_S)
        pid = int(call(box, "server_pid").text)
        result = call(box, "crash")
        assert result.status == "failed" and "'crashy' stopped while running crash" in result.text
        crashy = box.servers_status()[0]
        assert crashy.state == "failed" and crashy.tool_count == 0
        assert len(seen) == 1 and "'crashy'" in seen[0] and str(SERVER_SCRIPT) in seen[0]
        # Names keep their meaning: get_weather was crashy's, so it fails instead of reaching web.
        gone = call(box, "get_weather", {"location": "Lima"})
        assert gone.status == "failed" and "its MCP server 'crashy' has stopped" in gone.text
        assert call(box, "web_get_weather", {"location": "Lima"}).text == forecast("Lima")
        box.set_enabled("crashy", True)
        assert box.wait_ready(READY_S)
        assert call(box, "get_weather", {"location": "Lima"}).text == forecast("Lima")
    assert process_gone(pid)


def test_http_server_dying_mid_call_fails_the_call(markers: Path) -> None:
    seen: list[str] = []
    with http_server(markers) as url, McpToolbox({"remote": McpServerConfig(url=url)}, on_notice=seen.append) as box:
        assert box.wait_ready(READY_S)
        result = call(box, "crash")
        assert result.status == "failed" and "'remote' stopped while running crash" in result.text
        assert box.servers_status()[0].state == "failed" and box.specs() == []
        assert len(seen) == 1 and url in seen[0]


def test_set_enabled_switches_servers_and_json_config_is_used(tmp_path: Path, http_url: str, markers: Path) -> None:
    config = tmp_path / "mcp.json"
    entries = {
        "web": {"type": "http", "url": http_url, "alwaysAllow": ["get_weather"]},
        "later": {"command": sys.executable, "args": [str(SERVER_SCRIPT)], "disabled": True},
    }
    config.write_text(json.dumps({"mcpServers": entries}), encoding="utf-8")
    changes: list[None] = []
    with McpToolbox(load_mcp_json(config), on_change=lambda: changes.append(None)) as box:
        assert box.wait_ready(READY_S)
        assert {spec.server for spec in box.specs()} == {"web"}
        box.set_enabled("web", False)
        assert box.specs() == [] and box.servers_status()[0].state == "disabled"
        assert call(box, "get_weather", {"location": "Oslo"}).status == "failed"
        box.set_enabled("later", True)
        box.set_enabled("web", True)
        assert box.wait_ready(READY_S)
        names = {spec.name: spec.server for spec in box.specs()}
        assert names["get_weather"] == "web" and names["later_get_weather"] == "later"
        assert call(box, "later_get_weather", {"location": "Oslo"}).text == forecast("Oslo")
        with pytest.raises(KeyError):
            box.set_enabled("nobody", True)
    assert changes, "on_change was never called"


def test_start_returns_at_once_and_close_leaves_no_child_process_even_with_a_call_in_flight() -> None:
    threads_before = set(threading.enumerate())
    box = McpToolbox({"local": McpServerConfig(command=sys.executable, args=[str(SERVER_SCRIPT)])})
    assert box.wait_ready(0.1) is False  # not started yet
    box.start()
    assert [status.state for status in box.servers_status()] == ["starting"] and box.specs() == []
    assert box.wait_ready(READY_S)
    assert box.servers_status()[0].state == "ready"
    pid = int(call(box, "server_pid").text)
    results: list[ToolResult] = []
    caller = threading.Thread(target=lambda: results.append(box.call("hang", {}, timeout_s=60, should_stop=never)))
    caller.start()
    time.sleep(0.3)
    box.close()
    caller.join(15)
    assert results and results[0].status == "failed"
    assert results[0].text == "The MCP server 'local' was switched off while running hang."
    assert process_gone(pid)
    assert not [thread for thread in set(threading.enumerate()) - threads_before if thread.name == "mcp-toolbox"]
    assert call(box, "get_weather", {"location": "Oslo"}).status == "failed"
    box.close()
