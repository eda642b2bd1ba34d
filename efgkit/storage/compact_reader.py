"""Read a compact strategy (.efgs) with the Python standard library only (mmap, struct).

This module imports nothing outside the standard library, so it can be copied alone to
a device without numpy and play a strategy exported by ``efgkit export``. The format is
documented byte by byte in docs/compact-format.md; efgkit.storage.efgs_c holds the same
reader in C99.

    >>> strategy = CompactStrategy("leduc.efgs")
    >>> strategy.probabilities("P0 card=Ks board=- bets=-")    # one float per action
    >>> strategy.sample("P0 card=Ks board=- bets=-", random.Random(0))   # action index

Opening maps the file and checks its header; nothing else is read until a lookup, so
opening takes the same time for any file size. A lookup hashes the key (64-bit BLAKE2b),
binary-searches the sorted hash table and reads one row of quantized probabilities.
"""

from __future__ import annotations

import mmap
import struct
import sys
import zlib
from bisect import bisect_left
from collections.abc import Iterator
from hashlib import blake2b

MAGIC = b"EFGS\r\n\x1a\n"
VERSION = 1
HEADER = struct.Struct("<8sHBBIQQQQQQQII32sH")
"""magic, version, bits, flags, infosets, values, seed, hashes/starts/values/keys offsets,
file size, payload crc32, header crc32, tree fingerprint, spec length (docs/compact-format.md)."""
HEADER_CRC_OFFSET = 76
FLAG_PRUNED = 1
FLAG_KEYS = 2
BITS = (4, 8, 16)
VERIFY_CHUNK = 1 << 24


class CompactFormatError(ValueError):
    """The file is not a compact strategy, of a future version, truncated or damaged."""


def key_hash(key: str | bytes, seed: int) -> int:
    """The key's 64-bit hash: BLAKE2b with an 8-byte digest of (seed as 8 little-endian
    bytes + the key's UTF-8 bytes), read as a little-endian integer."""
    data = key.encode() if isinstance(key, str) else key
    digest = blake2b(seed.to_bytes(8, "little") + data, digest_size=8).digest()
    return int.from_bytes(digest, "little")


def header_crc(header: bytes) -> int:
    """CRC-32 of the header with its own CRC field (4 bytes at offset 76) left out."""
    return zlib.crc32(header[HEADER_CRC_OFFSET + 4:], zlib.crc32(header[:HEADER_CRC_OFFSET]))


