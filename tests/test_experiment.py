"""The N-agent experiment (issue #17), short: an agent with no oracle follows only a lesson whose
text names a fix, and a wrong one misleads it; in a 4-agent run on real daemons, an agent that
trusts the others avoids a pitfall another agent met first, without the commons it does not, and
when no session shows a fix nothing helps; nothing but records crosses between homes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from commons.ingest.archive import decompress_chunk
from commons.ingest.lessons_report import measure
from simulations.experiment.agent import Agent, Outcome, read_memory
from simulations.experiment.figures import arm_figures
from simulations.experiment.homes import Node
from simulations.experiment.n_agents import run_arm
from simulations.experiment.schedule import make_plan
from simulations.experiment.world import PITFALLS, World

SEED = 5


def _lesson_from_sessions(tmp_path: Path, pitfall: str, world: World, who: str = "ada") -> str:
    """The lesson commons itself makes from two of ``who``'s sessions meeting ``pitfall``."""
    folder = tmp_path / f"{who}-sessions"
    agent = Agent(who, f"/home/{who}/src/app", folder, tmp_path / "none", world)
    value = PITFALLS[pitfall].fills[0]
    agent.work(1, [(PITFALLS[pitfall], value)])
    agent.work(3, [(PITFALLS[pitfall], value)])
    (text,) = [l.text for l in measure(sorted(folder.glob("*.jsonl"))).lessons if l.kind.value == "error"]
    return text


def _memory(folder: Path, text: str) -> Path:
    folder.mkdir(parents=True)
    (folder / "MEMORY.md").write_text("# Memory\n\n- [a lesson](commons-aaaaaaaaaaaa.md)\n")
    (folder / "commons-aaaaaaaaaaaa.md").write_text(f'---\nid: "aaaa"\nlayer: "common"\n---\n\n{text}\n')
    return folder


def _errors_in(path: Path) -> list[str]:
    out = []
    for line in path.read_text().splitlines():
        rec = json.loads(line)
        content = rec.get("message", {}).get("content") if rec.get("type") == "user" else None
        if isinstance(content, list):
            out += [b["content"] for b in content if isinstance(b, dict) and b.get("is_error")]
    return out


@pytest.mark.parametrize("pitfall", ["npm-ci-no-lockfile", "git-push-non-fast-forward", "pip-externally-managed",
                                     "cargo-rustc-too-old", "pytest-async-strict"])
def test_an_agent_runs_the_fix_a_lesson_names_and_so_avoids_the_error(tmp_path, pitfall):
    world = World()
    text = _lesson_from_sessions(tmp_path, pitfall, world)
    agent = Agent("bo", "/home/bo/src/app", tmp_path / "bo", _memory(tmp_path / "mem", text), world, compliance=1.0)
    path = agent.work(5, [(PITFALLS[pitfall], PITFALLS[pitfall].fills[0])])
    assert agent.encounters[-1].outcome is Outcome.AVOIDED, text
    assert _errors_in(path) == []


def test_a_lesson_that_names_no_fix_that_worked_changes_nothing(tmp_path):
    world = World(shows_fix=False)
    text = _lesson_from_sessions(tmp_path, "npm-ci-no-lockfile", world)
    assert "succeeded after" not in text and "passed after" not in text  # nothing worked in those sessions
    agent = Agent("bo", "/home/bo/src/app", tmp_path / "bo", _memory(tmp_path / "mem", text), world, compliance=1.0)
    path = agent.work(5, [(PITFALLS["npm-ci-no-lockfile"], "docs")])
    assert agent.encounters[-1].outcome is Outcome.MET
    assert len(_errors_in(path)) == 1


def test_a_wrong_fix_works_only_on_its_authors_machine_and_misleads_everyone_else(tmp_path):
    world = World(quirk=("hal", "npm-ci-no-lockfile"))
    text = _lesson_from_sessions(tmp_path, "npm-ci-no-lockfile", world, who="hal")
    assert "`npm ci --legacy-peer-deps` succeeded after it" in text
    agent = Agent("bo", "/home/bo/src/app", tmp_path / "bo", _memory(tmp_path / "mem", text), world, compliance=1.0)
    path = agent.work(5, [(PITFALLS["npm-ci-no-lockfile"], "docs")])
    assert agent.encounters[-1].outcome is Outcome.MISLED
    commands = [b["input"]["command"] for line in path.read_text().splitlines()
                for b in (json.loads(line).get("message", {}).get("content") or [])
                if isinstance(b, dict) and b.get("type") == "tool_use" and b["name"] == "Bash"]
    # The lesson's fix failed, the command failed, then the agent's own fix worked.
    assert commands[:3] == ["npm ci --legacy-peer-deps", "npm ci", "npm install"]


