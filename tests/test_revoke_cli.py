"""Revocation through the store and the CLI: `commons revoke`, `commons revocations`, the cascade,
supersedes ≠ revoke, immediate effect on the memory folder, and death certificates at every door."""

from __future__ import annotations

import json
import shutil

import pytest

from commons.core.records import TargetKind
from tests.review_helpers import Nodes, key, lesson, pip_sessions, revocation, write_lines

AT = "2026-11-06T12:00Z"
LATER = "2026-11-07T12:00Z"
TEXT = "`pip install` failed with 'externally-managed-environment' on Debian 12."
TRUSTING = "\n[trust]\npolicy = \"open\"\nauthors = [{authors}]\n"


@pytest.fixture
def nodes(tmp_path, monkeypatch, capsys) -> Nodes:
    return Nodes(tmp_path, monkeypatch, capsys)


def trusting(*ns: int) -> str:
    """Config trusting keys ``ns`` as the person's authors: their lessons are common on arrival."""
    return TRUSTING.format(authors=", ".join(f'"{bytes(key(n).verify_key).hex()}"' for n in ns))


def own_published(nodes: Nodes, tmp_path, name: str = "ada") -> tuple[str, str]:
    """A node that learned and published the pip lesson: (local id, record id)."""
    nodes.init(name)
    nodes.publish_on(name)
    nodes.ingest(name, pip_sessions(tmp_path / f"s-{name}", 2), "2026-11-02T18:00Z")
    night = nodes.json(name, "sleep", at="2026-11-03T03:00Z")
    (learned,) = night["learned"]
    (signed,) = night["review"]["signed"]
    return learned["lesson"], signed["id"]


def import_records(nodes: Nodes, name: str, path, records, at: str = AT) -> dict:
    code, out, err = nodes.run(name, "import", str(write_lines(path, records)), "--json", at=at)
    assert code in (0, 1), err
    return json.loads(out)


def status_of(nodes: Nodes, name: str, rid: str, at: str = AT) -> str:
    return next(d["status"] for d in nodes.lessons(name, at=at) if rid in (d["id"], d["record_id"]))


def test_revoking_an_own_lesson_by_its_local_id_takes_it_out_of_the_folder_at_once(nodes, tmp_path):
    lid, rid = own_published(nodes, tmp_path)
    assert lid[:12] in nodes.memory("ada")
    out = nodes.json("ada", "revoke", lid[:10], "--reason", "the mirror was misconfigured", at="2026-11-04T09:00Z")
    assert out["applied"] and out["ruling"] == "author" and out["target"] == rid
    assert [d["id"] for d in out["took_down"]] == [rid]
    assert lid[:12] not in nodes.memory("ada")  # re-rendered now, not at the next sleep
    assert status_of(nodes, "ada", lid, "2026-11-04T09:00Z") == "revoked"
    (listed,) = nodes.json("ada", "revocations", at="2026-11-04T09:00Z")
    assert listed["reason"] == "the mirror was misconfigured" and listed["took_down"][0]["id"] == rid
    why = nodes.json("ada", "why", lid[:10], at="2026-11-04T09:00Z")
    assert why["status"] == "revoked" and why["revocation"]["revocations"][0]["id"] == out["id"]
    report = nodes.json("ada", "report", at="2026-11-04T10:00Z")
    assert report["revocations"][0]["id"] == out["id"]
    assert any(c["to"] == "revoked" and "mirror" in c["why"] for c in report["commons"])


def test_revoking_needs_no_publishing_opt_in(nodes, tmp_path):
    nodes.init("olga")
    target = lesson(key(1), TEXT)
    import_records(nodes, "olga", tmp_path / "l.jsonl", [target])
    out = nodes.json("olga", "revoke", target.id.hex()[:10], "--reason", "poisoned", at=AT)
    assert out["mine"] and not out["applied"] and "neither the target's author" in out["why_not"]
    assert '"revocation"' in nodes.ok("olga", "export", "--type", "revocation")  # stored and relayed


def test_cascade_through_a_chain_and_a_diamond_and_why_shows_the_chain(nodes, tmp_path):
    nodes.init("olga", trust=trusting(1, 2, 3))
    root = lesson(key(1), TEXT)
    middle = lesson(key(2), "`pip install --user` failed the same way on Debian 12.", parents=[root.id])
    leaf = lesson(key(3), "`pipx install` worked where `pip install` failed on Debian 12.", parents=[middle.id])
    other = lesson(key(2), "`pip download` kept working on Debian 12.")
    diamond = lesson(key(3), "Both pip failures happened on the same Debian 12 image.", parents=[middle.id, other.id])
    import_records(nodes, "olga", tmp_path / "l.jsonl", [root, middle, leaf, other, diamond])
    memory = nodes.memory("olga")
    assert all(s.id.hex()[:12] in memory for s in (root, middle, leaf, other, diamond))
    out = import_records(nodes, "olga", tmp_path / "r.jsonl", [revocation(key(1), root.id, "wrong mirror")])
    assert {c["lesson"] for c in out["status_changes"]} == {s.id.hex() for s in (root, middle, leaf, diamond)}
    memory = nodes.memory("olga")
    assert other.id.hex()[:12] in memory
    assert not any(s.id.hex()[:12] in memory for s in (root, middle, leaf, diamond))
    assert status_of(nodes, "olga", other.id.hex()) == "common"
    why = nodes.json("olga", "why", leaf.id.hex(), at=AT)
    assert why["revocation"]["cause"] == "provenance"
    assert [c["id"] for c in why["revocation"]["chain"]] == [root.id.hex(), middle.id.hex()]
    (listed,) = nodes.json("olga", "revocations", at=AT)
    assert len(listed["took_down"]) == 4 and listed["applied"]


