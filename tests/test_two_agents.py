"""The two-agent experiment, in a short run: B avoids a pitfall only A met when it trusts A, not
without the commons; and nothing but signed records crosses from A's home to B's."""

from __future__ import annotations

import json
import lzma
from pathlib import Path

from simulations.experiment.task_world import Memory, Outcome, PITFALLS, ScriptedAgent, make_plan
from simulations.experiment.two_agents import Node, run_arm, summarise

SEED, DAYS, A_ONLY, B_OWN = 3, 8, 2, 1
LINK = "daemon"  # the real wire: two daemons on loopback


def test_plan_is_reproducible_and_puts_a_before_b():
    plan = make_plan(SEED, DAYS, A_ONLY, B_OWN)
    assert plan == make_plan(SEED, DAYS, A_ONLY, B_OWN)
    for name in plan.a_only:
        a_days = [d for (agent, d), v in plan.sessions.items() if agent == "ada" and name in dict(v)]
        b_days = [d for (agent, d), v in plan.sessions.items() if agent == "bo" and name in dict(v)]
        assert len(a_days) == 2 and len(b_days) == 3
        assert max(a_days) + 2 < min(b_days)  # A's lesson has a night to be made and one to travel


def test_agent_avoids_a_pitfall_its_memory_covers_and_meets_one_it_does_not(tmp_path):
    pitfall = PITFALLS["npm-ci-no-lockfile"]
    memory = tmp_path / "memory"
    memory.mkdir()
    (memory / "MEMORY.md").write_text("- [x](commons-aaaaaaaaaaaa.md)\n")
    (memory / "commons-aaaaaaaaaaaa.md").write_text(
        '---\nid: "aaaa"\nlayer: "common"\nprediction: null\n---\n\n`npm ci` failed with "npm error The '
        "'npm ci' command can only install with an existing package-lock.json or\" (seen 2 times).\n")
    agent = ScriptedAgent("bo", tmp_path / "tr", memory)
    (tmp_path / "tr").mkdir()
    path = agent.work(1, [(pitfall.name, "docs"), ("go-mod-tidy", "auth")])
    outcomes = {e.pitfall: (e.outcome, e.layer) for e in agent.encounters}
    assert outcomes["npm-ci-no-lockfile"] == (Outcome.AVOIDED, "common")
    assert outcomes["go-mod-tidy"] == (Outcome.MET, None)
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    errors = [b for rec in lines if rec.get("type") == "user" and isinstance(rec["message"]["content"], list)
              for b in rec["message"]["content"] if b.get("is_error")]
    assert len(errors) == 1 and "go mod tidy" in errors[0]["content"]
    assert Memory.load(memory).covering("npm ci", pitfall.surprise("docs")) is not None


def _home_bytes(folder: Path) -> list[tuple[Path, bytes]]:
    out = []
    for path in folder.rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            out.append((path, lzma.decompress(data) if path.suffix == ".xz" else data))
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


def test_trusted_b_avoids_a_pitfall_only_a_met_and_control_b_does_not(tmp_path):
    plan = make_plan(SEED, DAYS, A_ONLY, B_OWN)
    control = summarise(run_arm("control", plan, SEED, tmp_path / "control", prefer=LINK), plan)
    trusted_run = run_arm("trusted", plan, SEED, tmp_path / "trusted", prefer=LINK)
    trusted = summarise(trusted_run, plan)
    assert control["link"] == trusted["link"] == ("daemon" if LINK == "daemon" else "file (fallback)")
    assert control["b_errors_on_a_only_pitfalls"] >= len(plan.a_only)
    assert control["b_avoided_a_only_via_common"] == 0
    assert trusted["b_avoided_a_only_via_common"] >= 1
    assert trusted["b_errors_on_a_only_pitfalls"] < control["b_errors_on_a_only_pitfalls"]
    assert trusted["records"]["ada"]["lessons_published"] >= 1 and trusted["bytes_crossed"] > 0

    # Nothing but records crossed: B's home and memory hold none of A's raw stream.
    a, b = trusted_run.a, trusted_run.b
    theirs = _strings(b)  # a request B made too (or one inside B's longer one) is not A's to leak
    secrets = {x for x in _strings(a) if not any(x in y for y in theirs)}
    assert len(secrets) > 10
    for path, data in _home_bytes(b.home) + _home_bytes(b.memory):
        for secret in secrets:
            assert secret.encode() not in data, f"{secret!r} from A's transcripts is in B's {path}"
    manifests = [json.loads(p.read_text()) for p in (b.home / "data" / "archive").rglob("*.json")]
    assert manifests and all("/ada/" not in json.dumps(m) for m in manifests)
    episodes = b.cli("episodes", "--limit", "0", "--json")["episodes"]
    b_sessions = {json.loads(line)["sessionId"] for p in b.transcripts.glob("*.jsonl")
                  for line in p.read_text().splitlines() if "sessionId" in json.loads(line)}
    assert {e["session"] for e in episodes} <= b_sessions
    received = [r for r in b.records() if r["record"].get("author") == a.author]
    assert received and {r["type"] for r in received} <= {"lesson", "verification"}


def test_control_b_meets_every_a_only_pitfall_until_its_own_lesson(tmp_path):
    """Without the commons B learns alone: an error must repeat, so each A-only pitfall costs B two."""
    plan = make_plan(SEED, DAYS, A_ONLY, B_OWN)
    control = summarise(run_arm("control", plan, SEED, tmp_path, prefer="file"), plan)
    assert control["b_errors_on_a_only_pitfalls"] == 2 * len(plan.a_only)
    assert control["b_avoided_a_only_via_common"] == 0
    assert control["agents"]["ada"]["repeated_error_rate"] > 0
    assert control["records"]["bo"]["lessons_received"] == 0
