#!/usr/bin/env python3
"""Rebuild a labelled set's ``home/`` from the public repositories its transcripts were read from.

    python3 docs/lessons-sets/rebuild.py --out /work/sets                   # every set beside this file
    python3 docs/lessons-sets/rebuild.py --out /work/sets docs/lessons-sets/vsla-c ...
    python3 docs/lessons-sets/rebuild.py --check /work/sets/vsla-c ...       # check sets already rebuilt

Only the labels are committed (``docs/lessons-sets/<set>/``); the transcripts are not, their licences do
not let us copy them. A set's ``SOURCES.md`` holds a table naming, for each file of the set, the
repository, the path in it, the commit and the sha256 (first 16 hex digits) of the file in the set and,
where the set changed it, of the source. This tool reads that table, takes each file from the git
directory the ``fetch`` tool brought (``<mirror>/<owner>+<name>/repo``) with ``git show <commit>:<path>``,
makes the changes the table names, writes ``<out>/<set>/home/<file>``, copies the labels beside
``home/`` and says, per file, whether the result matches the table's sha256 byte for byte.

The changes, in the order they are made:

* **converted**: a Craft Agent ``session.jsonl`` (first line a session header with ``sdkSessionId``) is
  turned into Claude Code JSONL (:func:`craft_to_claude`).
* **de-duplicated**: when the table says records were dropped (a ``records dropped`` column, or "N records
  already in X dropped"), the set's Claude Code files are read in order of their first timestamp and a
  record whose ``uuid`` appeared in an earlier file is dropped; every record kept is written with its newline.
* **redacted**: the rules of ``redactions.json`` that name the set are applied to every file of it. A rule
  holds patterns only, never a secret's value: ``pattern`` replaces what it matches, ``value`` learns the
  secret from its context (its one group) and replaces every occurrence of it in the set.

``--check`` (also run after every rebuild) verifies that every labelled tool_use_id, person-message id,
session id and text occurs in the set's files, that every ``what_failed`` regex of ``failure_lines.json``
matches there, that every path ``schedule.json`` ingests exists, and that no learned secret is left.
Each set gets a ``REBUILT.json`` (what matched) and ``<out>/README.md`` is written from all of them.

Exit status: 0 when every set was rebuilt and checked; 1 when a check failed; 2 when a source is missing
(fetch the repository first) or a ``SOURCES.md`` cannot be read. A sha256 that differs is reported, not an
error: the reconstructed sets carry placeholders of their own. Standard library only (Python 3.11).
"""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

HERE = Path(__file__).resolve().parent
LABEL_FILES = ("labels.json", "failure_lines.json", "corrections.json", "schedule.json", "SOURCES.md")
DEFAULT_MIRROR = Path("/work/.mirror")
CONVERTED_VERSION = "converted-craft-agent"


class SourcesError(Exception):
    """A SOURCES.md (ours) cannot be read as a table of sources."""


class MissingSource(Exception):
    """A repository, commit or path the table names is not on this machine (fetch it)."""


# -- the table ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Source:
    """One row of a SOURCES.md table: where a file of the set comes from and what it should hash to."""

    file: str  # relative to home/
    repo: str
    path: str
    commit: str
    sha_set: str  # first 16 hex digits of the file in the set
    sha_source: str  # of the source, where the table gives it
    blob: str  # the abbreviated blob id, where the table gives it
    dropped: int | None  # records the table says were dropped, where it says
    kept: int | None
    changes: str


def _cells(line: str) -> list[str]:
    return [c.strip() for c in line.strip().strip("|").split("|")]


