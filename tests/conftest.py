"""Shared fixtures: an asyncio bridge for store tests, and homes for CLI tests."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import trio_asyncio

from commons.home import Home

SHARED_DIR = Path(os.environ.get("COMMONS_SHARED_DIR", Path(__file__).resolve().parents[2] / "shared"))


@pytest.fixture
async def aio():
    """Open the trio-asyncio loop that aiosqlite needs, as every commons process does."""
    async with trio_asyncio.open_loop() as loop:
        yield loop


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Home:
    """A fresh COMMONS_HOME for the test, set in the environment."""
    root = tmp_path / "home"
    monkeypatch.setenv("COMMONS_HOME", str(root))
    monkeypatch.delenv("COMMONS_AT", raising=False)
    return Home.from_environment()


@pytest.fixture(autouse=True)
def _person_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test runs with a ``HOME`` of its own: the machine's ``~/.claude`` is never read or written
    (rendering into Claude Code's auto memory is on by default where ``~/.claude/projects`` exists)."""
    user = tmp_path_factory.mktemp("user-home")
    monkeypatch.setenv("HOME", str(user))
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    monkeypatch.delenv("CLAUDE_CODE_DISABLE_AUTO_MEMORY", raising=False)
    return user


def pytest_terminal_summary(terminalreporter, config: pytest.Config) -> None:
    """Say which random order ran (pytest-randomly), even under -q, so a failure that depends on
    the order can be run again in that order."""
    seed = getattr(config.option, "randomly_seed", None)
    if isinstance(seed, int) and config.pluginmanager.hasplugin("randomly"):
        terminalreporter.write_line(f"random order: the same again with `-p randomly --randomly-seed={seed}`")
