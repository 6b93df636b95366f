"""The MCP handshake answered before anything heavy is loaded.

An agent starts `commons mcp` as its session starts and sends ``initialize`` then ``tools/list``
(and the prompts and resources lists, for a server that has those capabilities, as the SDK's has);
what it has not heard back when its first model request goes out, it goes without (Claude Code and
Codex send that request without commons' tools). Loading the SDK, pydantic, trio, numpy and the
node layer costs about a second of CPU, so those answers are kept ready in ``handshake.json``,
written from the SDK's own server (:func:`commons.mcp_server.tools.handshake_answers`, and a test
holds the file equal to it), and given here with the standard library alone. The first message of
any other kind ends the handshake: it and everything after go to the SDK's server, which is first
shown the ``initialize`` it missed (its answer to that is dropped: the client has had it).

Only the handshake of the protocol versions that have one is answered here; a client that opens
with anything else is the SDK's from its first line.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ANSWERS_FILE = Path(__file__).with_name("handshake.json")


class LineReader:
    """Lines from a file descriptor, with no buffer of its own hidden from whoever reads next."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self._buffer = b""
        self._eof = False

    def readline(self) -> bytes:
        """The next line, newline included; b"" at the end of the input."""
        while b"\n" not in self._buffer and not self._eof:
            chunk = os.read(self.fd, 65536)
            if not chunk:
                self._eof = True
            self._buffer += chunk
        line, sep, self._buffer = self._buffer.partition(b"\n")  # no newline: the input's last line
        return line + sep


def write_message(fd: int, message: dict[str, Any]) -> None:
    data = (json.dumps(message, ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8")
    while data:
        data = data[os.write(fd, data):]


@dataclass
class Handshake:
    """What the handshake took: the lines the SDK must be shown again, the id of the ``initialize``
    answered here, and the first line left for the SDK (None: the input ended)."""

    replay: list[bytes] = field(default_factory=list)
    initialize_id: Any = None
    pending: bytes | None = None


def load_answers() -> dict[str, Any]:
    return json.loads(ANSWERS_FILE.read_text(encoding="utf-8"))


def answer_handshake(reader: LineReader, out_fd: int, answers: dict[str, Any] | None = None,
                     on_initialized: Callable[[], None] | None = None) -> Handshake:
    """Answer ``initialize``, the lists and ``ping`` from ``answers`` (default: the file) until
    a message of another kind comes; ``on_initialized`` runs when the client says it is initialised
    (the time to start loading the rest, while the client is busy with its model)."""
    answers = load_answers() if answers is None else answers
    shook = Handshake()
    version: str | None = None
    while True:
        line = reader.readline()
        if not line:
            return shook
        if not line.strip():
            continue
        try:
            message = json.loads(line)
        except ValueError:
            message = None
        if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
            shook.pending = line
            return shook
        method, params = message.get("method"), message.get("params") or {}
        if method == "initialize" and version is None and "id" in message and isinstance(params, dict):
            requested = params.get("protocolVersion")
            version = requested if requested in answers["lists"]["tools/list"] else answers["latest"]
            write_message(out_fd, {"jsonrpc": "2.0", "id": message["id"],
                                   "result": {"protocolVersion": version, **answers["initialize"]}})
            shook.replay.append(line)
            shook.initialize_id = message["id"]
        elif method == "notifications/initialized" and version is not None:
            if on_initialized is not None and not any(b"notifications/initialized" in seen for seen in shook.replay):
                on_initialized()  # once, however often the client says it
            shook.replay.append(line)
        elif (method in answers["lists"] and version is not None and "id" in message
              and not (isinstance(params, dict) and params.get("cursor"))):
            write_message(out_fd, {"jsonrpc": "2.0", "id": message["id"], "result": answers["lists"][method][version]})
        elif method == "ping" and version is not None and "id" in message:
            write_message(out_fd, {"jsonrpc": "2.0", "id": message["id"], "result": {}})
        else:
            shook.pending = line
            return shook
