"""The two-agent experiment (design paper §7.5): does agent B stop making the mistakes only agent
A has met?

Two commons nodes, each with its own ``COMMONS_HOME``, transcripts folder and memory folder, on one
scripted clock that advances a day at a time. Every day each scripted agent
(``simulations.task_world``) works one session, written as a real Claude Code transcript; every
night each node ingests the day's transcripts and sleeps through the ordinary command line
(``commons --at NIGHT ingest|sleep``), then the two nodes meet through the link, then each renders
its memory folder, which the agent reads the next morning. Nothing but signed records ever goes from
one home to the other.

**Arms**, over the same seed: ``control`` (publishing off), ``trusted`` (B names A's author key in
``[trust] authors``: one person running two agents) and ``peer_review`` (no trust in A,
``[trust] required = 1``: B must confirm a lesson once itself before it is common).

**The link.** :class:`DaemonLink` runs both nodes as real daemons on loopback, each night, started
``--at`` the night's time, dialling each other through a byte-counting relay of this harness (which
is how the bytes that crossed the wire are measured) until each holds the other's records.
:class:`FileLink` is the fallback (``commons export`` piped into ``commons import``), used only when
the daemon commands are missing, and is named as such in every output.

Run ``python -m simulations.two_agents --json`` (``make experiment`` also writes
``docs/experiment.md``); ``--a-transcripts DIR --b-transcripts DIR`` replays recorded sessions
instead of the scripted world.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from commons.report import accuracy
from simulations.task_world import (Encounter, Outcome, PitfallKind, Plan, ScriptedAgent, day_time, iso,
                                    make_plan)

ARMS = ("control", "trusted", "peer_review")
REPO = Path(__file__).resolve().parent.parent
SETTLE_SECONDS = 20.0  # longest a night's exchange may take before the harness says so


class ExperimentError(RuntimeError):
    """The experiment could not run as set up (a command failed, a daemon did not start)."""


# --------------------------------------------------------------------------------------------
# A node: one home driven through the command line


@dataclass
class Node:
    """One commons home, its agent's transcripts folder and memory folder, under ``root``."""

    name: str
    root: Path
    subprocess_cli: bool = False  # run each command in its own process (slower; same code)
    ingest_counts: list[dict] = field(default_factory=list)  # per night: episodes by kind
    night_counts: list[dict] = field(default_factory=list)  # per night: sleep's counts
    author: str = ""  # its author key (hex), known after init

    @property
    def home(self) -> Path:
        return self.root / "home"

    @property
    def transcripts(self) -> Path:
        return self.root / "transcripts"

    @property
    def memory(self) -> Path:
        return self.root / "memory"

    def cli(self, *argv: str, at: str | None = None, parse: bool = True, check: bool = True):
        """``commons [--at AT] ARGV`` in this home: its JSON output (or text with parse=False)."""
        args = (["--at", at] if at else []) + list(argv)
        if self.subprocess_cli:
            done = subprocess.run([sys.executable, "-m", "commons", *args], capture_output=True, text=True,
                                  env=dict(os.environ, COMMONS_HOME=str(self.home)), cwd=REPO)
            code, out, err = done.returncode, done.stdout, done.stderr
        else:
            from commons.cli import main

            saved = os.environ.get("COMMONS_HOME")
            os.environ["COMMONS_HOME"] = str(self.home)
            out_buf, err_buf = io.StringIO(), io.StringIO()
            try:
                with contextlib.redirect_stdout(out_buf), contextlib.redirect_stderr(err_buf):
                    code = main(args)
            finally:
                if saved is None:
                    os.environ.pop("COMMONS_HOME", None)
                else:
                    os.environ["COMMONS_HOME"] = saved
            out, err = out_buf.getvalue(), err_buf.getvalue()
        if check and code != 0:
            raise ExperimentError(f"node {self.name}: `commons {' '.join(args)}` exited {code}: {err.strip()}")
        return json.loads(out) if parse and out.strip() else out

    def init(self, sections: dict[str, dict]) -> dict:
        """Create the home; write ``sections`` into its config (transcripts and memory folders too)."""
        for path in (self.home, self.transcripts, self.memory):
            path.mkdir(parents=True, exist_ok=True)
        self.cli("init", "--json")
        sections = {"ingest": {"roots": [str(self.transcripts)], "poll_seconds": 0.5},
                    "render": {"folder": str(self.memory)}, **sections}
        config = self.home / "config.toml"
        text = config.read_text("utf-8")
        for name, values in sections.items():
            text += f"\n[{name}]\n" + "".join(f"{k} = {json.dumps(v)}\n" for k, v in values.items())
        config.write_text(text, "utf-8")
        ids = self.cli("id", "--json")
        self.author = ids["author"]
        return ids

    def night(self, at: str) -> None:
        got = self.cli("ingest", str(self.transcripts), "--json", at=at)
        self.ingest_counts.append(dict(got["episodes"]))
        slept = self.cli("sleep", "--json", at=at)
        self.night_counts.append(dict(slept["counts"]))

    def records(self) -> list[dict]:
        text = self.cli("export", parse=False)
        return [json.loads(line) for line in text.splitlines() if line.strip()]


