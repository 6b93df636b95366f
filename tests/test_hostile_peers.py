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


def test_an_honest_peer_takes_the_slot_of_an_idle_squatter_and_delivers_its_lesson(target, tmp_path):
    """Sixteen sessions that said Hello and then nothing hold every slot; the honest peer gets in by
    evicting one of them (evict_idle, 5 s), not by waiting for them to time out (idle_timeout,
    300 s, far beyond the wait): its lesson arrives while the other squatters still sit."""
    honest = Node(tmp_path, "honest")
    lesson = honest.sign_lessons(1)[0]
    honest.cli("publish", "on")
    squatters = [Attacker(target) for _ in range(16)]  # max_sessions: every slot

    async def squat_then_watch() -> tuple[int, int]:
        async with trio.open_nursery() as nursery:
            for squatter in squatters:
                await squatter.connect()
                nursery.start_soon(squatter.drain)
            await trio.sleep(6.0)  # past evict_idle (5 s): they have held every slot in silence
            before = sum(s.hung_up for s in squatters)
            with open(honest.home.config_file, "a", encoding="utf-8") as config:  # dialed as soon as it starts
                config.write(f'\n[[peers]]\naddress = "{target.address}"\ntransport_key = "{target.transport}"\n')
            honest.start()
            with trio.move_on_after(60):  # a bound on the wait, far below idle_timeout
                while lesson.key not in target.keys():
                    await trio.sleep(0.1)
            after = sum(s.hung_up for s in squatters)
            nursery.cancel_scope.cancel()
        return before, after

    try:
        before, after = trio.run(squat_then_watch)
        assert lesson.key in target.keys(), "the honest peer's lesson never arrived"
        assert before == 0, f"{before} squatters were turned out before anyone else came"
        assert 1 <= after < len(squatters), f"{after} of {len(squatters)} squatters turned out"
        assert target.process.poll() is None, target.stderr()
    finally:
        assert honest.stop() == 0
