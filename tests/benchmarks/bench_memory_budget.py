"""How many lessons Claude Code loads from one project's MEMORY.md (its first 200 lines / 25 KB).

    .venv/bin/python tests/benchmarks/bench_memory_budget.py [--person-lines N] [--json]

The lesson texts are real: the bundled demo sessions of all three nodes are ingested and slept on
in a temporary home, and the lessons learned are rendered (cycled to 150 per section) into the
three sections a project's MEMORY.md holds, below ``--person-lines`` lines of the person's own.
Prints how many index lines fit, how many were left out, and which limit bound first.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from commons.cli import main  # noqa: E402
from commons.demo.run import DEMO_SESSIONS, NIGHTS  # noqa: E402
from commons.render.memory_folder import LOAD_BYTES, LOAD_LINES, Layer, RenderItem, index_line, render  # noqa: E402


def real_lessons(root: Path) -> list[dict]:
    os.environ["COMMONS_HOME"], os.environ["HOME"] = str(root / "home"), str(root / "person")
    with contextlib.redirect_stdout(io.StringIO()) as out:
        assert main(["init"]) == 0
        assert main(["--at", NIGHTS[-1], "ingest", *(str(DEMO_SESSIONS / n) for n in ("ada", "grace", "linus"))]) == 0
        assert main(["--at", NIGHTS[-1], "sleep"]) == 0
        out.seek(0), out.truncate()
        assert main(["lessons", "--json"]) == 0
        return json.loads(out.getvalue())


def measure(person_lines: int) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        lessons = real_lessons(Path(tmp))
        items = lambda tag, conf: [RenderItem(id=f"{tag}{i:063d}", text=lessons[i % len(lessons)]["text"], kind="error",
                                              scope="shared", strength=2.0 - i / 1000, seen=2, confirmations=conf)
                                   for i in range(150)]
        folder = Path(tmp) / "memory"
        folder.mkdir()
        (folder / "MEMORY.md").write_text("# Memory\n" + "".join(f"- the person's note {i} about this project\n"
                                                               for i in range(person_lines - 1)))
        result = render(folder, [Layer("project", items("a", None)), Layer("own", items("b", None)),
                                 Layer("common", items("c", 3))])
        lines = [index_line("own", it) for it in items("b", None)[: len(lessons)]]
    return {"lesson_texts": len(lessons), "index_line_bytes_mean": round(sum(len(l.encode()) + 1 for l in lines) / len(lines)),
            "index_line_bytes_max": max(len(l.encode()) + 1 for l in lines), "person_lines": person_lines,
            "written": {k: sum(1 for w in result.written if w[0] == k) for k in ("project", "own", "common")},
            "left_out": dict(result.left_out), "memory_lines": result.lines, "memory_bytes": result.bytes,
            "bound_by": "bytes" if result.bytes > LOAD_BYTES - 300 else "lines" if result.lines > LOAD_LINES - 3 else "neither"}


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--person-lines", type=int, default=30)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    figures = measure(args.person_lines)
    print(json.dumps(figures, indent=None if args.json else 2))