def read_sources(set_dir: Path) -> list[Source]:
    """The rows of ``set_dir/SOURCES.md``'s table (either of the two layouts our labellers used)."""
    path = set_dir / "SOURCES.md"
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise SourcesError(f"{path}: {exc}") from exc
    header: list[str] | None = None
    rows: list[Source] = []
    for line in lines:
        if not line.startswith("|"):
            continue
        cells = _cells(line)
        if header is None:
            if "repo" in cells and "path" in cells and "commit" in cells:
                header = cells
            continue
        if set(line) <= set("|-: "):
            continue
        if len(cells) != len(header):
            raise SourcesError(f"{path}: a row has {len(cells)} cells, the header {len(header)}: {line[:80]}")
        row = dict(zip(header, cells))
        changes = row.get("changes", "")
        sha_set = row.get("sha256 (16)") or row.get("sha256 in set (16)") or ""
        src = row.get("sha256 of source (16)") or _find(r"source sha256\(16\) ([0-9a-f]{16})", changes) or ""
        if not src and changes.startswith(("unchanged", "blob")) and not _find(r"(dropped|redact|convert)", changes):
            src = sha_set
        dropped = row.get("records dropped")
        dropped_n = int(dropped) if dropped and dropped.isdigit() else None
        if dropped_n is None and (m := re.search(r"(\d+) records already in", changes)):
            dropped_n = int(m.group(1))
        kept = row.get("records kept")
        file = row["file in this set"].removeprefix("home/")
        rows.append(Source(file=file, repo=row["repo"], path=row["path"], commit=row["commit"], sha_set=sha_set,
                           sha_source=src, blob=_find(r"blob ([0-9a-f]{7,40})", changes) or "",
                           dropped=dropped_n, kept=int(kept) if kept and kept.isdigit() else None, changes=changes))
    if not rows:
        raise SourcesError(f"{path}: no table with the columns repo, path and commit")
    return rows


def _find(pattern: str, text: str) -> str | None:
    m = re.search(pattern, text)
    return m.group(1) if m else None


# -- the sources --------------------------------------------------------------------------------


def git_dir(mirror: Path, repo: str) -> Path:
    """The git directory ``fetch`` brought for ``owner/name``."""
    base = mirror / repo.replace("/", "+")
    for candidate in (base / "repo", base):
        if (candidate / "HEAD").is_file() or (candidate / ".git").exists():
            return candidate
    raise MissingSource(f"{repo}: no git directory at {base}/repo (bring it with the fetch tool: github:{repo})")


def git_show(gdir: Path, commit: str, path: str) -> bytes:
    proc = subprocess.run(["git", "-C", str(gdir), "show", f"{commit}:{path}"], capture_output=True)
    if proc.returncode != 0:
        raise MissingSource(f"{gdir}: {commit}:{path}: {proc.stderr.decode(errors='replace').strip()}")
    return proc.stdout


def git_blob(gdir: Path, commit: str, path: str) -> str:
    proc = subprocess.run(["git", "-C", str(gdir), "rev-parse", f"{commit}:{path}"], capture_output=True, text=True)
    return proc.stdout.strip()


def sha16(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:16]


# -- Craft Agent → Claude Code ------------------------------------------------------------------


def is_craft_session(data: bytes) -> bool:
    head = data.split(b"\n", 1)[0]
    try:
        first = json.loads(head)
    except ValueError:
        return False
    return isinstance(first, dict) and "sdkSessionId" in first and "workspaceRootPath" in first


def _iso_ms(ms: Any) -> str:
    when = dt.datetime.fromtimestamp(int(ms) / 1000, tz=dt.timezone.utc)
    return when.strftime("%Y-%m-%dT%H:%M:%S.") + f"{when.microsecond // 1000:03d}Z"


def _project_slug(path: str) -> str:
    return re.sub(r"[^A-Za-z0-9]", "-", path)


def _home_for(data: str, sdk_cwd: str, slug: str) -> str:
    """The home that ``~`` stood for: the /Users/x or /home/x the session names whose cwd gives ``slug``."""
    for home in dict.fromkeys(re.findall(r"/(?:Users|home)/[A-Za-z0-9._-]+", data)):
        if _project_slug(sdk_cwd.replace("~", home, 1)) == slug:
            return home
    raise SourcesError(f"no home in the session turns {sdk_cwd!r} into the project folder {slug!r}")


