"""LAN discovery: the TXT record's rules, and two daemons in two network namespaces finding each other.

The namespaces, the veth pair between them and their 10.x addresses are made by the test and
exist only inside it; they are removed in a finally. Without root or `ip`, that test is skipped.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time
import uuid

import pytest

from commons.net.discovery import Found, beyond_loopback, network_tag, parse_service
from tests.daemons import Node, wait_for

KEY = bytes(range(32))
TAG = network_tag(b"\x01" * 32)


def test_a_service_of_our_network_becomes_a_peer_to_dial():
    found = parse_service({b"tk": KEY.hex().encode(), b"nh": TAG.encode()}, ["10.1.2.3"], 7346, TAG, b"\x00" * 32)
    assert found == Found(KEY, "10.1.2.3:7346")


def test_services_of_other_networks_ourselves_and_malformed_ones_are_ignored():
    other = network_tag(b"\x02" * 32)
    assert parse_service({b"tk": KEY.hex().encode(), b"nh": other.encode()}, ["10.1.2.3"], 1, TAG, b"") is None
    assert parse_service({b"tk": KEY.hex().encode(), b"nh": TAG.encode()}, ["10.1.2.3"], 1, TAG, KEY) is None
    assert parse_service({b"tk": b"zz", b"nh": TAG.encode()}, ["10.1.2.3"], 1, TAG, b"") is None
    assert parse_service({b"nh": TAG.encode()}, [], 1, TAG, b"") is None


def test_the_network_tag_does_not_reveal_the_network_key():
    key = b"\x01" * 32
    assert key.hex() not in network_tag(key) and len(network_tag(key)) == 32


def test_only_listening_beyond_loopback_turns_discovery_on():
    assert not beyond_loopback("127.0.0.1") and not beyond_loopback("::1") and not beyond_loopback("localhost")
    assert beyond_loopback("0.0.0.0") and beyond_loopback("10.0.0.5")


def _ip(*args: str) -> None:
    subprocess.run(["ip", *args], check=True, capture_output=True)


@pytest.fixture
def two_namespaces():
    if os.geteuid() != 0 or shutil.which("ip") is None:
        pytest.skip("network namespaces need root and the `ip` tool")
    suffix = uuid.uuid4().hex[:6]
    names = [f"cmA{suffix}", f"cmB{suffix}"]
    made = []
    try:
        for name in names:
            _ip("netns", "add", name)
            made.append(name)
        _ip("link", "add", f"va{suffix}", "type", "veth", "peer", "name", f"vb{suffix}")
        for name, dev, address in ((names[0], f"va{suffix}", "10.231.7.1/24"),
                                   (names[1], f"vb{suffix}", "10.231.7.2/24")):
            _ip("link", "set", dev, "netns", name)
            _ip("-n", name, "addr", "add", address, "dev", dev)
            _ip("-n", name, "link", "set", dev, "up", "multicast", "on")
            _ip("-n", name, "link", "set", "lo", "up")
            _ip("-n", name, "route", "add", "224.0.0.0/4", "dev", dev)
    except subprocess.CalledProcessError as error:
        for name in made:
            subprocess.run(["ip", "netns", "del", name], capture_output=True)
        pytest.skip(f"cannot make network namespaces here: {error.stderr.decode(errors='replace').strip()}")
    try:
        yield names
    finally:
        for name in made:  # deleting a namespace removes its end of the veth pair, and so both ends
            subprocess.run(["ip", "netns", "del", name], capture_output=True)


def test_two_daemons_on_one_lan_find_each_other_with_no_bootstrap_entry(two_namespaces, tmp_path):
    a, b = Node(tmp_path, "a"), Node(tmp_path, "b")
    signed = {r.key for r in a.sign_lessons(3)}
    a.cli("publish", "on")
    try:
        a.start("0.0.0.0:0", netns=two_namespaces[0])
        b.start("0.0.0.0:0", netns=two_namespaces[1])
        wait_for(lambda: b.keys() >= signed, 30, "b to find a on the LAN and receive its lessons")
        assert "discovered" in b.stderr() or "discovered" in a.stderr()
    finally:
        for node in (a, b):
            if node.process is not None and node.process.poll() is None:
                node.stop(signal.SIGTERM)


def test_sigterm_exits_zero_with_discovery_on(two_namespaces, tmp_path):
    node = Node(tmp_path, "lone")
    node.start("0.0.0.0:0", netns=two_namespaces[0])
    try:
        wait_for(lambda: "discovery: advertising" in node.stderr(), 20, "discovery to start advertising")
        code = node.stop(signal.SIGTERM)
        assert code == 0, node.stderr()[-2000:]
        assert "internal error" not in node.stderr()
    finally:
        if node.process.poll() is None:
            node.stop(signal.SIGKILL)


def test_sigterm_while_records_are_being_written_exits_zero_and_leaves_a_sound_store(two_namespaces, tmp_path):
    import sqlite3

    a, b = Node(tmp_path, "source"), Node(tmp_path, "sink")
    signed = {r.key for r in a.sign_lessons(2500)}
    # The sink takes 40 records a second (burst 40), so the 2,500 last a minute of its intake: each
    # restart refills its token bucket, and at the default (200 a second, burst 400) three slow
    # restarts on a loaded machine took every record before the last SIGTERM could land mid-intake.
    config = b.home.config_file.read_text(encoding="utf-8")
    slow = config.replace("\n[gossip]\n", "\n[gossip]\nrecords_per_second = 40.0\nrecords_burst = 40\n", 1)
    b.home.config_file.write_text(slow, encoding="utf-8")
    a.cli("publish", "on")
    try:
        a.start("0.0.0.0:0", netns=two_namespaces[0])
        port = a.address.rsplit(":", 1)[1]
        b.start("0.0.0.0:0", netns=two_namespaces[1])
        b.cli("peers", "add", f"10.231.7.1:{port}", a.transport)
        for delay in (0.0, 0.3, 0.7):  # SIGTERM lands at different points of a batch's transaction
            before = len(b.keys())
            assert before < len(signed), "every record arrived before this SIGTERM: it cannot land mid-intake"
            wait_for(lambda: len(b.keys()) > before, 30, "sink to be receiving records")
            time.sleep(delay)
            code = b.stop(signal.SIGTERM)
            assert code == 0, b.stderr()[-3000:]
            db = sqlite3.connect(b.home.database)
            try:
                assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
            finally:
                db.close()
            assert b.keys() <= signed
            b.start("0.0.0.0:0", netns=two_namespaces[1])
    finally:
        for node in (a, b):
            if node.process is not None and node.process.poll() is None:
                node.stop(signal.SIGKILL)