def test_a_derived_lesson_arriving_after_its_parents_revocation_is_refused_on_arrival(nodes, tmp_path):
    nodes.init("olga", trust=trusting(1, 2))
    root = lesson(key(1), TEXT)
    import_records(nodes, "olga", tmp_path / "a.jsonl", [root, revocation(key(1), root.id)])
    late = lesson(key(2), "`pip install --user` failed the same way on Debian 12.", parents=[root.id])
    out = import_records(nodes, "olga", tmp_path / "b.jsonl", [late], at=LATER)
    assert out["accepted"] == 0 and out["refused"][0]["reason"] == "derived from a revoked lesson"
    assert late.id.hex()[:12] not in nodes.memory("olga")


def test_a_derived_lesson_stored_by_another_door_is_revoked_on_arrival(nodes, tmp_path):
    from commons.runtime import run
    from commons.store import records as record_store
    from commons.store.db import Store

    nodes.init("olga", trust=trusting(1, 2))
    root = lesson(key(1), TEXT)
    import_records(nodes, "olga", tmp_path / "a.jsonl", [root, revocation(key(1), root.id)])
    late = lesson(key(2), "`pip install --user` failed the same way on Debian 12.", parents=[root.id])

    async def bypass() -> None:  # e.g. a relay that stored it without the admission check
        async with await Store.open(nodes.home("olga").database) as store:
            await record_store.add_received(store, [late], 1_794_000_000.0)

    run(bypass)
    assert status_of(nodes, "olga", late.id.hex(), LATER) == "revoked"
    code, out, _ = nodes.run("olga", "store", "check", "--json", at=LATER)
    assert code == 1 and any(late.id.hex() in p for p in json.loads(out)["problems"])


def test_rewording_supersedes_the_old_version_and_its_derivatives_survive(nodes, tmp_path):
    lid, rid = own_published(nodes, tmp_path)
    added = nodes.json("ada", "lessons", "add", "On Debian 12, `pip install --user` failed the same way.",
                       "--scope", "shared", "--derived-from", lid[:10], at="2026-11-04T09:00Z")
    derived = added["record_id"]
    out = nodes.json("ada", "lessons", "reword", lid[:10],
                     "`pip install` failed with 'externally-managed-environment' on Debian 12's system Python.",
                     at="2026-11-05T09:00Z")
    assert out["published"] and out["supersedes"] == rid
    assert status_of(nodes, "ada", lid, "2026-11-05T09:00Z") == "superseded"
    assert status_of(nodes, "ada", added["id"], "2026-11-05T09:00Z") == "active"
    memory = nodes.memory("ada")
    assert out["id"][:12] in memory and added["id"][:12] in memory and lid[:12] not in memory
    why = nodes.json("ada", "why", derived, at="2026-11-05T09:00Z")
    assert why["provenance"][0]["id"] == rid and why["provenance"][0]["status"] == "superseded"
    assert why["revocation"] is None


def test_revoking_a_parent_takes_down_an_own_derived_lesson(nodes, tmp_path):
    lid, rid = own_published(nodes, tmp_path)
    added = nodes.json("ada", "lessons", "add", "On Debian 12, `pip install --user` failed the same way.",
                       "--scope", "shared", "--derived-from", rid[:10], at="2026-11-04T09:00Z")
    assert added["id"][:12] in nodes.memory("ada")
    nodes.ok("ada", "revoke", rid, "--reason", "wrong", at="2026-11-05T09:00Z")
    memory = nodes.memory("ada")
    assert added["id"][:12] not in memory and lid[:12] not in memory
    assert status_of(nodes, "ada", added["id"], "2026-11-05T09:00Z") == "revoked"


def test_a_revoked_lesson_replayed_by_import_is_refused(nodes, tmp_path):
    lid, rid = own_published(nodes, tmp_path)
    nodes.init("grace")
    backup = nodes.export("ada")
    nodes.run("grace", "import", str(backup), at="2026-11-03T12:00Z")
    nodes.ok("ada", "revoke", rid[:10], "--reason", "wrong", at="2026-11-04T09:00Z")
    nodes.carry("ada", "grace", "2026-11-04T12:00Z", "--type", "revocation")
    assert status_of(nodes, "grace", rid, "2026-11-04T12:00Z") == "revoked"
    fresh = nodes.init("hedy")
    assert fresh
    nodes.carry("grace", "hedy", "2026-11-04T13:00Z", "--type", "revocation")
    code, out, _ = nodes.run("hedy", "import", str(backup), "--json", at="2026-11-04T14:00Z")
    # hedy holds the revocation but never held the lesson: its author's revocation is pending, and
    # the lesson is refused on arrival as revoked by its author.
    assert code == 1 and json.loads(out)["refused"][0]["reason"] == "its author has revoked it"
    assert rid[:12] not in nodes.memory("hedy")
    code, out, _ = nodes.run("grace", "import", str(backup), "--json", at="2026-11-04T14:00Z")
    assert json.loads(out) == {"accepted": 0, "duplicates": 1, "refused": []}  # held, and stays dead


