"""The morning report (design paper §3.7): what the nights since the last report changed.

Built from the sleep runs the store recorded (each night's lesson and prediction events) and the
vetoes: lessons learned, strengthened, weakened, archived; predictions confirmed, prevented,
failed, expired; vetoes; and **prediction accuracy** (§7.3): of the predictions decided by a
situation that arose, the fraction that held, ``(confirmed + prevented) / (confirmed + prevented +
failed)``. Expired predictions met no situation and test nothing, so they are counted but not
scored. Accuracy is given for the period and for all time.

Two cursors, so that neither hides the other: ``commons sleep`` writes the morning file
(``<data>/reports/YYYY-MM-DD.md``) covering the nights since the previous file; ``commons report``
shows what changed since the person last asked (or ``--since``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from commons.clock import format_time
from commons.core.policy import shown_json
from commons.store import lessons as ls
from commons.store import records as record_store
from commons.store import reviews as review_store
from commons.store.db import Store


_LESSON_TYPES = ("learned", "strengthened", "weakened", "archived")
_VERDICTS = ("confirmed", "prevented", "failed", "expired")


def accuracy(counts: dict[str, int]) -> float | None:
    held = counts.get("confirmed", 0) + counts.get("prevented", 0)
    tested = held + counts.get("failed", 0)
    return round(held / tested, 4) if tested else None


@dataclass(frozen=True)
class MorningReport:
    """What the nights within (since, until] changed, and how well the predictions held."""

    since: float
    until: float
    nights: int
    episodes_archived: int
    lessons: tuple[tuple[str, tuple[Mapping, ...]], ...]  # per kind of change (_LESSON_TYPES): its events
    predictions_made: int
    predictions: tuple[tuple[str, tuple[Mapping, ...]], ...]  # per verdict (_VERDICTS): its events
    vetoes: tuple[ls.Veto, ...]
    commons: tuple[review_store.TrustChange, ...]  # lessons promoted, faded or revoked here
    revocations: tuple[record_store.Received, ...]  # revocations that arrived
    all_time: Mapping[str, int]  # decided predictions per verdict, up to ``until``

    def to_json(self) -> dict:
        """The report's one form (the morning file and `commons report` are made from it),
        through the door policy as a last pass (``shown_json``): a night recorded before the doors
        were scrubbed still reads clean, and a lesson text no door would admit is withheld."""
        period = {t: len(events) for t, events in self.predictions}
        return shown_json({
            "since": format_time(self.since), "until": format_time(self.until), "nights": self.nights,
            "episodes_archived": self.episodes_archived,
            **{f"lessons_{t}": list(events) for t, events in self.lessons},
            "predictions_made": self.predictions_made,
            **{f"predictions_{t}": list(events) for t, events in self.predictions},
            "vetoes": [{"lesson": v.lesson_id, "text": v.text, "reason": v.reason, "at": format_time(v.at)}
                       for v in self.vetoes],
            "commons": [{"lesson": c.record_id.hex(), "from": c.before, "to": c.after, "text": c.text, "why": c.why,
                         "at": format_time(c.at)} for c in self.commons],
            "revocations": [{"id": r.id.hex(), "at": format_time(r.at)} for r in self.revocations],
            "accuracy": {"period": accuracy(period), "all_time": accuracy(self.all_time), "period_counts": period,
                         "all_time_counts": {t: self.all_time.get(t, 0) for t in _VERDICTS}},
        })


async def build_report(store: Store, since: float, until: float) -> MorningReport:
    runs = await ls.sleep_runs(store, since, until)
    lessons: dict[str, list[Mapping]] = {t: [] for t in _LESSON_TYPES}
    predictions: dict[str, list[Mapping]] = {t: [] for t in _VERDICTS}
    made = 0
    episodes_archived = 0
    for run in runs:
        episodes_archived += run.counts.get("episodes_archived", 0)
        for event in run.events:
            kind = event["type"]
            if kind in lessons:
                lessons[kind].append(event)
            elif kind in predictions:
                predictions[kind].append(event)
            elif kind == "prediction_made":
                made += 1
    # The commons: lessons promoted, faded or revoked here (peer review, commons.node.review), and the
    # revocations that arrived, with their reasons (they apply at once, not at the next sleep).
    return MorningReport(
        since, until, len(runs), episodes_archived, tuple((t, tuple(v)) for t, v in lessons.items()), made,
        tuple((t, tuple(v)) for t, v in predictions.items()), tuple(await ls.vetoes(store, since, until)),
        tuple(await review_store.trust_changes(store, since, until)),
        tuple(await record_store.revocations_received(store, since, until)),
        await ls.prediction_counts(store, until=until))


def _short(event: dict) -> str:
    return event["lesson"][:12]


def format_report(report: dict) -> str:
    """The report (its JSON form, ``MorningReport.to_json``) as Markdown a person reads over coffee."""
    start = "the beginning" if report["since"].startswith("1970-01-01") else report["since"]
    out = [f"# commons report: {start} → {report['until']}", "",
           f"{report['nights']} night(s) of sleep; {report['episodes_archived']} episode(s) archived by decay.", ""]

    def section(title: str, rows: list[str]) -> None:
        out.append(f"## {title} ({len(rows)})")
        out.extend(rows or ["- none"])
        out.append("")

    section("Lessons learned", [f"- `{_short(e)}` [{e['kind']}, {e['scope']}] {e['text']}"
                                for e in report["lessons_learned"]])
    section("Lessons strengthened", [f"- `{_short(e)}` +{e['by']:g} ({e['reason']}): {e['text']}"
                                     for e in report["lessons_strengthened"]])
    section("Lessons weakened", [f"- `{_short(e)}` −{e['by']:g} ({e['reason']}): {e['text']}"
                                 for e in report["lessons_weakened"]])
    section("Lessons archived", [f"- `{_short(e)}` (strength {e['strength']:.2f}): {e['text']}"
                                 for e in report["lessons_archived"]])
    out += [f"## Predictions ({report['predictions_made']} made)"]
    for verdict in _VERDICTS:
        events = report[f"predictions_{verdict}"]
        out.append(f"- {verdict}: {len(events)}")
        out += [f"  - `{_short(e)}` {e['says']}" for e in events]
    out.append("")
    section("Vetoes", [f"- `{v['lesson'][:12]}` ({v['reason']}, {v['at']}): {v['text']}" for v in report["vetoes"]])
    if report.get("commons") or report.get("revocations"):
        section("The commons: lessons promoted, faded, revoked", [
            f"- `{c['lesson'][:12]}` {c['from'] or 'new'} → **{c['to']}** ({c['why']}): {c['text']}"
            for c in report["commons"]])
        out.insert(len(out) - 1, f"{len(report['revocations'])} revocation(s) received; "
                                 "`commons revocations` lists them with what each took down.")
    acc = report["accuracy"]

    def pct(value: float | None) -> str:
        return "n/a (nothing tested)" if value is None else f"{value:.0%}"

    out += ["## Prediction accuracy", f"- this period: {pct(acc['period'])}",
            f"- all time: {pct(acc['all_time'])} "
            f"(confirmed + prevented over those plus failed; expired ones tested nothing)", ""]
    return "\n".join(out)


async def write_morning_report(store: Store, reports_dir: Path, now: float) -> Path:
    """Write the report of the nights since the previous morning file; returns its path."""
    path = reports_dir / f"{format_time(now)[:10]}.md"
    # A second sleep on the same day rewrites that day's file from the same starting point.
    same_day = await ls.report_since(store, str(path))
    since = same_day if same_day is not None else (await ls.last_report_at(store, "file") or 0.0)
    report = await build_report(store, since, now)
    reports_dir.mkdir(parents=True, exist_ok=True)
    path.write_text(format_report(report.to_json()) + "\n", encoding="utf-8")
    await ls.add_report(store, now, since, str(path))
    return path


async def shown_report(store: Store, now: float, since: float | None) -> MorningReport:
    """The report ``commons report`` shows: since ``since``, else since it was last shown."""
    remember = since is None
    if since is None:
        since = await ls.last_report_at(store, "shown") or 0.0
    report = await build_report(store, since, now)
    if remember:
        await ls.add_report(store, now, since, None)
    return report
