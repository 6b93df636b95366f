"""A real daemon on loopback against peers that know the network key and mean harm (issue #19).

* announcement floods: memory is bounded while they last and comes back when they leave;
* squatters: sessions that say Hello and then nothing do not keep an honest peer out.
"""

from __future__ import annotations

import signal
import time

import pytest
import trio

from tests.daemons import Node, wait_for
from tests.hostile import Attacker, rss_bytes

pytestmark = pytest.mark.skipif(not __import__("os").path.exists("/proc/self/status"), reason="needs /proc (Linux)")

ROUNDS = 3
ATTACKERS = 4
KEYS_PER_ATTACKER = 100_000  # more than max_queued_wants (65,536): the extras must not be kept at all


@pytest.fixture
def target(tmp_path):
    node = Node(tmp_path, "target")
    node.start()
    yield node
    if node.process is not None and node.process.poll() is None:
        node.stop(signal.SIGKILL)


def settled_rss(pid: int, seconds: float = 1.0, below: float = 0.0) -> int:
    """The smallest RSS seen over ``seconds`` (the daemon's own timers allocate and free), or
    sooner, as soon as it is under ``below`` (a loaded machine may take a while to get there)."""
    lowest, deadline = rss_bytes(pid), time.monotonic() + seconds
    while time.monotonic() < deadline and lowest >= below:
        time.sleep(0.1)
        lowest = min(lowest, rss_bytes(pid))
    return lowest


def test_rss_comes_back_within_ten_percent_after_announcement_floods_end(target):
    pid = target.process.pid
    peaks = []

    async def flood_round(keys: int) -> None:
        attackers = [Attacker(target) for _ in range(ATTACKERS)]
        async with trio.open_nursery() as nursery:
            for attacker in attackers:
                await attacker.connect()
                nursery.start_soon(attacker.drain)
            for attacker in attackers:
                await attacker.announce_random(keys)
            await trio.sleep(0.5)  # let the daemon take every frame in
            peaks.append(rss_bytes(pid))
            for attacker in attackers:
                await attacker.leave()

    # The baseline is a daemon that has served sessions already: what the first ones cost once
    # (lazy imports, the handshake's and reconciliation's first use) is not what a flood leaves.
    trio.run(flood_round, 512)
    baseline = settled_rss(pid)
    for _ in range(ROUNDS):
        trio.run(flood_round, KEYS_PER_ATTACKER)
    after = settled_rss(pid, 10.0, below=baseline * 1.05)
    assert target.process.poll() is None, target.stderr()
    print(f"baseline {baseline / 2**20:.1f} MB, peaks {[round(p / 2**20, 1) for p in peaks]} MB, "
          f"after {after / 2**20:.1f} MB")
    assert after <= baseline * 1.10, (
        f"RSS {after / 2**20:.1f} MB after the floods, baseline {baseline / 2**20:.1f} MB (peaks {peaks})")


def test_an_honest_peer_delivers_a_lesson_within_five_seconds_while_sixteen_idle_sessions_sit(target, tmp_path):
    honest = Node(tmp_path, "honest")
    lesson = honest.sign_lessons(1)[0]
    honest.cli("publish", "on")
    squatters = [Attacker(target) for _ in range(16)]  # max_sessions: every slot

    async def squat_then_watch() -> float:
        async with trio.open_nursery() as nursery:
            for squatter in squatters:
                await squatter.connect()
                nursery.start_soon(squatter.drain)
            await trio.sleep(6.0)  # past evict_idle (5 s): they have held every slot in silence
            with open(honest.home.config_file, "a", encoding="utf-8") as config:  # dialed as soon as it starts
                config.write(f'\n[[peers]]\naddress = "{target.address}"\ntransport_key = "{target.transport}"\n')
            honest.start()
            began = time.monotonic()
            while lesson.key not in target.keys():
                if time.monotonic() - began > 20:
                    break
                await trio.sleep(0.1)
            took = time.monotonic() - began
            nursery.cancel_scope.cancel()
        return took

    try:
        took = trio.run(squat_then_watch)
        print(f"the honest peer's lesson arrived {took:.2f} s after its daemon started, 16 squatters sitting")
        assert lesson.key in target.keys(), "the honest peer's lesson never arrived"
        assert took <= 5.0, f"the lesson took {took:.1f} s"
        assert target.process.poll() is None, target.stderr()
    finally:
        assert honest.stop() == 0
