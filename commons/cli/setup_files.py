"""The file edits every `commons setup` makes: one file's content before and after, written atomically,
recorded, and undone exactly (``commons.cli.setup`` for Claude Code, ``commons.cli.setup_agents`` for
Codex and Gemini CLI)."""

from __future__ import annotations

import difflib
import hashlib
import json
import os
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

from commons.errors import CommonsError
from commons.integrations import claude_settings as cs
from commons.integrations.files import NEW_FILE_MODE, write_private

BACKUP_SUFFIX = ".commons-backup"


def commons_executable() -> list[str]:
    """The command that runs this install of commons: the script beside the running interpreter
    (a venv's or pipx's), else `commons` on PATH, else ``python -m commons``."""
    beside = Path(sys.executable).parent / ("commons.exe" if os.name == "nt" else "commons")
    if beside.is_file():
        return [str(beside)]
    found = shutil.which("commons")
    return [os.path.abspath(found)] if found else [sys.executable, "-m", "commons"]


def home_env() -> dict[str, str]:
    home = os.environ.get("COMMONS_HOME")
    return {"COMMONS_HOME": os.path.abspath(os.path.expanduser(home))} if home else {}


@dataclass(frozen=True)
class Edit:
    """One file's content before and after (None: the file is absent)."""

    path: Path
    before: bytes | None
    after: bytes | None

    @property
    def changes(self) -> bool:
        return self.before != self.after

    def diff(self) -> str:
        def lines(data: bytes | None) -> list[str]:
            return [] if data is None else data.decode("utf-8", "replace").splitlines(keepends=True)

        name = str(self.path)
        out = difflib.unified_diff(lines(self.before), lines(self.after), name, name)
        return "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in out)


def _read(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as error:
        raise CommonsError(f"cannot read {path}: {error.strerror}") from None


def _text(data: bytes | None, path: Path) -> str:
    try:
        return "" if data is None else data.decode("utf-8")
    except UnicodeDecodeError:
        raise cs.SettingsError(f"{path} is not UTF-8 text; fix or move it, then run this again") from None


def read_text(path: Path) -> str:
    """The text of ``path`` ("" when it is absent); the person's to fix when it is not UTF-8."""
    return _text(_read(path), path)


def write_file(path: Path, data: bytes | None, *, mode: int | None = None) -> None:
    """Replace ``path`` atomically with ``data``, or remove it for None: its mode kept, 0600 when
    new or ``mode`` given (``commons.integrations.files``)."""
    if data is None:
        path.unlink(missing_ok=True)
        return
    write_private(path, data, mode=mode)


def write_backup(edit: Edit) -> Path | None:
    """Copy the person's file ``edit`` changes to ``<file>.commons-backup`` before it is written
    (None when there was no file): 0600, as it may hold tokens, whatever the file's mode was."""
    if edit.before is None:
        return None
    backup = edit.path.with_name(edit.path.name + BACKUP_SUFFIX)
    write_file(backup, edit.before, mode=NEW_FILE_MODE)
    return backup


def sha256_of(data: bytes | None) -> str | None:
    return None if data is None else hashlib.sha256(data).hexdigest()


def edit_file(path: Path, change) -> Edit:
    """``change(text, where) -> text`` applied to ``path``; an unchanged text leaves the bytes."""
    before = _read(path)
    text = _text(before, path)
    new = change(text, str(path))
    return Edit(path, before, before if new == text else new.encode("utf-8"))


def undo_edit(noted: dict, default: Path, remove) -> tuple[Edit, Path | None]:
    """The edit that undoes setup's change to one file (``noted``: what setup recorded of it) and
    the backup setup made: the backup byte for byte when the file is still what setup wrote, else
    ``remove(text, where)`` of what setup added alone (it changed since, or its backup is gone)."""
    path = Path(noted.get("path") or default)
    current = _read(path)
    backup = Path(noted["backup"]) if noted.get("backup") else None
    kept = _read(backup) if backup else None
    if noted and sha256_of(current) == noted.get("sha256_after") and (backup is None or kept is not None):
        return Edit(path, current, kept), backup
    return edit_file(path, remove), backup


def save_record(path: Path, record: dict) -> None:
    if record:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_file(path, (json.dumps(record, indent=2) + "\n").encode("utf-8"))


def load_record(path: Path) -> dict:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as error:
        raise CommonsError(f"{path} (what setup added) cannot be read: {error}; move it away to start over") from None
    return data if isinstance(data, dict) else {}
