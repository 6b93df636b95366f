"""The raw-stream archive: transcripts kept byte-exact, content-addressed and compressed, in a folder.

Agents delete their own transcripts after a while; the raw stream is the ground truth everything
else is recomputed from (docs/design.md), so ingest copies it here as it grows. Layout::

    <folder>/chunks/<h[:2]>/<h>.zst       one chunk: BLAKE3-256 `h` of its raw bytes, zstd-compressed
                                          (``<h>.xz``: written by commons before 2026-12, still read)
    <folder>/manifests/<blake3(key)>.json one transcript: its key, original path, and its chunks
                                          in order, per generation (a rewrite starts a new one)

A growing transcript archives only its new bytes: `append(key, data, offset)` stores the bytes
past what is already archived as new chunks. A small last chunk (< `MERGE_BELOW`) is merged with
the new bytes so that a transcript polled every few seconds does not become thousands of tiny
files; the chunk it replaces is left for `gc()`. Identical chunks are stored once.

Compression, measured by tests/benchmarks/bench_ingest_codecs.py (one thread, process CPU time).
On transcripts replicated from real sessions, in 4 MB chunks: xz preset 0 7.4x at 51 MB/s,
zlib-6 6.8x at 73, zlib-1 5.4x at 212, zstd level 3 9.2x at 640 (decompressing at 2.5 GB/s
against xz's 133 MB/s). On the real transcripts as they are, one chunk each: xz-0 5.5x at 38 MB/s,
zstd-3 5.3x at 350. zstd 3 stores at most a few percent more than xz-0 at a tenth of its CPU time,
and xz-0 had been a third of ingest's: new chunks are written with zstd 3 (zstd 6 would match
xz's ratio at three times zstd 3's cost).
A chunk's first bytes (its magic number) say which decoder reads it, so archives written with xz
read as before; BLAKE3 checks integrity, so neither container's own checksum is written.

Every file is written to a temporary name, fsynced and renamed, and chunks are durable before the
manifest that names them: a crash leaves at worst an unreferenced chunk, never a corrupt one.
A chunk whose bytes do not hash to its name is reported by name (`ArchiveCorruptError`).

One writer per folder (the daemon's ingest task). The calls block on disk I/O: from trio, run them
with ``trio.to_thread.run_sync``; ingest hands its appends to `archive_writer.ArchiveWriter`,
which makes them in a thread of their own while it parses on.
"""

from __future__ import annotations

import json
import lzma
import os
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import zstandard
from blake3 import blake3

MANIFEST_VERSION = 1
CHUNK_MAX = 4 * 1024 * 1024  # raw bytes per chunk
MERGE_BELOW = 64 * 1024  # a last chunk smaller than this is rewritten together with new bytes
ZSTD_LEVEL = 3
_SUFFIX = ".zst"  # what new chunks are written as
_OLD_SUFFIXES = (".xz",)  # read, deduplicated against and collected, never written
_ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
_XZ_MAGIC = b"\xfd7zXZ\x00"


class ArchiveError(Exception):
    """Something in the archive folder is wrong (the disk's or another writer's fault)."""


class ArchiveCorruptError(ArchiveError):
    """A stored chunk or manifest does not hold what its name says."""


class ArchiveGapError(ValueError):
    """The caller appended bytes past the end of what is archived (a misuse of the API)."""


@dataclass(frozen=True)
class ChunkRef:
    hash: str  # BLAKE3-256 of the raw bytes, hex
    size: int  # raw bytes
    stored_size: int  # compressed bytes on disk


@dataclass(frozen=True)
class ArchiveEntry:
    key: str
    original_path: str
    size: int  # raw bytes of the current generation
    stored_size: int  # compressed bytes of the current generation's chunks
    chunks: tuple[ChunkRef, ...]  # the current generation, in order
    generations: int = 1  # how many versions of the transcript (rewrites in place) are kept


