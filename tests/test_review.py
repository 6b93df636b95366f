"""Peer review through the store and the CLI: received lessons verified against later sessions,
promotion and fade-out, the common layer of the memory folder, content dedupe, `commons why`."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from commons.core.records import Outcome, Prediction, sign
from tests.review_helpers import (DAY, OPEN_TRUST, Nodes, key, lesson, pip_once, pip_sessions, pip_works, unrelated,
                                  verification, write_lines)
from tests.transcripts import pip_fails, session

PUBLISHED_AT = "2026-11-03T12:00Z"


@pytest.fixture
def nodes(tmp_path, monkeypatch, capsys) -> Nodes:
    return Nodes(tmp_path, monkeypatch, capsys)


def publish_ada(nodes: Nodes, tmp_path) -> str:
    """ada learns the pip pitfall from two failures and publishes it; returns its record id."""
    nodes.init("ada")
    nodes.publish_on("ada")
    nodes.ingest("ada", pip_sessions(tmp_path / "s-ada", 2), "2026-11-02T18:00Z")
    night = nodes.json("ada", "sleep", at="2026-11-03T03:00Z")
    (signed,) = [s for s in night["review"]["signed"] if s["type"] == "lesson"]
    return signed["id"]


def exported(nodes: Nodes, name: str, rtype: str) -> list[dict]:
    lines = nodes.ok(name, "export", "--type", rtype).splitlines()
    return [json.loads(line)["record"] | {"id": json.loads(line)["id"]} for line in lines]


def test_received_lesson_met_after_receipt_yields_a_signed_naive_confirmation(nodes, tmp_path):
    rid = publish_ada(nodes, tmp_path)
    nodes.init("grace")
    nodes.publish_on("grace")
    assert nodes.carry("ada", "grace", PUBLISHED_AT)["accepted"] == 1
    nodes.ingest("grace", pip_once(tmp_path / "s-grace", 5, "report"), "2026-11-05T18:00Z")
    night = nodes.json("grace", "sleep", at="2026-11-06T03:00Z")
    # The failure met, and the fix the lesson names (`uv add <package>`) made it go away here.
    assert night["review"]["judged"] == [{"lesson": rid, "how": "fix-confirmed", "naive": True}]
    (made,) = exported(nodes, "grace", "verification")
    assert (made["lesson"], made["outcome"], made["fix"], made["naive"]) == (rid, "confirmed", "fix-confirmed", True)
    assert made["received"] == 20760 and made["observed"] == 20762  # Nov 3 and Nov 5
    why = nodes.json("grace", "why", rid[:10])
    (v,) = why["verifications"]
    assert v["mine"] and v["counted"] and why["confirmations"] == 1 and why["status"] == "candidate"


def test_a_node_that_met_the_surprise_before_receipt_and_fixed_it_the_same_way_confirms_the_fix(nodes, tmp_path):
    rid = publish_ada(nodes, tmp_path)
    nodes.init("linus")
    nodes.publish_on("linus")
    nodes.ingest("linus", pip_once(tmp_path / "s-linus", 1, "early", hour=8), "2026-11-01T18:00Z")
    nodes.carry("ada", "linus", PUBLISHED_AT)
    nodes.ingest("linus", pip_once(tmp_path / "s-linus", 5, "again"), "2026-11-05T18:00Z")
    night = nodes.json("linus", "sleep", at="2026-11-06T03:00Z")
    # Its own lesson (the same fix) is not published: ada's stands for it, and it says it met the
    # failure before receipt, both at the failure after receipt and for its own lesson's founding
    # one, where its own session ran the same `uv add` and the install then worked.
    assert night["review"]["judged"] == [{"lesson": rid, "how": "fix-confirmed", "naive": False},
                                         {"lesson": rid, "how": "fix-confirmed", "naive": False}]
    nodes.carry("linus", "ada", "2026-11-06T12:00Z", "--type", "verification")
    held = nodes.json("ada", "why", rid)["verifications"]
    assert held and all(not v["naive"] for v in held)
    # The fix ran and worked: that counts whatever linus had met before (its latest word, once).
    assert [v["fix"] for v in held if v["counted"]] == ["fix-confirmed"]


def test_a_node_whose_own_sessions_found_the_same_fix_before_receipt_confirms_it_without_meeting_it_again(
        nodes, tmp_path):
    # The fix a received lesson names, found and proven by this node's own sessions before it
    # arrived: an independent test of that fix (before: a corroboration, counted for nothing, so a
    # lesson that reached nodes after they had learnt the same fix waited for three more meetings).
    rid = publish_ada(nodes, tmp_path)
    nodes.init("linus")
    nodes.ingest("linus", pip_sessions(tmp_path / "s-linus", 1, "early"), "2026-11-01T18:00Z")
    (learned,) = nodes.json("linus", "sleep", at="2026-11-02T03:00Z")["learned"]
    nodes.carry("ada", "linus", PUBLISHED_AT)
    nodes.publish_on("linus")
    night = nodes.json("linus", "sleep", at="2026-11-04T03:00Z")
    assert night["review"]["represented"] == [{"lesson": learned["lesson"], "by": rid}]
    assert night["review"]["judged"] == [{"lesson": rid, "how": "fix-confirmed", "naive": False}]
    nodes.carry("linus", "ada", "2026-11-04T12:00Z", "--type", "verification")
    (v,) = nodes.json("ada", "why", rid)["verifications"]
    assert v["counted"] and v["fix"] == "fix-confirmed"


def test_a_received_lesson_whose_situation_never_arises_gets_no_verification(nodes, tmp_path):
    publish_ada(nodes, tmp_path)
    nodes.init("hedy")
    nodes.publish_on("hedy")
    nodes.carry("ada", "hedy", PUBLISHED_AT)
    nodes.ingest("hedy", unrelated(tmp_path / "s-hedy", 5, "readme"), "2026-11-05T18:00Z")
    night = nodes.json("hedy", "sleep", at="2026-11-06T03:00Z")
    assert night["review"]["judged"] == []
    assert nodes.ok("hedy", "export", "--type", "verification") == ""


def test_promotion_happens_at_exactly_the_required_number_and_renders_the_common_layer(nodes, tmp_path):
    nodes.init("olga", trust=OPEN_TRUST.format(required=3))
    target = lesson(key(1), "`pip install` failed with 'externally-managed-environment' on Debian 12.")
    nodes.run("olga", "import", str(write_lines(tmp_path / "l.jsonl", [target])), at=PUBLISHED_AT)
    for n in (2, 3):
        nodes.run("olga", "import", str(write_lines(tmp_path / f"v{n}.jsonl", [verification(key(n), target.id)])),
                  at="2026-11-06T12:00Z")
    (state,) = nodes.lessons("olga", "candidate", at="2026-11-06T12:00Z")
    assert (state["confirmations"], state["independent"]) == (2, 2)
    assert "commons:begin common" not in nodes.memory("olga")
    out = nodes.json("olga", "import", str(write_lines(tmp_path / "v4.jsonl", [verification(key(4), target.id)])),
                     at="2026-11-06T12:00Z")
    assert out["status_changes"][0]["to"] == "common"
    (state,) = nodes.lessons("olga", "common", at="2026-11-06T12:00Z")
    assert (state["confirmations"], state["independent"], state["failures"]) == (3, 3, 0)
    memory = nodes.memory("olga")
    assert "commons:begin common" in memory and "confirmed by 3" in memory and target.id.hex()[:12] in memory


def test_common_lesson_fades_out_of_the_memory_folder_when_failures_come(nodes, tmp_path):
    nodes.init("olga", trust=OPEN_TRUST.format(required=2))
    target = lesson(key(1), "`pip install` failed with 'externally-managed-environment' on Debian 12.")
    confirmations = [verification(key(n), target.id) for n in (2, 3)]
    nodes.run("olga", "import", str(write_lines(tmp_path / "a.jsonl", [target, *confirmations])), at="2026-11-06T12:00Z")
    assert target.id.hex()[:12] in nodes.memory("olga")
    failures = [verification(key(n), target.id, Outcome.FAILED, day=20765) for n in (4, 5)]
    nodes.run("olga", "import", str(write_lines(tmp_path / "f.jsonl", failures)), at="2026-11-08T12:00Z")
    (state,) = nodes.lessons("olga", "candidate", at="2026-11-08T12:00Z")
    assert (state["confirmations"], state["failures"]) == (2, 2)
    assert target.id.hex()[:12] not in nodes.memory("olga")
    report = nodes.json("olga", "report", at="2026-11-08T13:00Z")
    assert [c["to"] for c in report["commons"]] == ["common", "candidate"]


def _uv_works(folder, day: int, slug: str):
    """A session that runs the fix the pip lesson names, and it works (the lesson followed)."""
    s = session(folder, day, slug)
    s.user("add tenacity for the retries")
    s.bash("uv add tenacity", "Add tenacity with uv", "Resolved 3 packages\n + tenacity==9.0.0")
    s.write()
    return s.path


def _grace_holds_ada_common(nodes, tmp_path) -> str:
    rid = publish_ada(nodes, tmp_path)
    nodes.init("grace", trust=OPEN_TRUST.format(required=1))
    nodes.publish_on("grace")
    nodes.carry("ada", "grace", PUBLISHED_AT)
    nodes.ingest("grace", pip_once(tmp_path / "s-grace", 5, "report"), "2026-11-05T18:00Z")
    nodes.json("grace", "sleep", at="2026-11-06T03:00Z")
    assert nodes.lessons("grace", "common", at="2026-11-06T04:00Z")[0]["id"] == rid
    assert rid[:12] in nodes.memory("grace")
    return rid


def test_an_own_lesson_whose_failure_another_agent_met_later_says_so_first_in_its_file(nodes, tmp_path):
    # Its account said only when this node last met it; an agent reading an old day there tries
    # the command plainly (the experiment's 14-day plain try), though others met it since.
    rid = _grace_holds_ada_common(nodes, tmp_path)
    nodes.carry("grace", "ada", "2026-11-06T12:00Z", "--type", "verification")
    nodes.json("ada", "render", at="2026-11-06T13:00Z")
    (own,) = [lesson for lesson in nodes.lessons("ada", "active", at="2026-11-06T13:00Z") if lesson["record_id"] == rid]
    file = (nodes.home("ada").data_dir / "memory" / f"commons-{own['id'][:12]}.md").read_text()
    seen = file.partition("## What was seen")[2]
    assert seen.split("\n")[2] == "Its failure last seen on 2026-11-05, by another agent."
    assert "last on 2026-11-02" in seen


@pytest.mark.parametrize("later, how, signed, rendered", [
    # The fix the lesson names ran and worked: it did its job, but a stale lesson would look the
    # same, so nothing is signed and the date its failure was last seen stays the confirmation's.
    (_uv_works, "prevented", ["confirmed"], True),
    (pip_works, "failed", ["confirmed", "failed"], False),  # its "failing" command just worked: wrong or stale here
], ids=["named-fix-worked-so-it-stays", "failing-command-worked-so-it-fails-and-leaves-here"])
def test_while_rendered_the_named_fix_working_is_prevention_and_the_command_working_is_failure(
        nodes, tmp_path, later, how, signed, rendered):
    rid = _grace_holds_ada_common(nodes, tmp_path)
    nodes.ingest("grace", later(tmp_path / "s-grace", 8, "later"), "2026-11-08T18:00Z")
    night = nodes.json("grace", "sleep", at="2026-11-09T03:00Z")
    assert night["review"]["judged"] == [{"lesson": rid, "how": how, "naive": True}]
    outcomes = sorted(v["outcome"] for v in exported(nodes, "grace", "verification"))
    assert outcomes == signed
    assert (rid[:12] in nodes.memory("grace")) is rendered
    if rendered:
        file = nodes.home("grace").data_dir / "memory" / f"commons-{rid[:12]}.md"
        assert "its failure last seen on 2026-11-05" in file.read_text()


def test_situation_met_unwarned_without_the_outcome_is_a_failed_verification(nodes, tmp_path):
    rid = publish_ada(nodes, tmp_path)
    nodes.init("grace")
    nodes.publish_on("grace")
    nodes.carry("ada", "grace", PUBLISHED_AT)
    nodes.ingest("grace", pip_works(tmp_path / "s-grace", 5, "venv"), "2026-11-05T18:00Z")
    night = nodes.json("grace", "sleep", at="2026-11-06T03:00Z")
    assert night["review"]["judged"] == [{"lesson": rid, "how": "failed", "naive": True}]
    assert [v["outcome"] for v in exported(nodes, "grace", "verification")] == ["failed"]


def test_the_lessons_command_working_with_other_options_is_no_verification(nodes, tmp_path):
    # `pip install -e .` is not the `pip install rich` that failed: its success says nothing of the pitfall.
    publish_ada(nodes, tmp_path)
    nodes.init("grace")
    nodes.publish_on("grace")
    nodes.carry("ada", "grace", PUBLISHED_AT)
    nodes.ingest("grace", pip_works(tmp_path / "s-grace", 5, "venv", "pip install -e ."), "2026-11-05T18:00Z")
    night = nodes.json("grace", "sleep", at="2026-11-06T03:00Z")
    assert night["review"]["judged"] == []


def test_own_surprise_matching_a_common_lesson_is_kept_locally_but_not_published_again(nodes, tmp_path):
    rid = publish_ada(nodes, tmp_path)
    ada_key = nodes.json("ada", "id")["author"]
    nodes.init("grace", trust=f"\n[trust]\nauthors = [\"{ada_key}\"]\n")
    nodes.publish_on("grace")
    nodes.carry("ada", "grace", PUBLISHED_AT)
    assert nodes.lessons("grace", "common", at=PUBLISHED_AT)[0]["id"] == rid  # ada is one of grace's authors
    nodes.ingest("grace", pip_sessions(tmp_path / "s-grace", 5, "own"), "2026-11-05T18:00Z")
    night = nodes.json("grace", "sleep", at="2026-11-06T03:00Z")
    (learned,) = night["learned"]
    assert night["review"]["represented"] == [{"lesson": learned["lesson"], "by": rid}]
    assert not any(s["type"] == "lesson" for s in night["review"]["signed"])  # no duplicate published
    assert [d["id"] for d in exported(nodes, "grace", "lesson")] == [rid]  # ada's only
    mine = [d for d in nodes.lessons("grace", "active", at="2026-11-06T04:00Z") if d["id"] == learned["lesson"]]
    assert mine and mine[0]["represented_by"] == rid  # kept locally
    assert [v["lesson"] for v in exported(nodes, "grace", "verification")] == [rid]  # verified instead
    memory = nodes.memory("grace")
    assert rid[:12] in memory and learned["lesson"][:12] not in memory  # shown once, as the common one


def test_a_local_own_lesson_naming_the_fix_of_a_common_one_is_shown_once_as_the_common_one(nodes, tmp_path):
    # Its own file knows only this node's meetings; the common one says when any node last met the
    # failure (experiment seed 1: a local `git push` lesson, 14 days old in its own file, made the
    # agent try the push plainly while the common lesson beside it had been met 6 days before).
    rid = publish_ada(nodes, tmp_path)
    ada_key = nodes.json("ada", "id")["author"]
    nodes.init("grace", trust=f"\n[trust]\nauthors = [\"{ada_key}\"]\n")
    nodes.ingest("grace", pip_sessions(tmp_path / "s-grace", 2, "own"), "2026-11-02T18:00Z")
    (learned,) = nodes.json("grace", "sleep", at="2026-11-03T03:00Z")["learned"]
    nodes.ok("grace", "lessons", "scope", learned["lesson"][:12], "local", "--yes")
    nodes.publish_on("grace")
    nodes.carry("ada", "grace", PUBLISHED_AT)
    night = nodes.json("grace", "sleep", at="2026-11-06T03:00Z")
    assert night["review"]["represented"] == [{"lesson": learned["lesson"], "by": rid}]
    assert not any(s["type"] == "lesson" for s in night["review"]["signed"])
    memory = nodes.memory("grace")
    assert rid[:12] in memory and learned["lesson"][:12] not in memory


def test_opposite_polarity_common_lesson_does_not_absorb_an_own_failure(nodes, tmp_path):
    nodes.init("grace", trust="\n[trust]\npolicy = \"open\"\nauthors = [\"" + bytes(key(9).verify_key).hex() + "\"]\n")
    nodes.publish_on("grace")
    works = lesson(key(9), "`pip install` succeeded inside the project's virtual environment.", day=20760)
    works = sign(replace(works.record, prediction=Prediction("pip install", "Successfully installed")), key(9))
    nodes.run("grace", "import", str(write_lines(tmp_path / "w.jsonl", [works])), at=PUBLISHED_AT)
    nodes.ingest("grace", pip_sessions(tmp_path / "s-grace", 5, "own"), "2026-11-05T18:00Z")
    night = nodes.json("grace", "sleep", at="2026-11-06T03:00Z")
    assert night["review"]["represented"] == []
    assert [s["type"] for s in night["review"]["signed"]].count("lesson") == 1  # its own, published


def test_why_shows_provenance_and_every_verification_with_why_it_did_not_count(nodes, tmp_path):
    nodes.init("olga")
    parent = lesson(key(1), "`pip install` failed with 'externally-managed-environment' on Debian 12.")
    child = lesson(key(2), "`pip install --user` failed the same way on Debian 12.", parents=[parent.id])
    records = [parent, child, verification(key(3), child.id), verification(key(1), child.id),
               verification(key(4), child.id, naive=False)]
    nodes.run("olga", "import", str(write_lines(tmp_path / "r.jsonl", records)), at="2026-11-06T12:00Z")
    why = nodes.json("olga", "why", child.id.hex()[:8], at="2026-11-06T12:00Z")
    assert why["status"] == "candidate" and why["provenance"] == [
        {"id": parent.id.hex(), "depth": 1, "held": True, "text": parent.record.text,
         "author": bytes(key(1).verify_key).hex(), "status": "candidate"}]
    reasons = {v["verifier"][:8]: v["why_not"] for v in why["verifications"]}
    assert reasons == {bytes(key(3).verify_key).hex()[:8]: None,
                       bytes(key(1).verify_key).hex()[:8]: "the verifier wrote a lesson this one derives from",
                       bytes(key(4).verify_key).hex()[:8]: "the verifier had met the surprise before receiving the lesson"}
    assert set(why["verifications"][0]) >= {"verifier", "outcome", "observed", "received", "counted", "why_not"}
    text = nodes.ok("olga", "why", child.id.hex()[:8], at="2026-11-06T12:00Z")
    assert "derived from:" in text and "not counted" in text


def test_a_common_lesson_from_another_agent_is_recalled_and_a_candidate_is_not(nodes, tmp_path):
    nodes.init("olga", trust=OPEN_TRUST.format(required=1))
    common = lesson(key(1), "`pip install` failed with 'externally-managed-environment' on Debian 12.")
    candidate = lesson(key(5), "`cargo build` failed with 'linker cc not found' on a fresh Alpine image.")
    nodes.run("olga", "import", str(write_lines(tmp_path / "l.jsonl", [common, candidate])), at=PUBLISHED_AT)
    nodes.run("olga", "import", str(write_lines(tmp_path / "v.jsonl", [verification(key(2), common.id)])),
              at="2026-11-06T12:00Z")
    hits = nodes.json("olga", "recall", "pip install externally-managed-environment", at="2026-11-06T12:00Z")
    assert hits[0]["id"] == common.id.hex() and hits[0]["type"] == "common"
    assert candidate.id.hex() not in {h["id"] for h in nodes.json("olga", "recall", "cargo build linker",
                                                                    at="2026-11-06T12:00Z")}


def _uv_fails(folder, day: int, slug: str):
    """A session that runs the fix the pip lesson names, and it fails here."""
    s = session(folder, day, slug)
    s.user("add tenacity for the retries")
    s.bash("uv add tenacity", "Add tenacity with uv", "error: No `pyproject.toml` found in current directory or any parent",
           exit_code=2)
    s.write()
    return s.path


def test_the_session_end_nap_stops_rendering_a_common_lesson_whose_fix_just_failed_here(nodes, tmp_path):
    from commons import runtime
    from commons.cli.context import Context
    from commons.node.nap import nap

    rid = _grace_holds_ada_common(nodes, tmp_path)
    nodes.ingest("grace", _uv_fails(tmp_path / "s-grace", 8, "retries"), "2026-11-08T18:00Z")
    ctx = Context(nodes.home("grace"), "2026-11-08T18:05Z")

    async def session_end():
        async with await ctx.open_store() as store:
            return await nap(store, ctx.node, ctx.now())

    report = runtime.run(session_end)
    assert report.failed_here == (rid,)
    assert rid[:12] not in nodes.memory("grace")  # the next session of the day does not read it
    night = nodes.json("grace", "sleep", at="2026-11-09T03:00Z")  # the night signs the failure
    assert night["review"]["judged"] == []
    assert sorted(v["outcome"] for v in exported(nodes, "grace", "verification")) == ["confirmed", "failed"]
    assert rid[:12] not in nodes.memory("grace")


def test_an_own_lesson_others_refute_by_the_trust_margin_leaves_its_authors_folder(nodes, tmp_path):
    rid = bytes.fromhex(publish_ada(nodes, tmp_path))
    assert "`pip install` failed" in nodes.memory("ada")
    at = "2026-11-12T12:00Z"
    two = [verification(key(n), rid, Outcome.FAILED, day=DAY + 9) for n in (2, 3)]
    nodes.run("ada", "import", str(write_lines(tmp_path / "f2.jsonl", two)), at=at)
    nodes.ok("ada", "render", at=at)
    assert "`pip install` failed" in nodes.memory("ada")  # two failures, required = 3: still held
    third = [verification(key(4), rid, Outcome.FAILED, day=DAY + 9)]
    nodes.run("ada", "import", str(write_lines(tmp_path / "f3.jsonl", third)), at=at)
    nodes.ok("ada", "render", at=at)
    assert "`pip install` failed" not in nodes.memory("ada")


def test_one_meeting_of_a_failure_a_received_lesson_predicts_is_an_own_lesson_the_next_morning(nodes, tmp_path):
    publish_ada(nodes, tmp_path)
    for name in ("grace", "hopper"):
        nodes.init(name)
    assert nodes.carry("ada", "grace", PUBLISHED_AT)["accepted"] == 1  # hopper receives nothing
    for name in ("grace", "hopper"):
        nodes.ingest(name, pip_once(tmp_path / f"s-{name}", 5, "report"), "2026-11-05T18:00Z")
        nodes.ok(name, "sleep", at="2026-11-06T03:00Z")
    own = lambda name: [l["text"] for l in nodes.json(name, "lessons", "--status", "all") if l["origin"] == "own"]
    # The commons met it at ada's: grace's one meeting has repeated, and her own fix is her lesson.
    (text,) = own("grace")
    assert "externally-managed-environment" in text and "(1 session)" in text
    assert own("hopper") == []  # met once, nowhere else: it waits for its repeat


def _pip_once_for_the_user(folder, day: int, slug: str):
    s = session(folder, day, slug)
    s.user("install rich for the report table")
    pip_fails(s, "rich")
    s.bash("pip install --user rich", "Install rich for the user", "Successfully installed rich-13.9.4")
    s.write()
    return s.path


def _grace_meets_ada_candidate(nodes, tmp_path, meeting) -> tuple[str, dict]:
    """ada publishes the pip lesson (fix: `uv add <package>`); grace, who trusts no one yet,
    receives it as a candidate, meets the failure once and fixes it by ``meeting``'s session."""
    rid = publish_ada(nodes, tmp_path)
    nodes.init("grace")
    nodes.publish_on("grace")
    nodes.carry("ada", "grace", PUBLISHED_AT)
    assert [l["id"] for l in nodes.lessons("grace", "candidate", at=PUBLISHED_AT)] == [rid]
    nodes.ingest("grace", meeting(tmp_path / "s-grace", 5, "report"), "2026-11-05T18:00Z")
    return rid, nodes.json("grace", "sleep", at="2026-11-06T03:00Z")


