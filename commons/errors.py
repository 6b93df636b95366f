"""Errors a person sees: each says what went wrong and what to do, and maps to an exit code.

The CLI prints one line for any :class:`CommonsError` and exits with its ``exit_code``; anything
else is a bug in commons and is shown with its traceback.
"""

from __future__ import annotations


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
