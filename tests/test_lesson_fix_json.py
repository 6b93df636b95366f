"""The evidence is data: `commons lessons --json` and `commons why` carry each error lesson's fix."""

from __future__ import annotations

from pathlib import Path

from commons.home import Home
from tests.transcripts import cli, cli_json, pip_fails, session


def _sessions(folder: Path) -> list[Path]:
    """Two sessions where `pip install` is refused and retried through uv (the fix, proven), and
    two where `cargo build` fails and is never tried again (no fix seen)."""
    paths = []
    for day, package in ((3, "httpx"), (4, "orjson")):
        s = session(folder, day, f"pip-{package}")
        s.user(f"add {package}")
        pip_fails(s, package)
        s.bash("git status --short", "Look around", " M pyproject.toml")
        s.bash(f"uv add {package}", f"Add {package} with uv", f"Resolved 12 packages\n + {package}==1.0.0")
        s.say(("text", f"Added {package} with uv."))
        s.write()
        paths.append(s.path)
    for day in (5, 6):
        s = session(folder, day, f"cargo-{day}")
        s.user("build the crate")
        s.bash("cargo build", "Build", "error: linker `cc` not found\n  |\n  = note: No such file or directory",
               exit_code=101)
        s.say(("text", "The linker is missing on this machine; I stopped there."))
        s.write()
        paths.append(s.path)
    return paths


def test_lessons_json_and_why_carry_the_proven_fix_or_null(tmp_path: Path, capsys, home: Home):
    paths = _sessions(tmp_path / "t")
    cli_json(capsys, "init")
    cli_json(capsys, "ingest", *map(str, paths), at="2026-11-06T18:00Z")
    cli_json(capsys, "sleep", at="2026-11-07T03:00Z")
    lessons = cli_json(capsys, "lessons", "--status", "all", at="2026-11-07T04:00Z")
    (pip,) = [l for l in lessons if l["text"].startswith("`pip install`")]
    assert pip["fix"] == {"step": "uv add <package>", "evidence": "retry-changed", "sessions": 2,
                          "confidence": 0.8, "text": "`uv add <package>` succeeded after it", "danger": None}
    assert pip["text"].endswith("`uv add <package>` succeeded after it (2 of 2 sessions).")
    assert pip["fix_refuted"] == []
    (cargo,) = [l for l in lessons if l["text"].startswith("`cargo build`")]
    assert cargo["fix"] is None and "no fix was seen" in cargo["text"]
    why = cli_json(capsys, "why", pip["id"][:12], at="2026-11-07T04:00Z")
    assert why["fix"]["step"] == "uv add <package>" and why["fix"]["sessions"] == 2
    _, out, _ = cli(capsys, "why", cargo["id"][:12], at="2026-11-07T04:00Z")
    assert "fix: no fix was seen in its sessions" in out