class Archive:
    """A folder of archived transcripts. See the module docstring."""

    def __init__(self, folder: str | os.PathLike[str]) -> None:
        self.folder = Path(folder)
        self._chunks = self.folder / "chunks"
        self._manifests = self.folder / "manifests"
        self._chunks.mkdir(parents=True, exist_ok=True)
        self._manifests.mkdir(parents=True, exist_ok=True)

    # -- writing -----------------------------------------------------------------------------

    def append(self, transcript_key: str, data: bytes, offset: int, *, original_path: str = "") -> int:
        """Archive `data`, the transcript's bytes from `offset` on. Bytes already archived are not
        stored again (re-appending after a crash is harmless). Returns the archived size."""
        if offset < 0:
            raise ArchiveGapError(f"offset {offset} is negative")
        manifest = self._load(transcript_key)
        if original_path:
            manifest["original_path"] = original_path
        chunks: list[list] = manifest["generations"][-1]
        size = sum(c[1] for c in chunks)
        if offset > size:
            raise ArchiveGapError(
                f"{transcript_key!r}: appending at byte {offset}, but only {size} bytes are archived"
            )
        new = data[size - offset :]
        archived = size + len(new)
        if not new:
            if original_path:
                self._save(transcript_key, manifest)
            return size
        if chunks and chunks[-1][1] < MERGE_BELOW and chunks[-1][1] + len(new) <= CHUNK_MAX:
            last = chunks.pop()
            new = self._read_chunk(ChunkRef(*last)) + new
        written: set[Path] = set()
        for start in range(0, len(new), CHUNK_MAX):
            ref, folder = self._write_chunk(new[start : start + CHUNK_MAX])
            chunks.append([ref.hash, ref.size, ref.stored_size])
            if folder is not None:
                written.add(folder)
        for folder in written:
            _fsync_dir(folder)
        self._save(transcript_key, manifest)
        return archived

    def restart(self, transcript_key: str, *, keep: bool = True) -> None:
        """The transcript was rewritten in place: start a new generation (the old one is kept, or
        with `keep` False replaced: a whole document whose next version holds it)."""
        manifest = self._load(transcript_key)
        if manifest["generations"][-1]:
            if keep:
                manifest["generations"].append([])
            else:
                manifest["generations"][-1] = []
            self._save(transcript_key, manifest)

    def gc(self) -> int:
        """Remove chunks no manifest names (left by merges or crashes). Returns how many."""
        alive = {c[0] for m in self._all_manifests() for gen in m["generations"] for c in gen}
        removed = 0
        for suffix in (_SUFFIX, *_OLD_SUFFIXES):
            for path in self._chunks.glob(f"*/*{suffix}"):
                if path.name[: -len(suffix)] not in alive:
                    path.unlink(missing_ok=True)
                    removed += 1
        return removed

    # -- reading -----------------------------------------------------------------------------

    def read(self, transcript_key: str, generation: int = -1) -> bytes:
        """The transcript's bytes exactly as appended (the current generation by default)."""
        manifest = self._load(transcript_key, must_exist=True)
        try:
            chunks = manifest["generations"][generation]
        except IndexError:
            raise KeyError(f"{transcript_key!r} has no generation {generation}") from None
        return b"".join(self._read_chunk(ChunkRef(*c)) for c in chunks)

    def size(self, transcript_key: str) -> int:
        """Archived bytes of the current generation (0 for an unknown key)."""
        return sum(c[1] for c in self._load(transcript_key)["generations"][-1])

    def entries(self) -> list[ArchiveEntry]:
        out = []
        for m in self._all_manifests():
            chunks = tuple(ChunkRef(*c) for c in m["generations"][-1])
            out.append(
                ArchiveEntry(
                    key=m["key"], original_path=m["original_path"],
                    size=sum(c.size for c in chunks), stored_size=sum(c.stored_size for c in chunks),
                    chunks=chunks, generations=len(m["generations"]),
                )  # fmt: skip
            )
        return sorted(out, key=lambda e: e.key)

    # -- chunks ------------------------------------------------------------------------------

    def _chunk_path(self, digest: str, suffix: str = _SUFFIX) -> Path:
        return self._chunks / digest[:2] / f"{digest}{suffix}"

    def _stored_chunk(self, digest: str) -> Path | None:
        """The file holding the chunk, whichever codec wrote it (None: not stored)."""
        for suffix in (_SUFFIX, *_OLD_SUFFIXES):
            path = self._chunk_path(digest, suffix)
            if path.exists():
                return path
        return None

    def _write_chunk(self, raw: bytes) -> tuple[ChunkRef, Path | None]:
        digest = blake3(raw).hexdigest()
        stored = self._stored_chunk(digest)
        if stored is not None:  # content-addressed: the same bytes are already here
            return ChunkRef(digest, len(raw), stored.stat().st_size), None
        packed = compress_chunk(raw)
        path = self._chunk_path(digest)
        path.parent.mkdir(exist_ok=True)
        _write_atomic(path, packed)
        return ChunkRef(digest, len(raw), len(packed)), path.parent

    def _read_chunk(self, ref: ChunkRef) -> bytes:
        path = self._stored_chunk(ref.hash)
        if path is None:
            raise ArchiveCorruptError(f"chunk {ref.hash} is missing ({self._chunk_path(ref.hash)})")
        try:
            raw = decompress_chunk(path.read_bytes())
        except FileNotFoundError:
            raise ArchiveCorruptError(f"chunk {ref.hash} is missing ({path})") from None
        except ValueError as exc:
            raise ArchiveCorruptError(f"chunk {ref.hash} does not decompress ({path}): {exc}") from exc
        if blake3(raw).hexdigest() != ref.hash or len(raw) != ref.size:
            raise ArchiveCorruptError(f"chunk {ref.hash} does not match its hash ({path})")
        return raw

    # -- manifests ---------------------------------------------------------------------------

    def _manifest_path(self, key: str) -> Path:
        return self._manifests / f"{blake3(key.encode('utf-8')).hexdigest()[:40]}.json"

    def _load(self, key: str, must_exist: bool = False) -> dict:
        path = self._manifest_path(key)
        try:
            manifest = _parse_manifest(path.read_bytes(), path)
        except FileNotFoundError:
            if must_exist:
                raise KeyError(f"{key!r} is not archived") from None
            return {"v": MANIFEST_VERSION, "key": key, "original_path": "", "generations": [[]]}
        if manifest["key"] != key:
            raise ArchiveCorruptError(f"manifest {path} holds {manifest['key']!r}, not {key!r}")
        return manifest

    def _save(self, key: str, manifest: dict) -> None:
        body = json.dumps(manifest, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
        _write_atomic(self._manifest_path(key), body)
        _fsync_dir(self._manifests)

    def _all_manifests(self) -> list[dict]:
        return [_parse_manifest(p.read_bytes(), p) for p in sorted(self._manifests.glob("*.json"))]


def compress_chunk(raw: bytes) -> bytes:
    """A chunk's bytes as stored: a zstd frame holding its size and no checksum (BLAKE3 checks).
    A compressor per call: it costs microseconds, and a shared one is not safe across threads."""
    return zstandard.ZstdCompressor(level=ZSTD_LEVEL, write_checksum=False).compress(raw)


def _unxz(packed: bytes) -> bytes:
    return lzma.decompress(packed, format=lzma.FORMAT_XZ)


def _unzstd(packed: bytes) -> bytes:
    return zstandard.ZstdDecompressor().decompress(packed)


_DECODERS: tuple[tuple[bytes, Callable[[bytes], bytes]], ...] = ((_ZSTD_MAGIC, _unzstd), (_XZ_MAGIC, _unxz))


def decompress_chunk(packed: bytes) -> bytes:
    """A stored chunk's raw bytes, whichever codec wrote it: its magic number picks the decoder.
    Raises ValueError when no decoder knows the bytes or they do not decompress."""
    for magic, decode in _DECODERS:
        if packed.startswith(magic):
            try:
                return decode(packed)
            except (lzma.LZMAError, zstandard.ZstdError) as exc:
                raise ValueError(str(exc)) from exc
    raise ValueError(f"not a chunk any codec here wrote (first bytes {packed[:6].hex()})")


def _parse_manifest(body: bytes, path: Path) -> dict:
    try:
        manifest = json.loads(body)
        if manifest["v"] != MANIFEST_VERSION:
            raise ArchiveCorruptError(f"manifest {path} has version {manifest['v']!r}")
        for gen in manifest["generations"]:
            for digest, size, stored in gen:
                if not (isinstance(digest, str) and isinstance(size, int) and isinstance(stored, int)):
                    raise ValueError("bad chunk entry")
        if not manifest["generations"] or not isinstance(manifest["key"], str):
            raise ValueError("no generations or no key")
        return manifest
    except ArchiveCorruptError:
        raise
    except (ValueError, KeyError, TypeError) as exc:
        raise ArchiveCorruptError(f"manifest {path} is unreadable: {exc}") from exc


def _write_atomic(path: Path, body: bytes) -> None:
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(body)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _fsync_dir(folder: Path) -> None:
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
