"""The layers are a test: each layer imports only what is below it (docs/architecture.md).

An ast check over every import in the tree, function-local ones included (a lazy import is still
an arrow). A violation fails with the offending file, line and import named. The rules:

* the core (``commons.core``) imports nothing of the project outside the core;
* the store imports no net, node, daemon or face (``commons.cli``, ``commons.mcp_server``);
* render targets and transcript readers import no node, net, daemon or face;
* the node layer imports no net, daemon or face;
* the network simulator (``simulations/`` minus ``simulations/experiment/``, which runs whole nodes)
  imports no store, net, daemon or face: it drives the core, not sockets.
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


RULES = (
    Rule("commons.core", (), only=("commons.core",)),
    Rule("commons.store", ("commons.net", "commons.node", "commons.daemon", *FACE)),
    Rule("commons.render", ("commons.store", "commons.node", "commons.net", "commons.daemon", *FACE)),
    Rule("commons.ingest", ("commons.node", "commons.net", "commons.daemon", *FACE)),
    Rule("commons.node", ("commons.net", "commons.daemon", *FACE)),
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


def test_a_planted_violation_fails_naming_the_file_line_and_import(tmp_path: Path):
    _plant(tmp_path, "commons/core/fine.py", "import json\nfrom .records import Lesson\n")
    _plant(tmp_path, "commons/core/bad.py", "import json\n\n\ndef later():\n    from commons.store import db\n")
    _plant(tmp_path, "commons/node/leaky.py", "from commons.net import transport\n")
    _plant(tmp_path, "simulations/sim.py", "from commons.core import gossip\nimport commons.store.db\n")
    _plant(tmp_path, "simulations/experiment/harness.py", "from commons.store import db\n")  # its own layer
    found = violations(tmp_path)
    assert sorted(map(str, found)) == [
        "commons/core/bad.py:5: commons.core.bad imports commons.store.db (layer commons.core)",
        "commons/node/leaky.py:1: commons.node.leaky imports commons.net.transport (layer commons.node)",
        "simulations/sim.py:2: simulations.sim imports commons.store.db (layer simulations)",
    ]
