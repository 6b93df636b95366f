"""The demo's peer-review and revocation steps (`make demo`, after the federation step).

8. **Peer review.** ada publishes its pip pitfall and a lesson derived from it; four other nodes
   (grace and linus, and two newcomers, hedy and katherine) receive them and, days later, meet the
   same situation in their own sessions (``demo_sessions/review/<node>/``). Each node's sleep
   verifies the lessons against those sessions: grace, hedy and katherine had never met the
   pitfall (independent confirmations); linus had, on day 8, so his is a corroboration that does
   not count. With three independent confirmations the lessons are common at every node and
   appear in each memory folder's common layer.
9. **Revocation.** ada revokes the pip lesson; the lesson derived from it falls with it on every
   node, at once, and `commons revocations` shows it everywhere.

Records travel between homes by `commons export` / `commons import` here, clearly so: the daemon
federation step carries the very same records over the network, and the result is the same.
"""

from __future__ import annotations

from pathlib import Path

RECEIVED_AT = "2026-11-12T12:00:00Z"  # ada's lessons reach every node (after the federation morning)
DERIVED_AT = "2026-11-12T09:00:00Z"
REVIEW_NIGHT = "2026-11-17T03:00:00Z"  # after the review sessions of days 13–16
SHARED_AT = "2026-11-17T12:00:00Z"  # verifications travel
REVOKED_AT = "2026-11-18T09:00:00Z"
NEWCOMERS = ("hedy", "katherine")
DERIVED_TEXT = "`pip install --user` failed with 'error: externally-managed-environment' as well."


def peer_review_and_revocation(demo, keys: dict) -> dict:
    """Run steps 8 and 9 on ``demo`` (a ``commons.demo.Demo``); returns what each node ended with."""
    from commons.demo import DEMO_SESSIONS, DemoNode

    ada, grace, linus = demo.nodes
    newcomers = [DemoNode(name, demo.root / name) for name in NEWCOMERS]
    nodes = [ada, grace, linus, *newcomers]
    reviewers = [grace, linus, *newcomers]
    say = demo.say

    say("## 8. Peer review: ada publishes; four nodes verify against their own later sessions")
    say("   (records travel by `commons export` / `commons import` in this step; the daemon")
    say("    federation carries the same records over the network)")
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
    lessons_file = _export(demo, ada, "lesson")
    for node in reviewers:
        demo.commons(node, "import", str(lessons_file), at=RECEIVED_AT)
    say("# later sessions: grace (day 13), hedy (14), katherine (15) and linus (16) meet `pip install`")
    for node in reviewers:
        demo.commons(node, "ingest", str(DEMO_SESSIONS / "review" / node.name), at=REVIEW_NIGHT)
        demo.commons(node, "sleep", at=REVIEW_NIGHT, show=False)
    for node in reviewers:  # each node's verifications reach every other node
        verifications = _export(demo, node, "verification")
        for other in nodes:
            if other is not node:
                demo.commons(other, "import", str(verifications), at=SHARED_AT, show=False)
    demo.commons(grace, "why", pip["record_id"][:16], at=SHARED_AT)
    demo.commons(ada, "why", pip["record_id"][:16], at=SHARED_AT)
    for node in reviewers:
        demo.commons(node, "lessons", "--status", "common", at=SHARED_AT)
    _show_memory(demo, grace)
    before = {node.name: _memory(node) for node in nodes}
    say()

    say("## 9. ada revokes the pip lesson: the lesson derived from it falls with it, on every node")
    demo.commons(ada, "revoke", pip["record_id"][:16], "--reason",
                 "the failures came from a misconfigured mirror image, not from Debian", at=REVOKED_AT)
    revocations = _export(demo, ada, "revocation")
    for node in reviewers:
        demo.commons(node, "import", str(revocations), at=REVOKED_AT)
    for node in nodes:
        demo.commons(node, "revocations", at=REVOKED_AT)
    demo.commons(grace, "why", derived["record_id"][:16], at=REVOKED_AT)
    _show_memory(demo, grace)
    after = {node.name: _memory(node) for node in nodes}
    summary = {}
    for node in nodes:
        ids = (pip["record_id"][:12], derived["record_id"][:12], pip["id"][:12], derived["id"][:12])
        summary[node.name] = {"home": str(node.home),
                              "had_common_before": any(i in before[node.name] for i in ids),
                              "has_after": any(i in after[node.name] for i in ids)}
    say()
    return {"lesson": pip["record_id"], "derived": derived["record_id"], "nodes": summary}


def _publish_on(demo, node) -> None:
    done = demo.commons(node, "publish", "on", at=RECEIVED_AT, check=False, show=False)
    if "on" not in done.lower():  # a commons without `commons publish`: set the same setting directly
        from commons import publish
        from commons.home import Home
        from commons.runtime import run
        from commons.store.db import Store

        async def turn_on() -> None:
            async with await Store.open(Home(config_dir=node.home, data_dir=node.home / "data").database) as store:
                await publish.set_on(store, True, 0.0)

        run(turn_on)


def _pip_lesson(demo, node) -> dict:
    found = demo.node_json(node, "lessons", "--status", "all", at=DERIVED_AT)
    return next(d for d in found if d["text"].startswith("`pip install`") and d["record_id"])


def _export(demo, node, rtype: str) -> Path:
    path = demo.root / f"{node.name}-{rtype}s.jsonl"
    path.write_text(demo.commons(node, "export", "--type", rtype, show=False), encoding="utf-8")
    return path


def _memory(node) -> str:
    index = node.memory_folder / "MEMORY.md"
    return index.read_text(encoding="utf-8") if index.exists() else ""


def _show_memory(demo, node) -> None:
    demo.say(f"$ cat {node.memory_folder / 'MEMORY.md'}")
    demo.say("  " + _memory(node).rstrip().replace("\n", "\n  "))