# --------------------------------------------------------------------------------------------
# Links: how two homes meet at night


class Link(Protocol):
    kind: str  # "daemon" or "file (fallback)": said in every output

    def start(self, a: Node, b: Node) -> None: ...

    def exchange(self, at: str) -> None: ...

    def bytes_crossed(self) -> int: ...

    def close(self) -> None: ...


class _Relay:
    """A loopback TCP relay that counts the bytes it carries: the wire between the two daemons."""

    def __init__(self, target: tuple[str, int]):
        self.target = target
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.address = self.listener.getsockname()
        self.bytes = 0
        self._lock = threading.Lock()
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            try:
                upstream = socket.create_connection(self.target, timeout=5)
            except OSError:
                conn.close()
                continue
            for src, dst in ((conn, upstream), (upstream, conn)):
                threading.Thread(target=self._pump, args=(src, dst), daemon=True).start()

    def _pump(self, src: socket.socket, dst: socket.socket) -> None:
        try:
            while data := src.recv(65536):
                with self._lock:
                    self.bytes += len(data)
                dst.sendall(data)
        except OSError:
            pass
        finally:
            for s in (src, dst):
                with contextlib.suppress(OSError):
                    s.shutdown(socket.SHUT_RDWR)

    def close(self) -> None:
        self.listener.close()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class DaemonLink:
    """Both nodes as real daemons each night, dialling each other through counting relays."""

    kind = "daemon"

    def __init__(self, publish: bool):
        self.publish = publish
        self.relays: list[_Relay] = []
        self.nodes: tuple[Node, Node] | None = None
        self.ports: dict[str, int] = {}
        self.seconds: list[float] = []

    def start(self, a: Node, b: Node) -> None:
        self.nodes = (a, b)
        ids = {n.name: n.cli("id", "--json") for n in (a, b)}
        for node in (a, b):
            self.ports[node.name] = _free_port()
        for node, other in ((a, b), (b, a)):
            relay = _Relay(("127.0.0.1", self.ports[other.name]))
            self.relays.append(relay)
            host, port = relay.address
            node.cli("peers", "add", f"{host}:{port}", ids[other.name]["transport"], "--json")
            node.cli("publish", "on" if self.publish else "off", "--json")

    def exchange(self, at: str) -> None:
        assert self.nodes is not None, "DaemonLink.exchange() before start() (API misuse)"
        started = time.monotonic()
        procs = []
        try:
            for node in self.nodes:
                procs.append(subprocess.Popen(
                    [sys.executable, "-m", "commons", "--at", at, "daemon", "--listen",
                     f"127.0.0.1:{self.ports[node.name]}"], cwd=REPO,
                    env=dict(os.environ, COMMONS_HOME=str(node.home)),
                    stdout=subprocess.DEVNULL, stderr=open(node.root / "daemon.log", "ab")))
            self._wait_settled(procs)
        finally:
            for proc in procs:
                proc.terminate()
            for proc in procs:
                try:
                    proc.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    proc.kill()
        self.seconds.append(time.monotonic() - started)

    def _wait_settled(self, procs: Sequence[subprocess.Popen]) -> None:
        """Until each node holds every record the other authored (or the time is up)."""
        a, b = self.nodes
        deadline = time.monotonic() + SETTLE_SECONDS
        while time.monotonic() < deadline:
            for proc, node in zip(procs, self.nodes):
                if proc.poll() is not None:
                    raise ExperimentError(f"node {node.name}'s daemon exited {proc.returncode}; "
                                          f"see {node.root / 'daemon.log'}")
            records = {n.name: n.records() for n in (a, b)}
            held = {name: {r["id"] for r in rs} for name, rs in records.items()}
            own = {n.name: {r["id"] for r in records[n.name] if r["record"].get("author") == n.author}
                   for n in (a, b)}
            if own[a.name] <= held[b.name] and own[b.name] <= held[a.name]:
                return
            time.sleep(0.2)
        raise ExperimentError(f"the daemons did not exchange their records within {SETTLE_SECONDS:.0f} s")

    def bytes_crossed(self) -> int:
        return sum(r.bytes for r in self.relays)

    def close(self) -> None:
        for relay in self.relays:
            relay.close()


