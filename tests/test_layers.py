"""The layers are a test: each layer imports only what is below it (docs/architecture.md).

An ast check over every import in the tree, function-local ones included (a lazy import is still
an arrow). A violation fails with the offending file, line and import named. The rules:

* the core (``commons.core``) imports nothing of the project outside the core;
* the store imports no net, node, daemon or face (``commons.cli``, ``commons.mcp_server``);
* render targets and transcript readers import no node, net, daemon or face;
* the node layer imports no net, daemon or face;
* the two faces stand side by side over the node layer: the MCP server (``commons.mcp_server``)
  imports nothing of the command line (``commons.cli``), nor the command line of the MCP server;
  only the launcher (``commons.launch``) knows both;
* the network simulator (``simulations/`` minus ``simulations/experiment/``, which runs whole nodes)
  imports no store, net, daemon or face: it drives the core, not sockets;
* inside the core, each concept is a package that imports only the packages below it
  (``CORE_PACKAGES``, the table in docs/architecture.md), and from outside a package only what its
  ``__init__`` names: never one of its modules;
* nothing in the tree imports itself round a circle.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FACE = ("commons.cli", "commons.mcp_server")


@dataclass(frozen=True)
class Rule:
    layer: str  # a package (dotted), whose modules the rule governs
    forbidden: tuple[str, ...]  # packages or modules it may not import
    only: tuple[str, ...] = ()  # if given: of the project's own packages, it may import only these
    exempt: tuple[str, ...] = ()  # subpackages of ``layer`` that are a layer of their own


# The core's packages from the bottom up, each with the packages it may import (besides itself).
CORE_PACKAGES = {
    "policy": (),
    "embedding": (),
    "transport": (),
    "records": ("policy",),
    "reconcile": ("records",),
    "learning": ("records", "policy", "embedding"),
    "recall": ("learning", "embedding", "records"),
    "trust": ("records", "policy", "learning"),
    "gossip": ("records", "reconcile", "trust"),
}
CORE_RULES = tuple(Rule(f"commons.core.{package}", (), only=tuple(f"commons.core.{p}" for p in (package, *below)))
                   for package, below in CORE_PACKAGES.items())

RULES = (
    Rule("commons.core", (), only=("commons.core",)),
    *CORE_RULES,
    Rule("commons.store", ("commons.net", "commons.node", "commons.daemon", *FACE)),
    Rule("commons.render", ("commons.store", "commons.node", "commons.net", "commons.daemon", *FACE)),
    Rule("commons.ingest", ("commons.node", "commons.net", "commons.daemon", *FACE)),
    Rule("commons.node", ("commons.net", "commons.daemon", *FACE)),
    Rule("commons.mcp_server", ("commons.cli", "commons.launch")),
    Rule("commons.cli", ("commons.mcp_server", "commons.launch")),
    Rule("simulations", ("commons.store", "commons.net", "commons.daemon", "commons.ingest", *FACE),
         exempt=("simulations.experiment",)),
)
PROJECT = ("commons", "simulations")


@dataclass(frozen=True)
class Violation:
    path: Path
    line: int
    module: str
    imported: str
    rule: Rule

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.module} imports {self.imported} (layer {self.rule.layer})"


def module_name(root: Path, path: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imports_of(root: Path, path: Path) -> Iterator[tuple[int, str]]:
    """Every module ``path`` imports (absolute names, relative ones resolved), with its line."""
    name = module_name(root, path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            # ``from commons.node import review`` imports commons.node.review: name each one
            for alias in node.names:
                yield node.lineno, f"{target}.{alias.name}" if alias.name != "*" else target


def within(name: str, package: str) -> bool:
    return name == package or name.startswith(package + ".")


def violations(root: Path, rules: tuple[Rule, ...] = RULES) -> list[Violation]:
    found = []
    for rule in rules:
        folder = root.joinpath(*rule.layer.split("."))
        for path in sorted(folder.rglob("*.py")):
            module = module_name(root, path)
            if any(within(module, exempt) for exempt in rule.exempt):
                continue
            for line, imported in imports_of(root, path):
                if not any(within(imported, p) for p in PROJECT):
                    continue  # the standard library and third parties are not layers
                bad = any(within(imported, f) for f in rule.forbidden) or (
                    rule.only and not any(within(imported, o) for o in rule.only))
                if bad:
                    found.append(Violation(path.relative_to(root), line, module, imported, rule))
    return found


def test_every_layer_imports_only_what_is_below_it():
    found = violations(ROOT)
    assert not found, "imports that cross a layer:\n" + "\n".join(map(str, found))


def test_each_rule_governs_a_folder_that_exists():
    for rule in RULES:
        assert ROOT.joinpath(*rule.layer.split(".")).is_dir(), rule.layer


def _plant(root: Path, relative: str, text: str) -> None:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    for parent in path.relative_to(root).parents:
        if parent != Path("."):
            (root / parent / "__init__.py").touch()
    path.write_text(text, encoding="utf-8")


def surface_violations(root: Path) -> list[str]:
    """Imports, from outside a core package, of one of its modules rather than of the package."""
    found = []
    core = root / "commons" / "core"
    packages = {p.name for p in core.iterdir() if (p / "__init__.py").is_file()}
    for folder in ("commons", "simulations"):
        for path in sorted((root / folder).rglob("*.py")):
            module = module_name(root, path)
            for line, imported in imports_of(root, path):
                parts = imported.split(".")
                if parts[:2] != ["commons", "core"] or len(parts) < 4 or parts[2] not in packages:
                    continue
                package = ".".join(parts[:3])
                inner = core.joinpath(parts[2], *parts[3:4])
                is_module = inner.with_suffix(".py").is_file() or (inner / "__init__.py").is_file()
                if is_module and not within(module, package):
                    found.append(f"{path.relative_to(root)}:{line}: {module} imports {imported}, "
                                 f"a module of {package}: import what {package} names instead")
    return found


def import_circles(root: Path) -> list[list[str]]:
    """Every set of the project's modules that import each other round a circle (Tarjan)."""
    paths = {module_name(root, p): p for folder in PROJECT for p in (root / folder).rglob("*.py")}

    def resolve(name: str) -> str:
        while name and name not in paths:
            name = name.rpartition(".")[0]
        return name

    graph = {m: sorted({t for _, i in imports_of(root, p) if (t := resolve(i)) and t != m})
             for m, p in paths.items()}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    circles = []
    for start in sorted(graph):  # iterative Tarjan: the tree is deeper than Python's recursion allows
        if start in index:
            continue
        work = [(start, iter(graph[start]))]
        index[start] = low[start] = len(index)
        stack.append(start)
        while work:
            node, edges = work[-1]
            for nxt in edges:
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    work.append((nxt, iter(graph[nxt])))
                    break
                if nxt in stack:
                    low[node] = min(low[node], index[nxt])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    circle = []
                    while True:
                        member = stack.pop()
                        circle.append(member)
                        if member == node:
                            break
                    if len(circle) > 1:
                        circles.append(sorted(circle))
    return circles


