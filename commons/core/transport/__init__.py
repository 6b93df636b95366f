"""The transport: how two nodes open an authenticated, encrypted link (sans-I/O).

- ``handshake``: Secret Handshake v1, the four-message key exchange that authenticates both
  transport keys under the network key and agrees the box-stream keys (``ClientHandshake``,
  ``ServerHandshake``, their ``HandshakeOutcome``; ``HandshakeRefused`` when the peer fails it);
- ``boxstream``: the framing that encrypts and authenticates every byte after it
  (``BoxStreamEncoder``, ``BoxStreamDecoder``; ``BoxStreamError`` is the peer's fault).

``protocol/transport.md`` is the normative description; ``commons/net/transport.py`` drives these
state machines over TCP.
"""

from commons.core.transport.boxstream import BoxStreamDecoder, BoxStreamEncoder, BoxStreamError
from commons.core.transport.handshake import (
    ClientHandshake,
    HandshakeOutcome,
    HandshakeRefused,
    MessageBuffer,
    ServerHandshake,
)

__all__ = [
    "BoxStreamDecoder",
    "BoxStreamEncoder",
    "BoxStreamError",
    "ClientHandshake",
    "HandshakeOutcome",
    "HandshakeRefused",
    "MessageBuffer",
    "ServerHandshake",
]
