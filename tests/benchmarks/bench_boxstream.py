"""Box-stream throughput: records per second and MB/s through one encoder -> decoder pair.

    .venv/bin/python tests/benchmarks/bench_boxstream.py [--records N] [--size BYTES] [--json]

Each record is ``--size`` bytes (default 300, about one msgpack-encoded lesson record), encoded as
one box and fed to the decoder in 64 KiB reads, as a socket driver would. The handshake is timed
separately (a full four-message exchange, both sides, in one process).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from commons.core.transport.boxstream import BoxStreamDecoder, BoxStreamEncoder  # noqa: E402
from commons.core.transport.handshake import ClientHandshake, ServerHandshake  # noqa: E402

READ_SIZE = 65536


def bench_stream(records: int, size: int) -> dict[str, float]:
    key, nonce = os.urandom(32), os.urandom(24)
    payloads = [os.urandom(size) for _ in range(min(records, 1000))]
    encoder, decoder = BoxStreamEncoder(key, nonce), BoxStreamDecoder(key, nonce)

    start = time.perf_counter()
    wire = b"".join(encoder.encode(payloads[i % len(payloads)]) for i in range(records))
    encoded = time.perf_counter()
    received = 0
    view = memoryview(wire)
    for offset in range(0, len(wire), READ_SIZE):
        received += len(decoder.feed(view[offset : offset + READ_SIZE]))
    decoded = time.perf_counter()
    assert received == records

    total = decoded - start
    return {
        "records": records,
        "record_bytes": size,
        "encode_records_per_s": records / (encoded - start),
        "decode_records_per_s": records / (decoded - encoded),
        "records_per_s": records / total,
        "payload_mb_per_s": records * size / total / 1e6,
        "wire_overhead_bytes_per_record": (len(wire) - records * size) / records,
    }


def bench_handshake(rounds: int) -> dict[str, float]:
    network = os.urandom(32)
    server_seed, client_seed = os.urandom(32), os.urandom(32)
    server_pk = ServerHandshake(network, server_seed).public_key
    start = time.perf_counter()
    for _ in range(rounds):
        client, server = ClientHandshake(network, client_seed, server_pk), ServerHandshake(network, server_seed)
        msg2 = server.receive_client_hello(client.start())
        client.receive_server_accept(server.receive_client_auth(client.receive_server_hello(msg2)))
    return {"handshakes": rounds, "handshakes_per_s": rounds / (time.perf_counter() - start)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Box-stream and Secret Handshake throughput.")
    parser.add_argument("--records", type=int, default=200_000, help="records to push through the stream")
    parser.add_argument("--size", type=int, default=300, help="bytes per record (one box each up to 4096)")
    parser.add_argument("--handshakes", type=int, default=300, help="full handshakes to time")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of text")
    args = parser.parse_args(argv)

    figures = {**bench_stream(args.records, args.size), **bench_handshake(args.handshakes)}
    if args.json:
        print(json.dumps(figures))
        return 0
    print(f"box-stream, {figures['records']} records of {args.size} bytes:")
    print(f"  encode      {figures['encode_records_per_s']:>12,.0f} records/s")
    print(f"  decode      {figures['decode_records_per_s']:>12,.0f} records/s")
    print(f"  round trip  {figures['records_per_s']:>12,.0f} records/s  {figures['payload_mb_per_s']:.1f} MB/s of payload")
    print(f"  overhead    {figures['wire_overhead_bytes_per_record']:.0f} bytes/record on the wire")
    print(f"handshake: {figures['handshakes_per_s']:,.0f} full handshakes/s (both sides, one process)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
