"""The README's install route works today: the clone installed into a fresh virtualenv (what
`pipx install .` and `uv tool install .` do: build a wheel from the folder and install it in a venv
of its own), then the installed `commons` runs, finds the data it ships and answers MCP.

It needs the package index (or pip's cache) for the dependencies: marked slow, and skipped, not
failed, when the index cannot be reached."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _source_copy(target: Path) -> Path:
    """The clone's files as git sees them (tracked and new, not ignored): no build/ or egg-info left
    behind in the checkout."""
    listed = subprocess.run(["git", "ls-files", "-co", "--exclude-standard"], cwd=ROOT, capture_output=True,
                            text=True, check=True).stdout.splitlines()
    for name in listed:
        source = ROOT / name
        if source.is_file():
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / name)
    return target


@pytest.mark.slow
def test_the_clone_installs_into_a_fresh_venv_and_the_installed_commons_runs(tmp_path):
    clone = _source_copy(tmp_path / "clone")
    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=True)
    python = env_dir / "bin" / "python"
    installed = subprocess.run([str(python), "-m", "pip", "install", "--quiet", str(clone)], capture_output=True,
                               text=True, timeout=900)
    if installed.returncode != 0 and ("NewConnectionError" in installed.stderr or "No matching distribution"
                                      in installed.stderr and "Could not fetch" in installed.stderr):
        pytest.skip(f"the package index cannot be reached: {installed.stderr.strip().splitlines()[-1]}")
    assert installed.returncode == 0, installed.stderr
    commons = env_dir / "bin" / "commons"
    env = {**os.environ, "COMMONS_HOME": str(tmp_path / "home"), "HOME": str(tmp_path)}
    env.pop("PYTHONPATH", None)

    def run(*argv: str, stdin: str | None = None) -> subprocess.CompletedProcess:
        return subprocess.run([str(commons), *argv], input=stdin, capture_output=True, text=True, env=env,
                              cwd=tmp_path, timeout=120)

    assert run("--version").stdout.startswith("commons ")
    assert run("init").returncode == 0
    hello = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
             "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}}
    answered = run("mcp", stdin=json.dumps(hello) + "\n")  # the handshake answers ship in the wheel
    assert answered.returncode == 0, answered.stderr
    assert json.loads(answered.stdout.splitlines()[0])["result"]["serverInfo"]["name"] == "commons"
    shipped = subprocess.run([str(python), "-c", "import commons, pathlib; root = pathlib.Path(commons.__file__).parent; "
                              "print(root); print(len(list((root / 'demo' / 'sessions').rglob('*.jsonl'))))"],
                             capture_output=True, text=True, env=env, cwd=tmp_path, check=True).stdout.split()
    assert not shipped[0].startswith(str(ROOT)) and int(shipped[1]) > 0  # the demo's sessions, from the venv
