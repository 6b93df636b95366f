"""Regenerate protocol/vectors/handshake.json: Secret Handshake v1 and box-stream test vectors.

    .venv/bin/python protocol/vectors/generate_handshake.py          # rewrite the file
    .venv/bin/python protocol/vectors/generate_handshake.py --check  # exit 1 if it is out of date

Every input is fixed (derived from labels with SHA-256), so the output is byte-for-byte stable;
tests/conformance/test_handshake_vectors.py fails when the file and this script disagree.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path
from typing import Any

# Run as a plain script from a checkout: make the repository's `commons` importable without install.
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from protocol.vectors.vectorfile import regenerate  # noqa: E402

from commons.core.transport.boxstream import MAX_BODY_LENGTH, BoxStreamEncoder
from commons.core.transport.handshake import ClientHandshake, ServerHandshake

VECTORS_PATH = Path(__file__).with_name("handshake.json")

COMMENT = (
    "Secret Handshake v1 + box-stream vectors for commons (spec: protocol/transport.md, after the "
    "Scuttlebutt protocol guide). Each handshake case fixes the network key, the 32-byte Ed25519 "
    "seeds of both long-term transport keys and both 32-byte X25519 ephemeral secrets "
    "(ephemeral public key = X25519(secret, basepoint)); inputs are SHA-256 of the label "
    "'commons shs vector <id> <role>' unless the case comment says otherwise. msg1..msg4 are the "
    "four messages in wire order (64, 64, 112, 80 bytes). encrypt/decrypt keys and nonces are the "
    "client's box-stream parameters; the server's are the same pairs swapped. Each boxstream case "
    "encodes plaintext with a fresh encoder at (key, nonce) -- split into boxes of at most 4096 "
    "bytes, none for an empty plaintext -- followed by the goodbye box when goodbye is true; "
    "boxed_hex is the whole wire output. Regenerate with: "
    ".venv/bin/python protocol/vectors/generate_handshake.py"
)

# The public commons' network key (commons.config.DEFAULT_NETWORK_KEY) and the main Scuttlebutt
# network's, so that a reader can check against another SHS implementation.
COMMONS_NETWORK_KEY = bytes.fromhex("c0ffee5eed0c0a1a" * 4)
SCUTTLEBUTT_NETWORK_KEY = bytes.fromhex("d4a1cb88a66f02f8db635ce26441cc5dac1b08420ceaac230839b755845a9ffb")


def _label(case_id: str, role: str) -> bytes:
    return hashlib.sha256(f"commons shs vector {case_id} {role}".encode()).digest()


def handshake_case(
    case_id: str,
    comment: str,
    network_key: bytes,
    client_seed: bytes,
    server_seed: bytes,
    client_ephemeral: bytes,
    server_ephemeral: bytes,
) -> dict[str, Any]:
    server = ServerHandshake(network_key, server_seed, ephemeral_secret=server_ephemeral)
    client = ClientHandshake(network_key, client_seed, server.public_key, ephemeral_secret=client_ephemeral)
    msg1 = client.start()
    msg2 = server.receive_client_hello(msg1)
    msg3 = client.receive_server_hello(msg2)
    msg4 = server.receive_client_auth(msg3)
    outcome = client.receive_server_accept(msg4)
    return {
        "id": case_id,
        "comment": comment,
        "network_key_hex": network_key.hex(),
        "client_seed_hex": client_seed.hex(),
        "server_seed_hex": server_seed.hex(),
        "client_ephemeral_sk_hex": client_ephemeral.hex(),
        "server_ephemeral_sk_hex": server_ephemeral.hex(),
        "client_public_key_hex": client.public_key.hex(),
        "server_public_key_hex": server.public_key.hex(),
        "msg1_hex": msg1.hex(),
        "msg2_hex": msg2.hex(),
        "msg3_hex": msg3.hex(),
        "msg4_hex": msg4.hex(),
        "encrypt_key_hex": outcome.encrypt_key.hex(),
        "encrypt_nonce_hex": outcome.encrypt_nonce.hex(),
        "decrypt_key_hex": outcome.decrypt_key.hex(),
        "decrypt_nonce_hex": outcome.decrypt_nonce.hex(),
    }


def boxstream_case(case_id: str, comment: str, key: bytes, nonce: bytes, plaintext: bytes, goodbye: bool) -> dict[str, Any]:
    encoder = BoxStreamEncoder(key, nonce)
    boxed = encoder.encode(plaintext) + (encoder.goodbye() if goodbye else b"")
    return {
        "id": case_id,
        "comment": comment,
        "key_hex": key.hex(),
        "nonce_hex": nonce.hex(),
        "plaintext_hex": plaintext.hex(),
        "goodbye": goodbye,
        "boxed_hex": boxed.hex(),
    }


def build() -> dict[str, Any]:
    handshakes = [
        handshake_case(
            "commons-network",
            "the public commons' network key; all other inputs from labels",
            COMMONS_NETWORK_KEY,
            _label("commons-network", "client-seed"),
            _label("commons-network", "server-seed"),
            _label("commons-network", "client-ephemeral"),
            _label("commons-network", "server-ephemeral"),
        ),
        handshake_case(
            "scuttlebutt-network",
            "the main Scuttlebutt network key, to cross-check with other SHS implementations",
            SCUTTLEBUTT_NETWORK_KEY,
            _label("scuttlebutt-network", "client-seed"),
            _label("scuttlebutt-network", "server-seed"),
            _label("scuttlebutt-network", "client-ephemeral"),
            _label("scuttlebutt-network", "server-ephemeral"),
        ),
        handshake_case(
            "boundary-bytes",
            "all-zero network key and client seed, all-0xff server seed; ephemeral secrets 0x01.. "
            "and 0xff.. (X25519 clamps them, so both are valid)",
            bytes(32),
            bytes(32),
            b"\xff" * 32,
            b"\x01" * 32,
            b"\xff" * 32,
        ),
    ]
    first = handshakes[0]
    key, nonce = bytes.fromhex(first["encrypt_key_hex"]), bytes.fromhex(first["encrypt_nonce_hex"])
    boxstreams = [
        boxstream_case("goodbye-only", "an empty stream: just the goodbye", key, nonce, b"", True),
        boxstream_case("one-box", "a short payload in one box, then the goodbye", key, nonce, b"hello, commons", True),
        boxstream_case(
            "max-body",
            f"exactly {MAX_BODY_LENGTH} bytes: one full box, no goodbye",
            key,
            nonce,
            bytes(i % 251 for i in range(MAX_BODY_LENGTH)),
            False,
        ),
        boxstream_case(
            "split",
            f"{MAX_BODY_LENGTH + 1} bytes: a full box and a 1-byte box, then the goodbye",
            key,
            nonce,
            bytes(i % 253 for i in range(MAX_BODY_LENGTH + 1)),
            True,
        ),
        boxstream_case(
            "nonce-wraps",
            "the nonce starts at 2**192 - 1: the body uses 0, the goodbye 1 (the counter wraps)",
            key,
            b"\xff" * 24,
            b"wrap",
            True,
        ),
    ]
    return {"_comment": COMMENT, "handshake": handshakes, "boxstream": boxstreams}


def render() -> str:
    return json.dumps(build(), indent=2) + "\n"


def main(argv: list[str] | None = None) -> int:
    return regenerate(argv, generator=Path(__file__), path=VECTORS_PATH, render=render)


if __name__ == "__main__":
    sys.exit(main())