def test_a_pitfall_fixed_upstream_just_works_from_its_day():
    world = World(fixed_upstream={"go-mod-tidy": 4})
    pitfall = PITFALLS["go-mod-tidy"]
    assert not world.run("ada", 3, pitfall, "auth", "go test ./...").ok
    assert world.run("ada", 4, pitfall, "auth", "go test ./...").ok


def test_the_plan_is_reproducible_and_each_pitfall_is_met_first_by_a_different_agent():
    plan = make_plan(SEED, agents=8, days=28, pitfalls=8)
    assert plan == make_plan(SEED, agents=8, days=28, pitfalls=8)
    assert len(set(plan.first.values())) == 8
    for name, who in plan.first.items():
        days = sorted(d for (agent, d), names in plan.sessions.items() if name in names and agent == who)
        others = [d for (agent, d), names in plan.sessions.items() if name in names and agent != who]
        assert len(days) == 2 and min(others) > max(days)


def _home_bytes(folder: Path) -> list[tuple[Path, bytes]]:
    out = []
    for path in folder.rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            out.append((path, decompress_chunk(data) if path.suffix in (".xz", ".zst") else data))
    return out


def _strings(node: Node) -> set[str]:
    """What a node's raw stream holds: its working folder, its session ids, its requests."""
    found = {f"/home/{node.name}/src/"}
    for path in node.transcripts.glob("*.jsonl"):
        for line in path.read_text().splitlines():
            rec = json.loads(line)
            if rec.get("sessionId"):
                found.add(rec["sessionId"])
            if rec.get("type") == "user" and isinstance(rec["message"]["content"], str):
                found.add(rec["message"]["content"])
    return found


def test_four_agents_trusted_avoid_what_another_met_first_control_and_no_fix_seen_do_not(tmp_path):
    plan = make_plan(SEED, agents=4, days=5, pitfalls=1, meets=1, changes=False)
    runs = {arm: run_arm(arm, plan, SEED, tmp_path / arm) for arm in ("control", "trusted", "no_fix_seen")}
    figures = {arm: arm_figures(run, plan, {}) for arm, run in runs.items()}
    assert figures["control"]["encounters_met_elsewhere_first"] == 3
    assert figures["control"]["errors_met_elsewhere_first"] == 3
    assert figures["control"]["avoided_via_common"] == 0
    assert figures["no_fix_seen"]["errors_met_elsewhere_first"] == 3
    assert figures["trusted"]["avoided_via_common"] >= 1
    assert figures["trusted"]["errors_met_elsewhere_first"] < figures["control"]["errors_met_elsewhere_first"]
    assert figures["trusted"]["bytes_on_the_wire"] > 0

    # Nothing but records crossed: no home holds a string unique to another agent's transcripts.
    nodes = runs["trusted"].nodes
    for node in nodes:
        theirs = set().union(*(_strings(o) for o in nodes if o is not node))
        mine = _strings(node)
        for other in nodes:
            if other is node:
                continue
            secrets = {x for x in _strings(other) if not any(x in y for y in mine)}
            assert len(secrets) > 3
            for path, data in _home_bytes(node.home) + _home_bytes(node.memory):
                for secret in secrets:
                    assert secret.encode() not in data, f"{secret!r} from {other.name}'s transcripts is in {path}"
        received = [r for r in node.records() if r["record"].get("author") != node.author]
        assert {r["type"] for r in received} <= {"lesson", "verification", "vouch"}


def test_a_lesson_whose_named_fix_fails_for_a_node_stops_rendering_there_and_its_failure_reaches_the_others(tmp_path):
    plan = make_plan(SEED, agents=4, days=6, pitfalls=1, meets=2, changes=True)
    (wrong,) = plan.pitfalls
    author = plan.quirk[0]
    run = run_arm("trusted", plan, SEED, tmp_path / "trusted")
    misled = [e for e in run.encounters if e.outcome is Outcome.MISLED]
    assert misled, "the wrong lesson misled no one: nothing was tested"
    # Nobody is misled twice: the night after, the lesson is gone from that agent's memory folder.
    assert len({e.agent for e in misled}) == len(misled)
    by_name = {n.name: n for n in run.nodes}
    lesson_ids = {r["id"] for r in by_name[author].records()
                  if r["type"] == "lesson" and r["record"]["author"] == by_name[author].author}
    assert lesson_ids
    for e in misled:
        node = by_name[e.agent]
        assert not {l.id for l in read_memory(node.memory)} & lesson_ids, f"{e.agent} still reads the wrong lesson"
        failed = [r for r in node.records() if r["type"] == "verification" and r["record"]["author"] == node.author
                  and r["record"]["lesson"] in lesson_ids and r["record"]["outcome"] == "failed"]
        assert failed, f"{e.agent} signed no failed verification"
        for other in run.nodes:  # the failure crossed to every node, the author's included
            assert {r["id"] for r in other.records()} >= {r["id"] for r in failed}