def test_core_packages_are_imported_only_through_what_they_name():
    found = surface_violations(ROOT)
    assert not found, "imports of a core package's modules from outside it:\n" + "\n".join(found)


def test_each_core_package_names_its_surface():
    import importlib

    for package in CORE_PACKAGES:
        module = importlib.import_module(f"commons.core.{package}")
        assert module.__doc__ and module.__all__, package
        missing = [name for name in module.__all__ if not hasattr(module, name)]
        assert not missing, f"commons.core.{package}.__all__ names what it does not hold: {missing}"
    on_disk = {p.name for p in (ROOT / "commons" / "core").iterdir() if (p / "__init__.py").is_file()}
    assert on_disk == set(CORE_PACKAGES), "a core package missing from CORE_PACKAGES (or gone)"
    assert not [p.name for p in (ROOT / "commons" / "core").glob("*.py") if p.name != "__init__.py"], \
        "the core holds packages only"


# Circles allowed for now: none (a circle means one concept is in the wrong room).
KNOWN_CIRCLES: list[list[str]] = []


def test_no_module_imports_itself_round_a_circle():
    circles = [c for c in import_circles(ROOT) if c not in KNOWN_CIRCLES]
    assert not circles, "import circles:\n" + "\n".join(" <-> ".join(c) for c in circles)


def test_a_planted_circle_and_a_reach_into_a_package_are_found(tmp_path: Path):
    _plant(tmp_path, "commons/core/gossip/__init__.py", "from commons.core.gossip.node import Node\n")
    _plant(tmp_path, "commons/core/gossip/node.py", "from commons.core.gossip.session import S\n")
    _plant(tmp_path, "commons/core/gossip/session.py", "def later():\n    from commons.core.gossip import node\n")
    _plant(tmp_path, "commons/node/peers.py", "from commons.core.gossip.node import Node\n"
                                              "from commons.core.gossip import Node as N\n")
    assert import_circles(tmp_path) == [["commons.core.gossip.node",
                                         "commons.core.gossip.session"]]
    assert surface_violations(tmp_path) == [
        "commons/node/peers.py:1: commons.node.peers imports commons.core.gossip.node.Node, a module of "
        "commons.core.gossip: import what commons.core.gossip names instead"]


def test_a_planted_violation_fails_naming_the_file_line_and_import(tmp_path: Path):
    _plant(tmp_path, "commons/core/fine.py", "import json\nfrom .records import Lesson\n")
    _plant(tmp_path, "commons/core/bad.py", "import json\n\n\ndef later():\n    from commons.store import db\n")
    _plant(tmp_path, "commons/node/leaky.py", "from commons.net import transport\n")
    _plant(tmp_path, "simulations/sim.py", "from commons.core import gossip\nimport commons.store.db\n")
    _plant(tmp_path, "simulations/experiment/harness.py", "from commons.store import db\n")  # its own layer
    _plant(tmp_path, "commons/mcp_server/tools.py", "from commons.cli.context import Context\n")
    _plant(tmp_path, "commons/cli/mcp.py", "def later():\n    from commons.mcp_server import main\n")
    _plant(tmp_path, "commons/launch.py", "from commons import cli, mcp_server\n")  # above both faces
    found = violations(tmp_path)
    assert sorted(map(str, found)) == [
        "commons/cli/mcp.py:2: commons.cli.mcp imports commons.mcp_server.main (layer commons.cli)",
        "commons/core/bad.py:5: commons.core.bad imports commons.store.db (layer commons.core)",
        "commons/mcp_server/tools.py:1: commons.mcp_server.tools imports commons.cli.context.Context "
        "(layer commons.mcp_server)",
        "commons/node/leaky.py:1: commons.node.leaky imports commons.net.transport (layer commons.node)",
        "simulations/sim.py:2: simulations.sim imports commons.store.db (layer simulations)",
    ]


def test_the_architecture_doc_lists_the_core_packages_as_the_test_holds_them():
    doc = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    table = doc.split("<!-- core-packages:", 1)[1].split("<!-- /core-packages -->", 1)[0]
    rows = {}
    for line in table.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 3 and cells[0].startswith("`"):
            rows[cells[0].strip("`")] = tuple(c.strip().strip("`") for c in cells[2].split(",") if c.strip() != "—")
    assert rows == CORE_PACKAGES
