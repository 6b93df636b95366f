"""Real daemons as separate processes on loopback, with short gossip timers.

One module-scoped federation serves most tests, in file order: a publisher (30 signed lessons,
publishing on), three receivers bootstrapped in a chain with `commons peers add`, a node whose
lessons stay home (publishing off), and later a fifth node that joins while the others run.
"""

from __future__ import annotations

import signal
import socket
import subprocess
import sys

import pytest

from tests.daemons import Node, wait_for

OTHER_NETWORK = "ab" * 32


@pytest.fixture(scope="module")
def federation(tmp_path_factory):
    root = tmp_path_factory.mktemp("federation")
    nodes = {name: Node(root, name) for name in ("pub", "r1", "r2", "r3", "late", "quiet")}
    nodes["pub"].sign_lessons(30)
    nodes["pub"].cli("publish", "on")
    nodes["quiet"].sign_lessons(5, words="breaks")
    nodes["quiet"].cli("lessons", "add", "The `frobnicate` tool exits 3 when its cache folder is missing.",
                       "--scope", "shared")
    started = []
    try:
        for name in ("pub", "r1", "r2", "r3", "quiet"):
            nodes[name].start()
            started.append(nodes[name])
        chain = [("r1", "pub"), ("r2", "r1"), ("r3", "r2"), ("quiet", "pub")]
        for me, them in chain:
            nodes[me].cli("peers", "add", nodes[them].address, nodes[them].transport)
        yield nodes
    finally:
        for node in nodes.values():
            if node.process is not None and node.process.poll() is None:
                node.stop(signal.SIGKILL)


def test_nodes_added_while_running_are_dialed_and_the_federation_converges(federation):
    pub = federation["pub"]
    wanted = pub.keys()
    assert len(wanted) == 30
    for name in ("r1", "r2", "r3"):
        wait_for(lambda name=name: federation[name].keys() >= wanted, 30, f"{name} to hold the publisher's lessons")
    outputs = {name: federation[name].cli("export").stdout for name in ("pub", "r1", "r2", "r3")}
    assert len(set(outputs.values())) == 1  # identical stores, byte for byte


def test_publishing_off_keeps_a_nodes_own_lessons_home(federation):
    quiet = federation["quiet"]
    wait_for(lambda: quiet.keys() >= federation["pub"].keys(), 20, "the quiet node to receive")
    own = quiet.keys() - federation["pub"].keys()
    assert len(own) == 5
    for name in ("pub", "r1", "r2", "r3"):
        assert not own & federation[name].keys(), f"{name} received a lesson of a node with publishing off"


def test_publish_on_beside_the_daemon_sends_the_nodes_lessons_within_seconds(federation):
    quiet = federation["quiet"]
    done = quiet.cli("publish", "on", "--json")
    assert '"publishing": true' in done.stdout
    wait_for(lambda: len(quiet.keys()) >= 30 + 5 + 1, 10, "the hand-written shared lesson to be signed")
    own = quiet.keys() - federation["pub"].keys()
    for name in ("pub", "r1", "r3"):
        wait_for(lambda name=name: federation[name].keys() >= own, 20, f"{name} to receive the quiet node's lessons")


def test_a_node_started_later_catches_up(federation):
    late = federation["late"]
    late.start()
    late.cli("peers", "add", federation["r3"].address, federation["r3"].transport)
    wanted = federation["r3"].keys()
    wait_for(lambda: late.keys() >= wanted, 20, "the late node to catch up")
    everyone = {name: federation[name].keys() for name in ("pub", "r1", "r2", "r3", "late")}
    wait_for(lambda: len({frozenset(federation[n].keys()) for n in everyone}) == 1, 20, "five identical stores")


def test_garbage_and_another_network_are_cut_off_while_the_others_keep_syncing(federation, tmp_path):
    r1 = federation["r1"]
    host, port = r1.address.rsplit(":", 1)
    junk = socket.create_connection((host, int(port)))
    junk.sendall(b"\x00\xff" * 2000)
    stranger = Node(tmp_path, "stranger", network_key=OTHER_NETWORK)
    stranger.start()
    stranger.cli("peers", "add", r1.address, r1.transport)
    try:
        fresh = {r.key for r in federation["pub"].sign_lessons(5, start=100)}
        for name in ("r1", "r2", "r3", "late"):
            wait_for(lambda name=name: federation[name].keys() >= fresh, 20, f"{name} to keep syncing")
        status = stranger.cli("status", "--json").stdout
        assert '"peers_connected": 0' in status
        assert not stranger.keys()
        assert r1.process.poll() is None
    finally:
        junk.close()
        assert stranger.stop() == 0


def test_a_second_daemon_on_the_same_home_is_refused(federation):
    done = federation["pub"].cli("daemon", "--listen", "127.0.0.1:0", check=False)
    assert done.returncode == 1
    assert f"another commons daemon (pid {federation['pub'].process.pid}) is running for this home" in done.stderr


def test_status_and_peers_show_the_running_daemon(federation):
    pub = federation["pub"]
    status = pub.cli("status").stdout
    assert f"listening on {pub.address}" in status and "publishing: on" in status
    peers = pub.cli("peers", "--json").stdout
    assert federation["r1"].transport in peers


def test_sigterm_exits_zero(federation):
    assert federation["r2"].stop(signal.SIGTERM) == 0
    assert not federation["r2"].home.daemon_file.exists()


def test_kill_9_mid_sync_loses_nothing_committed_and_the_store_checks(tmp_path):
    source, sink = Node(tmp_path, "source"), Node(tmp_path, "sink")
    source.sign_lessons(1500)
    source.cli("publish", "on")
    source.start()
    sink.cli("peers", "add", source.address, source.transport)
    try:
        sink.start()
        wait_for(lambda: len(sink.keys()) >= 50, 20, "the sync to start")
        before = sink.keys()
        sink.stop(signal.SIGKILL)
        after_kill = sink.keys()
        assert before <= after_kill
        assert '"ok": true' in sink.cli("store", "check", "--json").stdout
        sink.start()
        wait_for(lambda: sink.keys() >= source.keys(), 30, "the restarted node to finish")
    finally:
        for node in (source, sink):
            if node.process is not None and node.process.poll() is None:
                node.stop(signal.SIGKILL)


def test_service_install_writes_a_user_unit_honouring_commons_home(tmp_path):
    node = Node(tmp_path, "svc")
    env = dict(node.env, XDG_CONFIG_HOME=str(tmp_path / "xdg"))
    done = subprocess.run([sys.executable, "-m", "commons", "service", "install"], env=env, capture_output=True,
                          text=True, check=True)
    unit = (tmp_path / "xdg" / "systemd" / "user" / "commons.service").read_text()
    assert f'Environment="COMMONS_HOME={node.path}"' in unit
    assert "commons daemon" in unit and "systemctl --user enable --now commons" in done.stdout