def _author(node: Node) -> str:
    return node.author


class FileLink:
    """FALLBACK, not the experiment's wire: each node's records exported and imported by the other.

    Used only when the daemon commands are missing; the bytes counted are the exported lines.
    """

    kind = "file (fallback)"

    def __init__(self, publish: bool):
        self.publish = publish
        self.nodes: tuple[Node, Node] | None = None
        self.carried = 0
        self.seen: dict[str, set[str]] = {}

    def start(self, a: Node, b: Node) -> None:
        self.nodes = (a, b)
        for node in (a, b):
            self.seen[node.name] = set()
            node.cli("publish", "on" if self.publish else "off", "--json")

    def exchange(self, at: str) -> None:
        assert self.nodes is not None, "FileLink.exchange() before start() (API misuse)"
        for src, dst in (self.nodes, self.nodes[::-1]):
            lines = [json.dumps(r) for r in src.records() if r["id"] not in self.seen[dst.name]]
            if not lines:
                continue
            path = dst.root / "incoming.jsonl"
            path.write_text("\n".join(lines) + "\n", "utf-8")
            self.carried += path.stat().st_size
            dst.cli("import", str(path), "--json", at=at, check=False)
            path.unlink()
            self.seen[dst.name] |= {json.loads(line)["id"] for line in lines}

    def bytes_crossed(self) -> int:
        return self.carried

    def close(self) -> None:
        pass


def make_link(publish: bool, prefer: str = "daemon") -> Link:
    """The real daemons; ``prefer="file"`` for the export/import fallback (labelled as such)."""
    return DaemonLink(publish) if prefer == "daemon" else FileLink(publish)


# --------------------------------------------------------------------------------------------
# One arm over the scripted world


def arm_sections(arm: str, a_author: str | None) -> dict[str, dict]:
    """Config of B per arm (A gets the same, with no trust in B's key)."""
    gossip = {"sync_interval": 0.3, "backoff_base": 0.2, "backoff_cap": 1.0, "discovery": False}
    if arm == "trusted":
        return {"gossip": gossip, "trust": {"authors": [a_author] if a_author else []}}
    if arm == "peer_review":
        return {"gossip": gossip, "trust": {"required": 1}}
    if arm == "control":
        return {"gossip": gossip}
    raise ValueError(f"unknown arm {arm!r}; expected one of {', '.join(ARMS)}")


@dataclass
class ArmRun:
    arm: str
    link: str
    a: Node
    b: Node
    encounters: list[Encounter]
    bytes_crossed: int
    exchange_seconds: list[float]
    seconds: float


