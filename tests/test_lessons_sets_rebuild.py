"""docs/lessons-sets/rebuild.py: a labelled set's home/ rebuilt from a git mirror, checked against its labels.

Every transcript here is written by the test (no public session is copied).
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("lessons_sets_rebuild", ROOT / "docs" / "lessons-sets" / "rebuild.py")
rebuild = importlib.util.module_from_spec(_spec)
sys.modules["lessons_sets_rebuild"] = rebuild
_spec.loader.exec_module(rebuild)

SLUG = "-home-ana-proj"


def _rec(uid: str, ts: str, content: object, kind: str = "user") -> str:
    return json.dumps({"parentUuid": None, "sessionId": "s1", "cwd": "/home/ana/proj", "type": kind, "uuid": uid,
                       "timestamp": ts, "message": {"role": kind, "content": content}})


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True).stdout.strip()


def _mirror(tmp: Path, files: dict[str, bytes]) -> tuple[Path, str]:
    repo = tmp / "mirror" / "ana+proj" / "repo"
    repo.mkdir(parents=True)
    _git(repo, "init", "-q")
    for name, data in files.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_bytes(data)
    _git(repo, "add", "-A")
    _git(repo, "-c", "user.email=t@t", "-c", "user.name=t", "commit", "-q", "-m", "sessions")
    return tmp / "mirror", _git(repo, "rev-parse", "HEAD")[:12]


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:16]


def _set(tmp: Path, name: str, rows: list[tuple[str, str, str, str]], commit: str, labels: dict[str, object]) -> Path:
    set_dir = tmp / "labels" / name
    set_dir.mkdir(parents=True)
    table = ["| file in this set | repo | path | commit | licence | first .. last record | sha256 (16) | changes |",
             "|---|---|---|---|---|---|---|---|"]
    table += [f"| {file} | ana/proj | {path} | {commit} | none | - | {sha} | {changes} |" for file, path, sha, changes in rows]
    (set_dir / "SOURCES.md").write_text("# a set\n\n" + "\n".join(table) + "\n", encoding="utf-8")
    for fname, doc in labels.items():
        (set_dir / fname).write_text(json.dumps(doc), encoding="utf-8")
    return set_dir


def _rules(tmp: Path, rules: list[dict[str, object]]) -> list:
    path = tmp / "redactions.json"
    path.write_text(json.dumps({"rules": rules}), encoding="utf-8")
    return rebuild.load_rules(path)


PASSWORD_RULE = {"id": "pw", "sets": ["s"], "value": "PGPASSWORD='([^']+)'", "replace": "REDACTED-PW"}


def test_unchanged_file_is_written_byte_for_byte_and_labels_fit(tmp_path: Path) -> None:
    data = (_rec("u1", "2026-01-01T10:00:00Z", "fix the build") + "\n").encode()
    mirror, commit = _mirror(tmp_path, {"s.jsonl": data})
    target = f".claude/projects/{SLUG}/s1.jsonl"
    labels = {"corrections.json": [{"session": "s1", "uuid_or_index": "u1", "text": "fix the  build"}],
              "schedule.json": [{"at": "2026-01-01T11:00:00Z", "ingest": [target]}], "labels.json": {}}
    set_dir = _set(tmp_path, "s", [(target, "s.jsonl", _sha(data), "unchanged")], commit, labels)
    reports, _ = rebuild.rebuild(set_dir, tmp_path / "out" / "s", mirror, [])
    assert [r.matches for r in reports] == [True]
    assert (tmp_path / "out" / "s" / "home" / target).read_bytes() == data
    assert (tmp_path / "out" / "s" / "labels.json").is_file()
    assert rebuild.check(tmp_path / "out" / "s") == []


def test_check_names_a_labelled_id_the_files_do_not_hold(tmp_path: Path) -> None:
    data = (_rec("u1", "2026-01-01T10:00:00Z", "hello") + "\n").encode()
    mirror, commit = _mirror(tmp_path, {"s.jsonl": data})
    target = f".claude/projects/{SLUG}/s1.jsonl"
    labels = {"failure_lines.json": [{"session": "s1", "tool_use_id": "toolu_missing", "what_failed": "no such line"}],
              "corrections.json": [{"session": "s1", "uuid_or_index": "u1", "text": "goodbye"}],
              "schedule.json": [{"at": "x", "ingest": [".claude/projects/other.jsonl"]}]}
    set_dir = _set(tmp_path, "s", [(target, "s.jsonl", _sha(data), "unchanged")], commit, labels)
    rebuild.rebuild(set_dir, tmp_path / "out" / "s", mirror, [])
    problems = rebuild.check(tmp_path / "out" / "s")
    assert any("toolu_missing" in p for p in problems)
    assert any("what_failed" in p for p in problems)
    assert any("its text is not in the set" in p for p in problems)
    assert any("other.jsonl is not in home/" in p for p in problems)


def test_a_message_with_neither_id_nor_time_is_named_by_its_session_and_number(tmp_path: Path) -> None:
    # An older Codex rollout: a session line, then bare items; commons names its messages <session>#<n>.
    data = (json.dumps({"id": "sess-1", "timestamp": "2025-08-28T12:05:24.389Z", "instructions": None}) + "\n"
            + json.dumps({"type": "message", "role": "user", "content": [{"type": "input_text", "text": "そこじゃない"}]})
            + "\n").encode()
    mirror, commit = _mirror(tmp_path, {"r.jsonl": data})
    target = ".codex/sessions/2025/08/28/rollout-r.jsonl"
    labels = {"corrections.json": [{"session": "sess-1", "uuid_or_index": "sess-1#0", "text": "そこじゃない"},
                                   {"session": "sess-2", "uuid_or_index": "sess-2#0", "text": "そこじゃない"}]}
    set_dir = _set(tmp_path, "s", [(target, "r.jsonl", _sha(data), "unchanged")], commit, labels)
    rebuild.rebuild(set_dir, tmp_path / "out" / "s", mirror, [])
    assert rebuild.check(tmp_path / "out" / "s") == ["corrections.json: person message sess-2#0 is not in the set"]


def test_a_learned_secret_is_replaced_in_every_file_of_the_set(tmp_path: Path) -> None:
    one = (_rec("u1", "2026-01-01T10:00:00Z", "PGPASSWORD='hunter22' psql") + "\n").encode()
    two = (_rec("u2", "2026-01-01T11:00:00Z", "the .env says DB=hunter22") + "\n").encode()
    mirror, commit = _mirror(tmp_path, {"a.jsonl": one, "b.jsonl": two})
    rows = [(f".claude/projects/{SLUG}/a.jsonl", "a.jsonl", "0" * 16, "redacted (REDACTED-PW x1)"),
            (f".claude/projects/{SLUG}/b.jsonl", "b.jsonl", "0" * 16, "unchanged")]
    set_dir = _set(tmp_path, "s", rows, commit, {})
    reports, learned = rebuild.rebuild(set_dir, tmp_path / "out" / "s", mirror, _rules(tmp_path, [PASSWORD_RULE]))
    home = tmp_path / "out" / "s" / "home" / ".claude" / "projects" / SLUG
    assert b"hunter22" not in (home / "a.jsonl").read_bytes() + (home / "b.jsonl").read_bytes()
    assert b"REDACTED-PW" in (home / "b.jsonl").read_bytes()
    assert learned == {"hunter22"}
    assert reports[0].changes == ["redacted (REDACTED-PW x1)"]
    assert rebuild.check(tmp_path / "out" / "s", learned) == []


def test_a_rule_for_another_set_leaves_this_set_unchanged(tmp_path: Path) -> None:
    data = (_rec("u1", "2026-01-01T10:00:00Z", "PGPASSWORD='local' psql") + "\n").encode()
    mirror, commit = _mirror(tmp_path, {"a.jsonl": data})
    set_dir = _set(tmp_path, "other", [(f".claude/projects/{SLUG}/a.jsonl", "a.jsonl", _sha(data), "unchanged")], commit, {})
    reports, _ = rebuild.rebuild(set_dir, tmp_path / "out" / "other", mirror, _rules(tmp_path, [PASSWORD_RULE]))
    assert reports[0].matches


def test_records_repeated_from_an_earlier_session_are_dropped_when_the_table_says_so(tmp_path: Path) -> None:
    first = "\n".join([_rec("u1", "2026-01-01T10:00:00Z", "a"), _rec("u2", "2026-01-01T10:01:00Z", "b")]) + "\n"
    resumed = "\n".join([_rec("u1", "2026-01-01T12:00:00Z", "a"), _rec("u3", "2026-01-01T12:01:00Z", "c")])
    mirror, commit = _mirror(tmp_path, {"r.jsonl": resumed.encode(), "f.jsonl": first.encode()})
    kept = (_rec("u3", "2026-01-01T12:01:00Z", "c") + "\n").encode()  # written back with its newline
    rows = [(f".claude/projects/{SLUG}/r.jsonl", "r.jsonl", _sha(kept), "1 records already in f dropped"),
            (f".claude/projects/{SLUG}/f.jsonl", "f.jsonl", _sha(first.encode()), "unchanged")]
    set_dir = _set(tmp_path, "s", rows, commit, {})
    reports, _ = rebuild.rebuild(set_dir, tmp_path / "out" / "s", mirror, [])
    assert [r.matches for r in reports] == [True, True]
    assert reports[0].changes == ["1 records kept, 1 dropped"]


def test_craft_agent_session_becomes_claude_code_records_with_reproducible_uuids() -> None:
    header = {"id": "x", "workspaceRootPath": "~/w", "sdkSessionId": "5e55a0e0-0000-4000-8000-000000000001",
              "sdkCwd": "~/w/sessions/one"}
    body = [{"type": "user", "content": "run it", "timestamp": 1776496177050, "id": "m1"},
            {"type": "plan", "content": "a plan", "timestamp": 1776496177051, "id": "m2"},
            {"type": "tool", "toolName": "Bash", "toolUseId": "call_1", "toolInput": {"command": "ls /Users/ana/w"},
             "toolResult": "boom", "isError": True, "timestamp": 1776496177052, "id": "m3"},
            {"type": "info", "content": "响应中断", "timestamp": 1776496177053, "id": "m4"}]
    data = "\n".join(json.dumps(r, ensure_ascii=False) for r in [header, *body]).encode()
    assert rebuild.is_craft_session(data)
    out = [json.loads(line) for line in rebuild.craft_to_claude(data, "-Users-ana-w-sessions-one").splitlines()]
    session = header["sdkSessionId"]
    assert [r["uuid"] for r in out] == [str(uuid.uuid5(uuid.NAMESPACE_URL, f"{session}:{n}")) for n in range(4)]
    assert [r["parentUuid"] for r in out] == [None] + [r["uuid"] for r in out[:-1]]
    assert out[0]["cwd"] == "/Users/ana/w/sessions/one" and out[0]["timestamp"] == "2026-04-18T07:09:37.050Z"
    assert out[1]["message"]["content"][0] == {"type": "tool_use", "id": "call_1", "name": "Bash",
                                               "input": {"command": "ls /Users/ana/w"}}
    assert out[2]["message"]["content"][0]["is_error"] is True
    assert out[3]["message"]["content"][0]["text"] == "[Request interrupted by user]"


def test_a_missing_mirror_says_which_repository_to_fetch(tmp_path: Path) -> None:
    with pytest.raises(rebuild.MissingSource, match="github:ana/proj"):
        rebuild.git_dir(tmp_path, "ana/proj")


def test_every_committed_sources_table_names_repo_commit_and_hash() -> None:
    sets = sorted(p.parent for p in (ROOT / "docs" / "lessons-sets").glob("*/SOURCES.md"))
    assert sets
    for set_dir in sets:
        for src in rebuild.read_sources(set_dir):
            assert "/" in src.repo and len(src.commit) >= 7 and len(src.sha_set) == 16, (set_dir.name, src)


def test_committed_redaction_rules_hold_patterns_that_compile() -> None:
    rules = rebuild.load_rules(ROOT / "docs" / "lessons-sets" / "redactions.json")
    assert rules and all(r.sets for r in rules)