DEMO_SESSIONS = Path(__file__).resolve().parents[1] / "commons" / "demo" / "sessions"


@pytest.mark.parametrize("arm", ["trusted", "control"])
def test_replaying_recorded_sessions_says_which_lessons_cross_and_become_common(tmp_path, arm):
    """Replay mode (``--transcripts-for AGENT=DIR``): two agents' recorded sessions, each on its
    own days; with publishing on, each one's shared lessons reach the other and become common
    there; with publishing off nothing crosses."""
    from simulations.experiment.cli import replay

    folders = {who: DEMO_SESSIONS / who for who in ("ada", "grace")}
    result = replay(arm, folders, tmp_path)
    ada, grace = result["agents"]["ada"], result["agents"]["grace"]
    assert ada["sessions"] == grace["sessions"] == 3
    if arm == "control":
        assert ada["crossed"] == grace["crossed"] == [] and ada["lessons_published"] == 0
        return
    assert ada["lessons_published"] > 0 and grace["lessons_published"] > 0
    assert any("npm ci" in text for text in ada["crossed"])  # grace met it; ada never did
    assert any("pip install" in text for text in grace["crossed"])  # and the other way round
    assert set(ada["common"]) <= set(ada["crossed"]) and ada["common"]
    assert result["bytes_on_the_wire"] > 0


# -- the harder world (issue #29 item 2) ----------------------------------------------------------


def test_a_flaky_failure_passes_when_run_again_and_its_lesson_gives_no_advice(tmp_path):
    world = World(seed=1)
    pitfall = PITFALLS["npm-flaky-registry"]
    failing_day = next(d for d in range(1, 30) if not world.run("ada", d, pitfall, "zod", "npm install zod").ok)
    assert world.run("ada", failing_day, pitfall, "zod", "npm install zod").ok  # the rerun passes
    assert sum(World(seed=1).run("bo", d, pitfall, "zod", "npm install zod").ok for d in range(1, 41)) in range(10, 31)


def test_a_look_before_the_fix_prepares_nothing():
    world = World()
    pitfall = PITFALLS["go-mod-tidy"]
    look = world.run("ada", 1, pitfall, "auth", "cat go.mod")
    assert look.ok and not look.changes
    assert world.own_fix("ada", pitfall, "auth")[0] == "cat go.mod"


@pytest.mark.parametrize("text,outcome", [
    # An over-general lesson misleads on a pitfall that shares its command.
    ('`pip install <package>` failed with "error: externally-managed-environment"; '
     '`uv add <package>` succeeded after it (2 of 2 sessions).', Outcome.MISLED),
    # The only lesson on the command is followed for a package it was not seen for.
    ('`pip install` failed with "Error: pg_config executable not found."; `pip install <package>-binary` '
     'succeeded after it, for psycopg2 (2 of 2 sessions).', Outcome.AVOIDED),
])
def test_the_one_lesson_on_pip_install_is_followed_for_a_pg_driver_whatever_it_was_seen_for(tmp_path, text, outcome):
    world = World()
    agent = Agent("bo", "/home/bo/src/app", tmp_path / "bo", _memory(tmp_path / "mem", text), world, compliance=1.0)
    agent.work(5, [(PITFALLS["pip-pg-config"], "psycopg")])
    assert agent.encounters[-1].outcome is outcome


def _memory_of(folder: Path, texts: list[str]) -> Path:
    folder.mkdir(parents=True)
    names = [f"commons-{i:012d}.md" for i in range(len(texts))]
    (folder / "MEMORY.md").write_text("# Memory\n\n" + "".join(f"- [a lesson]({n})\n" for n in names))
    for i, (name, text) in enumerate(zip(names, texts)):
        (folder / name).write_text(f'---\nid: "{i}"\nlayer: "common"\n---\n\n{text}\n')
    return folder


def test_two_lessons_on_pip_install_each_lead_to_its_own_fix_whichever_is_listed_first(tmp_path):
    world = World()
    uv = _lesson_from_sessions(tmp_path / "uv", "pip-externally-managed", world)
    pg = _lesson_from_sessions(tmp_path / "pg", "pip-pg-config", world)
    assert "for psycopg2" in pg and " for " not in uv.partition(";")[2]  # commons' own words say which packages
    for order, texts in enumerate(([uv, pg], [pg, uv])):
        agent = Agent("bo", "/home/bo/src/app", tmp_path / f"bo{order}", _memory_of(tmp_path / f"mem{order}", texts),
                      world, compliance=1.0)
        agent.work(5, [(PITFALLS["pip-pg-config"], "psycopg2"), (PITFALLS["pip-externally-managed"], "attrs")])
        assert [e.outcome for e in agent.encounters] == [Outcome.AVOIDED, Outcome.AVOIDED], texts


