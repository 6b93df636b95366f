"""Loading the vector generators of protocol/vectors/ (scripts, not a package) from tests."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

VECTORS_DIR = Path(__file__).resolve().parents[2] / "protocol" / "vectors"


def load_generator(name: str) -> ModuleType:
    """``load_generator("gossip")`` is protocol/vectors/generate_gossip.py as a module."""
    path = VECTORS_DIR / f"generate_{name}.py"
    spec = importlib.util.spec_from_file_location(path.stem, path)
    assert spec is not None and spec.loader is not None, f"no generator at {path}"
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def generator_names() -> list[str]:
    return sorted(p.stem.removeprefix("generate_") for p in VECTORS_DIR.glob("generate_*.py"))