def run_arm(arm: str, plan: Plan, seed: int, root: Path, *, prefer: str = "daemon",
            subprocess_cli: bool = False) -> ArmRun:
    started = time.monotonic()
    a, b = Node("ada", root / "ada", subprocess_cli), Node("bo", root / "bo", subprocess_cli)
    a_id = a.init(arm_sections("control" if arm == "trusted" else arm, None))
    b.init(arm_sections(arm, a_id["author"]))
    link = make_link(publish=arm != "control", prefer=prefer)
    link.start(a, b)
    agents = {n.name: ScriptedAgent(n.name, n.transcripts, n.memory, seed=seed) for n in (a, b)}
    try:
        for day in range(1, plan.days + 1):
            for node in (a, b):
                agents[node.name].work(day, plan.sessions.get((node.name, day), ()))
            for node in (a, b):
                node.night(iso(day_time(day + 1, 3)))
            link.exchange(iso(day_time(day + 1, 3, 30)))
            for node in (a, b):
                node.cli("render", "--json", at=iso(day_time(day + 1, 3, 45)))
    finally:
        link.close()
    return ArmRun(arm, link.kind, a, b, agents["ada"].encounters + agents["bo"].encounters,
                  link.bytes_crossed(), list(getattr(link, "seconds", [])), time.monotonic() - started)


# --------------------------------------------------------------------------------------------
# Measurements (design paper §7)


def per_day(encounters: Sequence[Encounter], node: Node, days: int, a_only: Sequence[str] = ()) -> list[dict]:
    """Per day of one agent: the §7 figures, from its encounters and from what its node saw."""
    out, met_before, cumulative = [], set(), {"confirmed": 0, "prevented": 0, "failed": 0}
    for day in range(1, days + 1):
        today = [e for e in encounters if e.day == day]
        errors = [e for e in today if e.kind is PitfallKind.ERROR and e.outcome is Outcome.MET]
        corrections = [e for e in today if e.kind is PitfallKind.CONVENTION and e.outcome is Outcome.MET]
        repeated_errors = sum(e.pitfall in met_before for e in errors)
        restated = sum(e.pitfall in met_before for e in corrections)
        met_before |= {e.pitfall for e in errors + corrections}
        seen = node.ingest_counts[day - 1] if day <= len(node.ingest_counts) else {}
        night = node.night_counts[day - 1] if day <= len(node.night_counts) else {}
        for verdict in cumulative:
            cumulative[verdict] += night.get(f"predictions_{verdict}", 0)
        out.append({
            "day": day, "sessions": 1,
            "repeat_yourself": restated, "repeated_errors": repeated_errors,
            "errors": len(errors), "corrections": len(corrections),
            "errors_on_a_only": sum(e.pitfall in a_only for e in errors),
            "avoided": sum(e.outcome is Outcome.AVOIDED for e in today),
            # What commons itself saw in the day's transcripts: surprises per session.
            "surprises_seen": seen.get("error", 0) + seen.get("correction", 0),
            "prediction_accuracy": accuracy(cumulative),
        })
    return out


def _records_summary(run: ArmRun) -> dict:
    """Lessons published, verifications signed and lessons made common, per node."""
    out = {}
    for node in (run.a, run.b):
        mine = _author(node)
        records = node.records()
        by = lambda t, own: sum(r["type"] == t and (r["record"].get("author") == mine) == own for r in records)
        common = []
        with contextlib.suppress(ExperimentError):
            common = node.cli("lessons", "--status", "common", "--json")
        out[node.name] = {
            "lessons_published": by("lesson", True), "lessons_received": by("lesson", False),
            "verifications_signed": by("verification", True), "verifications_received": by("verification", False),
            "lessons_common": len(common),
        }
    return out


