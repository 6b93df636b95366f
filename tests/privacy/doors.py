"""The corpus planted in real Claude Code transcripts, and the text each door produces from them.

Shared by tests/test_privacy_doors.py (which asserts nothing leaks) and
tests/benchmarks/bench_privacy_doors.py (`make privacy-report`, which counts per door). ``run`` is
how the caller runs one `commons` command in-process and gets its stdout: (argv) -> (code, out).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path

from commons.cli.context import Context
from commons.home import Home
from commons.mcp_server.tools import build_server
from commons.runtime import run as run_trio
from tests.privacy.corpus import FORMATS, Format, cases
from tests.privacy.personal import CASES as PERSONAL, Personal
from tests.transcripts import cli, session

WINDOW = 8  # no run of this many characters of a planted value may survive
INGEST_AT = "2026-11-04T18:00Z"
NIGHT = "2026-11-05T03:00Z"
PER_SESSION = 5
DOORS = ("lessons", "memory folder", "report", "recall", "mcp", "export")
Run = Callable[[Sequence[str]], tuple[int, str]]


def leaks(secret: str, text: str) -> list[str]:
    """The runs of ``WINDOW`` characters of ``secret`` found in ``text`` (all of it, if shorter)."""
    if len(secret) <= WINDOW:
        return [secret] if secret in text else []
    return [secret[i:i + WINDOW] for i in range(len(secret) - WINDOW + 1) if secret[i:i + WINDOW] in text]


def _command(fmt: Format) -> str:
    first = fmt.error.splitlines()[0]
    return first[2:].format(s=fmt.secret) if first.startswith("$ ") else f"make {fmt.name}"


def plant(folder: Path) -> list[Path]:
    """Every format as a failed command's output, the agent's statement and the person's
    correction, a few formats per session, on two days (a lesson needs a repeat)."""
    texts: dict[str, dict[str, str]] = {}
    for c in cases():
        texts.setdefault(c.format.name, {})[c.context] = c.text

    def steps(s, fmt: Format) -> None:
        command = _command(fmt)
        s.bash(command, f"run the {fmt.name} step", texts[fmt.name]["error"], exit_code=1)
        # What a lesson can name as the fix: a state-changing step, then the same step passing.
        s.bash("make deps", "install what the step needs", "ok", exit_code=0)
        s.bash(command, f"rerun the {fmt.name} step", "ok", exit_code=0)
        s.say(("text", texts[fmt.name]["statement"]))
        s.user(texts[fmt.name]["correction"])

    return _sessions(folder, "planted", "get the deploy pipeline green again", FORMATS, steps)


def _sessions(folder: Path, slug: str, request: str, items: Sequence, steps: Callable) -> list[Path]:
    """``items`` a few per session (``steps(session, item)`` each), on two days: a lesson needs a repeat."""
    paths = []
    for day in (2, 3):
        for n in range(0, len(items), PER_SESSION):
            s = session(folder, day, f"{slug}-{n}", hour=9 + n // PER_SESSION)
            s.user(request)
            for item in items[n:n + PER_SESSION]:
                steps(s, item)
            s.write()
            paths.append(s.path)
    return paths


def _personal_steps(s, case: Personal) -> None:
    """One case as a session shows it: in a failure's output, in the command that then worked,
    or in what the person said after a failure."""
    if case.where == "error":
        s.bash(case.command, "run it", case.text, exit_code=1)
        s.bash(f"{case.command} --verbose", "run it again", "ok", exit_code=0)
    elif case.where == "fix":
        failing = " ".join(case.command.replace(case.value, "").split())
        s.bash(failing, "run it", case.text, exit_code=1)
        s.bash(case.command, "run it with the value", "ok", exit_code=0)
    else:
        s.bash(case.command, "run it", "error: the step failed", exit_code=1)
        s.user(case.text)
        s.bash(f"{case.command} --again", "run it as the person said", "ok", exit_code=0)


def plant_personal(folder: Path, cases: Sequence[Personal] = PERSONAL) -> list[Path]:
    """Every personal-details case in real Claude Code transcripts, a few per session, on two days."""
    return _sessions(folder, "personal", "get the release out today", cases, _personal_steps)


def personal_home(run: Run, folder: Path) -> dict:
    """Init, publish on, ingest the personal-details sessions, one night; the night's JSON."""
    return _one_night(run, plant_personal(folder))


def personal_queries(cases: Sequence[Personal] = PERSONAL) -> list[str]:
    return [c.text.splitlines()[0] if c.where != "said" else c.command for c in cases]


def _json(run: Run, *argv: str):
    code, out = run(argv)
    if code != 0:
        raise AssertionError(f"commons {' '.join(argv)} exited {code}")
    return json.loads(out)


def _one_night(run: Run, paths: Sequence[Path]) -> dict:
    for argv in (["init"], ["publish", "on"]):
        assert run(argv)[0] == 0, argv
    for path in paths:
        assert run(["--at", INGEST_AT, "ingest", str(path)])[0] == 0
    return _json(run, "--at", NIGHT, "sleep", "--json")


def planted_home(run: Run, folder: Path) -> dict:
    """Init, publish on, ingest the planted sessions, one night; the night's JSON."""
    return _one_night(run, plant(folder))


def runner(capsys) -> Run:
    """``run`` for a test: the CLI in-process, its stdout."""
    def run(argv):
        code, out, _ = cli(capsys, *argv)
        return code, out
    return run


def mcp_answers(home: Home, queries: Sequence[str]) -> str:
    """What the MCP server's tools answer (the SDK's own call path, in-process): recall for each
    query, then the whole lesson list."""

    async def ask() -> list[str]:
        ctx = Context(home, NIGHT)
        async with await ctx.open_store() as store:
            server = build_server(ctx, store)
            # every project's: the door must hold for whatever the agent can ask for
            calls = [("recall", {"query": q, "k": 5, "all_projects": True}) for q in queries] + [
                ("lessons", {"which": "all", "all_projects": True})]
            results = [await server.call_tool(name, arguments) for name, arguments in calls]
        return [block.text for r in results for block in r.content]

    return "\n".join(run_trio(ask))


def door_texts(run: Run, home: Home, queries: Sequence[str] | None = None) -> dict[str, str]:
    """The text each door produced from the planted home (recall asked ``queries``, by default
    each format's error)."""
    at = ("--at", NIGHT)
    out = {"lessons": json.dumps(_json(run, *at, "lessons", "--status", "all", "--json"), ensure_ascii=False)}
    memory = home.data_dir / "memory"
    out["memory folder"] = "\n".join(p.read_text(encoding="utf-8") for p in sorted(memory.glob("*.md")))
    reports = "\n".join(p.read_text(encoding="utf-8") for p in sorted(home.reports_dir.glob("*.md")))
    out["report"] = reports + json.dumps(_json(run, *at, "report", "--since", "2026-11-01T00:00Z", "--json"))
    if queries is None:
        queries = [" ".join(f.error.splitlines()[1:3]) or f.name for f in FORMATS]
    out["recall"] = "\n".join(json.dumps(_json(run, *at, "recall", q, "-k", "5", "--json"), ensure_ascii=False)
                              for q in queries)
    out["mcp"] = mcp_answers(home, queries)
    code, exported = run([*at, "export"])
    assert code == 0
    out["export"] = exported
    return out
