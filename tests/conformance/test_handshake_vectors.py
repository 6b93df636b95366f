"""protocol/vectors/handshake.json: our state machines reproduce every vector, and the file is current."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from commons.core.transport.boxstream import BoxStreamDecoder
from commons.core.transport.handshake import ClientHandshake, ServerHandshake

VECTORS_DIR = Path(__file__).parents[2] / "protocol" / "vectors"
VECTORS = json.loads((VECTORS_DIR / "handshake.json").read_text())


def _h(case: dict[str, Any], name: str) -> bytes:
    return bytes.fromhex(case[f"{name}_hex"])


@pytest.mark.parametrize("case", VECTORS["handshake"], ids=lambda c: c["id"])
def test_client_produces_the_vector_messages_and_keys(case: dict[str, Any]) -> None:
    client = ClientHandshake(
        _h(case, "network_key"),
        _h(case, "client_seed"),
        _h(case, "server_public_key"),
        ephemeral_secret=_h(case, "client_ephemeral_sk"),
    )
    assert client.start() == _h(case, "msg1")
    assert client.receive_server_hello(_h(case, "msg2")) == _h(case, "msg3")
    outcome = client.receive_server_accept(_h(case, "msg4"))
    assert outcome.remote_public_key == _h(case, "server_public_key")
    assert outcome.encrypt_key == _h(case, "encrypt_key")
    assert outcome.encrypt_nonce == _h(case, "encrypt_nonce")
    assert outcome.decrypt_key == _h(case, "decrypt_key")
    assert outcome.decrypt_nonce == _h(case, "decrypt_nonce")


@pytest.mark.parametrize("case", VECTORS["handshake"], ids=lambda c: c["id"])
def test_server_produces_the_vector_messages_and_mirrored_keys(case: dict[str, Any]) -> None:
    server = ServerHandshake(_h(case, "network_key"), _h(case, "server_seed"), ephemeral_secret=_h(case, "server_ephemeral_sk"))
    assert server.public_key == _h(case, "server_public_key")
    assert server.receive_client_hello(_h(case, "msg1")) == _h(case, "msg2")
    assert server.receive_client_auth(_h(case, "msg3")) == _h(case, "msg4")
    outcome = server.outcome
    assert outcome.remote_public_key == _h(case, "client_public_key")
    assert (outcome.encrypt_key, outcome.encrypt_nonce) == (_h(case, "decrypt_key"), _h(case, "decrypt_nonce"))
    assert (outcome.decrypt_key, outcome.decrypt_nonce) == (_h(case, "encrypt_key"), _h(case, "encrypt_nonce"))


@pytest.mark.parametrize("case", VECTORS["boxstream"], ids=lambda c: c["id"])
def test_decoder_opens_the_vector_boxes(case: dict[str, Any]) -> None:
    decoder = BoxStreamDecoder(_h(case, "key"), _h(case, "nonce"))
    assert b"".join(decoder.feed(_h(case, "boxed"))) == _h(case, "plaintext")
    assert decoder.goodbye_received is case["goodbye"]

