"""Errors a person sees: each says what went wrong and what to do, and maps to an exit code.

The CLI prints one line for any :class:`CommonsError` and exits with its ``exit_code``; anything
else is a bug in commons and is shown with its traceback.
"""

from __future__ import annotations

import errno


class CommonsError(Exception):
    """Something the person can act on went wrong (exit code 1)."""

    exit_code = 1


class UsageError(CommonsError):
    """The command was called the wrong way (exit code 2)."""

    exit_code = 2


class ConfigError(CommonsError):
    """config.toml is missing, unreadable or has a bad value; the message names file and key."""


class KeyFileError(CommonsError):
    """A key file is missing, malformed or readable by others."""


class NotInitialized(CommonsError):
    """The home has no keys yet: `commons init` was not run."""


class StoreError(CommonsError):
    """The database cannot be opened or fails a check."""


# What a person can do about an operating system error on one of the home's files.
_WHAT_TO_DO = {
    errno.ENOSPC: ("no space left on the disk", "free some space and run the command again"),
    errno.EDQUOT: ("the disk quota is used up", "free some space and run the command again"),
    errno.EROFS: ("the file system is read-only", "only commands that read work here; remount it "
                  "read-write or set COMMONS_HOME to a writable folder"),
    errno.EACCES: ("permission denied", "check who owns the folder and its files (`ls -l`)"),
    errno.EPERM: ("not permitted", "check who owns the folder and its files (`ls -l`)"),
}


def explain_os_error(error: OSError, where: object = None) -> str | None:
    """One line naming the file (else ``where``) and what to do, for the errors of a full disk, a
    read-only home or wrong permissions; None for the others (a bug in commons, shown as one)."""
    known = _WHAT_TO_DO.get(error.errno)
    if known is None:
        return None
    what, todo = known
    where = error.filename if error.filename is not None else (where or "a file of the commons home")
    return f"{where}: {what}: {todo}"
