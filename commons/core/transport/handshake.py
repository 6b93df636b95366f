"""Secret Handshake v1 (SHS): the four-message authenticated key exchange that opens every peer link.

This is the handshake of the Scuttlebutt protocol guide ("Handshake",
https://ssbc.github.io/scuttlebutt-protocol-guide/#handshake), itself Dominic Tarr's Secret Handshake
paper, written sans-I/O: the two state machines below take bytes and return bytes; a driver moves
them over a socket. ``protocol/transport.md`` is the byte-by-byte spec for outsiders.

Roles: the *client* dialed the connection and already knows the server's long-term public key; the
*server* learns the client's key from message 3 and may refuse it (``authorize``). Keys:

- ``network_key`` -- the commons' 32-byte network identifier (the guide's ``N``): only peers that
  know it can get past message 1/2, and an eavesdropper cannot learn it from the wire.
- long-term keys are the node's Ed25519 *transport* keys (never the author key, so that an address
  cannot be tied to an author), given as 32-byte seeds; converted to X25519 where the exchange
  needs a Diffie-Hellman.
- ephemeral keys are fresh X25519 key pairs, one per handshake, which give forward secrecy.

Whose fault an error is:

- :class:`HandshakeRefused` -- the *peer* sent something invalid (wrong network key, corrupted or
  forged message, a key we will not talk to). The driver must close the connection at once
  *without answering*: any reply would let a wrong-network prober or a man in the middle confirm a
  guess about who we are.
- :class:`HandshakeUsageError` -- *our* code called a method out of order or passed a message of
  the wrong length (the driver must cut messages with :class:`MessageBuffer` /
  ``expected_length``).
"""

from __future__ import annotations

import enum
import hashlib
import hmac
from collections.abc import Callable
from dataclasses import dataclass, field

import nacl.bindings as sodium
import nacl.exceptions
import nacl.utils

KEY_LENGTH = 32
NONCE_LENGTH = 24

#: Byte lengths of the four handshake messages (guide: "Client hello" ... "Server accept").
CLIENT_HELLO_LENGTH = 64  # hmac(32) | client ephemeral pk(32)
SERVER_HELLO_LENGTH = 64  # hmac(32) | server ephemeral pk(32)
CLIENT_AUTH_LENGTH = 112  # secretbox(sig_A(64) | client long-term pk(32)) = 16 + 96
SERVER_ACCEPT_LENGTH = 80  # secretbox(sig_B(64)) = 16 + 64

# Each handshake secret box key is used for exactly one box, so the all-zero nonce is safe there.
_ZERO_NONCE = bytes(NONCE_LENGTH)


class HandshakeRefused(Exception):
    """The peer failed the handshake: the peer's fault.

    Contract for drivers: close the connection immediately and send nothing more -- no error
    message, no partial reply. ``reason`` says why, for local logs only.
    """

    def __init__(self, reason: RefusalReason, detail: str) -> None:
        super().__init__(f"handshake refused ({reason.value}): {detail}")
        self.reason = reason


class HandshakeUsageError(Exception):
    """The API was misused (a method called out of order, a message of the wrong length): our fault."""


class RefusalReason(enum.Enum):
    # A hello whose HMAC does not verify: a peer of another network, or a corrupted hello; the two
    # cannot be told apart, by design.
    WRONG_NETWORK = "wrong-network"
    # An authentication box that does not open: corrupted, forged, or sealed for another server key.
    BAD_BOX = "bad-box"
    BAD_SIGNATURE = "bad-signature"
    # A public key that is not a usable curve point (low order, not on the curve).
    BAD_KEY = "bad-key"
    # Our ``authorize`` hook declined the client's long-term key.
    UNAUTHORIZED = "unauthorized"


@dataclass(frozen=True)
class HandshakeOutcome:
    """What a completed handshake yields: who the peer is and the two box-stream directions.

    ``encrypt_*`` seal what we send, ``decrypt_*`` open what we receive; the client's encrypt pair
    is the server's decrypt pair and vice versa. Secrets are kept out of ``repr`` so that logs of
    an outcome never leak them.
    """

    remote_public_key: bytes
    encrypt_key: bytes = field(repr=False)
    encrypt_nonce: bytes = field(repr=False)
    decrypt_key: bytes = field(repr=False)
    decrypt_nonce: bytes = field(repr=False)


class ClientState(enum.Enum):
    START = "start"  # nothing sent; call start() for message 1
    AWAIT_SERVER_HELLO = "await-server-hello"  # message 1 sent, expecting message 2 (64 bytes)
    AWAIT_SERVER_ACCEPT = "await-server-accept"  # message 3 sent, expecting message 4 (80 bytes)
    DONE = "done"  # outcome available
    REFUSED = "refused"  # the server failed us; close without answering


