"""The wire between two of the experiment's daemons: a loopback TCP relay that counts the bytes it
carries (:class:`Relay`).

Its listening socket is one node's address for the whole run (peers learn it by exchange). It
relays from threads of its own while the daemons run as processes (:meth:`Relay.start_threads`), or
as tasks of the night's trio loop when they run in this process (:meth:`Relay.serve`): under a
virtual clock every byte must move inside the loop, or the clock would jump past a message a thread
had yet to carry."""

from __future__ import annotations

import contextlib
import socket
import threading

import trio

CONNECT_SECONDS = 5.0  # longest the relay waits to reach its daemon


class Relay:
    def __init__(self, target: tuple[str, int]):
        self.target = target
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.address = self.listener.getsockname()
        self.bytes = 0
        self.connections = 0
        self._lock = threading.Lock()
        self._threads = False

    # -- in the night's trio loop ------------------------------------------------------------------

    async def serve(self) -> None:
        """Relay every connection until cancelled; the listening socket stays open for the next night."""
        listener = trio.socket.from_stdlib_socket(self.listener)
        async with trio.open_nursery() as nursery:
            while True:
                conn, _ = await listener.accept()
                self.connections += 1
                nursery.start_soon(self._carry, trio.SocketStream(conn))

    async def _carry(self, inbound: trio.SocketStream) -> None:
        try:
            with trio.fail_after(CONNECT_SECONDS):
                upstream = await trio.open_tcp_stream(*self.target)
        except (OSError, trio.TooSlowError):
            await inbound.aclose()
            return
        async with inbound, upstream, trio.open_nursery() as pumps:
            pumps.start_soon(self._pump_in_loop, inbound, upstream, pumps.cancel_scope)
            pumps.start_soon(self._pump_in_loop, upstream, inbound, pumps.cancel_scope)

    async def _pump_in_loop(self, src: trio.SocketStream, dst: trio.SocketStream, both: trio.CancelScope) -> None:
        try:
            while data := await src.receive_some(65536):
                self.bytes += len(data)
                await dst.send_all(data)
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            pass
        finally:
            both.cancel()  # one side ended: the connection is over both ways, as a socket shut down

    # -- on threads of its own ---------------------------------------------------------------------

    def start_threads(self) -> None:
        """Relay from threads of its own from now on (daemons in processes of their own)."""
        if not self._threads:
            self._threads = True
            threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            self.connections += 1
            try:
                upstream = socket.create_connection(self.target, timeout=CONNECT_SECONDS)
            except OSError:
                conn.close()
                continue
            for src, dst in ((conn, upstream), (upstream, conn)):
                threading.Thread(target=self._pump, args=(src, dst), daemon=True).start()

    def _pump(self, src: socket.socket, dst: socket.socket) -> None:
        try:
            while data := src.recv(65536):
                with self._lock:
                    self.bytes += len(data)
                dst.sendall(data)
        except OSError:
            pass
        finally:
            for s in (src, dst):
                with contextlib.suppress(OSError):
                    s.shutdown(socket.SHUT_RDWR)

    def close(self) -> None:
        self.listener.close()
