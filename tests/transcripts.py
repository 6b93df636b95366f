"""Small Claude Code transcripts for tests, in the real format (the demo sessions' writer).

``commons/demo/sessions/_build.py`` writes records exactly as Claude Code 2.1 does (split
assistant messages, hook progress records, tool results with ``toolUseResult``); these helpers
reuse its ``Session`` to write one scripted session into a test folder, and run the CLI in-process.
"""

from __future__ import annotations

import json
from pathlib import Path

from commons.cli import main
from commons.demo.sessions._build import PIP_EXTERNALLY_MANAGED, Session

CWD = "/home/dev/ledger"


def session(folder: Path, day: int, slug: str, *, hour: int = 9, cwd: str = CWD) -> Session:
    """A session on 2026-11-<day> at <hour>:07 UTC, written to ``folder/day-DD-<slug>.jsonl``."""
    s = Session("test", day, slug, cwd, "main", hour)
    s.path = folder / f"day-{day:02d}-{slug}.jsonl"
    return s


def pip_fails(s: Session, package: str) -> None:
    s.bash(f"pip install {package}", f"Install {package}", PIP_EXTERNALLY_MANAGED, exit_code=1)


def cli(capsys, *argv: str, at: str | None = None) -> tuple[int, str, str]:
    """Run `commons [--at AT] ARGV` in-process: (exit code, stdout, stderr)."""
    code = main((["--at", at] if at else []) + list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def cli_json(capsys, *argv: str, at: str | None = None):
    code, out, err = cli(capsys, *argv, "--json", at=at)
    assert code == 0, err
    return json.loads(out)


def lessons_after_a_night(capsys, paths, night: str = "2026-11-07"):
    """`commons init`, the sessions at ``paths`` ingested the evening before ``night``, one sleep
    that night: every lesson (any status) the next morning."""
    day = int(night[-2:])
    cli_json(capsys, "init")
    cli_json(capsys, "ingest", *map(str, paths), at=f"{night[:-2]}{day - 1:02d}T18:00Z")
    cli_json(capsys, "sleep", at=f"{night}T03:00Z")
    return cli_json(capsys, "lessons", "--status", "all", at=f"{night}T04:00Z")


def lesson_about(capsys, words: str, make_session, days=(3, 4)) -> dict:
    """The one lesson whose text holds ``words``, after a night over ``make_session(day)`` of each day."""
    (lesson,) = [l for l in lessons_after_a_night(capsys, [make_session(day) for day in days]) if words in l["text"]]
    return lesson
