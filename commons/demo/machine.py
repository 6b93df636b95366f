"""Each demo node's machine as Claude Code would leave it: a ``HOME`` with ``~/.claude/projects/``.

The bundled sessions were recorded in ``/home/<node>/src/<project>``; the demo gives each node a
temporary ``HOME`` instead, so it rewrites that prefix to the temporary home when it lays a
session down, creates each project's checkout (a ``.git`` folder, so a session run in a subfolder
belongs to its repository, as in Claude Code) and puts the transcript where Claude Code keeps it,
``~/.claude/projects/<slug of the session's cwd>/``. Rendering then finds each project's auto
memory, ``~/.claude/projects/<slug of the git root>/memory/``, exactly as on a real machine.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from commons.integrations.claude_code import MEMORY_INDEX, slug

DEMO_SESSIONS = Path(__file__).resolve().parent / "sessions"  # <node name>/day-NN-*.jsonl

# What each command sees of the environment: its node's home and its person's HOME (the demo's
# Claude Code folder), never the machine's own ~/.claude.
ENV_SET = ("COMMONS_HOME", "HOME")
ENV_DROP = ("CLAUDE_CONFIG_DIR", "CLAUDE_CODE_DISABLE_AUTO_MEMORY", "COMMONS_AT")


@dataclass(frozen=True)
class DemoNode:
    name: str
    home: Path  # COMMONS_HOME

    @property
    def person(self) -> Path:
        """The node's person's HOME: their ~/.claude with a folder per project."""
        return self.home / "person"

    @property
    def memory_indexes(self) -> list[Path]:
        return memory_indexes(self.person)

    def env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if k not in ENV_DROP}
        return dict(env, COMMONS_HOME=str(self.home), HOME=str(self.person))

    def memory_text(self) -> str:
        """Every project's MEMORY.md of this node, one after the other."""
        return "".join(index.read_text(encoding="utf-8") for index in self.memory_indexes)


def recorded_home(name: str) -> str:
    return f"/home/{name}"


def session_cwd(text: str) -> str | None:
    for line in text.splitlines():
        if '"cwd"' in line:
            value = json.loads(line).get("cwd")
            if isinstance(value, str) and value:
                return value
    return None


def lay_down(person: Path, name: str, session: Path) -> Path:
    """Put one bundled session into ``person``'s Claude Code folder; returns the transcript's path."""
    text = session.read_text(encoding="utf-8").replace(recorded_home(name), str(person))
    cwd = session_cwd(text)
    if cwd is None:
        raise ValueError(f"{session} records no cwd: not a Claude Code session")
    workdir = Path(cwd)
    # The project's checkout: ~/src/<project>, whatever subfolder the session ran in.
    checkout = person / "src" / workdir.relative_to(person / "src").parts[0]
    (checkout / ".git").mkdir(parents=True, exist_ok=True)
    (checkout / ".git" / "HEAD").write_text("ref: refs/heads/main\n", encoding="utf-8")
    workdir.mkdir(parents=True, exist_ok=True)
    folder = person / ".claude" / "projects" / slug(workdir)
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / session.name
    target.write_text(text, encoding="utf-8")
    return target


def lay_down_all(person: Path, name: str, sessions: Iterable[Path]) -> list[Path]:
    (person / ".claude").mkdir(parents=True, exist_ok=True)
    return [lay_down(person, name, session) for session in sessions]


def memory_indexes(person: Path) -> list[Path]:
    """Every project's auto-memory index under ``person``'s Claude Code folder."""
    return sorted((person / ".claude" / "projects").glob(f"*/memory/{MEMORY_INDEX}"))
