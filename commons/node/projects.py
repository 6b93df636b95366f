"""The names a node's projects go by, for telling a local lesson from a shared one and for
generalising what is particular to a project (``<project>``)."""

from __future__ import annotations

from collections.abc import Iterable

from commons.core.learning import is_distinctive_name, project_aliases
from commons.integrations.claude_code import project_at


def project_names(workdirs: Iterable[str]) -> tuple[str, ...]:
    """Every name the projects at ``workdirs`` go by (folder, origin, worktrees, in each case):
    a lesson that names one is local to it. A common word ("Code", "Windows", "power") is no
    project's name, even when a folder is called so: it would turn ordinary words into <project>."""
    paths = sorted(set(workdirs))
    names = [*project_aliases(paths), *(n for w in paths for n in project_at(w).names)]
    return tuple(dict.fromkeys(n for n in names if is_distinctive_name(n)))
