"""Engine, core, tools and the training lab never import Textual; the CLI starts light; layers; no import circles."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
ENGINE_PACKAGES = (
    "harmony_chat/harmony",
    "harmony_chat/backends",
    "harmony_chat/generation",
    "harmony_chat/printing",
    "harmony_chat/gguf",
    "harmony_chat/history",
    "harmony_chat/bench",
    "harmony_chat/demo",
    "harmony_chat/chat",
    "harmony_chat/tools",
    "training",
)


def _modules() -> list[str]:
    names = []
    for package in ENGINE_PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            names.append(".".join(path.relative_to(ROOT).with_suffix("").parts))
    return names


def test_engine_modules_import_without_textual() -> None:
    modules = _modules()
    assert "harmony_chat.harmony.decoder" in modules and "harmony_chat.backends.llama_cpp" in modules
    assert "harmony_chat.demo.pocket" in modules and "training.pocket.train" in modules
    code = (
        "import importlib, sys\n"
        f"for name in {modules!r}: importlib.import_module(name)\n"
        "bad = sorted(m for m in sys.modules\n"
        "             if m == 'textual' or m.startswith(('textual.', 'harmony_chat.tui')))\n"
        "assert not bad, bad\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)


def test_engine_sources_never_mention_textual_imports() -> None:
    for package in ENGINE_PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            for line in path.read_text(encoding="utf-8").splitlines():
                stripped = line.strip()
                assert not stripped.startswith(("import textual", "from textual", "from harmony_chat.tui")), path


def test_cli_import_is_light() -> None:
    code = (
        "import sys, harmony_chat.cli\n"
        "heavy = [m for m in ('llama_cpp', 'textual', 'openai_harmony', 'numpy', 'gguf') if m in sys.modules]\n"
        "assert not heavy, heavy\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)


def test_help_loads_no_settings_model() -> None:
    """The flags' help comes from the settings' digest: ``--help`` loads neither the settings nor pydantic-settings."""
    code = (
        "import sys\n"
        "from harmony_chat.cli import main\n"
        "for args in (['--help'], ['ask', '--help'], ['serve', '--help']): assert main(args) == 0\n"
        "heavy = ('harmony_chat.config', 'pydantic_settings', 'llama_cpp', 'openai_harmony')\n"
        "assert not [m for m in heavy if m in sys.modules], [m for m in heavy if m in sys.modules]\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert result.returncode == 0, result.stderr
    shown = " ".join(result.stdout.split())
    assert "--ctx <int> Context size in tokens (the model's own limit applies too)." in shown


def test_the_chat_screen_starts_without_the_browsers_http_client() -> None:
    """Citations are drawn from the start; fetching pages (httpx, ~100 ms to import) waits for a call."""
    code = (
        "import sys, harmony_chat.tui.screens.chat\n"
        "from harmony_chat.tools.browser import find_citations\n"
        "heavy = [m for m in ('httpx', 'httpcore', 'harmony_chat.tools.browser.fetch') if m in sys.modules]\n"
        "assert not heavy, heavy\n"
        "from harmony_chat.tools.browser import BrowserTool\n"
        "assert 'httpx' in sys.modules and BrowserTool.__name__ == 'BrowserTool'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)


def test_help_runs() -> None:
    result = subprocess.run([sys.executable, "-m", "harmony_chat", "--help"], capture_output=True, text=True, cwd=ROOT)
    assert result.returncode == 0
    assert "ask" in result.stdout


class _Imports(ast.NodeVisitor):
    """The modules a module imports: at its top level (``if TYPE_CHECKING:`` included), or anywhere."""

    def __init__(self, module: str, is_package: bool, in_functions: bool) -> None:
        self.package = module if is_package else module.rpartition(".")[0]
        self.in_functions = in_functions
        self.found: set[str] = set()

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        if self.in_functions:
            self.generic_visit(node)

    def visit_AsyncFunctionDef(self, node: ast.AsyncFunctionDef) -> None:
        if self.in_functions:
            self.generic_visit(node)

    def visit_Import(self, node: ast.Import) -> None:
        self.found.update(alias.name for alias in node.names)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        base = node.module or ""
        if node.level:
            package = self.package.rsplit(".", node.level - 1)[0] if node.level > 1 else self.package
            base = f"{package}.{base}" if base else package
        self.found.add(base)
        self.found.update(f"{base}.{alias.name}" for alias in node.names)  # names that are modules


def import_graph(package: str, in_functions: bool = False) -> dict[str, set[str]]:
    """Each module of ``package`` (a folder under the repository) and the modules of it that it imports."""
    paths = {_module_name(path): path for path in (ROOT / package.replace(".", "/")).rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for name, path in paths.items():
        imports = _Imports(name, path.name == "__init__.py", in_functions)
        imports.visit(ast.parse(path.read_text(encoding="utf-8")))
        graph[name] = {found for found in imports.found if found in paths and found != name}
    return graph


def import_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The groups of modules that import each other in a circle (strongly connected components, Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        on_stack.add(module)
        for imported in sorted(graph[module]):
            if imported not in index:
                visit(imported)
                low[module] = min(low[module], low[imported])
            elif imported in on_stack:
                low[module] = min(low[module], index[imported])
        if low[module] == index[module]:
            group = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == module:
                    break
            if len(group) > 1:
                cycles.append(sorted(group))

    for module in sorted(graph):
        if module not in index:
            visit(module)
    return cycles


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def test_the_cycle_finder_finds_a_circle_and_none_where_there_is_none() -> None:
    assert import_cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert import_cycles({"a": {"b"}, "b": {"c"}, "c": set(), "d": {"a", "c"}}) == []


def test_the_import_graph_sees_type_checking_and_relative_imports() -> None:
    graph = import_graph("harmony_chat.tui")
    assert "harmony_chat.tui.screens.chat" in graph["harmony_chat.tui.app"]
    assert "harmony_chat.tui.widgets.turn" in graph["harmony_chat.tui.screens.chat"]
    # a name imported from a module is not a module; a module imported from a package is
    assert "harmony_chat.tui.textual_private" in graph["harmony_chat.tui.widgets.answer"]


def test_the_tui_modules_import_each_other_in_no_circle() -> None:
    """The app builds screens, screens build widgets: nothing below imports what is above it, not even for types.

    Imports inside functions count too (a lazy import back up is the same circle, found later).
    """
    assert import_cycles(import_graph("harmony_chat.tui", in_functions=True)) == []


def test_no_tui_module_writes_the_config_file() -> None:
    """What the user's choices save goes through ``harmony_chat.preferences``; the TUI writes no TOML itself."""
    writers = {"save_config_value", "save_ui_value", "tomlkit"}
    for path in (ROOT / "harmony_chat" / "tui").rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        named = {alias.name for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) for alias in node.names}
        named |= {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
        assert not named & writers, (path, named & writers)


BASE = frozenset({"harmony_chat", "errors", "locations", "private_files", "text_safety"})
"""Plain modules every layer may use: the version, the error types, the app's folders, private files, safe text."""
FORMATS = BASE | {"harmony", "gguf"}
ENGINE = FORMATS | {"backends", "generation"}
CORE = ENGINE | {"tools", "history", "demo", "config", "config_tools", "chat"}
LAYERS: dict[str, frozenset[str]] = {
    # each top-level module or subpackage of harmony_chat: what of harmony_chat it may import (itself always)
    "harmony_chat": frozenset(),
    "errors": frozenset(),
    "locations": frozenset(),
    "private_files": frozenset(),
    "text_safety": frozenset(),
    "collector": frozenset(),
    # the model's formats: harmony reads its vocabulary out of a GGUF, the GGUF code writes harmony's tokens
    "harmony": BASE | {"gguf"},
    "gguf": BASE | {"harmony"},
    "backends": FORMATS,
    "generation": BASE | {"harmony", "backends"},
    "tools": BASE,
    "demo": BASE | {"harmony"},
    "history": BASE | {"harmony", "generation", "tools"},
    "config_section": frozenset(),
    "config_errors": BASE,
    "config_tools": BASE | {"config_section", "tools"},
    "config": BASE | {"config_errors", "config_section", "config_tools", "harmony"},
    "config_reference": BASE | {"config", "config_section"},
    "chat": CORE,
    "preferences": BASE | {"config", "harmony"},
    "printing": BASE | {"harmony", "generation", "chat", "tools"},
    "conform": BASE,
    "server": CORE - {"history", "demo", "config"},
    "bench": CORE | {"printing", "server"},
    "tui": CORE | {"preferences", "server", "collector"},
    "cli": CORE | {"preferences", "printing", "server", "conform", "bench", "tui", "collector"},
    "entry": frozenset({"cli", "collector"}),
    "__main__": frozenset({"entry"}),
}
"""Which layer may import which: data flows up from the formats to the engines, the core and the front ends.

``harmony`` is the format library and imports nothing above it; ``backends`` speak to engines in harmony's
token ids; ``generation`` runs a turn on a backend; the conversation core (``chat``) adds tools and
history; the app (``tui``), the command line (``cli``) and ``serve`` (``server``) sit on top, and ``bench``
measures the layers below the front ends. Imports inside functions and for type checking count too.
"""


def _layer(module: str) -> str:
    return "harmony_chat" if module == "harmony_chat" else module.split(".")[1]


def layer_violations(graph: dict[str, set[str]], layers: dict[str, frozenset[str]]) -> list[str]:
    """Each import in ``graph`` that its module's layer may not make, as ``module -> imported``."""
    return sorted(
        f"{module} -> {imported}"
        for module, imports in graph.items()
        for imported in imports
        if _layer(imported) != _layer(module) and _layer(imported) not in layers.get(_layer(module), frozenset())
    )


def test_every_top_level_module_and_package_has_a_layer_rule() -> None:
    found = {_layer(module) for module in import_graph("harmony_chat")}
    assert found == set(LAYERS), (sorted(found - set(LAYERS)), sorted(set(LAYERS) - found))


def test_each_module_imports_only_what_its_layer_allows() -> None:
    """Every import of the package, at the top, under ``TYPE_CHECKING`` or inside a function, follows :data:`LAYERS`."""
    assert layer_violations(import_graph("harmony_chat", in_functions=True), LAYERS) == []


def test_the_layer_rules_keep_the_formats_pure_and_the_front_ends_on_top() -> None:
    """The rules themselves: what the architecture promises, so the table is not loosened by accident."""
    above_the_formats = {"backends", "generation", "chat", "tools", "history", "tui", "cli", "server", "bench"}
    assert not LAYERS["harmony"] & above_the_formats
    assert LAYERS["backends"] <= FORMATS
    assert LAYERS["generation"] <= FORMATS | {"backends"}
    assert not LAYERS["history"] & {"chat", "tui", "cli", "server", "bench"}
    assert not LAYERS["bench"] & {"cli", "tui"}
    front_ends = {"tui", "cli", "server"}
    below = [layer for layer, allowed in LAYERS.items() if allowed & front_ends and layer not in front_ends]
    assert sorted(below) == ["bench", "entry"], below  # bench measures serve; entry starts the command line
    assert "cli" not in LAYERS["tui"] | LAYERS["server"] and "tui" not in LAYERS["server"]


def test_the_layer_check_finds_a_forbidden_import() -> None:
    graph = {"harmony_chat.harmony.turn": {"harmony_chat.backends.base", "harmony_chat.harmony.tokens"}}
    assert layer_violations(graph, LAYERS) == ["harmony_chat.harmony.turn -> harmony_chat.backends.base"]
    assert layer_violations({"harmony_chat.bench.x": {"harmony_chat.printing.ask_output"}}, LAYERS) == []
    assert layer_violations({"harmony_chat.bench.x": {"harmony_chat.cli.ask_output"}}, LAYERS) != []


def test_the_layers_import_each_other_in_no_circle_but_the_two_formats() -> None:
    """Only harmony and GGUF use each other (a vocabulary read out of a GGUF, harmony's tokens written into one)."""
    rules = {layer: set(allowed) for layer, allowed in LAYERS.items()}
    assert import_cycles(rules) == [["gguf", "harmony"]]


def test_the_package_imports_itself_in_no_circle() -> None:
    """No module imports back one that imports it, not even inside a function or for type checking."""
    assert import_cycles(import_graph("harmony_chat", in_functions=True)) == []
