"""Several nodes in one test, each a home driven through the CLI in-process (peer review, revocation)."""

from __future__ import annotations

import json
from pathlib import Path

import nacl.signing

from commons.core.records import (Lesson, LessonKind, Outcome, Prediction, Revocation, Scope, TargetKind,
                                  Verification, sign)
from commons.home import Home
from tests.transcripts import cli, pip_fails, session

OPEN_TRUST = "\n[trust]\npolicy = \"open\"\nrequired = {required}\n"


class Nodes:
    """Homes under one folder; ``run(name, …)`` is `COMMONS_HOME=<name> commons …`."""

    def __init__(self, root: Path, monkeypatch, capsys):
        self.root, self.monkeypatch, self.capsys = root, monkeypatch, capsys

    def home(self, name: str) -> Home:
        return Home(config_dir=self.root / name, data_dir=self.root / name / "data")

    def run(self, name: str, *argv: str, at: str | None = None) -> tuple[int, str, str]:
        self.monkeypatch.setenv("COMMONS_HOME", str(self.root / name))
        return cli(self.capsys, *argv, at=at)

    def ok(self, name: str, *argv: str, at: str | None = None) -> str:
        code, out, err = self.run(name, *argv, at=at)
        assert code == 0, f"commons {' '.join(argv)} in {name}: {err}"
        return out

    def json(self, name: str, *argv: str, at: str | None = None):
        return json.loads(self.ok(name, *argv, "--json", at=at))

    def init(self, name: str, *, trust: str = OPEN_TRUST.format(required=3)) -> str:
        self.ok(name, "init")
        with open(self.home(name).config_file, "a", encoding="utf-8") as handle:
            handle.write(trust)
        return self.json(name, "id")["author"]

    def publish_on(self, name: str) -> None:
        from commons.node import publish
        from commons.runtime import run
        from commons.store.db import Store

        async def turn_on() -> None:
            async with await Store.open(self.home(name).database) as store:
                await publish.set_on(store, True, 0.0)

        run(turn_on)

    def export(self, name: str, *argv: str) -> Path:
        path = self.root / f"{name}-export-{len(list(self.root.glob(f'{name}-export-*')))}.jsonl"
        path.write_text(self.ok(name, "export", *argv), encoding="utf-8")
        return path

    def carry(self, source: str, target: str, at: str, *argv: str) -> dict:
        """`commons export` at source, `commons import` at target: records travel by file."""
        code, out, err = self.run(target, "import", str(self.export(source, *argv)), "--json", at=at)
        assert code in (0, 1), err
        return json.loads(out)

    def memory(self, name: str) -> str:
        folder = self.home(name).data_dir / "memory"
        return (folder / "MEMORY.md").read_text() if (folder / "MEMORY.md").exists() else ""

    def lessons(self, name: str, status: str = "all", at: str | None = None) -> list[dict]:
        return self.json(name, "lessons", "--status", status, at=at)

    def ingest(self, name: str, path: Path, at: str) -> None:
        self.ok(name, "ingest", str(path), at=at)


def pip_sessions(folder: Path, day: int, slug: str = "rates") -> Path:
    """A session meeting the pip pitfall twice, then `uv add` working (a lesson the night after)."""
    s = session(folder, day, slug)
    s.user("add httpx and write the rates client")
    pip_fails(s, "httpx")
    pip_fails(s, "httpx==0.27")
    s.bash("uv add httpx==0.27", "Add httpx with uv", "Resolved 3 packages\n + httpx==0.27.0")
    s.write()
    return s.path


def pip_once(folder: Path, day: int, slug: str, hour: int = 9) -> Path:
    s = session(folder, day, slug, hour=hour)
    s.user("add rich for the report table")
    pip_fails(s, "rich")
    s.bash("uv add rich", "Add rich with uv", "Resolved 3 packages\n + rich==13.9.4")
    s.write()
    return s.path


def pip_works(folder: Path, day: int, slug: str, command: str = "pip install rich") -> Path:
    """A session in which ``command`` (by default the kind of `pip install` the pitfall fails) works."""
    s = session(folder, day, slug)
    s.user("install it into the project's venv")
    s.bash(command, "Install into the project's venv", "Successfully installed rich-13.9.4")
    s.write()
    return s.path


def unrelated(folder: Path, day: int, slug: str) -> Path:
    s = session(folder, day, slug)
    s.user("fix the typo in the readme")
    s.bash("git status", "Show status", "On branch main\nnothing to commit, working tree clean")
    s.write()
    return s.path


# --- records signed by fixed keys, for counting and revocation tests -----------------------------

NETWORK = bytes.fromhex("c0ffee5eed0c0a1ac0ffee5eed0c0a1ac0ffee5eed0c0a1ac0ffee5eed0c0a1a")
DAY = 20759  # 2026-11-02


def key(n: int) -> nacl.signing.SigningKey:
    return nacl.signing.SigningKey(bytes([n]) * 32)


def lesson(k: nacl.signing.SigningKey, text: str, *, parents=(), supersedes=None, day: int = DAY):
    return sign(Lesson(network=NETWORK, author=bytes(k.verify_key), created=day, kind=LessonKind.ERROR,
                       text=text, scope=Scope.SHARED, topics=("pip",),
                       prediction=Prediction("pip install", "error: externally-managed-environment"),
                       parents=tuple(sorted(parents)), supersedes=supersedes), k)


def verification(k, lesson_id: bytes, outcome: Outcome = Outcome.CONFIRMED, *, day: int = DAY + 2,
                 naive: bool = True):
    return sign(Verification(network=NETWORK, author=bytes(k.verify_key), created=day, lesson=lesson_id,
                             outcome=outcome, evidence=bytes([7]) * 32, received=DAY, observed=day,
                             naive=naive), k)


def revocation(k, target: bytes, reason: str = "wrong", *, kind: TargetKind = TargetKind.RECORD,
               day: int = DAY + 3):
    return sign(Revocation(network=NETWORK, author=bytes(k.verify_key), created=day, target=target,
                           target_kind=kind, reason=reason), k)


def write_lines(path: Path, records) -> Path:
    path.write_text("".join(json.dumps({"type": s.type.value, "id": s.id.hex(), "body": s.body.hex(),
                                        "signature": s.signature.hex()}) + "\n" for s in records))
    return path
