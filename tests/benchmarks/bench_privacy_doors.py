"""Formats caught per door, false positives, and personal details per door: `make privacy-report`
(the tables in docs/privacy.md).

Plants every format of tests/privacy/corpus.py in real Claude Code transcripts (a failed command's
output, the agent's statement, the person's correction; tests/privacy/doors.py) in a fresh home,
then ingest, one night (render, report, auto-publish with `commons publish on`), recall, the MCP
tools and export. A format is caught at a door when no 8 characters of its value reach that door's
text. False positives: the benign strings of the corpus that the scrubber changes at all, and the
placeholders that reach each door from a second home planted with the benign strings only.
Personal details (tests/privacy/personal.py: names, addresses, national ids, bank details, internal
hosts, ``user@host``, command-line passwords; in error output, fix commands and the person's words)
are planted in a third home the same way; a case reaches a door when 8 characters of its value do.

    .venv/bin/python -m tests.benchmarks.bench_privacy_doors          # the table
    .venv/bin/python -m tests.benchmarks.bench_privacy_doors --json   # for a script
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from commons.cli import main as commons  # noqa: E402
from commons.core.policy.scrubber import PLACEHOLDER, scrub  # noqa: E402
from commons.home import Home  # noqa: E402
from tests.privacy import doors  # noqa: E402
from tests.privacy.corpus import BENIGN, FORMATS  # noqa: E402
from tests.privacy.personal import CASES  # noqa: E402
from tests.transcripts import session  # noqa: E402


def _run(argv) -> tuple[int, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = commons(list(argv))
    return code, out.getvalue()


@contextlib.contextmanager
def _home(root: Path):
    before = os.environ.get("COMMONS_HOME")
    os.environ["COMMONS_HOME"] = str(root)
    try:
        yield Home.from_environment()
    finally:
        if before is None:
            os.environ.pop("COMMONS_HOME", None)
        else:
            os.environ["COMMONS_HOME"] = before


def _benign_sessions(folder: Path) -> list[Path]:
    paths = []
    for day in (2, 3):
        s = session(folder, day, "benign")
        s.user("run the checks")
        for i, line in enumerate(BENIGN):
            s.bash(f"make check-{i}", "check", line, exit_code=1)
            s.say(("text", f"I looked at it: {line}"))
        s.write()
        paths.append(s.path)
    return paths


def measure(root: Path) -> dict:
    started = time.perf_counter()
    with _home(root / "planted") as home:
        doors.planted_home(_run, root / "sessions")
        texts = doors.door_texts(_run, home)
    caught = {door: [f.name for f in FORMATS if not doors.leaks(f.secret, text)] for door, text in texts.items()}
    with _home(root / "benign") as home:
        for argv in (["init"], ["publish", "on"]):
            _run(argv)
        for path in _benign_sessions(root / "benign-sessions"):
            _run(["--at", doors.INGEST_AT, "ingest", str(path)])
        _run(["--at", doors.NIGHT, "sleep"])
        benign_texts = doors.door_texts(_run, home)
    # `<host>` is written by generalise (commons.core.learning.generalise) too, for what it takes for a host
    # name or address; it is counted apart, so this column is the scrubber's alone.
    placeholders = {door: sum(1 for m in PLACEHOLDER.findall(text) if m != "<host>") for door, text in benign_texts.items()}
    hosts = {door: text.count("<host>") for door, text in benign_texts.items()}
    changed = [b for b in BENIGN if scrub(b) != b]
    with _home(root / "personal") as home:
        doors.personal_home(_run, root / "personal-sessions")
        personal_texts = doors.door_texts(_run, home, doors.personal_queries())
    reached = {c.name: [d for d, t in personal_texts.items() if doors.leaks(c.value, t)] for c in CASES}
    return {
        "formats": len(FORMATS),
        "caught_per_door": {door: len(names) for door, names in caught.items()},
        "missed_per_door": {door: sorted({f.name for f in FORMATS} - set(names)) for door, names in caught.items()},
        "benign_strings": len(BENIGN),
        "benign_changed_by_scrubber": len(changed),
        "benign_changed": changed,
        "false_positive_rate": round(len(changed) / len(BENIGN), 4),
        "placeholders_per_door_from_benign_home": placeholders,
        "host_placeholders_per_door_from_benign_home": hosts,
        "personal_cases": len(CASES),
        "personal_reaching_per_door": {door: sum(1 for w in reached.values() if door in w) for door in doors.DOORS},
        "personal_reaching_any_door": sorted(n for n, w in reached.items() if w),
        "seconds": round(time.perf_counter() - started, 1),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        result = measure(Path(tmp))
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    n = result["formats"]
    print(f"{n} formats, each planted as a failed command's output, a statement and a correction\n")
    print("| door | formats caught | scrubber placeholders from benign sessions | `<host>` from benign sessions |")
    print("|---|---|---|---|")
    for door, count in result["caught_per_door"].items():
        print(f"| {door} | {count} / {n} | {result['placeholders_per_door_from_benign_home'][door]} "
              f"| {result['host_placeholders_per_door_from_benign_home'][door]} |")
    print(f"\nbenign strings the scrubber changes: {result['benign_changed_by_scrubber']} / "
          f"{result['benign_strings']} (false-positive rate {result['false_positive_rate']:.1%})")
    p = result["personal_cases"]
    print(f"\n{p} personal-details cases (error output, fix commands, the person's words)\n")
    print("| door | cases reaching it |")
    print("|---|---|")
    for door, count in result["personal_reaching_per_door"].items():
        print(f"| {door} | {count} / {p} |")
    print(f"\ncases reaching any door: {len(result['personal_reaching_any_door'])} / {p}"
          + (f" ({', '.join(result['personal_reaching_any_door'])})" if result["personal_reaching_any_door"] else ""))
    missed = {d: m for d, m in result["missed_per_door"].items() if m}
    if missed:
        print(f"missed: {missed}")
    print(f"({result['seconds']} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
