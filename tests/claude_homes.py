"""A person's machine as Claude Code leaves it, for integration tests.

:func:`make_machine` builds, under a temporary folder: a git repository ``code/spotter-web`` (its
``origin`` on GitHub) with a linked worktree ``code/wt/feature-x``, a folder outside git, and a
``~/.claude`` with user settings holding the person's own hooks and keys, the projects' transcript
folders keyed by the sessions' ``cwd`` and the repository's auto-memory folder keyed by its root,
whose ``MEMORY.md`` has the person's own lines.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pytest

from commons.integrations.claude_code import slug
from tests.transcripts import session

PERSON_MEMORY = "# Memory\n\n- The staging database is read-only on Fridays.\n- [Deploys](deploys.md): the release checklist.\n"

# Written the way Claude Code writes settings.json (JSON.stringify with two spaces), plus keys of
# every kind a person keeps there.
PERSON_SETTINGS = {
    "$schema": "https://json.schemastore.org/claude-code-settings.json",
    "model": "opus",
    "env": {"DISABLE_TELEMETRY": "1"},
    "permissions": {"allow": ["Bash(npm run test:*)", "Read(~/.zshrc)"], "deny": ["Read(./.env)"]},
    "hooks": {
        "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "~/bin/check-bash.sh"}]}],
        "SessionEnd": [{"hooks": [{"type": "command", "command": "notify-send 'Claude is done'"}]}],
        "Stop": [{"hooks": [{"type": "command", "command": "afplay /System/Library/Sounds/Glass.aiff"}]}],
    },
    "statusLine": {"type": "command", "command": "~/.claude/statusline.sh"},
    "autoUpdates": False,
}


@dataclass(frozen=True)
class Machine:
    home: Path  # $HOME
    claude: Path  # ~/.claude
    repo: Path  # the main checkout
    worktree: Path  # a linked worktree of it
    scratch: Path  # a folder outside git
    settings_bytes: bytes  # ~/.claude/settings.json as the person left it

    @property
    def settings(self) -> Path:
        return self.claude / "settings.json"

    @property
    def memory(self) -> Path:
        return self.claude / "projects" / slug(self.repo) / "memory"


def make_machine(root: Path, monkeypatch: pytest.MonkeyPatch) -> Machine:
    home = root / "person"
    monkeypatch.setenv("HOME", str(home))
    for name in ("CLAUDE_CONFIG_DIR", "CLAUDE_CODE_DISABLE_AUTO_MEMORY"):
        monkeypatch.delenv(name, raising=False)
    repo, worktree, scratch = home / "code" / "spotter-web", home / "code" / "wt" / "feature-x", home / "notes_2026"
    git = repo / ".git"
    (git / "worktrees" / "feature-x").mkdir(parents=True)
    (git / "config").write_text('[core]\n\tbare = false\n[remote "origin"]\n\turl = git@github.com:ada/spotter-web.git\n')
    (git / "HEAD").write_text("ref: refs/heads/main\n")
    worktree.mkdir(parents=True)
    (worktree / ".git").write_text(f"gitdir: {git / 'worktrees' / 'feature-x'}\n")
    (git / "worktrees" / "feature-x" / "gitdir").write_text(f"{worktree / '.git'}\n")
    (git / "worktrees" / "feature-x" / "commondir").write_text("../..\n")
    (repo / "src").mkdir()
    scratch.mkdir(parents=True)

    claude = home / ".claude"
    claude.mkdir()
    settings_bytes = (json.dumps(PERSON_SETTINGS, indent=2) + "\n").encode()
    (claude / "settings.json").write_bytes(settings_bytes)
    memory = claude / "projects" / slug(repo) / "memory"
    memory.mkdir(parents=True)
    (memory / "MEMORY.md").write_text(PERSON_MEMORY)
    (memory / "deploys.md").write_text("# Deploys\n\nTag, then push the tag.\n")
    return Machine(home, claude, repo, worktree, scratch, settings_bytes)


def write_session(machine: Machine, cwd: Path, name: str = "pip-then-uv") -> Path:
    """A session run in ``cwd`` (pip fails, the person says to use uv), in its transcript folder
    ``~/.claude/projects/<slug(cwd)>/<session id>.jsonl``."""
    from tests.transcripts import pip_fails

    s = session(machine.claude / "projects" / slug(cwd), 2, name, cwd=str(cwd))
    s.path = s.path.with_name(f"{s.sid}.jsonl")
    s.user("add httpx to the project")
    pip_fails(s, "httpx")
    s.user("no, this project uses uv, not pip. use uv add")
    s.write()
    return s.path
