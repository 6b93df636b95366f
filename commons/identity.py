"""A node's secrets: its author key, its transport key and its hashing secret.

- The **author key** (Ed25519) signs every record the node publishes.
- The **transport key** (Ed25519) is used only in the handshake and in LAN advertisements, so
  that peers cannot tie a network address to an author.
- The **hashing secret** keys the hashes of local episodes (see ``commons.core.records.hashing``).

Each is a 32-byte secret kept in its own file under ``<data>/keys``, written once with mode 0600
and never overwritten. A key file that others can read is refused: a leaked author key lets anyone
sign in this node's name.
"""

from __future__ import annotations

import hashlib
import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from commons.errors import KeyFileError, NotInitialized
from commons.home import Home

if TYPE_CHECKING:
    import nacl.signing

_FILES = {"author": "author.key", "transport": "transport.key", "hash_secret": "hash.secret"}
_FIELDS = {"author": "author_seed", "transport": "transport_seed", "hash_secret": "hash_secret"}


@dataclass(frozen=True)
class Identity:
    author_seed: bytes
    transport_seed: bytes
    hash_secret: bytes

    @property
    def author_key(self) -> nacl.signing.SigningKey:
        import nacl.signing  # here: a process that only asks whether keys exist does not load libsodium

        return nacl.signing.SigningKey(self.author_seed)

    @property
    def author_public(self) -> bytes:
        return bytes(self.author_key.verify_key)

    @property
    def transport_public(self) -> bytes:
        import nacl.signing

        return bytes(nacl.signing.SigningKey(self.transport_seed).verify_key)


def key_paths(home: Home) -> dict[str, Path]:
    return {name: home.keys_dir / filename for name, filename in _FILES.items()}


def exists(home: Home) -> bool:
    return any(path.exists() for path in key_paths(home).values())


def derived(text: str) -> Identity:
    """Secrets anyone who knows ``text`` can rebuild: a simulation's node (``f"{seed}/{name}"``) made
    the same on every run, so that a seed's run is reproducible. Never for a real home."""
    def secret(name: str) -> bytes:
        return hashlib.blake2b(text.encode("utf-8"), digest_size=32, person=b"commons-derived",
                               salt=name.encode("ascii")).digest()
    return Identity(secret("author"), secret("transport"), secret("hash_secret"))


def create(home: Home, secrets: Identity | None = None) -> Identity:
    """Write a home's secrets: fresh ones, or ``secrets`` (:func:`derived`, for simulations).
    Existing key files are never overwritten."""
    paths = key_paths(home)
    present = [str(p) for p in paths.values() if p.exists()]
    if present:
        raise KeyFileError(f"keys already exist ({', '.join(present)}); commons never overwrites a key")
    home.keys_dir.mkdir(parents=True, exist_ok=True)
    os.chmod(home.keys_dir, 0o700)
    made = secrets or Identity(os.urandom(32), os.urandom(32), os.urandom(32))
    for name, path in paths.items():
        _write_secret(path, getattr(made, _FIELDS[name]))
    return made


def load(home: Home) -> Identity:
    paths = key_paths(home)
    if not any(p.exists() for p in paths.values()):
        raise NotInitialized(f"no keys in {home.keys_dir}; run `commons init` first")
    values = {name: _read_secret(path) for name, path in paths.items()}
    return Identity(values["author"], values["transport"], values["hash_secret"])


def _write_secret(path: Path, secret: bytes) -> None:
    # O_EXCL: never overwrite; the mode is set at creation, so the secret is never world-readable.
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as handle:
        handle.write(secret.hex() + "\n")
        handle.flush()
        os.fsync(handle.fileno())


def _read_secret(path: Path) -> bytes:
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        raise KeyFileError(f"key file {path} is missing; restore it from a backup") from None
    if mode & (stat.S_IRWXG | stat.S_IRWXO):
        raise KeyFileError(
            f"key file {path} is readable by others (mode {stat.S_IMODE(mode):04o}); "
            f"run `chmod 600 {path}` if you are sure nobody copied it"
        )
    text = path.read_text().strip()
    try:
        secret = bytes.fromhex(text)
    except ValueError:
        secret = b""
    if len(secret) != 32:
        raise KeyFileError(f"key file {path} does not hold a 32-byte secret in hex")
    return secret
