"""Keyed hashes: how a node names its own episodes without revealing them.

A lesson's provenance and a verification's evidence point at local episodes. A plain hash of an
error line could be confirmed by anyone who hashes guesses ("is it `pip install`?"), so these
hashes are BLAKE3 in keyed mode, keyed with the node's own secret, and domain-separated so that an
episode hash can never pass for an evidence hash.
"""

from __future__ import annotations

from blake3 import blake3

SECRET_BYTES = 32


def keyed_hash(secret: bytes, domain: str, data: bytes) -> bytes:
    if len(secret) != SECRET_BYTES:
        raise ValueError(f"a hashing secret is {SECRET_BYTES} bytes, not {len(secret)}")
    return blake3(domain.encode() + b"\0" + data, key=secret).digest()


def episode_hash(secret: bytes, episode_uid: str) -> bytes:
    return keyed_hash(secret, "commons/episode", episode_uid.encode())


def evidence_hash(secret: bytes, lesson_id: bytes, episode_uid: str) -> bytes:
    return keyed_hash(secret, "commons/evidence", lesson_id + episode_uid.encode())