def summarise(run: ArmRun, plan: Plan) -> dict:
    enc = run.encounters
    b_on_a_only = [e for e in enc if e.agent == "bo" and e.pitfall in plan.a_only]
    b_on_own = [e for e in enc if e.agent == "bo" and e.pitfall in plan.b_own]
    days = {n.name: per_day([e for e in enc if e.agent == n.name], n, plan.days, plan.a_only) for n in (run.a, run.b)}

    def rates(rows: list[dict]) -> dict:
        sessions = sum(r["sessions"] for r in rows) or 1
        return {"repeat_yourself_rate": round(sum(r["repeat_yourself"] for r in rows) / sessions, 4),
                "repeated_error_rate": round(sum(r["repeated_errors"] for r in rows) / sessions, 4),
                "surprises_per_session": round(sum(r["surprises_seen"] for r in rows) / sessions, 4),
                "prediction_accuracy": rows[-1]["prediction_accuracy"] if rows else None}

    return {
        "arm": run.arm, "link": run.link,
        "b_errors_on_a_only_pitfalls": sum(e.outcome is Outcome.MET for e in b_on_a_only),
        "b_encounters_with_a_only_pitfalls": len(b_on_a_only),
        "b_avoided_a_only_via_common": sum(e.outcome is Outcome.AVOIDED and e.layer == "common" for e in b_on_a_only),
        "b_errors_on_own_pitfalls": sum(e.outcome is Outcome.MET for e in b_on_own),
        "agents": {name: rates(rows) for name, rows in days.items()},
        "per_day": days,
        "records": _records_summary(run),
        "bytes_crossed": run.bytes_crossed,
        "seconds": round(run.seconds, 2),
        "exchange_seconds_mean": round(sum(run.exchange_seconds) / len(run.exchange_seconds), 3)
        if run.exchange_seconds else None,
    }


def run_experiment(seed: int = 7, days: int = 28, a_only: int = 5, b_own: int = 3, *,
                   arms: Sequence[str] = ARMS, workdir: Path | None = None, prefer: str = "daemon",
                   subprocess_cli: bool = False) -> dict:
    plan = make_plan(seed, days, a_only, b_own)
    root = Path(workdir) if workdir else Path(tempfile.mkdtemp(prefix="commons-experiment-"))
    result: dict = {"seed": seed, "days": days, "a_only_pitfalls": list(plan.a_only),
                    "b_own_pitfalls": list(plan.b_own), "workdir": str(root), "arms": {}}
    for arm in arms:
        if (root / arm).exists():
            shutil.rmtree(root / arm)
        summary = summarise(run_arm(arm, plan, seed, root / arm, prefer=prefer, subprocess_cli=subprocess_cli), plan)
        result["arms"][arm] = summary
        result[f"b_errors_on_a_only_pitfalls_{arm}"] = summary["b_errors_on_a_only_pitfalls"]
    result["link"] = sorted({s["link"] for s in result["arms"].values()})
    return result


# --------------------------------------------------------------------------------------------
# Recorded sessions instead of the scripted world


def _first_time(path: Path) -> float | None:
    from commons.clock import parse_time

    with path.open(encoding="utf-8", errors="replace") as handle:
        for line in handle:
            try:
                stamp = json.loads(line).get("timestamp")
            except (json.JSONDecodeError, AttributeError):
                continue
            if isinstance(stamp, str):
                with contextlib.suppress(ValueError):
                    return parse_time(stamp.replace("Z", "+00:00"))
    return None


