"""The demo's peer-review and revocation steps (`make demo`, after the federation step).

9. **Peer review.** ada publishes its pip pitfall and a lesson derived from it; four other nodes
   (grace and linus, and two newcomers, hedy and katherine) receive them and, days later, meet the
   same situation in their own sessions (``sessions/review/<node>/``). Each node's sleep
   verifies the lessons against those sessions: grace, hedy and katherine had never met the
   pitfall (independent confirmations); linus had, on day 8, so his is a corroboration that does
   not count. With three independent confirmations the lessons are common at every node and
   appear in each memory folder's common layer.
10. **Revocation.** ada revokes the pip lesson; the lesson derived from it falls with it on every
   node, at once, and `commons revocations` shows it everywhere.

Records travel over the network: each scripted morning every node's daemon runs on loopback
(``commons.demo.federation``) until what the step waits for has arrived, and the demo says how
long that took.
"""

from __future__ import annotations


from commons.demo import machine
from commons.demo.machine import DEMO_SESSIONS, DemoNode
from commons.demo.federation import Federation, export_ids


RECEIVED_AT = "2026-11-12T12:00:00Z"  # ada's lessons reach every node (after the federation morning)
DERIVED_AT = "2026-11-12T09:00:00Z"
REVIEW_NIGHT = "2026-11-17T03:00:00Z"  # after the review sessions of days 13–16
SHARED_AT = "2026-11-17T12:00:00Z"  # verifications travel
REVOKED_AT = "2026-11-18T09:00:00Z"
NEWCOMERS = ("hedy", "katherine")
DERIVED_TEXT = "`pip install --user` failed with 'error: externally-managed-environment' as well."


def peer_review_and_revocation(demo, keys: dict) -> dict:
    """Run steps 9 and 10 on ``demo`` (a ``commons.demo.run.Demo``); returns what each node ended with."""

    ada, grace, linus = demo.nodes
    newcomers = [DemoNode(name, demo.root / name) for name in NEWCOMERS]
    nodes = [ada, grace, linus, *newcomers]
    reviewers = [grace, linus, *newcomers]
    say = demo.say

    say("## 9. Peer review: ada publishes; four nodes verify against their own later sessions")
    for node in newcomers:
        if not (node.home / "data" / "keys").exists():
            demo.commons(node, "init")
        keys[node.name] = demo.node_json(node, "id")
    say("# every node vouches for every other: under the web of trust, their verifications count")
    for node in nodes:
        for other in nodes:
            if other is not node:
                demo.commons(node, "vouch", keys[other.name]["author"], at=RECEIVED_AT, show=False)
    for node in nodes:  # verifications are published under the same opt-in as lessons
        _publish_on(demo, node)
    demo.commons(ada, "sleep", at="2026-11-12T03:00:00Z", show=False)  # signs ada's shared lessons
    pip = _pip_lesson(demo, ada)
    demo.commons(ada, "lessons", "add", DERIVED_TEXT, "--scope", "shared", "--derived-from", pip["record_id"][:16],
                 at=DERIVED_AT)
    derived = next(d for d in demo.node_json(ada, "lessons", "--status", "all", at=DERIVED_AT)
                   if d["text"] == DERIVED_TEXT)
    say("# the morning of Nov 12: the daemons carry ada's lessons and everyone's vouches")
    lessons = {pip["record_id"], derived["record_id"]}
    vouches = set().union(*(export_ids(demo, node, "vouch") for node in nodes))
    with Federation(demo, nodes, RECEIVED_AT) as federation:
        federation.wait_until(
            lambda: all(lessons <= export_ids(demo, n, "lesson") and vouches <= export_ids(demo, n, "vouch") for n in reviewers),
            "every node holds ada's two lessons and all 20 vouches")
    say("# later sessions: grace (day 13), hedy (14), katherine (15) and linus (16) meet `pip install`")
    for node in reviewers:
        machine.lay_down_all(node.person, node.name, sorted((DEMO_SESSIONS / "review" / node.name).glob("*.jsonl")))
        demo.commons(node, "ingest", at=REVIEW_NIGHT)
        demo.commons(node, "sleep", at=REVIEW_NIGHT, show=False)
    say("# the morning of Nov 17: the daemons carry each node's signed verifications")
    verifications = set().union(*(export_ids(demo, node, "verification") for node in reviewers))
    with Federation(demo, nodes, SHARED_AT) as federation:
        federation.wait_until(
            lambda: all(verifications <= export_ids(demo, n, "verification") for n in nodes)
            and all(_is_common(demo, n, pip["record_id"]) for n in reviewers),
            f"all {len(verifications)} verifications are everywhere and the lesson is common on every reviewer")
    demo.commons(grace, "why", pip["record_id"][:16], at=SHARED_AT)
    demo.commons(ada, "why", pip["record_id"][:16], at=SHARED_AT)
    for node in reviewers:
        demo.commons(node, "lessons", "--status", "common", at=SHARED_AT)
    _show_memory(demo, grace)
    before = {node.name: _memory(node) for node in nodes}
    say()

    say("## 10. ada revokes the pip lesson: the lesson derived from it falls with it, on every node")
    demo.commons(ada, "revoke", pip["record_id"][:16], "--reason",
                 "the failures came from a misconfigured mirror image, not from Debian", at=REVOKED_AT)
    ids = (pip["record_id"][:12], derived["record_id"][:12], pip["id"][:12], derived["id"][:12])
    with Federation(demo, nodes, REVOKED_AT) as federation:
        federation.wait_until(lambda: not any(i in _memory(n) for n in nodes for i in ids),
                              "both lessons are gone from every node's memory folder")
    for node in nodes:
        demo.commons(node, "revocations", at=REVOKED_AT)
    demo.commons(grace, "why", derived["record_id"][:16], at=REVOKED_AT)
    _show_memory(demo, grace)
    after = {node.name: _memory(node) for node in nodes}
    summary = {}
    for node in nodes:
        summary[node.name] = {"home": str(node.home),
                              "had_common_before": any(i in before[node.name] for i in ids),
                              "has_after": any(i in after[node.name] for i in ids)}
    say()
    return {"lesson": pip["record_id"], "derived": derived["record_id"], "nodes": summary}


def _is_common(demo, node, record_id: str) -> bool:
    return any(d.get("record_id") == record_id for d in demo.query(node, "lessons", "--status", "common", at=SHARED_AT))


def _publish_on(demo, node) -> None:
    demo.commons(node, "publish", "on", at=RECEIVED_AT, show=False)


def _pip_lesson(demo, node) -> dict:
    found = demo.node_json(node, "lessons", "--status", "all", at=DERIVED_AT)
    return next(d for d in found if d["text"].startswith("`pip install`") and d["record_id"])


def _memory(node) -> str:
    """Every project's MEMORY.md of the node: where a common lesson shows, for every project."""
    return node.memory_text()


def _show_memory(demo, node) -> None:
    for index in node.memory_indexes[:1]:  # the common layer is the same in every project
        demo.say(f"$ cat {index}")
        demo.say("  " + index.read_text(encoding="utf-8").rstrip().replace("\n", "\n  "))