def craft_to_claude(data: bytes, slug: str) -> bytes:
    """Craft Agent's ``session.jsonl`` as Claude Code JSONL, texts, inputs, outputs and error flags unchanged.

    user → a user record with the text; assistant → an assistant text block; tool → an assistant
    tool_use (id = toolUseId) then a user tool_result (content = toolResult, is_error = isError);
    info '响应中断' (response interrupted) → '[Request interrupted by user]'; 'Compacted Conversation' →
    a compact-summary record; plan records are dropped. sessionId is the header's sdkSessionId, the
    n-th record's uuid is uuid5(URL, "<sessionId>:<n>") and each record's parentUuid the one before.
    """
    text = data.decode("utf-8")
    lines = [json.loads(line) for line in text.splitlines() if line.strip()]
    header, body = lines[0], lines[1:]
    session = header["sdkSessionId"]
    cwd = header["sdkCwd"]
    if cwd.startswith("~"):
        cwd = cwd.replace("~", _home_for(text, cwd, slug), 1)
    out: list[str] = []
    parent: str | None = None

    def emit(kind: str, message: dict[str, Any], at: Any, **extra: Any) -> None:
        nonlocal parent
        uid = str(uuid.uuid5(uuid.NAMESPACE_URL, f"{session}:{len(out)}"))
        rec = {"parentUuid": parent, "isSidechain": False, "userType": "external", "cwd": cwd,
               "sessionId": session, "version": CONVERTED_VERSION, "type": kind, **extra,
               "message": message, "uuid": uid, "timestamp": _iso_ms(at)}
        out.append(json.dumps(rec, ensure_ascii=False, separators=(",", ":")))
        parent = uid

    for rec in body:
        kind, at = rec.get("type"), rec.get("timestamp")
        if kind == "user":
            emit("user", {"role": "user", "content": rec.get("content", "")}, at)
        elif kind == "assistant":
            emit("assistant", {"role": "assistant", "content": [{"type": "text", "text": rec.get("content", "")}]}, at)
        elif kind == "tool":
            use_id = rec.get("toolUseId", "")
            emit("assistant", {"role": "assistant", "content": [
                {"type": "tool_use", "id": use_id, "name": rec.get("toolName", ""), "input": rec.get("toolInput", {})}]}, at)
            emit("user", {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": use_id, "content": rec.get("toolResult", ""),
                 "is_error": rec.get("isError") is True}]}, at)
        elif kind == "info" and rec.get("content") == "响应中断":
            emit("user", {"role": "user", "content": [{"type": "text", "text": "[Request interrupted by user]"}]}, at)
        elif kind == "info" and rec.get("content") == "Compacted Conversation":
            emit("user", {"role": "user", "content": "Compacted Conversation"}, at, isCompactSummary=True)
        elif kind in ("info", "plan"):
            continue
        else:
            raise SourcesError(f"Craft Agent record of an unknown type {kind!r} (id {rec.get('id')!r})")
    return ("\n".join(out) + "\n").encode("utf-8")


# -- de-duplication -----------------------------------------------------------------------------


def _first_timestamp(data: bytes) -> str:
    for line in data.split(b"\n"):
        try:
            rec = json.loads(line)
        except ValueError:
            continue
        if isinstance(rec, dict) and isinstance(rec.get("timestamp"), str):
            return rec["timestamp"]
    return "~"  # no timestamp: after every file that has one


def drop_repeated_records(files: dict[str, bytes]) -> tuple[dict[str, bytes], dict[str, tuple[int, int]]]:
    """Drop each record whose uuid appeared in a file whose first record is earlier; (kept, dropped) per file.

    Claude Code copies earlier history into a resumed session (same uuids, re-stamped). Lines that are
    not JSON (a record cut off at the end of a file) are kept. Every record kept is written with its newline.
    """
    seen: set[str] = set()
    out: dict[str, bytes] = {}
    counts: dict[str, tuple[int, int]] = {}
    for name in sorted(files, key=lambda n: (_first_timestamp(files[n]), n)):
        kept: list[bytes] = []
        dropped = 0
        own: set[str] = set()
        for line in files[name].split(b"\n"):
            if not line.strip():
                continue
            try:
                rec = json.loads(line)
            except ValueError:
                rec = None
            uid = rec.get("uuid") if isinstance(rec, dict) else None
            if isinstance(uid, str) and uid in seen:
                dropped += 1
                continue
            if isinstance(uid, str):
                own.add(uid)
            kept.append(line + b"\n")
        seen |= own
        out[name] = b"".join(kept)
        counts[name] = (len(kept), dropped)
    return out, counts


# -- redaction ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Rule:
    id: str
    sets: tuple[str, ...]
    replace: str
    pattern: str = ""  # replaces what it matches (group references allowed in replace)
    value: str = ""  # its one group is a secret; every occurrence of that value is replaced


def load_rules(path: Path) -> list[Rule]:
    doc = json.loads(path.read_text(encoding="utf-8"))
    rules = []
    for r in doc["rules"]:
        rule = Rule(id=r["id"], sets=tuple(r["sets"]), replace=r["replace"], pattern=r.get("pattern", ""),
                    value=r.get("value", ""))
        if bool(rule.pattern) == bool(rule.value):
            raise SourcesError(f"{path}: rule {rule.id}: give exactly one of pattern, value")
        if rule.value and re.compile(rule.value).groups != 1:
            raise SourcesError(f"{path}: rule {rule.id}: a value rule needs exactly one group")
        rules.append(rule)
    return rules