class ServerState(enum.Enum):
    AWAIT_CLIENT_HELLO = "await-client-hello"  # expecting message 1 (64 bytes)
    AWAIT_CLIENT_AUTH = "await-client-auth"  # message 2 sent, expecting message 3 (112 bytes)
    DONE = "done"  # message 4 produced, outcome available
    REFUSED = "refused"  # the client failed us; close without answering


def network_hmac(network_key: bytes, message: bytes) -> bytes:
    """HMAC-SHA-512-256 (libsodium's ``crypto_auth``): the first 32 bytes of HMAC-SHA-512."""
    return hmac.digest(network_key, message, "sha512")[:32]


def _sha256(data: bytes) -> bytes:
    return hashlib.sha256(data).digest()


def _check_key(name: str, value: bytes, length: int = KEY_LENGTH) -> bytes:
    if not isinstance(value, bytes | bytearray) or len(value) != length:
        raise HandshakeUsageError(f"{name} must be {length} bytes")
    return bytes(value)


def _dh(secret: bytes, public: bytes) -> bytes:
    """X25519; a peer key that yields the all-zero secret (low order point) is the peer's fault."""
    try:
        return sodium.crypto_scalarmult(secret, public)
    except nacl.exceptions.CryptoError as exc:
        raise HandshakeRefused(RefusalReason.BAD_KEY, "peer key is a low-order point") from exc


def _ed_pk_to_curve(public: bytes) -> bytes:
    try:
        return sodium.crypto_sign_ed25519_pk_to_curve25519(public)
    except nacl.exceptions.CryptoError as exc:
        raise HandshakeRefused(RefusalReason.BAD_KEY, "long-term key is not an Ed25519 point") from exc


def _verify(signature: bytes, message: bytes, public: bytes) -> bool:
    try:
        sodium.crypto_sign_open(signature + message, public)
    except nacl.exceptions.CryptoError:  # BadSignatureError, or a public key that is not a point
        return False
    return True


class _Ephemeral:
    """One X25519 key pair for one handshake and its network HMAC (the hello's first half)."""

    def __init__(self, network_key: bytes, secret: bytes | None) -> None:
        # Key exchange needs a CSPRNG, not random.Random; injection exists only for test vectors.
        self.secret = nacl.utils.random(KEY_LENGTH) if secret is None else _check_key("ephemeral_secret", secret)
        self.public = sodium.crypto_scalarmult_base(self.secret)
        self.mac = network_hmac(network_key, self.public)

    def hello(self) -> bytes:
        return self.mac + self.public


def _open_hello(network_key: bytes, message: bytes) -> tuple[bytes, bytes]:
    """(hmac, ephemeral pk) of a verified hello, or refuse."""
    mac, public = message[:32], message[32:]
    if not hmac.compare_digest(mac, network_hmac(network_key, public)):
        raise HandshakeRefused(RefusalReason.WRONG_NETWORK, "hello HMAC does not verify under our network key")
    return mac, public


def _check_length(message: bytes, expected: int, what: str) -> bytes:
    if len(message) != expected:
        raise HandshakeUsageError(
            f"{what} must be exactly {expected} bytes, got {len(message)}: cut messages with MessageBuffer"
        )
    return bytes(message)


class _Handshake:
    """What both roles share: their long-term keys, ephemeral key, state and outcome."""

    # Message length expected in each state that waits for the peer; set by each role.
    _EXPECTED: dict[enum.Enum, int] = {}

    def __init__(self, network_key: bytes, seed: bytes, ephemeral_secret: bytes | None, initial: enum.Enum) -> None:
        self._network_key = _check_key("network_key", network_key)
        self._public, self._secret = sodium.crypto_sign_seed_keypair(_check_key("seed", seed))
        self._ephemeral = _Ephemeral(self._network_key, ephemeral_secret)
        self.state = initial
        self._outcome: HandshakeOutcome | None = None

    @property
    def public_key(self) -> bytes:
        """Our long-term transport public key (the server's is what clients must know to dial it)."""
        return self._public

    @property
    def expected_length(self) -> int | None:
        """Length of the next message we need from the peer, or None when we need none now."""
        return self._EXPECTED.get(self.state)

    @property
    def outcome(self) -> HandshakeOutcome:
        if self._outcome is None:
            raise HandshakeUsageError(f"handshake not complete (state {self.state.value})")
        return self._outcome

    def _expect(self, state: enum.Enum, action: str) -> None:
        if self.state is not state:
            raise HandshakeUsageError(f"cannot {action} in state {self.state.value}")

    def _finish(self, ab: bytes, a_b: bytes, A_b: bytes, remote_public: bytes, remote_mac: bytes) -> HandshakeOutcome:
        """Box-stream keys and nonces (guide: "Keys and nonces"), from our point of view."""
        shared = _sha256(_sha256(self._network_key + ab + a_b + A_b))
        self._outcome = HandshakeOutcome(
            remote_public_key=remote_public,
            # We seal with a key bound to the *receiver's* long-term key and open with one bound to
            # ours; each direction's nonce starts at its receiver's hello HMAC.
            encrypt_key=_sha256(shared + remote_public),
            encrypt_nonce=remote_mac[:NONCE_LENGTH],
            decrypt_key=_sha256(shared + self._public),
            decrypt_nonce=self._ephemeral.mac[:NONCE_LENGTH],
        )
        return self._outcome