def test_a_backup_restored_into_a_store_that_holds_the_revocation_cannot_resurrect(nodes, tmp_path):
    lid, rid = own_published(nodes, tmp_path)
    shutil.copytree(nodes.root / "ada", nodes.root / "ada-backup")  # a copy of the whole home, db included
    nodes.ok("ada", "revoke", rid[:10], "--reason", "wrong", at="2026-11-04T09:00Z")
    old = nodes.export("ada-backup")  # the records as the backup holds them: the lesson alive
    code, out, _ = nodes.run("ada", "import", str(old), "--json", at="2026-11-05T09:00Z")
    assert json.loads(out)["accepted"] == 0 and json.loads(out)["duplicates"] == 1  # held: still dead
    assert status_of(nodes, "ada", lid, "2026-11-05T09:00Z") == "revoked"
    # The same backup into a new home that received the revocation first: refused for good.
    nodes.init("ada-new")
    nodes.carry("ada", "ada-new", "2026-11-05T10:00Z", "--type", "revocation")
    code, out, _ = nodes.run("ada-new", "import", str(old), "--json", at="2026-11-05T11:00Z")
    assert code == 1 and json.loads(out)["refused"] == [{"line": 1, "reason": "its author has revoked it"}]
    # And it stays so after a restart: the certificate is derived from the stored revocation.
    code, out, _ = nodes.run("ada-new", "import", str(old), "--json", at="2026-11-06T11:00Z")
    assert json.loads(out)["accepted"] == 0
    assert nodes.json("ada-new", "store", "check")["ok"]


def test_a_revoked_key_takes_down_what_it_signed_and_later_records_are_refused(nodes, tmp_path):
    nodes.init("olga", trust=trusting(5))
    before = lesson(key(5), TEXT)
    import_records(nodes, "olga", tmp_path / "a.jsonl", [before])
    assert before.id.hex()[:12] in nodes.memory("olga")
    killed = revocation(key(5), bytes(key(5).verify_key), "key stolen", kind=TargetKind.KEY)
    import_records(nodes, "olga", tmp_path / "k.jsonl", [killed])
    assert before.id.hex()[:12] not in nodes.memory("olga")
    after = lesson(key(5), "`pip install` worked everywhere.", day=20764)
    out = import_records(nodes, "olga", tmp_path / "b.jsonl", [after], at=LATER)
    assert out["refused"][0]["reason"] == "signed by a revoked key"
    (listed,) = nodes.json("olga", "revocations", at=LATER)
    assert listed["dead_key"] == bytes(key(5).verify_key).hex() and listed["ruling"] == "key-itself"


def test_revoking_another_key_applies_only_for_a_revocation_authority(nodes, tmp_path):
    me = nodes.init("olga", trust=trusting(6))
    target = lesson(key(6), TEXT)
    import_records(nodes, "olga", tmp_path / "a.jsonl", [target])
    out = nodes.json("olga", "revoke", "--key", bytes(key(6).verify_key).hex(), "--reason", "spam", at=AT)
    assert not out["applied"] and out["ruling"] == "unauthorized"
    with open(nodes.home("olga").config_file, "a") as handle:
        handle.write(f"revocation_authorities = [\"{me}\"]\nrevocation_threshold = 1\n")
    nodes.ok("olga", "render", at=AT)
    assert target.id.hex()[:12] not in nodes.memory("olga")
    (listed,) = nodes.json("olga", "revocations", at=AT)
    assert listed["applied"] and listed["ruling"] == "authorities"


def test_a_vouch_is_undone_by_revoking_it(nodes, tmp_path):
    nodes.init("olga")
    out = nodes.json("olga", "vouch", bytes(key(7).verify_key).hex(), at=AT)
    revoked = nodes.json("olga", "revoke", out["id"][:12], "--reason", "vouched by mistake", at=AT)
    assert revoked["applied"] and revoked["took_down"][0]["type"] == "vouch"


def test_revoke_names_what_is_wrong_with_its_arguments(nodes, tmp_path):
    nodes.init("olga")
    code, _, err = nodes.run("olga", "revoke", "--reason", "x")
    assert code == 2 and "name what to revoke" in err
    code, _, err = nodes.run("olga", "revoke", "abcdef12", "--reason", "x")
    assert code == 2 and "no lesson or record" in err
    code, _, err = nodes.run("olga", "revoke", "--key", "zz", "--reason", "x")
    assert code == 2 and "not an author key" in err