def replay_arm(arm: str, a_dir: Path, b_dir: Path, root: Path, *, prefer: str = "daemon") -> dict:
    """Recorded sessions, each on its own day in time order; the figures that apply to them."""
    from datetime import datetime, timedelta, timezone

    a, b = Node("a", root / "a"), Node("b", root / "b")
    a.init(arm_sections("control" if arm == "trusted" else arm, None))
    b.init(arm_sections(arm, a.author))
    sessions = []
    for node, folder in ((a, a_dir), (b, b_dir)):
        for path in sorted(Path(folder).rglob("*.jsonl")):
            at = _first_time(path)
            if at is not None:
                sessions.append((at, node, path))
    days = sorted({datetime.fromtimestamp(at, timezone.utc).date() for at, _, _ in sessions})
    link = make_link(publish=arm != "control", prefer=prefer)
    link.start(a, b)
    try:
        for day in days:
            for at, node, path in sessions:
                if datetime.fromtimestamp(at, timezone.utc).date() == day:
                    shutil.copy2(path, node.transcripts / f"{int(at)}-{path.name}")
            night = datetime(day.year, day.month, day.day, 3, tzinfo=timezone.utc) + timedelta(days=1)
            for node in (a, b):
                node.night(iso(night))
            link.exchange(iso(night + timedelta(minutes=30)))
            for node in (a, b):
                node.cli("render", "--json", at=iso(night + timedelta(minutes=45)))
    finally:
        link.close()
    agents = {}
    for node in (a, b):
        sessions_n = sum(c.get("session", 0) for c in node.ingest_counts) or 1
        totals = {v: sum(n.get(f"predictions_{v}", 0) for n in node.night_counts)
                  for v in ("confirmed", "prevented", "failed")}
        agents[node.name] = {
            "sessions": sum(c.get("session", 0) for c in node.ingest_counts),
            "surprises_per_session": round(sum(c.get("error", 0) + c.get("correction", 0)
                                               for c in node.ingest_counts) / sessions_n, 4),
            "repeated_error_rate": round(_repeated_errors(node) / sessions_n, 4),
            "prediction_accuracy": accuracy(totals),
        }
    run = ArmRun(arm, link.kind, a, b, [], link.bytes_crossed(), [], 0.0)
    return {"arm": arm, "link": link.kind, "days": len(days), "agents": agents,
            "records": _records_summary(run), "bytes_crossed": link.bytes_crossed()}


def _repeated_errors(node: Node) -> int:
    """Error episodes that resemble (cosine ≥ 0.55, sleep's join rule) one of an earlier session."""
    from commons.core.embed import embed_many

    episodes = node.cli("episodes", "--kind", "error", "--limit", "0", "--json")["episodes"]
    episodes.sort(key=lambda e: e["at"])
    if not episodes:
        return 0
    vectors = embed_many([f"{e['tool']} {e['target']}\n{e['failure']}" for e in episodes])
    sims = vectors @ vectors.T
    return sum(any(sims[i, j] >= 0.55 and episodes[j]["session"] != episodes[i]["session"] for j in range(i))
               for i in range(len(episodes)))


# --------------------------------------------------------------------------------------------
# Output


def table(result: dict) -> str:
    arms = result["arms"]
    rows = ["| arm | B errors on A-only pitfalls | B encounters with them | avoided via common layer "
            "| B errors on its own pitfalls | lessons A published | lessons B received | B verifications "
            "| lessons common at B | bytes on the wire |",
            "|---|---|---|---|---|---|---|---|---|---|"]
    for name, s in arms.items():
        ra, rb = s["records"]["ada"], s["records"]["bo"]
        rows.append(f"| {name} | **{s['b_errors_on_a_only_pitfalls']}** | {s['b_encounters_with_a_only_pitfalls']} "
                    f"| {s['b_avoided_a_only_via_common']} | {s['b_errors_on_own_pitfalls']} "
                    f"| {ra['lessons_published']} | {rb['lessons_received']} | {rb['verifications_signed']} "
                    f"| {rb['lessons_common']} | {s['bytes_crossed']:,} |")
    rows += ["", "| arm | agent | repeat-yourself rate | repeated-error rate | surprises per session "
             "| prediction accuracy |", "|---|---|---|---|---|---|"]
    for name, s in arms.items():
        for agent, r in s["agents"].items():
            acc = "–" if r["prediction_accuracy"] is None else f"{r['prediction_accuracy']:.2f}"
            rows.append(f"| {name} | {agent} | {r['repeat_yourself_rate']:.3f} | {r['repeated_error_rate']:.3f} "
                        f"| {r['surprises_per_session']:.3f} | {acc} |")
    return "\n".join(rows)