class ClientHandshake(_Handshake):
    """The dialing side. ``start()`` -> msg1; ``receive_server_hello(msg2)`` -> msg3;
    ``receive_server_accept(msg4)`` -> :class:`HandshakeOutcome`.
    """

    _EXPECTED = {ClientState.AWAIT_SERVER_HELLO: SERVER_HELLO_LENGTH, ClientState.AWAIT_SERVER_ACCEPT: SERVER_ACCEPT_LENGTH}

    def __init__(
        self,
        network_key: bytes,
        client_seed: bytes,
        server_public_key: bytes,
        ephemeral_secret: bytes | None = None,
    ) -> None:
        super().__init__(network_key, client_seed, ephemeral_secret, ClientState.START)
        self._server_public = _check_key("server_public_key", server_public_key)

    def start(self) -> bytes:
        """Message 1, client hello (64 bytes)."""
        self._expect(ClientState.START, "start")
        self.state = ClientState.AWAIT_SERVER_HELLO
        return self._ephemeral.hello()

    def receive_server_hello(self, message: bytes) -> bytes:
        """Verify message 2 and return message 3, client authenticate (112 bytes)."""
        self._expect(ClientState.AWAIT_SERVER_HELLO, "receive the server hello")
        message = _check_length(message, SERVER_HELLO_LENGTH, "server hello")
        try:
            self._server_mac, self._server_eph = _open_hello(self._network_key, message)
            self._ab = _dh(self._ephemeral.secret, self._server_eph)
            self._a_b = _dh(self._ephemeral.secret, _ed_pk_to_curve(self._server_public))
        except HandshakeRefused:
            self.state = ClientState.REFUSED
            raise
        # Signing the network key, the server's key and the ephemeral secret's hash binds this
        # proof of identity to this one handshake with this one server: it cannot be replayed.
        signed = self._network_key + self._server_public + _sha256(self._ab)
        self._signature = sodium.crypto_sign(signed, self._secret)[:64]
        box_key = _sha256(self._network_key + self._ab + self._a_b)
        self.state = ClientState.AWAIT_SERVER_ACCEPT
        return sodium.crypto_secretbox_easy(self._signature + self._public, _ZERO_NONCE, box_key)

    def receive_server_accept(self, message: bytes) -> HandshakeOutcome:
        """Verify message 4, server accept, and return the session keys."""
        self._expect(ClientState.AWAIT_SERVER_ACCEPT, "receive the server accept")
        message = _check_length(message, SERVER_ACCEPT_LENGTH, "server accept")
        try:
            A_b = _dh(sodium.crypto_sign_ed25519_sk_to_curve25519(self._secret), self._server_eph)
            box_key = _sha256(self._network_key + self._ab + self._a_b + A_b)
            try:
                signature = sodium.crypto_secretbox_open_easy(message, _ZERO_NONCE, box_key)
            except nacl.exceptions.CryptoError as exc:
                raise HandshakeRefused(RefusalReason.BAD_BOX, "server accept does not open") from exc
            signed = self._network_key + self._signature + self._public + _sha256(self._ab)
            if not _verify(signature, signed, self._server_public):
                raise HandshakeRefused(RefusalReason.BAD_SIGNATURE, "server accept signature does not verify")
        except HandshakeRefused:
            self.state = ClientState.REFUSED
            raise
        outcome = self._finish(self._ab, self._a_b, A_b, self._server_public, self._server_mac)
        self.state = ClientState.DONE
        return outcome

    def receive_message(self, message: bytes) -> bytes:
        """Generic step for drivers: feed the next message, get the bytes to send (b"" for none)."""
        if self.state is ClientState.AWAIT_SERVER_HELLO:
            return self.receive_server_hello(message)
        self.receive_server_accept(message)
        return b""


