"""Hostile peers against a real daemon on loopback: they know the network key, finish the Secret
Handshake, say Hello, and then flood announcements or sit in silence.

Each attacker has a fresh transport key (new keys cost nothing), as the attacks of issue #19 did.
"""

from __future__ import annotations

import os
from pathlib import Path

import nacl.signing
import trio

from commons.config import load_config
from commons.core.gossip.node import network_hash
from commons.core.gossip.messages import GOSSIP_VERSION, Announce, Hello, encode, encode_frame
from commons.net.transport import PeerFailed, SecureLink, dial
from tests.daemons import Node


def rss_bytes(pid: int) -> int:
    """Resident set size of a process, from /proc (Linux)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise AssertionError(f"no VmRSS for process {pid}")


class Attacker:
    """One hostile session to ``target``: handshake done, Hello sent, then whatever the test says."""

    def __init__(self, target: Node) -> None:
        self.target = target
        self.network = load_config(target.home.config_file).network.key_bytes
        self.link: SecureLink | None = None
        self.hung_up = False  # the daemon ended the session (not this side)

    async def connect(self) -> None:
        host, port = self.target.address.rsplit(":", 1)
        seed = os.urandom(32)
        server_key = bytes.fromhex(self.target.transport)
        self.link = await dial(host, int(port), network_key=self.network, seed=seed, server_key=server_key)
        assert bytes(nacl.signing.SigningKey(seed).verify_key) != server_key
        await self.send(encode(Hello(GOSSIP_VERSION, network_hash(self.network), None)))

    async def send(self, message: bytes) -> None:
        assert self.link is not None
        await self.link.send(encode_frame(message))

    async def announce_random(self, count: int, per_message: int = 512) -> None:
        """Announce ``count`` keys of records that do not exist (lesson tag, random ids)."""
        for start in range(0, count, per_message):
            keys = tuple(sorted(b"\x02" + os.urandom(32) for _ in range(min(per_message, count - start))))
            await self.send(encode(Announce(keys)))

    async def drain(self) -> None:
        """Read (and drop) what the daemon sends, so its writes never block; until the link ends."""
        assert self.link is not None
        try:
            while await self.link.receive():
                pass
        except trio.ClosedResourceError:  # we hung up: the drain is over
            return
        except PeerFailed:
            pass
        self.hung_up = True  # end of stream, or the daemon broke the link off

    async def leave(self) -> None:
        if self.link is not None:
            with trio.CancelScope(shield=True):
                await self.link.aclose()
