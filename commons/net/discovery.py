"""LAN discovery: advertise and browse ``_commons._tcp.local.`` with zeroconf (mDNS / DNS-SD).

Used only when the daemon listens beyond loopback. The TXT record carries the node's *transport*
key (``tk``) and a hash of the network key (``nh``) -- never the author key, so an address on the
LAN cannot be tied to the lessons it signs, and never the network key itself. Services of another
network (another ``nh``) and our own advertisement are ignored; what remains is handed to the
daemon, which dials it like any other peer (the handshake still proves the key).

zeroconf runs on a plain asyncio loop in a thread of its own (:class:`_ZeroconfLoop`), never on
trio-asyncio's: the daemon's bridge patches ``asyncio.new_event_loop`` to make trio-asyncio's
greenlet-based loop, zeroconf's own thread would run one, and closing it from another thread at
SIGTERM failed with "parent cannot be on a different thread" and exit 1 (issue #19). Its
callbacks come back into trio through ``trio.from_thread`` with the daemon's token.
"""

from __future__ import annotations

import asyncio
import ipaddress
import logging
import socket
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

import trio
from blake3 import blake3

log = logging.getLogger("commons.discovery")

SERVICE_TYPE = "_commons._tcp.local."
RESOLVE_MS = 3000
STOP_SECONDS = 5.0
T = TypeVar("T")


class _ZeroconfLoop:
    """A plain asyncio event loop running in a thread of its own, for zeroconf and nothing else.

    ``asyncio.SelectorEventLoop()`` is made directly: ``asyncio.new_event_loop`` would give
    trio-asyncio's loop in this process. Zeroconf built inside it (:meth:`build`) attaches to it,
    and its blocking calls work from any other thread, which is where the daemon makes them.
    """

    def __init__(self) -> None:
        self.loop = asyncio.SelectorEventLoop()
        self._thread = threading.Thread(target=self.loop.run_forever, name="commons-zeroconf", daemon=True)
        self._thread.start()

    def build(self, make: Callable[[], T]) -> T:
        """What ``make()`` returns, called on the loop's thread while the loop runs."""
        async def inside() -> T:
            return make()

        return asyncio.run_coroutine_threadsafe(inside(), self.loop).result(STOP_SECONDS)

    def stop(self) -> None:
        """Stop the loop and its thread (after zeroconf is closed), from any other thread."""
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(STOP_SECONDS)
        if not self._thread.is_alive():
            self.loop.close()


def network_tag(network_key: bytes) -> str:
    """What the TXT record says of the network: enough to tell networks apart, nothing to join one."""
    return blake3(b"commons/discovery/v1/network\n" + network_key).hexdigest()[:32]


@dataclass(frozen=True)
class Found:
    transport_key: bytes
    address: str  # host:port to dial


def beyond_loopback(host: str) -> bool:
    """Whether listening on ``host`` can be reached from other machines (so discovery makes sense)."""
    if host in ("", "0.0.0.0", "::"):
        return True
    try:
        return not ipaddress.ip_address(host).is_loopback
    except ValueError:
        return host != "localhost"


def advertised_addresses(host: str) -> list[str]:
    """The IPv4 addresses to advertise: the one listened on, or every non-loopback one for 0.0.0.0."""
    if host not in ("", "0.0.0.0", "::"):
        return [host]
    import ifaddr

    found = []
    for adapter in ifaddr.get_adapters():
        for ip in adapter.ips:
            if isinstance(ip.ip, str) and not ipaddress.ip_address(ip.ip).is_loopback:
                found.append(ip.ip)
    return found


def parse_service(properties: dict, addresses: list[str], port: int, tag: str, self_key: bytes) -> Found | None:
    """A browsed service as a peer to dial, or None (another network, ourselves, malformed)."""
    def text(name: bytes) -> str:
        value = properties.get(name)
        return value.decode("ascii", "replace") if isinstance(value, bytes) else ""

    if text(b"nh") != tag or not addresses or not port:
        return None
    try:
        key = bytes.fromhex(text(b"tk"))
    except ValueError:
        return None
    if len(key) != 32 or key == self_key:
        return None
    return Found(key, f"{addresses[0]}:{port}")


async def run_discovery(host: str, port: int, transport_key: bytes, network_key: bytes,
                        on_found: Callable[[Found], None]) -> None:
    """Advertise this node and report the peers of its network found on the LAN; until cancelled."""
    from zeroconf import InterfaceChoice, ServiceBrowser, ServiceInfo, ServiceStateChange, Zeroconf

    token = trio.lowlevel.current_trio_token()
    tag = network_tag(network_key)
    addresses = advertised_addresses(host)
    if not addresses:
        log.warning("discovery: no non-loopback address to advertise")
        return
    interfaces = addresses if host not in ("", "0.0.0.0", "::") else InterfaceChoice.All
    engine = await trio.to_thread.run_sync(_ZeroconfLoop)
    try:
        zc = await trio.to_thread.run_sync(engine.build, lambda: Zeroconf(interfaces=interfaces, use_asyncio=True))
    except BaseException:
        with trio.CancelScope(shield=True):
            await trio.to_thread.run_sync(engine.stop)
        raise
    info = ServiceInfo(
        SERVICE_TYPE,
        f"commons-{transport_key.hex()[:16]}.{SERVICE_TYPE}",
        addresses=[socket.inet_aton(a) for a in addresses],
        port=port,
        properties={"tk": transport_key.hex(), "nh": tag},
    )

    def changed(zeroconf, service_type: str, name: str, state_change) -> None:  # zeroconf's thread
        if state_change not in (ServiceStateChange.Added, ServiceStateChange.Updated):
            return
        got = zeroconf.get_service_info(service_type, name, timeout=RESOLVE_MS)
        if got is None:
            return
        found = parse_service(got.properties or {}, got.parsed_addresses(), got.port or 0, tag, transport_key)
        if found is None:
            return
        try:
            trio.from_thread.run_sync(on_found, found, trio_token=token)
        except trio.RunFinishedError:
            pass

    browser = None
    try:
        await trio.to_thread.run_sync(zc.register_service, info)
        browser = ServiceBrowser(zc, SERVICE_TYPE, handlers=[changed])
        log.info("discovery: advertising %s on %s", SERVICE_TYPE, ", ".join(addresses))
        await trio.sleep_forever()
    finally:
        with trio.CancelScope(shield=True):
            def close() -> None:
                try:
                    if browser is not None:
                        browser.cancel()
                    try:
                        zc.unregister_service(info)
                    finally:
                        zc.close()
                finally:
                    engine.stop()
            await trio.to_thread.run_sync(close)