def redact(set_name: str, files: dict[str, bytes], rules: list[Rule]) -> tuple[dict[str, bytes], dict[str, dict[str, int]], set[str]]:
    """The set's files with its rules applied; replacements per file per placeholder; the values learned."""
    mine = [r for r in rules if set_name in r.sets]
    texts = {n: d.decode("utf-8") for n, d in files.items()}
    learned: dict[str, str] = {}
    for rule in (r for r in mine if r.value):
        for text in texts.values():
            for value in re.findall(rule.value, text):
                if value and value not in learned:
                    learned[value] = rule.replace
    counts: dict[str, dict[str, int]] = {}
    out: dict[str, bytes] = {}
    for name, text in texts.items():
        n: dict[str, int] = {}
        for value in sorted(learned, key=len, reverse=True):  # a longer secret holding a shorter one first
            hits = text.count(value)
            if hits:
                text = text.replace(value, learned[value])
                n[learned[value]] = n.get(learned[value], 0) + hits
        for rule in (r for r in mine if r.pattern):
            text, hits = re.subn(rule.pattern, rule.replace, text)
            if hits:
                n[rule.replace] = n.get(rule.replace, 0) + hits
        counts[name] = n
        out[name] = text.encode("utf-8") if n else files[name]
    return out, counts, set(learned)


# -- rebuilding a set ---------------------------------------------------------------------------


@dataclass
class FileReport:
    file: str
    repo: str
    commit: str
    sha_source: str  # as found
    source_matches: bool | None  # None: the table gives no source hash
    blob_matches: bool | None
    sha: str  # of the file written
    matches: bool  # byte for byte what the table says
    changes: list[str] = field(default_factory=list)


def rebuild(set_dir: Path, out: Path, mirror: Path, rules: list[Rule]) -> tuple[list[FileReport], set[str]]:
    """Write ``out/home/`` from the sources ``set_dir/SOURCES.md`` names; copy the labels beside it."""
    sources = read_sources(set_dir)
    files: dict[str, bytes] = {}
    reports: dict[str, FileReport] = {}
    for src in sources:
        gdir = git_dir(mirror, src.repo)
        data = git_show(gdir, src.commit, src.path)
        blob = git_blob(gdir, src.commit, src.path)
        rep = FileReport(file=src.file, repo=src.repo, commit=src.commit, sha_source=sha16(data),
                         source_matches=(sha16(data) == src.sha_source) if src.sha_source else None,
                         blob_matches=blob.startswith(src.blob) if src.blob else None, sha="", matches=False)
        if is_craft_session(data):
            slug = Path(src.file).parent.name
            data = craft_to_claude(data, slug)
            rep.changes.append("converted from Craft Agent")
        files[src.file] = data
        reports[src.file] = rep
    if any(s.dropped for s in sources):
        claude = {n: d for n, d in files.items() if n.startswith(".claude/")}
        deduped, counts = drop_repeated_records(claude)
        files.update(deduped)
        for src in sources:
            if src.file in counts:
                kept, dropped = counts[src.file]
                note = f"{kept} records kept, {dropped} dropped"
                if (src.dropped or 0) != dropped or (src.kept is not None and src.kept != kept):
                    note += f" (the table says {src.kept if src.kept is not None else '?'} kept, {src.dropped or 0} dropped)"
                reports[src.file].changes.append(note)
    files, red_counts, learned = redact(set_dir.name, files, rules)
    for src in sources:
        n = red_counts[src.file]
        said = {k: int(v) for k, v in re.findall(r"([\w-]*REDACTED[\w-]*) x(\d+)", src.changes)}
        if n or said:
            note = "redacted (" + ", ".join(f"{k} x{v}" for k, v in sorted(n.items())) + ")"
            if said and said != n:
                note += " (the table says " + ", ".join(f"{k} x{v}" for k, v in sorted(said.items())) + ")"
            reports[src.file].changes.append(note)
    home = out / "home"
    if home.exists():
        shutil.rmtree(home)
    for src in sources:
        target = home / src.file
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(files[src.file])
        rep = reports[src.file]
        rep.sha = sha16(files[src.file])
        rep.matches = rep.sha == src.sha_set
    for name in LABEL_FILES:
        if (set_dir / name).is_file():
            shutil.copyfile(set_dir / name, out / name)
    return [reports[s.file] for s in sources], learned