def plots(result: dict, folder: Path) -> list[str]:
    """PNG plots beside the doc; [] (and a message) without matplotlib."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed: docs/experiment.md is written without plots", file=sys.stderr)
        return []
    arms = result["arms"]
    written = []
    fig, ax = plt.subplots(figsize=(7, 3.6))
    for name, s in arms.items():
        # Cumulative errors of B on A-only pitfalls, from B's per-day errors restricted to them.
        series, total = [], 0
        for row in s["per_day"]["bo"]:
            total += row.get("errors_on_a_only", 0)
            series.append(total)
        ax.step(range(1, len(series) + 1), series, where="post", label=name)
    ax.set_xlabel("day")
    ax.set_ylabel("B's errors on A-only pitfalls (cumulative)")
    ax.legend()
    fig.tight_layout()
    fig.savefig(folder / "experiment-b-errors.png", dpi=110)
    written.append("experiment-b-errors.png")
    fig, axes = plt.subplots(1, 2, figsize=(9, 3.4), sharey=True)
    for ax, agent in zip(axes, ("ada", "bo")):
        for name, s in arms.items():
            rows = s["per_day"][agent]
            ax.plot([r["day"] for r in rows], [r["surprises_seen"] for r in rows], marker=".", label=name)
        ax.set_title(f"agent {'A' if agent == 'ada' else 'B'} ({agent})")
        ax.set_xlabel("day")
    axes[0].set_ylabel("surprises in the day's session")
    axes[1].legend()
    fig.tight_layout()
    fig.savefig(folder / "experiment-surprises.png", dpi=110)
    written.append("experiment-surprises.png")
    plt.close("all")
    return written


def write_doc(result: dict, path: Path, command: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    images = plots(result, path.parent)
    link = ", ".join(result["link"])
    fallback = ("\n**The link in this run was the file fallback (`commons export` → `commons import`), not "
                "the daemons: the daemon commands were missing when it ran.**\n" if "daemon" not in link else "")
    arms = result["arms"]
    head = " · ".join(f"{name}: **{s['b_errors_on_a_only_pitfalls']}** of {s['b_encounters_with_a_only_pitfalls']}"
                      for name, s in arms.items())
    text = f"""# The two-agent experiment

Design paper §7.5: two agents on one machine, each with its own raw stream, exchanging only
lessons over the wire. Does agent B stop making the mistakes only agent A has met?

Regenerate with `{command}` (seed {result['seed']}, {result['days']} days; about
{sum(s['seconds'] for s in arms.values()):.0f} s here). Link: {link}.
{fallback}
## Set-up

- Two homes (`COMMONS_HOME`), two transcripts folders, two memory folders; the scripted agents
  (`simulations/task_world.py`) write one Claude Code session a day each, in the real format.
- Every night, on one scripted clock: each node runs `commons --at NIGHT ingest` and `sleep`,
  the two daemons are started `--at` the night and gossip over loopback until each holds the
  other's records, then each node renders its memory folder, which its agent reads the next morning.
- A pitfall is avoided only when the memory folder holds a lesson that covers it, judged by sleep's
  own rules: the lesson names the command about to run (or its situation line matches it at
  cosine ≥ 0.5) and reports the surprise that command would meet (cosine ≥ 0.5).
- A meets its {len(result['a_only_pitfalls'])} error pitfalls twice each in the first half (an error
  must repeat before it is a lesson); B meets each of them three times in the second half, and its
  own {len(result['b_own_pitfalls'])} pitfalls across the run. Each agent also has two project
  conventions the person corrects. A-only pitfalls: {', '.join(result['a_only_pitfalls'])}.