def test_own_lesson_naming_the_fix_of_a_candidate_is_not_published_again(nodes, tmp_path):
    rid, night = _grace_meets_ada_candidate(nodes, tmp_path, pip_once)
    (learned,) = night["learned"]  # one meeting of what the commons met elsewhere: her own lesson
    assert night["review"]["represented"] == [{"lesson": learned["lesson"], "by": rid}]
    assert [s["type"] for s in night["review"]["signed"]] == ["verification"]  # no duplicate lesson
    assert [d["id"] for d in exported(nodes, "grace", "lesson")] == [rid]
    assert night["review"]["judged"] == [{"lesson": rid, "how": "fix-confirmed", "naive": True}]
    # Kept and rendered as her own while ada's is a candidate (a candidate is not rendered).
    assert learned["lesson"][:12] in nodes.memory("grace")


def test_own_lesson_naming_another_fix_than_a_candidate_is_published_beside_it(nodes, tmp_path):
    rid, night = _grace_meets_ada_candidate(nodes, tmp_path, _pip_once_for_the_user)
    (learned,) = night["learned"]
    assert "pip install --user" in learned["text"]
    assert night["review"]["represented"] == []
    assert [s["type"] for s in night["review"]["signed"]].count("lesson") == 1  # a rival, published
    assert len(exported(nodes, "grace", "lesson")) == 2