# -- checking a rebuilt set ---------------------------------------------------------------------


def _strings(obj: Any) -> Iterator[str]:
    if isinstance(obj, str):
        yield obj
    elif isinstance(obj, dict):
        for value in obj.values():
            yield from _strings(value)
    elif isinstance(obj, list):
        for value in obj:
            yield from _strings(value)


def _documents(data: bytes) -> Iterator[Any]:
    """The JSON values of a file: one document (Gemini's chat) or one per line (Claude Code, Codex)."""
    try:
        yield json.loads(data)
        return
    except ValueError:
        pass
    for line in data.split(b"\n"):
        try:
            yield json.loads(line)
        except ValueError:
            continue


def _squash(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def check(set_dir: Path, learned: set[str] = frozenset()) -> list[str]:
    """What in the labels does not fit ``set_dir/home/`` (an empty list: everything fits)."""
    home = set_dir / "home"
    values: set[str] = set()
    texts: list[str] = []
    raw = b""
    for path in sorted(p for p in home.rglob("*") if p.is_file()):
        data = path.read_bytes()
        raw += data
        for doc in _documents(data):
            for s in _strings(doc):
                values.add(s)
                texts.append(s)
    joined = "\n".join(texts)
    squashed = _squash(joined)
    problems: list[str] = []

    def load(name: str) -> list[dict[str, Any]]:
        path = set_dir / name
        return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else []

    for item in load("failure_lines.json"):
        use_id = item.get("tool_use_id", "")
        if use_id not in values:
            problems.append(f"failure_lines.json: tool_use_id {use_id} is not in the set")
        if item.get("session") and item["session"] not in values and item["session"] not in joined:
            problems.append(f"failure_lines.json: session {item['session']} is not in the set")
        what = item.get("what_failed")
        if what and not re.search(what, joined, re.I | re.M):
            problems.append(f"failure_lines.json: {use_id}: what_failed {what!r} matches nothing in the set")
    for item in load("corrections.json"):
        ref = str(item.get("uuid_or_index", ""))
        # a tool call the person rejected with words of their own is named by the call's id; a message
        # with neither id nor time (an older Codex rollout) as commons names it, `<session>#<n>`
        session, numbered, n = ref.rpartition("#")
        if numbered and n.isdigit() and session in values:
            pass
        elif ref.removeprefix("rejection:") not in values:
            problems.append(f"corrections.json: person message {ref} is not in the set")
        text = _squash(item.get("text", ""))
        if text and text not in squashed:
            problems.append(f"corrections.json: {ref}: its text is not in the set: {text[:60]!r}")
    for step in load("schedule.json"):
        paths = step.get("ingest")
        for rel in paths if isinstance(paths, list) else []:
            if not (home / rel).is_file():
                problems.append(f"schedule.json: {rel} is not in home/")
    for value in learned:
        if value.encode("utf-8") in raw:
            problems.append("a redacted secret is still in the set (see redactions.json)")
            break
    return problems


# -- reports ------------------------------------------------------------------------------------


def write_readme(out: Path) -> None:
    """``out/README.md``: per set, which files match their table byte for byte and what was changed."""
    rows, changed, totals = [], [], [0, 0, 0]
    for rebuilt in sorted(out.glob("*/REBUILT.json")):
        doc = json.loads(rebuilt.read_text(encoding="utf-8"))
        files = doc["files"]
        same = sum(f["matches"] for f in files)
        untouched = sum(f["sha"] == f["sha_source"] for f in files)
        totals[0] += same
        totals[1] += len(files)
        totals[2] += untouched
        fit = "yes" if not doc["problems"] else f"NO ({len(doc['problems'])} problems)"
        rows.append(f"| {doc['set']} | {len(files)} | {same} | {untouched} | {fit} |")
        changed += [f"| {doc['set']} | {Path(f['file']).name} | {f['sha_source']} | {f['sha']} | "
                    f"{'match' if f['matches'] else 'DIFFERS'} | {'; '.join(f['changes'])} |"
                    for f in files if f["sha"] != f["sha_source"]]
    lines = [
        "# Labelled sets, rebuilt",
        "",
        "Each folder is one set: `home/` rebuilt from the public repositories its `SOURCES.md` names (brought",
        "by the `fetch` tool into /work/.mirror), beside the labels copied from the commons repository's",
        "`docs/lessons-sets/`. Written by `python3 docs/lessons-sets/rebuild.py --out " + str(out) + "`",
        "(its docstring says how; `--check DIR ...` checks a rebuilt set again); `REBUILT.json` in each set",
        "holds the per-file details. Do not copy these transcripts anywhere: most repositories have no licence.",
        "",
        f"{totals[0]} of {totals[1]} files match the sha256 (16) their set's table gives, byte for byte; "
        f"{totals[2]} of the {totals[1]} are the source file unchanged.",
        "\"labels fit\": every labelled tool_use_id, person-message id, session, text and what_failed regex",
        "occurs in the rebuilt files, every scheduled path exists and no redacted secret is left.",
        "",
        "| set | files | match the table | unchanged from the source | labels fit |",
        "|---|---|---|---|---|",
        *rows,
        "",
        "Files the rebuild changes (converted, de-duplicated, redacted), sha256 (16) before and after:",
        "",
        "| set | file | source | written | table | changes |",
        "|---|---|---|---|---|---|",
        *changed,
        "",
    ]
    (out / "README.md").write_text("\n".join(lines), encoding="utf-8")


def _report_line(rep: FileReport) -> str:
    status = "match" if rep.matches else "DIFFERS"
    extra = []
    if rep.source_matches is False:
        extra.append(f"source sha256 {rep.sha_source} is not the table's")
    if rep.blob_matches is False:
        extra.append("blob is not the table's")
    return f"  {status:7} {rep.sha} {rep.file}" + (f" [{'; '.join(rep.changes)}]" if rep.changes else "") + \
        (f" !! {'; '.join(extra)}" if extra else "")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("sets", nargs="*", type=Path,
                        help="set folders of labels (default: every folder beside this file with a SOURCES.md); "
                             "with --check, rebuilt set folders")
    parser.add_argument("--out", type=Path, help="the folder of rebuilt sets (each set goes to OUT/<set>/)")
    parser.add_argument("--mirror", type=Path, default=DEFAULT_MIRROR,
                        help=f"where fetched repositories are, as <owner>+<name>/repo (default {DEFAULT_MIRROR})")
    parser.add_argument("--redactions", type=Path, default=HERE / "redactions.json",
                        help="the redaction rules (default: redactions.json beside this file)")
    parser.add_argument("--check", action="store_true", help="only check sets already rebuilt")
    args = parser.parse_args(argv)
    if args.check:
        if not args.sets:
            parser.error("--check needs the rebuilt set folders")
        failed = False
        for set_dir in args.sets:
            problems = check(set_dir)
            print(f"{set_dir.name}: {'labels fit' if not problems else str(len(problems)) + ' problems'}")
            for p in problems:
                print("  " + p)
            failed |= bool(problems)
        return 1 if failed else 0
    if args.out is None:
        parser.error("--out is required to rebuild")
    set_dirs = args.sets or sorted(p.parent for p in HERE.glob("*/SOURCES.md"))
    rules = load_rules(args.redactions)
    try:
        return _rebuild_all(set_dirs, args.out, args.mirror, rules)
    finally:
        write_readme(args.out)  # from every set's REBUILT.json, also when the output was cut short


def _say(line: str) -> None:
    """Print a line of the report; a reader that went away (| head) stops the report, not the rebuild."""
    try:
        print(line, flush=True)
    except BrokenPipeError:
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - the rest of the report goes nowhere


def _rebuild_all(set_dirs: list[Path], out_root: Path, mirror: Path, rules: list[Rule]) -> int:
    status = 0
    for set_dir in set_dirs:
        out = out_root / set_dir.name
        out.mkdir(parents=True, exist_ok=True)
        try:
            reports, learned = rebuild(set_dir, out, mirror, rules)
        except (MissingSource, SourcesError) as exc:
            print(f"{set_dir.name}: not rebuilt: {exc}", file=sys.stderr)
            status = 2
            continue
        problems = check(out, learned)
        (out / "REBUILT.json").write_text(json.dumps(
            {"set": set_dir.name, "files": [rep.__dict__ for rep in reports], "problems": problems},
            ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
        same = sum(r.matches for r in reports)
        _say(f"{set_dir.name}: {same} of {len(reports)} files match byte for byte; "
              f"{'labels fit' if not problems else str(len(problems)) + ' label problems'}")
        for rep in reports:
            _say(_report_line(rep))
        for p in problems:
            _say("  " + p)
        if problems and status == 0:
            status = 1
    return status


if __name__ == "__main__":
    sys.exit(main())
