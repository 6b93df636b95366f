"""The names a node's projects go by, for telling a local lesson from a shared one and for
generalising what is particular to a project (``<project>``)."""

from __future__ import annotations

import json
import re
import tomllib
from collections.abc import Iterable
from pathlib import Path

from commons.core.learning import is_distinctive_name, project_aliases
from commons.integrations.claude_code import project_at

# Folder names every project has: no project's own name.
_GENERIC_MODULES = frozenset("""src lib libs app apps test tests docs doc scripts tools bin build dist
    core common utils util internal pkg cmd examples example vendor node_modules migrations static
    templates config settings site public assets data fixtures benchmarks""".split())


def _manifest_names(root: Path) -> list[str]:
    """The names a project's manifests declare: pyproject.toml, package.json, Cargo.toml, go.mod,
    mix.exs. A file that does not parse names nothing (it is the person's, not ours to judge)."""
    names: list[str] = []
    for file, read in (("pyproject.toml", lambda d: [d.get("project", {}).get("name"),
                                                      d.get("tool", {}).get("poetry", {}).get("name")]),
                       ("Cargo.toml", lambda d: [d.get("package", {}).get("name")])):
        try:
            names += read(tomllib.loads((root / file).read_text(encoding="utf-8")))
        except (OSError, ValueError, AttributeError):
            pass
    try:
        names.append(json.loads((root / "package.json").read_text(encoding="utf-8")).get("name"))
    except (OSError, ValueError, AttributeError):
        pass
    for file, pattern in (("go.mod", r"^module\s+(\S+)"), ("mix.exs", r"app:\s*:(\w+)")):
        try:
            found = re.search(pattern, (root / file).read_text(encoding="utf-8"), re.M)
        except OSError:
            continue
        if found:
            names.append(found.group(1).rsplit("/", 1)[-1])
    return [n.split("/")[-1].lstrip("@") for n in names if isinstance(n, str) and n]


def _module_names(root: Path) -> list[str]:
    """Top-level packages: folders holding an ``__init__.py`` at the root or under src/."""
    found = []
    for base in (root, root / "src"):
        try:
            found += [p.name for p in base.iterdir() if p.is_dir() and (p / "__init__.py").exists()]
        except OSError:
            continue
    return found


def declared_names(root: Path) -> list[str]:
    """A project's own names beyond its folder: the package names its manifests declare and its
    top-level module names (``zebrafish_billing`` of a folder called ``api``). Whole names only:
    the parts of a package name are often ordinary words (``memory`` of ``commons-memory``)."""
    out: list[str] = []
    for name in [*_manifest_names(root), *_module_names(root)]:
        if name.lower() not in _GENERIC_MODULES and name not in out:
            out.append(name)
    return out


def project_names(workdirs: Iterable[str]) -> tuple[str, ...]:
    """Every name the projects at ``workdirs`` go by (folder, origin, worktrees, the package and
    module names its manifests declare, in each case): a lesson that names one is local to it.
    A common word ("Code", "Windows", "power") is no project's name, even when a folder is called
    so: it would turn ordinary words into <project>."""
    paths = sorted(set(workdirs))
    projects = [project_at(w) for w in paths]
    names = [*project_aliases(paths), *(n for p in projects for n in p.names),
             *(n for root in dict.fromkeys(p.root for p in projects) for n in declared_names(Path(root)))]
    return tuple(dict.fromkeys(n for n in names if is_distinctive_name(n)))
