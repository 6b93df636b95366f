"""Writing a file in the person's agent folders (``~/.claude``, ``~/.codex``, ``~/.gemini``, a
memory folder): atomically, through links, and never more readable than it was.

Those folders hold OAuth tokens, settings and what the person told their agents; Claude Code
creates its own files there 0600. So every file commons writes there keeps the mode of the file it
replaces, and one commons creates (a memory file, a backup, ``~/.claude.json`` when absent) is
0600, whatever the umask. The new bytes go to a temporary file beside the target, created 0600
from the start (no moment at which another user could open it), then renamed over it: a reader
sees the old file or the new one, never half of one. A link is written through to the file it
points at (a dotfiles folder, say), never replaced by a plain file. A folder commons has to create
for it is 0700.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

__all__ = ["NEW_FILE_MODE", "write_private"]

NEW_FILE_MODE = 0o600


def write_private(path: Path, data: bytes, *, mode: int | None = None) -> bool:
    """Replace ``path`` with ``data`` (see the module); True if the file changed. ``mode`` forces
    one (a backup, which holds what the person's file held, is 0600 whatever an older one was)."""
    path = Path(os.path.realpath(path))
    try:
        current = path.stat()
    except FileNotFoundError:
        current = None
    if current is not None and (mode is None or stat.S_IMODE(current.st_mode) == mode):
        try:
            if path.read_bytes() == data:
                return False
        except OSError:
            pass
    if mode is None:
        mode = stat.S_IMODE(current.st_mode) if current is not None else NEW_FILE_MODE
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.commons-tmp")
    tmp.unlink(missing_ok=True)  # left by a crash: never written through, maybe another's mode
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, NEW_FILE_MODE)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            os.fchmod(handle.fileno(), mode)  # the umask never widens or narrows what we keep
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    os.replace(tmp, path)
    return True
