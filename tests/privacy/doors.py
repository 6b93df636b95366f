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
from tests.transcripts import session

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
    paths = []
    for day in (2, 3):
        for n in range(0, len(FORMATS), PER_SESSION):
            s = session(folder, day, f"planted-{n}", hour=9 + n // PER_SESSION)
            s.user("get the deploy pipeline green again")
            for fmt in FORMATS[n:n + PER_SESSION]:
                command = _command(fmt)
                s.bash(command, f"run the {fmt.name} step", texts[fmt.name]["error"], exit_code=1)
                # What a lesson can name as the fix: a state-changing step, then the same step passing.
                s.bash("make deps", "install what the step needs", "ok", exit_code=0)
                s.bash(command, f"rerun the {fmt.name} step", "ok", exit_code=0)
                s.say(("text", texts[fmt.name]["statement"]))
                s.user(texts[fmt.name]["correction"])
            s.write()
            paths.append(s.path)
    return paths


def _json(run: Run, *argv: str):
    code, out = run(argv)
    if code != 0:
        raise AssertionError(f"commons {' '.join(argv)} exited {code}")
    return json.loads(out)


def planted_home(run: Run, folder: Path) -> dict:
    """Init, publish on, ingest the planted sessions, one night; the night's JSON."""
    for argv in (["init"], ["publish", "on"]):
        assert run(argv)[0] == 0, argv
    for path in plant(folder):
        assert run(["--at", INGEST_AT, "ingest", str(path)])[0] == 0
    return _json(run, "--at", NIGHT, "sleep", "--json")


def mcp_answers(home: Home, queries: Sequence[str]) -> str:
    """What the MCP server's tools answer (the SDK's own call path, in-process): recall for each
    query, then the whole lesson list."""

    async def ask() -> list[str]:
        ctx = Context(home, NIGHT)
        async with await ctx.open_store() as store:
            server = build_server(ctx, store)
            calls = [("recall", {"query": q, "k": 5}) for q in queries] + [("lessons", {"status": "all"})]
            results = [await server.call_tool(name, arguments) for name, arguments in calls]
        return [block.text for r in results for block in r.content]

    return "\n".join(run_trio(ask))


def door_texts(run: Run, home: Home) -> dict[str, str]:
    """The text each door produced from the planted home."""
    at = ("--at", NIGHT)
    out = {"lessons": json.dumps(_json(run, *at, "lessons", "--status", "all", "--json"), ensure_ascii=False)}
    memory = home.data_dir / "memory"
    out["memory folder"] = "\n".join(p.read_text(encoding="utf-8") for p in sorted(memory.glob("*.md")))
    reports = "\n".join(p.read_text(encoding="utf-8") for p in sorted(home.reports_dir.glob("*.md")))
    out["report"] = reports + json.dumps(_json(run, *at, "report", "--since", "2026-11-01T00:00Z", "--json"))
    queries = [" ".join(f.error.splitlines()[1:3]) or f.name for f in FORMATS]
    out["recall"] = "\n".join(json.dumps(_json(run, *at, "recall", q, "-k", "5", "--json"), ensure_ascii=False)
                              for q in queries)
    out["mcp"] = mcp_answers(home, queries)
    code, exported = run([*at, "export"])
    assert code == 0
    out["export"] = exported
    return out
