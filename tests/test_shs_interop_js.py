"""Interop with the reference JavaScript implementation (npm secret-handshake + pull-box-stream).

``tests/interop/js/peer.js`` runs the reference peer over its stdin/stdout; our sans-I/O state
machines drive the other end through the pipes. Both roles are checked: Python client against the
JS server and Python server against the JS client, each with a handshake, payloads both ways
(including one split over several boxes) and goodbyes both ways.

The first run installs the pinned npm packages into tests/interop/js/node_modules (git-ignored);
without node/npm, or when the install fails (no registry), the tests skip and say why.
"""

from __future__ import annotations

import json
import os
import select
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from commons.core.transport.boxstream import BoxStreamDecoder, BoxStreamEncoder
from commons.core.transport.handshake import (
    ClientHandshake,
    HandshakeOutcome,
    MessageBuffer,
    ServerHandshake,
)

JS_DIR = Path(__file__).parent / "interop" / "js"
NETWORK_KEY = bytes.fromhex("5f" * 32)
PY_SEED = bytes(range(32))
JS_SEED = bytes(range(100, 132))
IO_TIMEOUT = 30.0

PAYLOADS = [b"first", b"x" * 300, bytes(range(256)) * 40, b"last"]  # the third spans 3 boxes


@pytest.fixture(scope="module")
def node_peer() -> list[str]:
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        pytest.skip("node or npm not on PATH: cannot run the reference JS secret-handshake")
    if not (JS_DIR / "node_modules" / "secret-handshake").is_dir():
        try:
            done = subprocess.run(
                [npm, "install", "--no-audit", "--no-fund"],
                cwd=JS_DIR,
                capture_output=True,
                text=True,
                timeout=180,
            )
        except subprocess.TimeoutExpired:
            pytest.skip("npm install of the reference JS peer timed out after 180 s")
        if done.returncode != 0:
            pytest.skip(f"npm install of the reference JS peer failed: {done.stderr.strip()[-500:]}")
    return [node, str(JS_DIR / "peer.js")]


def _read_exact(proc: subprocess.Popen[bytes], buffer: MessageBuffer, length: int) -> bytes:
    """Read from the JS peer until ``length`` bytes are buffered; fail on EOF or timeout."""
    assert proc.stdout is not None
    deadline = time.monotonic() + IO_TIMEOUT
    while (message := buffer.pop(length)) is None:
        ready, _, _ = select.select([proc.stdout], [], [], max(0.0, deadline - time.monotonic()))
        if not ready:
            raise AssertionError(f"JS peer sent no {length}-byte message within {IO_TIMEOUT} s")
        chunk = os.read(proc.stdout.fileno(), 65536)
        if not chunk:
            raise AssertionError(f"JS peer hung up: {proc.stderr.read().decode() if proc.stderr else ''}")
        buffer.feed(chunk)
    return message


def _send(proc: subprocess.Popen[bytes], data: bytes) -> None:
    assert proc.stdin is not None
    proc.stdin.write(data)
    proc.stdin.flush()


def _exchange_boxes(proc: subprocess.Popen[bytes], outcome: HandshakeOutcome, leftover: bytes) -> tuple[bytes, bool]:
    """Send PAYLOADS and our goodbye; return everything the JS peer sent back and its goodbye flag."""
    encoder = BoxStreamEncoder(outcome.encrypt_key, outcome.encrypt_nonce)
    wire = b"".join(encoder.encode(p) for p in PAYLOADS) + encoder.goodbye()
    out, err = proc.communicate(wire, timeout=IO_TIMEOUT)
    assert proc.returncode == 0, err.decode()
    decoder = BoxStreamDecoder(outcome.decrypt_key, outcome.decrypt_nonce)
    received = b"".join(decoder.feed(leftover + out))
    return received, decoder.goodbye_received


def _spawn(cmd: list[str]) -> subprocess.Popen[bytes]:
    return subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def _expected_reply(our_public_key: bytes) -> bytes:
    return json.dumps({"remote": our_public_key.hex()}, separators=(",", ":")).encode() + b"\n" + b"".join(PAYLOADS)


def _public_key(seed: bytes) -> bytes:
    return ServerHandshake(NETWORK_KEY, seed).public_key


def test_python_client_completes_handshake_and_box_stream_with_js_server(node_peer: list[str]) -> None:
    proc = _spawn([*node_peer, "server", NETWORK_KEY.hex(), JS_SEED.hex()])
    client = ClientHandshake(NETWORK_KEY, PY_SEED, _public_key(JS_SEED))
    buffer = MessageBuffer()
    _send(proc, client.start())
    _send(proc, client.receive_server_hello(_read_exact(proc, buffer, 64)))
    outcome = client.receive_server_accept(_read_exact(proc, buffer, 80))
    assert outcome.remote_public_key == _public_key(JS_SEED)

    received, goodbye = _exchange_boxes(proc, outcome, buffer.rest())

    assert received == _expected_reply(_public_key(PY_SEED))
    assert goodbye


def test_python_server_completes_handshake_and_box_stream_with_js_client(node_peer: list[str]) -> None:
    server = ServerHandshake(NETWORK_KEY, PY_SEED)
    proc = _spawn([*node_peer, "client", NETWORK_KEY.hex(), JS_SEED.hex(), server.public_key.hex()])
    buffer = MessageBuffer()
    _send(proc, server.receive_client_hello(_read_exact(proc, buffer, 64)))
    _send(proc, server.receive_client_auth(_read_exact(proc, buffer, 112)))
    assert server.outcome.remote_public_key == _public_key(JS_SEED)

    received, goodbye = _exchange_boxes(proc, server.outcome, buffer.rest())

    assert received == _expected_reply(server.public_key)
    assert goodbye


def test_js_server_hangs_up_without_answer_on_wrong_network_key(node_peer: list[str]) -> None:
    proc = _spawn([*node_peer, "server", NETWORK_KEY.hex(), JS_SEED.hex()])
    client = ClientHandshake(bytes(32), PY_SEED, _public_key(JS_SEED))

    out, _ = proc.communicate(client.start(), timeout=IO_TIMEOUT)

    assert out == b""
    assert proc.returncode != 0


def test_boxstream_vectors_match_reference_pull_box_stream(node_peer: list[str]) -> None:
    vectors = Path(__file__).parents[1] / "protocol" / "vectors" / "handshake.json"
    done = subprocess.run(
        [node_peer[0], str(JS_DIR / "boxstream_vectors.js"), str(vectors)],
        capture_output=True,
        timeout=IO_TIMEOUT,
        check=True,
    )
    reference = json.loads(done.stdout)

    for case in json.loads(vectors.read_text())["boxstream"]:
        # The reference always closes its stream with a goodbye; our no-goodbye cases are its prefix.
        goodbye_hex_length = 2 * 34
        expected = reference[case["id"]] if case["goodbye"] else reference[case["id"]][:-goodbye_hex_length]
        assert case["boxed_hex"] == expected, case["id"]
