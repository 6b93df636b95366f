"""How good are the lessons ingest and sleep make? Figures over folders of transcripts.

    python -m commons.ingest.lessons_report [FOLDER_OR_FILE ...] [--json]

With no argument it reads ``../shared/transcripts`` (when present), ``tests/fixtures/lessons`` and
the demo sessions. Every agent transcript found (`commons.ingest.ingester.discover`) is parsed by its
agent's reader, the episodes go through
one night of sleep (the core, with no store), and the report gives:

- ``informative_failure_lines``: error episodes whose failure line says what failed
  (`commons.core.learning.failure.is_informative`) — goal ≥ 95%;
- ``lessons_naming_the_fix``: among error lessons whose sessions show a fix (an episode with a
  resolution of confidence ≥ 0.5), the share whose text names what worked — goal ≥ 80%;
- ``bare_echoes``: lessons whose text neither names what worked nor says that no fix was seen
  (an echo of the error, and nothing else), or quote an uninformative line — goal ≤ 10%;
- ``correction_precision`` (and recall) on files with a ``corrections_labels.json`` beside them.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from commons.core.learning import CorrectionEpisode, Episode, ErrorEpisode, SessionEpisode
from commons.core.learning import is_informative
from commons.core.learning import project_aliases
from commons.core.learning import Lesson, is_resolved
from commons.core.records import LessonKind
from commons.core.learning import SleepState, run_night
from commons.ingest.ingester import discover, reader_for

ROOT = Path(__file__).resolve().parents[2]
DEFAULT_SOURCES = (ROOT.parent / "shared" / "transcripts", ROOT / "tests" / "fixtures" / "lessons",
                   ROOT / "commons" / "demo" / "sessions")
_NAMES_FIX = re.compile(r"; (?:`[^`]+` succeeded after it|it (?:succeeded|passed) after|the same (?:command|call) passed)")
_NO_FIX = re.compile(r"; no fix was seen")
_QUOTED = re.compile(r'failed with "([^"]*)"')


@dataclass(frozen=True)
class Share:
    hits: int
    total: int

    @property
    def value(self) -> float | None:
        return self.hits / self.total if self.total else None

    def as_json(self) -> dict[str, object]:
        return {"hits": self.hits, "total": self.total, "share": self.value}


@dataclass(frozen=True)
class Report:
    files: int
    errors: int
    lessons: tuple[Lesson, ...]
    informative: Share
    naming_fix: Share
    bare_echoes: Share
    correction_precision: Share
    correction_recall: Share
    uninformative_lines: tuple[str, ...]

    def as_json(self) -> dict[str, object]:
        return {
            "files": self.files, "error_episodes": self.errors,
            "informative_failure_lines": self.informative.as_json(),
            "lessons_naming_the_fix": self.naming_fix.as_json(),
            "bare_echoes": self.bare_echoes.as_json(),
            "correction_precision": self.correction_precision.as_json(),
            "correction_recall": self.correction_recall.as_json(),
            "uninformative_lines": list(self.uninformative_lines),
            "lessons": [{"kind": l.kind.value, "scope": l.scope.value, "text": l.text} for l in self.lessons],
        }  # fmt: skip


def transcripts(sources: Iterable[Path]) -> list[Path]:
    found: list[Path] = []
    for source in sources:
        if source.is_file():
            found.append(source)
        elif source.is_dir():
            found += discover([source])
    return found


def read_all(paths: Sequence[Path]) -> list[Episode]:
    """Every episode of ``paths``, the last form of each (kind, uid) kept."""
    latest: dict[tuple[str, str], Episode] = {}
    for path in paths:
        reader = reader_for(path)
        if reader is None:  # not an agent's transcript (a labels file, a stray .json)
            continue
        for episode in reader.parse(path.read_bytes(), session_hint=path.stem).episodes:
            latest[(episode.kind.value, episode.uid)] = episode
    return list(latest.values())


def _labels(paths: Sequence[Path]) -> dict[str, bool]:
    labels: dict[str, bool] = {}
    for folder in {p.parent for p in paths}:
        file = folder / "corrections_labels.json"
        if file.exists():
            labels.update({str(k): bool(v) for k, v in json.loads(file.read_text()).items()})
    return labels


def measure(sources: Iterable[Path]) -> Report:
    paths = transcripts(sources)
    episodes = read_all(paths)
    errors = [e for e in episodes if isinstance(e, ErrorEpisode)]
    informative = [e for e in errors if is_informative(e.failure)]
    projects = {e.project for e in episodes if isinstance(e, SessionEpisode) and e.project}
    last = max((e.at for e in episodes), default=0.0)
    night = run_night(SleepState(), episodes, last + 3600, hash_episode=lambda uid: uid.encode(),
                  project_names=project_aliases(projects))
    by_uid = {e.uid: e for e in errors}
    error_lessons = [l for l in night.state.lessons if l.kind is LessonKind.ERROR]
    with_fix = [l for l in error_lessons if any(is_resolved(by_uid[u]) for u in l.episodes if u in by_uid)]
    lessons = night.state.lessons
    bare = [l for l in lessons if l.kind is LessonKind.ERROR and (
        not (_NAMES_FIX.search(l.text) or _NO_FIX.search(l.text))
        or not is_informative(next(iter(_QUOTED.findall(l.text)), "")))]
    labels = _labels(paths)
    found = {e.uid for e in episodes if isinstance(e, CorrectionEpisode)}
    labelled_found = [uid for uid in found if uid in labels]
    truly = [uid for uid, yes in labels.items() if yes]
    return Report(
        files=len(paths), errors=len(errors), lessons=tuple(lessons),
        informative=Share(len(informative), len(errors)),
        naming_fix=Share(sum(1 for l in with_fix if _NAMES_FIX.search(l.text)), len(with_fix)),
        bare_echoes=Share(len(bare), len(lessons)),
        correction_precision=Share(sum(1 for uid in labelled_found if labels[uid]), len(labelled_found)),
        correction_recall=Share(sum(1 for uid in truly if uid in found), len(truly)),
        uninformative_lines=tuple(sorted({e.failure for e in errors if not is_informative(e.failure)})),
    )  # fmt: skip


def _pct(share: Share) -> str:
    return "n/a" if share.value is None else f"{100 * share.value:.0f}% ({share.hits} of {share.total})"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m commons.ingest.lessons_report", description=__doc__.split("\n")[0])
    parser.add_argument("sources", nargs="*", type=Path, help="folders or .jsonl files (default: see module doc)")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args(argv)
    report = measure(args.sources or DEFAULT_SOURCES)
    if args.json:
        print(json.dumps(report.as_json(), indent=2, ensure_ascii=False))
        return 0
    print(f"{report.files} transcripts, {report.errors} error episodes, {len(report.lessons)} lessons")
    print(f"informative failure lines     {_pct(report.informative)}   (goal >= 95%)")
    print(f"lessons naming what worked    {_pct(report.naming_fix)}   (goal >= 80% of those whose sessions show a fix)")
    print(f"bare echoes                   {_pct(report.bare_echoes)}   (goal <= 10%)")
    print(f"correction precision          {_pct(report.correction_precision)}   recall {_pct(report.correction_recall)}")
    for line in report.uninformative_lines:
        print(f"  uninformative: {line!r}")
    print()
    for lesson in report.lessons:
        print(f"[{lesson.kind.value}, {lesson.scope.value}] {lesson.text}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