class CompactStrategy:
    """A memory-mapped compact strategy: quantized probabilities by infoset key.

    Attributes: ``bits`` (16, 8 or 4), ``total`` (2**bits - 1, what every row sums to),
    ``spec`` (the game), ``fingerprint`` (hex sha256 of the game tree), ``pruned``
    (infosets the strategy never reaches were left out), ``has_keys``.
    """

    def __init__(self, path: str) -> None:
        with open(path, "rb") as handle:
            try:
                self._map = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
            except ValueError as exc:  # an empty file cannot be mapped
                raise CompactFormatError(f"{path}: empty file, not a compact strategy") from exc
        self.path = path
        self._views: list[memoryview] = []
        try:
            self._parse_header()
        except CompactFormatError:
            self.close()
            raise

    def _parse_header(self) -> None:
        data = self._map
        if len(data) < HEADER.size or data[:8] != MAGIC:
            raise CompactFormatError(f"{self.path}: not a compact strategy (.efgs) file")
        (_, version, bits, flags, infosets, values, seed, hashes_at, starts_at, values_at,
         keys_at, size, payload_crc, stored_header_crc, fingerprint, spec_length) = \
            HEADER.unpack_from(data, 0)
        if version > VERSION:
            raise CompactFormatError(f"{self.path}: compact format version {version} is newer "
                                     f"than this reader ({VERSION}); upgrade the reader")
        header_end = HEADER.size + spec_length
        if size != len(data) or header_end > len(data):
            raise CompactFormatError(f"{self.path}: file is truncated ({len(data)} bytes, the "
                                     f"header says {size})")
        if header_crc(bytes(data[:header_end])) != stored_header_crc:
            raise CompactFormatError(f"{self.path}: header is corrupted (CRC mismatch)")
        if bits not in BITS:
            raise CompactFormatError(f"{self.path}: unsupported {bits} bits per probability")
        value_bytes = (values * bits + 7) // 8
        ends = [(hashes_at, 8 * infosets), (starts_at, 4 * (infosets + 1)), (values_at, value_bytes)]
        if any(start < header_end or start + length > size for start, length in ends) or (
                flags & FLAG_KEYS and not header_end <= keys_at <= size - 4 * (infosets + 1)):
            raise CompactFormatError(f"{self.path}: section offsets are out of range")
        self.bits, self.total, self.seed = bits, (1 << bits) - 1, seed
        self.pruned, self.has_keys = bool(flags & FLAG_PRUNED), bool(flags & FLAG_KEYS)
        self.num_values, self.payload_crc = values, payload_crc
        self.fingerprint = fingerprint.hex()
        self.spec = bytes(data[HEADER.size:header_end]).decode()
        self._count = infosets
        self._starts_at, self._values_at, self._keys_at = starts_at, values_at, keys_at
        self._hashes_at = hashes_at
        self._view = memoryview(data)
        self._views.append(self._view)
        if sys.byteorder == "little":  # native casts: bisect runs in C over the mapped table
            self._hashes = self._view[hashes_at:hashes_at + 8 * infosets].cast("Q")
            self._starts = self._view[starts_at:starts_at + 4 * (infosets + 1)].cast("I")
            self._views += [self._hashes, self._starts]
        else:
            self._hashes = _LittleEndianTable(data, hashes_at, infosets, "<Q")
            self._starts = _LittleEndianTable(data, starts_at, infosets + 1, "<I")
        if self._starts[infosets] != values:
            raise CompactFormatError(f"{self.path}: row table does not end at the value count")

    # ----------------------------------------------------------------- lookups
    def __len__(self) -> int:
        return self._count

    def _index(self, key: str) -> int:
        """Position of ``key`` in the table, or -1."""
        wanted = key_hash(key, self.seed)
        position = bisect_left(self._hashes, wanted)
        if position == self._count or self._hashes[position] != wanted:
            return -1
        if self.has_keys and self._key_at(position) != key:
            return -1
        return position

    def __contains__(self, key: str) -> bool:
        return self._index(key) >= 0

    def quantized(self, key: str) -> tuple[int, ...]:
        """The integer weights of the key's actions (in the game's action order), summing to ``total``.

        Raises KeyError for an infoset not in the file (not in the game, or pruned).
        """
        position = self._index(key)
        if position < 0:
            raise KeyError(key)
        return self._row(position)

    def probabilities(self, key: str) -> tuple[float, ...]:
        """One probability per action of the infoset ``key``: ``quantized(key) / total``."""
        return tuple(weight / self.total for weight in self.quantized(key))

    def sample(self, key: str, rng) -> int:
        """An action index drawn with probability exactly ``quantized(key)[a] / total``.

        ``rng`` is anything with ``randrange`` (``random.Random``, ``random.SystemRandom``).
        """
        draw = rng.randrange(self.total)
        for action, weight in enumerate(self.quantized(key)):
            draw -= weight
            if draw < 0:
                return action
        raise CompactFormatError(f"{self.path}: row of {key!r} does not sum to {self.total}")

    def _row(self, position: int) -> tuple[int, ...]:
        lo, hi = self._starts[position], self._starts[position + 1]
        if not lo <= hi <= self.num_values:
            raise CompactFormatError(f"{self.path}: row table is corrupted")
        data, base = self._map, self._values_at
        if self.bits == 8:
            row = tuple(data[base + lo:base + hi])
        elif self.bits == 16:
            row = struct.unpack_from(f"<{hi - lo}H", data, base + 2 * lo)
        else:
            row = tuple((data[base + (j >> 1)] >> (4 * (j & 1))) & 15 for j in range(lo, hi))
        if sum(row) != self.total:
            raise CompactFormatError(f"{self.path}: a row does not sum to {self.total} "
                                     f"(file is corrupted)")
        return row

    # ----------------------------------------------------------------- keys, integrity
    def _key_at(self, position: int) -> str:
        offsets_at = self._keys_at
        lo, hi = struct.unpack_from("<II", self._map, offsets_at + 4 * position)
        blob = offsets_at + 4 * (self._count + 1)
        if not lo <= hi <= len(self._map) - blob:
            raise CompactFormatError(f"{self.path}: key table is corrupted")
        return bytes(self._map[blob + lo:blob + hi]).decode()

    def keys(self) -> Iterator[str]:
        """The stored infoset keys in table order (only if exported with keys)."""
        if not self.has_keys:
            raise CompactFormatError(f"{self.path}: was exported without keys (hashes only)")
        return (self._key_at(position) for position in range(self._count))

    def verify(self) -> None:
        """Read the whole file: payload CRC, sorted distinct hashes, every row sums to ``total``."""
        crc, start = 0, HEADER.size + len(self.spec.encode())
        for chunk_start in range(start, len(self._map), VERIFY_CHUNK):
            crc = zlib.crc32(self._view[chunk_start:chunk_start + VERIFY_CHUNK], crc)
        if crc != self.payload_crc:
            raise CompactFormatError(f"{self.path}: file is corrupted (payload CRC mismatch)")
        previous = -1
        for position in range(self._count):
            current = self._hashes[position]
            if current <= previous:
                raise CompactFormatError(f"{self.path}: hash table is not sorted")
            previous = current
            self._row(position)

    def close(self) -> None:
        for view in reversed(self._views):
            view.release()
        self._views.clear()
        self._map.close()

    def __enter__(self) -> CompactStrategy:
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()


class _LittleEndianTable:
    """A little-endian integer table read with struct, for big-endian hosts."""

    def __init__(self, data: mmap.mmap, offset: int, length: int, code: str) -> None:
        self._data, self._offset, self._length = data, offset, length
        self._struct = struct.Struct(code)

    def __len__(self) -> int:
        return self._length

    def __getitem__(self, index: int) -> int:
        return self._struct.unpack_from(self._data, self._offset + self._struct.size * index)[0]
