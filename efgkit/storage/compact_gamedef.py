"""The ACPC game definition a compact .efgs file carries, for a bot that plays it over the
ACPC protocol (``efgs_acpc``, ``efgkit bot``).

A file of a limit poker game that an ACPC ``GAMEDEF`` can describe (``interop.acpc.
game_definition``: Leduc, the hold'em family, ``acpc:`` files) ends with that definition's
text: header flag bit 2 (``FLAG_GAMEDEF``) set, and the file's last bytes are the text
(ASCII, at an 8-byte aligned offset after every other section) followed by its length as
a u32 (docs/compact-format.md, "Game definition"). The file size, the payload CRC and the
header CRC cover it, so a reader that does not know the flag still opens the file, and one
that does finds the text from the end of the file without a header field of its own.
"""

from __future__ import annotations

import struct
import zlib

from efgkit.errors import FileFormatError, GameDefinitionError
from efgkit.games.poker import LimitPoker
from efgkit.interop.acpc import game_definition
from efgkit.io.atomic import write_atomically
from efgkit.storage.compact_reader import FLAG_GAMEDEF, HEADER, CompactStrategy, header_crc
from efgkit.storage.compact_writer import aligned

_FLAGS_AT, _SIZE_AT, _PAYLOAD_CRC_AT, _HEADER_CRC_AT, _SPEC_LENGTH_AT = 11, 100, 108, 112, 148


def acpc_text(game) -> str | None:
    """The ACPC game definition of ``game`` (a LimitPoker), or None when there is none (not
    poker, dealt by rank, several bet sizes a round)."""
    if not isinstance(game, LimitPoker):
        return None
    try:
        return game_definition(game).text()
    except GameDefinitionError:
        return None


def size_with_game_definition(size: int, game) -> int:
    """Bytes of a file of ``size`` bytes once ``with_game_definition`` appended ``game``'s."""
    text = acpc_text(game)
    return size if text is None else aligned(size) + len(text.encode("ascii")) + 4


def write_game_definition(efgs_path, out) -> str:
    """Write the ACPC game definition the compact file ``efgs_path`` carries to ``out``
    (atomically; what an ACPC dealer reads) and return it; FileFormatError if it carries none."""
    with CompactStrategy(str(efgs_path)) as strategy:
        text = strategy.game_definition
    if text is None:
        raise FileFormatError(f"{efgs_path}: the file carries no ACPC game definition (its game "
                              f"{strategy.spec!r} has none, or an older efgkit wrote it)")
    write_atomically(out, text.encode("ascii"))
    return text


def with_game_definition(data: bytes, game) -> bytes:
    """``data`` (a whole .efgs file without a game definition) with ``game``'s ACPC
    definition appended, or ``data`` itself if the game has none."""
    text = acpc_text(game)
    if text is None:
        return data
    encoded = text.encode("ascii")
    start = aligned(len(data))
    out = bytearray(data) + bytes(start - len(data)) + encoded + struct.pack("<I", len(encoded))
    spec_end = HEADER.size + struct.unpack_from("<H", out, _SPEC_LENGTH_AT)[0]
    out[_FLAGS_AT] |= FLAG_GAMEDEF
    struct.pack_into("<Q", out, _SIZE_AT, len(out))
    struct.pack_into("<I", out, _PAYLOAD_CRC_AT, zlib.crc32(out[spec_end:]))
    struct.pack_into("<I", out, _HEADER_CRC_AT, header_crc(bytes(out[:spec_end])))
    return bytes(out)


__all__ = ["acpc_text", "size_with_game_definition", "with_game_definition", "write_game_definition"]