class ServerHandshake(_Handshake):
    """The accepting side. ``receive_client_hello(msg1)`` -> msg2;
    ``receive_client_auth(msg3)`` -> msg4, after which ``outcome`` holds the session keys.

    ``authorize(client_public_key) -> bool`` is asked once the client has proven its key; a False
    refuses the client before we reveal anything of ours (we send no message 4).
    """

    _EXPECTED = {ServerState.AWAIT_CLIENT_HELLO: CLIENT_HELLO_LENGTH, ServerState.AWAIT_CLIENT_AUTH: CLIENT_AUTH_LENGTH}

    def __init__(
        self,
        network_key: bytes,
        server_seed: bytes,
        ephemeral_secret: bytes | None = None,
        authorize: Callable[[bytes], bool] | None = None,
    ) -> None:
        super().__init__(network_key, server_seed, ephemeral_secret, ServerState.AWAIT_CLIENT_HELLO)
        self._authorize = authorize

    def receive_client_hello(self, message: bytes) -> bytes:
        """Verify message 1 and return message 2, server hello (64 bytes)."""
        self._expect(ServerState.AWAIT_CLIENT_HELLO, "receive the client hello")
        message = _check_length(message, CLIENT_HELLO_LENGTH, "client hello")
        try:
            self._client_mac, self._client_eph = _open_hello(self._network_key, message)
            self._ab = _dh(self._ephemeral.secret, self._client_eph)
            self._a_b = _dh(sodium.crypto_sign_ed25519_sk_to_curve25519(self._secret), self._client_eph)
        except HandshakeRefused:
            self.state = ServerState.REFUSED
            raise
        self.state = ServerState.AWAIT_CLIENT_AUTH
        return self._ephemeral.hello()

    def receive_client_auth(self, message: bytes) -> bytes:
        """Verify message 3, authorize the client, and return message 4, server accept (80 bytes)."""
        self._expect(ServerState.AWAIT_CLIENT_AUTH, "receive the client authenticate")
        message = _check_length(message, CLIENT_AUTH_LENGTH, "client authenticate")
        try:
            box_key = _sha256(self._network_key + self._ab + self._a_b)
            try:
                hello = sodium.crypto_secretbox_open_easy(message, _ZERO_NONCE, box_key)
            except nacl.exceptions.CryptoError as exc:
                raise HandshakeRefused(
                    RefusalReason.BAD_BOX, "client authenticate does not open (corrupt, or sealed for another server key)"
                ) from exc
            signature, client_public = hello[:64], hello[64:]
            signed = self._network_key + self._public + _sha256(self._ab)
            if not _verify(signature, signed, client_public):
                raise HandshakeRefused(RefusalReason.BAD_SIGNATURE, "client signature does not verify")
            A_b = _dh(self._ephemeral.secret, _ed_pk_to_curve(client_public))
            if self._authorize is not None and not self._authorize(client_public):
                raise HandshakeRefused(RefusalReason.UNAUTHORIZED, "client key not authorized")
        except HandshakeRefused:
            self.state = ServerState.REFUSED
            raise
        accept = sodium.crypto_sign(self._network_key + hello + _sha256(self._ab), self._secret)[:64]
        box_key = _sha256(self._network_key + self._ab + self._a_b + A_b)
        self._finish(self._ab, self._a_b, A_b, client_public, self._client_mac)
        self.state = ServerState.DONE
        return sodium.crypto_secretbox_easy(accept, _ZERO_NONCE, box_key)

    def receive_message(self, message: bytes) -> bytes:
        """Generic step for drivers: feed the next message, get the bytes to send."""
        if self.state is ServerState.AWAIT_CLIENT_HELLO:
            return self.receive_client_hello(message)
        return self.receive_client_auth(message)


class MessageBuffer:
    """Collects bytes as they arrive and cuts them into whole handshake messages.

    ``feed`` arbitrary chunks; ``pop(n)`` returns the next ``n`` bytes, or None while fewer have
    arrived ("need more bytes"). After the handshake, ``rest()`` hands over whatever the peer sent
    past it -- the start of its box stream -- so that nothing is lost between the two layers.
    """

    def __init__(self) -> None:
        self._buffer = bytearray()

    def __len__(self) -> int:
        return len(self._buffer)

    def feed(self, data: bytes) -> None:
        self._buffer += data

    def pop(self, length: int | None) -> bytes | None:
        if length is None:
            raise HandshakeUsageError("the handshake expects no message in its current state")
        if len(self._buffer) < length:
            return None
        message = bytes(self._buffer[:length])
        del self._buffer[:length]
        return message

    def rest(self) -> bytes:
        data = bytes(self._buffer)
        self._buffer.clear()
        return data