def test_a_lesson_naming_a_dangerous_way_round_harms_whoever_follows_it_and_a_warned_one_is_not_followed(tmp_path):
    world = World()
    pitfall = PITFALLS["pre-commit-black"]
    plain = ('`git commit -m <message>` failed with "black....Failed"; '
             '`git commit --no-verify -m <message>` succeeded after it (2 of 2 sessions).')
    agent = Agent("bo", "/home/bo/src/app", tmp_path / "bo", _memory(tmp_path / "mem", plain), world, compliance=1.0)
    agent.work(5, [(pitfall, "cli")])
    assert agent.encounters[-1].outcome is Outcome.HARMED
    warned = plain + " That step skips a check (rule git.no-verify): it disables the repository's commit hooks."
    careful = Agent("cy", "/home/cy/src/app", tmp_path / "cy", _memory(tmp_path / "mem2", warned), world,
                    compliance=1.0)
    careful.work(5, [(pitfall, "cli")])
    assert careful.encounters[-1].outcome is Outcome.MET


def test_a_port_another_program_listens_on_is_not_taken_for_a_night_and_a_closed_one_is():
    import socket

    from simulations.experiment.links import _bindable, _free_port

    port = _free_port()
    with socket.create_server(("127.0.0.1", port)):
        assert not _bindable(port, reuse=True) and not _bindable(port)
    assert _bindable(port, reuse=True)


def test_a_lesson_signed_at_sleep_reaches_every_node_the_night_it_is_made(tmp_path):
    """A night's exchange is settled only when what any node serves is at every node: a lesson
    signed at 03:00 is at each of the others by that night's render, not a night or five later."""
    import sqlite3

    plan = make_plan(SEED, agents=6, days=6, pitfalls=2, meets=1, changes=False)
    run = run_arm("trusted", plan, SEED, tmp_path / "trusted")
    received, refused = {}, {}  # a record a peer's policy refuses stays there, refused: it went as far as it may
    for node in run.nodes:
        db = sqlite3.connect(node.home / "data" / "commons.db")
        received[node.name] = dict(db.execute("SELECT key, received_at FROM records WHERE type = 'lesson'"))
        refused[node.name] = {key for (key,) in db.execute("SELECT key FROM refused")}
        db.close()
    made = {key: at for node in run.nodes for key, at in received[node.name].items()
            if key not in set().union(*(received[o.name] for o in run.nodes if o is not node))
            or at == min(received[o.name].get(key, at) for o in run.nodes)}
    assert len(made) >= 2, "fewer than two lessons were signed: nothing was tested"
    for key, at in made.items():
        late = {n: received[n].get(key) for n in received if not (received[n].get(key) or 1e18) - at < 3600
                and key not in refused[n]}
        assert not late, f"a lesson signed at {at} reached {sorted(late)} only later: {late}"


def test_daemons_as_processes_settle_a_night_only_when_every_record_served_is_at_every_node(tmp_path):
    """The subprocess path (one ``commons daemon`` per node) ends a night by the in-process rule:
    after it, what any node serves is known to every node, and a lesson crossed."""
    plan = make_plan(SEED, agents=3, days=4, pitfalls=1, meets=1, changes=False)
    run = run_arm("trusted", plan, SEED, tmp_path / "trusted", processes=True)
    served = frozenset().union(*(n.served(True) for n in run.nodes))
    assert all(n.known() >= served for n in run.nodes)
    received = [r for n in run.nodes for r in n.records() if r["type"] == "lesson" and r["record"]["author"] != n.author]
    assert received, "no lesson crossed: nothing was tested"


def test_a_first_verifier_is_one_whose_confirmation_the_policy_can_count():
    from dataclasses import replace

    from commons.core.records import Fix, FixSeen
    from commons.core.records import Outcome as Said
    from simulations.experiment.figures import can_count
    from tests.review_helpers import key, lesson, verification

    plain = lesson(key(1), "`pip install` failed with \"error: externally-managed-environment\".").record
    fixed = replace(plain, fix=Fix("Bash", "pip install", "uv add <package>"))
    check = verification(key(2), b"\x01" * 32).record
    assert can_count(plain, check) and not can_count(fixed, check)  # a fix named: the fix must be seen working
    assert can_count(fixed, replace(check, fix=FixSeen.CONFIRMED))
    assert not can_count(fixed, replace(check, fix=FixSeen.OTHER))  # fixed its own way
    assert can_count(fixed, replace(check, fix=FixSeen.CONFIRMED, naive=False))  # the fix ran after receipt
    assert not can_count(plain, replace(check, naive=False))  # met a failure it knew: no test of anything
    assert not can_count(plain, replace(check, outcome=Said.FAILED))
