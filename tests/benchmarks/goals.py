"""What a benchmark says of its goals, in the one shape ``tests/benchmarks/table.py`` tabulates.

A bench's ``--json`` object carries ``"goals": [goal(...), ...]``; ``make bench`` writes it to
``.bench/<bench>.json`` and the table in ``docs/benchmarks.md`` is made from those files alone.
``BENCH_QUICK=1`` asks a bench for its quick run (smaller sizes), which the table says it was.
"""

from __future__ import annotations

import os
from typing import Any

QUICK = "BENCH_QUICK"


def goal(what: str, figure: str, target: str, met: bool, command: str) -> dict[str, Any]:
    """One goal: what is measured, the measured figure as text, the target, whether it was met,
    and the command that reproduces the figure."""
    return {"goal": what, "figure": figure, "target": target, "met": bool(met), "command": command}


def quick() -> bool:
    """Whether this run is ``make bench``'s quick one (``BENCH_QUICK=1``)."""
    return os.environ.get(QUICK, "") not in ("", "0")