- Arms: **control** (publishing off), **trusted** (B names A's author key in `[trust] authors`),
  **peer_review** (no trust in A; `[trust] required = 1`: B confirms a lesson once before it is common).

## Headline: B's errors on the pitfalls only A had met

{head}

{table(result)}

Rates are per session. The repeat-yourself rate counts corrections the person had already given
in an earlier session; the repeated-error rate counts failures the agent had met before.
Surprises per session are what commons itself found in the day's transcript (error and correction
episodes). Prediction accuracy is `(confirmed + prevented) / (confirmed + prevented + failed)`
over the whole run, from each night's sleep.

Convention lessons ("The person corrected the agent, saying …") are `local` by scope and are
never published, so they cannot cross: the repeat-yourself rate is each agent's own.

## Reading it

- Control: B learns each A-only pitfall alone; an error must repeat before it is a lesson, so each
  costs B two errors. Trusted: A's lesson is common at B on arrival and B never meets it.
  Peer review: B's first error confirms A's lesson (B was naive: it received the lesson before
  meeting the surprise), which makes it common at `required = 1`; B errs once per pitfall.
- B's errors on its own pitfalls are the same in every arm: the commons changes nothing else.
- Prediction accuracy is 1.00 because this world never contradicts a lesson: a pitfall, once
  set, always fails the same way until its workaround is used, so a prediction is either met or
  prevented. A world where pitfalls get fixed upstream (the command starts working) would show
  failed predictions and lessons fading; real transcripts (`--a-transcripts/--b-transcripts`) do.
"""
    for image in images:
        text += f"\n![{image}]({image})\n"
    path.write_text(text, "utf-8")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m simulations.two_agents", description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--days", type=int, default=28)
    parser.add_argument("--a-only", type=int, default=5, help="error pitfalls A meets first (default 5)")
    parser.add_argument("--b-own", type=int, default=3, help="error pitfalls only B meets (default 3)")
    parser.add_argument("--arms", default=",".join(ARMS), help=f"comma-separated, of {', '.join(ARMS)}")
    parser.add_argument("--workdir", type=Path, help="keep the homes here (default: a temporary folder)")
    parser.add_argument("--link", choices=("daemon", "file"), default="daemon",
                        help="daemon (the experiment) or file (the export/import fallback)")
    parser.add_argument("--subprocess", action="store_true", help="run every command in its own process")
    parser.add_argument("--a-transcripts", type=Path, help="replay these recorded sessions as agent A's")
    parser.add_argument("--b-transcripts", type=Path, help="… and these as agent B's")
    parser.add_argument("--doc", type=Path, help="write the report (table and plots) to this markdown file")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args(argv)
    arms = [a for a in args.arms.split(",") if a]
    if unknown := [a for a in arms if a not in ARMS]:
        parser.error(f"unknown arm(s) {', '.join(unknown)}; expected {', '.join(ARMS)}")
    if bool(args.a_transcripts) != bool(args.b_transcripts):
        parser.error("--a-transcripts and --b-transcripts go together")
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="commons-experiment-"))
    try:
        if args.a_transcripts:
            result = {"mode": "replay", "arms": {arm: replay_arm(arm, args.a_transcripts, args.b_transcripts,
                                                                  workdir / arm, prefer=args.link) for arm in arms}}
        else:
            result = run_experiment(args.seed, args.days, args.a_only, args.b_own, arms=arms, workdir=workdir,
                                    prefer=args.link, subprocess_cli=args.subprocess)
    except ExperimentError as error:
        print(f"two_agents: {error}", file=sys.stderr)
        return 1
    finally:
        if not args.workdir:
            shutil.rmtree(workdir, ignore_errors=True)
    if args.doc and "mode" not in result:
        write_doc(result, args.doc, "make experiment")
    if args.json:
        slim = json.loads(json.dumps(result))
        print(json.dumps(slim, indent=2))
    else:
        for arm, s in result["arms"].items():
            print(f"{arm:12} B errors on A-only pitfalls: {s.get('b_errors_on_a_only_pitfalls', '–')}"
                  f"   link: {s['link']}   bytes: {s['bytes_crossed']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
