"""Compact export: exact quantization, abstract rows stored once, the Python and C readers
agree with the exported strategy on every infoset, damaged files are refused (and a
damaged row is never returned), and JSON/OpenSpiel exports."""

import ctypes
import json
import random
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from efgkit.abstraction.cards.bucketing import poker_rules
from efgkit.abstraction.cards.clustering import cluster_cards
from efgkit.abstraction.cfr_plus_ira import CFRPlusIRA
from efgkit.abstraction.refinement import run_refinement
from efgkit.cli import main
from efgkit.errors import ParameterError
from efgkit.exact_rounding import round_for_exploitability, row_reach, tier_bits
from efgkit.maps.infoset_map import InfosetMap, class_of, coarsest_classes
from efgkit.play.playout import CompactPolicy
from efgkit.solvers import BestResponse, CFRPlusSolver, Strategy
from efgkit.specs import load_game
from efgkit.storage import compact_reader
from efgkit.storage.abstraction_file import save_card_abstraction
from efgkit.storage.compact import export_compact, reachable_infosets
from efgkit.storage.compact_reader import (
    HEADER,
    HEADER_CRC_OFFSET,
    READ_VERSIONS,
    VALUES_HEAD,
    BettingError,
    ClassNeeded,
    CompactFormatError,
    CompactStrategy,
    MissingCell,
    combination_rank,
    header_crc,
    key_hash,
    row_code,
)
from efgkit.storage.compact_writer import (
    CardTableUnavailable,
    QuantizedRows,
    action_totals,
    largest_remainder,
    pack_rows,
    quantize,
    row_codes,
)
from efgkit.storage.strategy_file import load_strategy, save_strategy

C_SOURCES = Path(compact_reader.__file__).parent / "efgs_c"
VARIANTS = [(16, False, False), (8, False, False), (4, False, False), (8, True, True),
            (4, True, False), (16, False, False, "coded"), (8, True, True, "coded"),
            (4, False, False, "coded")]
"""(bits, pruned, keys stored[, rows entropy-coded: format 7])."""


@pytest.fixture(scope="module")
def leduc():
    return load_game("leduc")


@pytest.fixture(scope="module")
def leduc_strategy(leduc):
    return CFRPlusSolver(leduc).iterate(200).average_strategy()


@pytest.fixture(scope="module")
def exports(tmp_path_factory, leduc_strategy):
    folder = tmp_path_factory.mktemp("efgs")
    rounded = {bits: round_for_exploitability(leduc_strategy, bits, tiers=True).rows
               for bits in {variant[0] for variant in VARIANTS}}
    return {variant: export_compact(leduc_strategy, folder / f"{variant}.efgs", bits=variant[0],
                                    quantized=rounded[variant[0]], prune_unreachable=variant[1],
                                    with_keys=variant[2], coded=len(variant) > 3)
            for variant in VARIANTS}


@pytest.fixture(scope="module")
def query_tool(tmp_path_factory):
    compiler = shutil.which("cc") or shutil.which("gcc")
    if compiler is None:
        pytest.skip("no C compiler on this machine")
    folder = tmp_path_factory.mktemp("c")
    sources = [str(C_SOURCES / name) for name in ("efgs.c", "efgs_computed.c", "efgs_compressed.c")]
    subprocess.run([compiler, "-std=c99", "-Wall", "-Wextra", "-pedantic", "-Werror", "-O2",
                    *sources, str(C_SOURCES / "efgs_query.c"), "-o", str(folder / "efgs_query")],
                   check=True)
    subprocess.run([compiler, "-std=c99", "-O2", "-shared", "-fPIC", *sources, "-o",
                    str(folder / "libefgs.so")], check=True)
    return folder


# ---------------------------------------------------------------------- quantization
rows = st.lists(st.floats(0.0, 1.0), min_size=1, max_size=7).filter(lambda r: sum(r) > 0)


@given(st.lists(rows, min_size=1, max_size=6), st.sampled_from([16, 8, 4]))
@settings(max_examples=200, deadline=None)
def test_quantized_rows_sum_exactly_to_the_total_and_move_less_than_a_step(raw_rows, bits):
    probabilities = np.concatenate([np.array(r) / sum(r) for r in raw_rows])
    offsets = np.concatenate([[0], np.cumsum([len(r) for r in raw_rows])])
    weights = quantize(probabilities, offsets, bits)
    total = action_totals(offsets, bits)
    assert np.all(np.add.reduceat(weights, offsets[:-1]) == total[offsets[:-1]])
    assert np.all(np.abs(weights / total - probabilities) < 1 / total)


def test_a_row_stores_its_free_weights_on_the_finer_grid_its_bits_allow():
    """A row of A actions has A - 1 free weights in A * bits bits: floor(A bits / (A - 1))
    bits each, total 2**that - 2 (the all-ones row is kept for an empty cell)."""
    assert [row_code(8, actions) for actions in (1, 2, 3, 4, 9, 10)] == [
        (8, 254), (16, 65534), (12, 4094), (10, 1022), (9, 510), (8, 254)]
    assert row_code(16, 2) == (32, 2**32 - 2) and row_code(4, 3) == (6, 62)


@given(st.lists(rows, min_size=1, max_size=6), st.sampled_from([16, 8, 4]),
       st.lists(st.booleans(), min_size=6, max_size=6),
       st.lists(st.sampled_from([0, 1, 2]), min_size=6, max_size=6))
@settings(max_examples=100, deadline=None)
def test_the_python_reader_decodes_every_packed_row(raw_rows, bits, present, tiers):
    """pack_rows and the reader's row decoding are inverse, in every tier (2 bits, bits,
    bits // 2 per action; no wide tier at 16 bits); an absent row reads as an empty cell,
    and a row whose fields pass its total is refused."""
    probabilities = np.concatenate([np.array(r) / sum(r) for r in raw_rows])
    offsets = np.concatenate([[0], np.cumsum([len(r) for r in raw_rows])])
    tiers = sorted(max(tier, bits == 16) for tier in tiers[:len(raw_rows)])
    row_bits = np.array([(2 * bits, bits, bits // 2)[tier] for tier in tiers])
    weights = largest_remainder(probabilities, offsets, row_codes(offsets, row_bits)[1])
    present = np.array(present[:len(raw_rows)])
    reader = object.__new__(CompactStrategy)
    reader.bits, reader._values_at, reader.path = bits, 3 + VALUES_HEAD.size, "packed"
    reader._map = b"xyz" + pack_rows(weights, offsets, bits, present, row_bits)
    reader._wide_end, reader._narrow_start = VALUES_HEAD.unpack_from(reader._map, 3)
    for row, (lo, hi) in enumerate(zip(offsets[:-1], offsets[1:], strict=True)):
        assert reader._tier_bits(int(lo), int(hi)) == row_bits[row]
        decoded = reader._weights(int(lo), int(hi))
        assert decoded == (tuple(weights[lo:hi].tolist()) if present[row] else None)
    if hi - lo > 2 and present[-1]:  # the last row's first field all ones: past the total
        damaged = bytearray(reader._map)
        first = reader._value_bit(int(lo))
        for bit in range(first, first + row_code(int(row_bits[-1]), hi - lo)[0]):
            damaged[reader._values_at + (bit >> 3)] |= 1 << (bit & 7)
        reader._map = bytes(damaged)
        with pytest.raises(CompactFormatError, match="pass its total"):
            reader._weights(int(lo), int(hi))


def test_ties_between_equal_remainders_go_to_the_lower_action():
    weights = quantize(np.array([1 / 3, 1 / 3, 1 / 3]), np.array([0, 3]), 8)
    assert weights.tolist() == [1365, 1365, 1364]
    weights = quantize(np.array([0.25, 0.25, 0.25, 0.25]), np.array([0, 4]), 8)
    assert weights.tolist() == [256, 256, 255, 255]


def test_key_hash_is_blake2b_of_seed_and_key():
    import hashlib

    expected = hashlib.blake2b((7).to_bytes(8, "little") + "é key".encode(), digest_size=8)
    assert key_hash("é key", 7) == int.from_bytes(expected.digest(), "little")


def test_c_key_hash_equals_the_python_one_across_block_boundaries(query_tool):
    library = ctypes.CDLL(str(query_tool / "libefgs.so"))
    library.efgs_key_hash.restype = ctypes.c_uint64
    library.efgs_key_hash.argtypes = [ctypes.c_char_p, ctypes.c_size_t, ctypes.c_uint64]
    rng = random.Random(0)
    for length in [*range(0, 260), 1000]:
        data = bytes(rng.randrange(256) for _ in range(length))
        seed = rng.randrange(2**64)
        assert library.efgs_key_hash(data, length, seed) == key_hash(data, seed), length


# ---------------------------------------------------------------------- readers
def _expected_rows(leduc, export):
    """The probabilities the exporter evaluated, per infoset key, named by the game's
    action labels in the game's order."""
    behavior = export.dequantized.behavior()
    offsets = leduc.infoset_action_offset
    return {key: dict(zip(leduc.infoset_actions(i), behavior[offsets[i]:offsets[i + 1]].tolist(),
                          strict=True))
            for i, key in enumerate(leduc.infoset_keys)}


def _query(query_tool, path, lines, *options):
    """efgs_query's answers (stdout lines), its per-line errors (stderr lines) and exit code."""
    result = subprocess.run([str(query_tool / "efgs_query"), *options, str(path)],
                            input="".join(f"{line}\n" for line in lines), capture_output=True,
                            text=True)
    return result.stdout.splitlines(), result.stderr.splitlines(), result.returncode


@pytest.mark.parametrize("variant", VARIANTS)
def test_python_reader_returns_the_exported_rows_on_every_infoset(leduc, exports, variant):
    export = exports[variant]
    expected = _expected_rows(leduc, export)
    with CompactStrategy(export.path) as strategy:
        strategy.verify()
        assert (strategy.spec, strategy.fingerprint, strategy.bits) == (
            "leduc", leduc.fingerprint, variant[0])
        assert len(strategy) == export.infosets
        assert (export.tier_rows[0] > 0 and export.tier_rows[2] > 0) == (variant[0] != 16)
        found = {key: strategy.probabilities(key) for key in leduc.infoset_keys
                 if key in strategy}
        assert len(found) == export.infosets
        assert all(found[key] == expected[key] for key in found)  # exactly, as floats
        assert all(sum(p.values()) == pytest.approx(1.0) for p in map(strategy.probabilities, found))
        assert "no such infoset" not in strategy
        with pytest.raises(BettingError, match="has no betting"):
            strategy.quantized("no such infoset")
        if variant[2]:
            assert sorted(strategy.keys()) == sorted(found)


def test_pruning_leaves_out_exactly_the_unreached_infosets(leduc, exports):
    pruned = exports[(4, True, False)]  # at 8 bits every action of this strategy keeps a weight
    full = exports[(4, False, False)]
    reached = reachable_infosets(leduc, full.dequantized.behavior())
    assert pruned.infosets == reached.sum() < leduc.num_infosets
    with CompactStrategy(pruned.path) as strategy:
        assert [key in strategy for key in leduc.infoset_keys] == reached.tolist()
    evaluator = BestResponse(InfosetMap.identity(leduc))
    assert evaluator.evaluate(pruned.dequantized).nash_conv == pytest.approx(
        evaluator.evaluate(full.dequantized).nash_conv, abs=1e-12)


def test_python_sampling_follows_the_quantized_weights(leduc, exports):
    key = leduc.infoset_keys[0]
    with CompactStrategy(exports[(8, False, False)].path) as strategy:
        weights = np.array(strategy.quantized(key))
        rng = random.Random(3)
        draws = np.bincount([strategy.sample(key, rng) for _ in range(20000)],
                            minlength=len(weights))
    expected = 20000 * weights / weights.sum()
    assert np.all(np.abs(draws - expected) <= 4 * np.sqrt(expected + 1))


def test_python_reader_needs_no_numpy(exports):
    script = (
        "import importlib.util, sys; sys.modules['numpy'] = None\n"
        f"spec = importlib.util.spec_from_file_location('reader', {compact_reader.__file__!r})\n"
        "reader = importlib.util.module_from_spec(spec); spec.loader.exec_module(reader)\n"
        f"s = reader.CompactStrategy({exports[(8, False, False)].path!r}); s.verify()\n"
        "print(len(s), s.spec)\n"
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                            check=True)
    assert result.stdout.split() == [str(exports[(8, False, False)].infosets), "leduc"]


@pytest.mark.parametrize("variant", VARIANTS)
def test_c_reader_agrees_with_the_python_reader_on_every_infoset(leduc, exports, query_tool,
                                                                 variant):
    path = exports[variant].path
    keys = leduc.infoset_keys + ["no such infoset", "P0 card=Js board=- bets=-x"]
    answers, errors, code = _query(query_tool, path, keys, "--weights")
    with CompactStrategy(path) as strategy:
        expected = [f"{key}\t" + " ".join(map(str, strategy.quantized(key))) for key in keys
                    if key in strategy]
        refused = [f" line {i + 1}" for i, key in enumerate(keys) if key not in strategy]
    assert answers == expected
    assert code == 1 and [line.split(":")[1] for line in errors] == refused
    verified = subprocess.run([str(query_tool / "efgs_query"), "--verify", path],
                              capture_output=True, text=True)
    assert verified.stdout == "ok\n"


@pytest.mark.parametrize("bits", [16, 8])
def test_c_sampling_maps_every_random_draw_to_its_action(leduc, exports, query_tool, bits):
    """Draws at every boundary of the cumulative weights (and random 64-bit draws, taken
    modulo the row's total) pick the action whose weights cover them."""
    library = ctypes.CDLL(str(query_tool / "libefgs.so"))
    library.efgs_sample.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t,
                                    ctypes.c_uint64]
    reader = ctypes.create_string_buffer(1 << 16)  # larger than struct efgs_reader
    path = exports[(bits, False, False)].path
    assert library.efgs_open_file(reader, path.encode()) == 0
    rng = random.Random(0)
    with CompactStrategy(path) as strategy:
        for key in leduc.infoset_keys[:40]:
            weights = strategy.quantized(key)
            total = sum(weights)
            cumulative = np.cumsum(weights)
            draws = sorted({0, total - 1, *(int(c) + d for c in cumulative[:-1] if c
                                            for d in (-1, 0, 1)),
                            *(rng.randrange(2**64) for _ in range(20))})
            encoded = key.encode()
            actions = [library.efgs_sample(reader, encoded, len(encoded), draw) for draw in draws]
            assert actions == [int(np.searchsorted(cumulative, draw % total, side="right"))
                               for draw in draws]
    library.efgs_close(reader)


# ---------------------------------------------------------------------- damaged files
def _damaged(tmp_path, source, change):
    data = bytearray(Path(source).read_bytes())
    change(data)
    path = tmp_path / "damaged.efgs"
    path.write_bytes(bytes(data))
    return path


def _reseal_header(data):
    spec_end = HEADER.size + int.from_bytes(data[HEADER.size - 2:HEADER.size], "little")
    data[HEADER_CRC_OFFSET:HEADER_CRC_OFFSET + 4] = header_crc(bytes(data[:spec_end])).to_bytes(4, "little")


def _set_version(version):
    def change(data):
        data[8] = version
        _reseal_header(data)
    return change


@pytest.mark.parametrize("change, message, c_message", [
    (lambda d: d.__delitem__(slice(len(d) - 10, None)), "truncated", "truncated"),
    (lambda d: d.__setitem__(0, ord("X")), "not a compact", "not a compact"),
    (lambda d: d.__setitem__(20, d[20] ^ 1), "header is corrupted", "corrupted"),
    (_set_version(max(READ_VERSIONS) + 1), "newer", "another compact format version"),
    (_set_version(1), "no longer read; export the strategy again", "another compact format version"),
    (_set_version(2), "no longer read; export the strategy again", "another compact format version"),
    (_set_version(3), "version 3 .* no longer read; export the strategy again",
     "another compact format version"),
    (_set_version(4), "version 4 .* no longer read; export the strategy again",
     "another compact format version"),
    (_set_version(5), "version 5 .* no longer read; export the strategy again",
     "another compact format version"),
])
def test_damaged_files_are_refused_by_both_readers(tmp_path, exports, query_tool, change, message,
                                                   c_message):
    path = _damaged(tmp_path, exports[(8, False, False)].path, change)
    with pytest.raises(CompactFormatError, match=message):
        CompactStrategy(str(path))
    result = subprocess.run([str(query_tool / "efgs_query"), str(path)], input="",
                            capture_output=True, text=True)
    assert result.returncode == 2 and c_message in result.stderr


def test_a_game_spec_that_is_not_utf8_is_one_line(tmp_path, exports):
    def change(data):
        data[HEADER.size] = 0xFF
        _reseal_header(data)

    path = _damaged(tmp_path, exports[(8, False, False)].path, change)
    with pytest.raises(CompactFormatError, match="stored game spec is not UTF-8 text"):
        CompactStrategy(str(path))
    result = CliRunner().invoke(main, ["play", "leduc", str(path), "--against", "random",
                                       "-n", "2"])
    assert result.exit_code == 2 and len(result.stderr.splitlines()) == 1, result.exception


def test_the_format_document_gives_the_readers_version_everywhere():
    import re

    text = (Path(__file__).resolve().parent.parent / "docs" / "compact-format.md").read_text()
    stated = re.findall(r"\(\.efgs, version (\d+)\)|format version = (\d+)|the version \(`= (\d+)`\)", text)
    versions = {int(number) for found in stated for number in found if number}
    assert len(stated) == 3 and versions <= set(READ_VERSIONS) and max(versions) == max(READ_VERSIONS)


@pytest.mark.parametrize("actions, ones, message", [
    (3, "field", "pass its total"),  # the first field 2**w - 1 > 2**w - 2
    (2, "row", "row is empty"),      # all ones outside a card table
])
def test_a_changed_probability_is_never_returned_by_either_reader(tmp_path, leduc, exports,
                                                                  query_tool, actions, ones,
                                                                  message):
    """A row whose fields pass its total (or, outside a card table, an all-ones row) is
    refused on every lookup; any other change is caught by the payload CRC (verify)."""
    export = exports[(8, False, False)]
    key = next(key for infoset, key in enumerate(leduc.infoset_keys)
               if leduc.infoset_num_actions[infoset] == actions)
    with CompactStrategy(export.path) as strategy:
        lo, hi = (strategy._start(strategy.row_of(key) + k) for k in (0, 1))
        tier, first = strategy._tier_bits(lo, hi), strategy._value_bit(lo)
        count = row_code(tier, actions)[0] if ones == "field" else actions * tier
        values_at = strategy._values_at

    def change(data):
        for bit in range(first, first + count):
            data[values_at + (bit >> 3)] |= 1 << (bit & 7)
    path = _damaged(tmp_path, export.path, change)
    with CompactStrategy(str(path)) as strategy:
        for read in (strategy.quantized, strategy.probabilities,
                     lambda k: strategy.sample(k, random.Random(0))):
            with pytest.raises(CompactFormatError, match=message):
                read(key)
        with pytest.raises(CompactFormatError, match="payload CRC"):
            strategy.verify()
    result = subprocess.run([str(query_tool / "efgs_query"), "--verify", str(path)],
                            capture_output=True, text=True)
    assert result.returncode == 2 and "corrupted" in result.stderr
    library = ctypes.CDLL(str(query_tool / "libefgs.so"))
    library.efgs_sample.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t,
                                    ctypes.c_uint64]
    reader = ctypes.create_string_buffer(1 << 16)
    assert library.efgs_open_file(reader, str(path).encode()) == 0
    assert {library.efgs_sample(reader, key.encode(), len(key), draw) for draw in range(255)} == {-5}
    weights = (ctypes.c_uint32 * 8)()
    assert library.efgs_quantized(reader, key.encode(), len(key), weights, 8) == -5
    library.efgs_close(reader)


# ---------------------------------------------------------------------- abstraction, rounding
def test_an_abstract_strategy_is_stored_once_per_abstract_infoset(tmp_path, leduc):
    coarsest = InfosetMap.coarsest(leduc)
    strategy = CFRPlusSolver(coarsest).iterate(50).average_strategy()
    export = export_compact(strategy, tmp_path / "coarsest.efgs", bits=8)
    expanded = export_compact(Strategy.from_behavior(leduc, strategy.behavior()),
                              tmp_path / "expanded.efgs", bits=8)
    assert export.rows == coarsest.num_abstract < expanded.rows == leduc.num_infosets
    assert export.bytes < expanded.bytes / 3
    with CompactStrategy(export.path) as small:
        weights = quantize(strategy.probabilities, coarsest.abstract_action_offset, 8)
        assert small.num_rows == coarsest.num_abstract
        for infoset, key in enumerate(leduc.infoset_keys):
            lo = coarsest.infoset_offset[infoset]
            assert small.quantized(key, class_of(leduc, infoset)) == tuple(
                weights[lo:lo + leduc.infoset_num_actions[infoset]])


@pytest.fixture(scope="module")
def refined(tmp_path_factory, leduc):
    """Exports of the coarsest abstraction and of a CFR+IRA refinement of it, with and
    without keys."""
    folder = tmp_path_factory.mktemp("classes")
    refiner = CFRPlusIRA(leduc, initial=InfosetMap.coarsest(leduc), k_bound=10, k_heuristic=90,
                         delay=10, random_state=0)
    run_refinement(refiner, 0.3, max_iterations=300, every=25)
    strategies = {"coarsest": CFRPlusSolver(InfosetMap.coarsest(leduc)).iterate(50).average_strategy(),
                  "refined": refiner.average_strategy()}
    exports = {(name, keys): export_compact(strategy, folder / f"{name}-{keys}.efgs", bits=8,
                                            with_keys=keys)
               for name, strategy in strategies.items() for keys in (False, True)}
    return strategies, refiner.memory(), exports


def test_the_coarsest_class_rule_costs_nothing_per_infoset(leduc, refined):
    """Čermák et al. §4.1.1: the coarsest abstraction is a function of the class; the file
    holds one class entry per class and no key index."""
    _, _, exports = refined
    coarsest = exports[("coarsest", False)]
    assert coarsest.explicit_entries == 0 and coarsest.index_bytes == 0
    assert coarsest.classes == InfosetMap.coarsest(leduc).num_abstract
    with CompactStrategy(coarsest.path) as compact:
        definition_bytes = 8 + len(compact.game_definition) + 4  # the ACPC game definition: fixed
    assert coarsest.bytes < 600 + definition_bytes


def test_a_refinement_stores_only_its_explicit_map_entries(refined):
    """The key index holds the paper's explicit map entries (infosets outside the largest
    abstract set of their class), plus the few whose fingerprint would collide."""
    _, memory, exports = refined
    export = exports[("refined", False)]
    assert memory["map_entries"] > 0
    assert memory["map_entries"] <= export.explicit_entries <= memory["map_entries"] * 1.05 + 2


def test_keys_that_follow_their_class_never_cost_an_entry_by_chance(tmp_path, leduc):
    """Ten infosets moved out of their coarsest class: the index holds about those ten,
    however many keys follow their class (their fingerprints are long enough to miss)."""
    abstract_of = coarsest_classes(leduc).copy()
    moved = np.flatnonzero(leduc.infoset_num_actions == 3)[::40][:10]
    abstract_of[moved] = abstract_of.max() + 1 + np.arange(moved.size)
    infoset_map = InfosetMap(leduc, abstract_of)
    strategy = CFRPlusSolver(infoset_map).iterate(20).average_strategy()
    export = export_compact(strategy, tmp_path / "moved.efgs", bits=8)
    assert export.classes > 0 and moved.size <= export.explicit_entries <= moved.size + 2
    weights = quantize(strategy.probabilities, infoset_map.abstract_action_offset, 8)
    with CompactStrategy(export.path) as compact:
        for infoset, key in enumerate(leduc.infoset_keys):
            lo = infoset_map.infoset_offset[infoset]
            assert compact.quantized(key, class_of(leduc, infoset)) == tuple(
                weights[lo:lo + leduc.infoset_num_actions[infoset]])


@pytest.mark.parametrize("name", ["coarsest", "refined"])
@pytest.mark.parametrize("keys", [False, True])
def test_both_readers_answer_every_infoset_of_a_class_rule_file(leduc, refined, query_tool, name,
                                                                keys):
    strategies, _, exports = refined
    strategy, export = strategies[name], exports[(name, keys)]
    weights = quantize(strategy.probabilities, strategy.infoset_map.abstract_action_offset, 8)
    lines, expected = [], []
    with CompactStrategy(export.path) as compact:
        compact.verify()
        for infoset, key in enumerate(leduc.infoset_keys):
            lo = strategy.infoset_map.infoset_offset[infoset]
            row = tuple(int(w) for w in weights[lo:lo + leduc.infoset_num_actions[infoset]])
            assert compact.quantized(key, class_of(leduc, infoset)) == row
            lines.append(f"{key}\t" + " ".join(map(str, class_of(leduc, infoset))))
            expected.append(f"{key}\t" + " ".join(map(str, row)))
        # a nonsense key, or another player's, never reads a class's row (keys stored or not)
        foreign = [("no such infoset", (0, 0, 2)), ("P1 card=Ks board=- bets=-", (0, 0, 2)),
                   ("P0 card=Ks board=- bets=rc", (0, 0, 2))]
        for key, infoset_class in foreign:
            lines.append(f"{key}\t" + " ".join(map(str, infoset_class)))
            assert compact.row_of(key, infoset_class) < 0
        if not export.explicit_entries:
            with pytest.raises(ClassNeeded, match="infoset_class"):
                compact.quantized(leduc.infoset_keys[0])
    answers, errors, code = _query(query_tool, export.path, lines, "--weights")
    assert answers == expected and code == 1 and len(errors) == len(foreign)
    answers, errors, code = _query(query_tool, exports[("coarsest", keys)].path,
                                   [leduc.infoset_keys[0], lines[0]], "--weights")
    assert code == 1 and len(answers) == 1 and "line 1" in errors[0] and "give its class" in errors[0]


def test_a_class_rule_file_plays_what_was_exported(leduc, refined):
    strategies, _, exports = refined
    with CompactStrategy(exports[("refined", False)].path) as compact:
        behavior = CompactPolicy(compact, "refined").behavior(leduc)
    assert np.array_equal(behavior, exports[("refined", False)].dequantized.probabilities)


def test_exact_rounding_is_never_worse_than_the_nearest_and_keeps_pure_actions(leduc,
                                                                                leduc_strategy):
    evaluator = BestResponse(leduc_strategy.infoset_map)
    offsets = leduc.infoset_action_offset
    for bits in (8, 4):
        rounding = round_for_exploitability(leduc_strategy, bits, evaluator=evaluator)
        total, weights = action_totals(offsets, bits), rounding.rows.weights
        assert rounding.nash_conv == pytest.approx(evaluator.evaluate(weights / total).nash_conv)
        assert rounding.nash_conv <= rounding.nash_conv_largest_remainder
        assert np.all(np.add.reduceat(weights, offsets[:-1]) == total[offsets[:-1]])
        assert np.all(np.abs(weights / total - leduc_strategy.probabilities) < 1 / total)
        assert np.array_equal(rounding.rows.row_bits, np.full(leduc.num_infosets, bits))
        pure = np.isin(leduc_strategy.probabilities, (0.0, 1.0))
        assert np.array_equal(weights[pure] / total[pure], leduc_strategy.probabilities[pure])


def test_exact_rounding_ends_where_no_single_unit_move_helps(leduc, leduc_strategy):
    """The descent stops at a local optimum: moving any one unit between two actions of a
    row (within a step of the exact probability) does not lower the best-response value
    of the row owner's opponent."""
    evaluator = BestResponse(leduc_strategy.infoset_map)
    rounding = round_for_exploitability(leduc_strategy, 8, evaluator=evaluator)
    assert rounding.moves > 0 and rounding.evaluations < 16384
    weights = rounding.rows.weights.astype(np.float64)
    offsets = leduc.infoset_action_offset
    total = action_totals(offsets, 8)
    scaled = leduc_strategy.probabilities * total
    floors = np.floor(scaled)
    open_actions = (scaled - floors > 1e-9) & (scaled - floors < 1 - 1e-9)
    for infoset in range(leduc.num_infosets):
        opponent = 1 - leduc.infoset_player[infoset]
        value, _ = evaluator.best_response(opponent, weights / total)
        actions = np.arange(offsets[infoset], offsets[infoset + 1])
        for source in actions[open_actions[actions] & (weights[actions] > floors[actions])]:
            for target in actions[open_actions[actions] & (weights[actions] == floors[actions])]:
                moved = weights.copy()
                moved[source] -= 1
                moved[target] += 1
                assert evaluator.best_response(opponent, moved / total)[0] >= value - 1e-13


def test_exact_rounding_of_a_converged_leduc_strategy_adds_little_nash_conv(leduc):
    """Issue 15's target: 8 bits per action add at most 1e-3 NashConv to a 1,000-iteration
    CFR+ strategy (NashConv 4.9e-4), 16 bits at most 1e-4 (docs/compact-format.md: largest
    remainder adds 3.2e-4 at 8 bits, the exact rounding lowers NashConv by 2e-5; on the
    2**bits - 1 grid of format 4 they added 7.9e-3 and 1.8e-3)."""
    strategy = CFRPlusSolver(leduc).iterate(1000).average_strategy()
    evaluator = BestResponse(strategy.infoset_map)
    before = evaluator.evaluate(strategy).nash_conv
    eight = round_for_exploitability(strategy, 8, evaluator=evaluator)
    sixteen = round_for_exploitability(strategy, 16, evaluator=evaluator)
    assert eight.nash_conv_largest_remainder - before < 1e-3
    assert eight.nash_conv - before < 1e-4
    assert sixteen.nash_conv - before < 1e-6


def test_tiers_spend_no_more_bits_and_give_the_most_reached_rows_the_most(leduc, leduc_strategy):
    """tier_bits: at most ``bits`` per action in all, wide rows reached at least as often as
    any normal one and narrow rows at most as often, the share chosen by exact NashConv
    (one tier among the candidates), and the exported file's rows in those tiers."""
    evaluator = BestResponse(leduc_strategy.infoset_map)
    offsets = leduc.infoset_action_offset
    actions = np.diff(offsets)
    reach = row_reach(evaluator, leduc_strategy.probabilities)
    for bits in (8, 4):
        row_bits = tier_bits(leduc_strategy, bits, evaluator)
        assert (row_bits * actions).sum() <= bits * actions.sum()
        wide, normal, narrow = (row_bits == 2 * bits, row_bits == bits, row_bits == bits // 2)
        assert wide.any() and narrow.any() and not np.any(wide & (actions == 1))
        mixed = actions > 1
        assert reach[wide].min() >= reach[normal & mixed].max() >= reach[narrow].max()

        def nash_conv(row_bits):
            weights = largest_remainder(leduc_strategy.probabilities, offsets,
                                        row_codes(offsets, row_bits)[1])
            return evaluator.evaluate(weights / action_totals(offsets, row_bits)).nash_conv
        assert nash_conv(row_bits) <= nash_conv(np.full(actions.shape[0], bits))
    assert np.all(tier_bits(leduc_strategy, 16, evaluator) == 16)


# ---------------------------------------------------------------------- card tables
CARD_CASES = [([3, 3], "imperfect"), ([2, 5], "imperfect"), ([1, 6], "imperfect"),
              ([6, 30], "imperfect"), ([2, 4], "perfect")]
CARD_VARIANTS = [(8, False, False), (4, True, False), (16, True, True), (8, False, False, "coded"),
                 (4, True, True, "coded")]


def _card_abstraction(tree, buckets):
    return cluster_cards(poker_rules(tree).card_structure, "hist", buckets, random_state=0)


@pytest.fixture(scope="module")
def card_exports(tmp_path_factory, leduc):
    """Per card case: the strategy, its card-table exports (CARD_VARIANTS) and the same
    strategy exported with a key per infoset."""
    folder = tmp_path_factory.mktemp("cards")
    result = {}
    for buckets, recall in CARD_CASES:
        abstraction = _card_abstraction(leduc, buckets)
        strategy = CFRPlusSolver(abstraction.infoset_map(leduc, recall)).iterate(30).average_strategy()
        name = f"{'-'.join(map(str, buckets))}-{recall}"
        exports = {variant: export_compact(strategy, folder / f"{name}-{variant}.efgs",
                                           bits=variant[0], prune_unreachable=variant[1],
                                           with_keys=variant[2], coded=len(variant) > 3,
                                           card_abstraction=abstraction, recall=recall)
                   for variant in CARD_VARIANTS}
        keyed = export_compact(strategy, folder / f"{name}-keyed.efgs",
                               key_map="explicit")
        result[(tuple(buckets), recall)] = strategy, exports, keyed
    return result


def test_combination_rank_counts_sets_in_lexicographic_order():
    from itertools import combinations

    for num_cards, size in [(6, 1), (6, 2), (9, 3), (26, 1), (12, 0)]:
        ranks = [combination_rank(list(cards), num_cards)
                 for cards in combinations(range(num_cards), size)]
        assert ranks == list(range(len(ranks)))


@pytest.mark.parametrize("case", CARD_CASES, ids=lambda case: f"{case}")
@pytest.mark.parametrize("variant", CARD_VARIANTS)
def test_both_readers_answer_every_leduc_infoset_through_the_bucket_tables(
        leduc, card_exports, query_tool, case, variant):
    """A card-table file reads every infoset's row through (betting history, bucket), and
    answers each infoset of Leduc (and foreign keys) as the file with a key per infoset."""
    _, exports, keyed = card_exports[(tuple(case[0]), case[1])]
    export = exports[variant]
    assert export.key_map == "cards" and export.classes == 0
    expected = _expected_rows(leduc, export)
    kept = reachable_infosets(leduc, export.dequantized.behavior()) if variant[1] else np.ones(
        leduc.num_infosets, bool)
    foreign = ["no such infoset", "P0 card=Js board=- bets=-x", "P0 card=Js board=Js bets=cc/",
               "P0 card=JsJh board=- bets=-", "P0 card=Zz board=- bets=-", "P1 card=Ks bets=c",
               "P0 card=Ks board=Qh bets=-", "P0 card=Ks board=Qh/ bets=cc/c/"]
    with CompactStrategy(export.path) as compact, CompactStrategy(keyed.path) as by_key:
        compact.verify()
        assert compact.card_table is not None and len(compact) == kept.sum()
        for infoset, key in enumerate(leduc.infoset_keys):
            if kept[infoset]:
                assert compact.probabilities(key) == expected[key]
                if variant[0] == 8:
                    assert compact.quantized(key) == by_key.quantized(key)
            elif variant[2]:  # with keys stored, a left-out infoset is never found
                assert key not in compact
        assert not any(key in compact for key in foreign[:5])
        if variant[2]:
            assert sorted(compact.keys()) == sorted(np.array(leduc.infoset_keys)[kept])
        lines = leduc.infoset_keys + foreign
        answers = [f"{key}\t" + " ".join(map(str, compact.quantized(key))) for key in lines
                   if key in compact]
        refused = sum(key not in compact for key in lines)
    found, errors, code = _query(query_tool, export.path, lines, "--weights")
    assert found == answers and len(errors) == refused and code == 1
    verified = subprocess.run([str(query_tool / "efgs_query"), "--verify", export.path],
                              capture_output=True, text=True)
    assert verified.stdout == "ok\n"


def test_a_card_table_stores_one_row_per_abstract_infoset_and_is_smaller(leduc, card_exports):
    """Without pruning, imperfect recall: one row per (betting history, bucket), i.e. per
    abstract infoset, and an index entry per betting history, not per infoset."""
    for (buckets, recall), (strategy, exports, keyed) in card_exports.items():
        export = exports[(8, False, False)]
        betting = {key.split("bets=")[1] for key in leduc.infoset_keys}
        assert export.explicit_entries == len(betting)
        if recall == "imperfect":
            assert export.rows == strategy.infoset_map.num_abstract
        assert 0 < export.card_table_bytes < 200
        assert export.bytes < keyed.bytes / 2, (buckets, recall)


def test_the_python_card_reader_needs_no_numpy(card_exports):
    path = card_exports[((3, 3), "imperfect")][1][(8, False, False)].path
    script = (
        "import importlib.util, sys; sys.modules['numpy'] = None\n"
        f"spec = importlib.util.spec_from_file_location('reader', {compact_reader.__file__!r})\n"
        "reader = importlib.util.module_from_spec(spec); spec.loader.exec_module(reader)\n"
        f"s = reader.CompactStrategy({path!r}); s.verify()\n"
        "print(len(s), s.quantized('P1 card=Kh board=Js bets=crrc/crr'))\n"
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                            check=True)
    assert result.stdout.startswith("936 (")


def test_a_card_table_needs_the_strategy_to_be_on_its_abstraction(tmp_path, leduc,
                                                                  leduc_strategy):
    abstraction = _card_abstraction(leduc, [3, 3])
    with pytest.raises(ParameterError, match="not on this card abstraction"):
        export_compact(leduc_strategy, tmp_path / "x.efgs",
                       card_abstraction=abstraction)
    with pytest.raises(ParameterError, match="needs the card abstraction"):
        export_compact(leduc_strategy, tmp_path / "x.efgs", key_map="cards")
    assert not (tmp_path / "x.efgs").exists()


def test_a_card_table_keeps_one_tier_and_auto_falls_back_to_keys(tmp_path, leduc):
    """Rows in tiers (as the exact rounding may give them) cannot go into a card table's
    blocks: ``cards`` refuses them, ``auto`` writes the keyed file, which reads every row
    in its own tier."""
    abstraction = _card_abstraction(leduc, [3, 3])
    strategy = CFRPlusSolver(abstraction.infoset_map(leduc)).iterate(30).average_strategy()
    infoset_map = strategy.infoset_map
    offsets = infoset_map.abstract_action_offset
    row_bits = np.full(infoset_map.num_abstract, 8)
    row_bits[0], row_bits[1:3] = 16, 4
    tiered = QuantizedRows(quantize(strategy.probabilities, offsets, row_bits), row_bits)
    with pytest.raises(CardTableUnavailable, match="one tier"):
        export_compact(strategy, tmp_path / "cards.efgs", quantized=tiered,
                       card_abstraction=abstraction, key_map="cards")
    export = export_compact(strategy, tmp_path / "auto.efgs", quantized=tiered,
                            card_abstraction=abstraction)
    assert export.key_map in ("class", "explicit") and export.tier_rows == (1, row_bits.size - 3, 2)
    with compact_reader.CompactStrategy(export.path) as compact:
        for infoset in range(leduc.num_infosets):
            row = infoset_map.abstract_of[infoset]
            assert compact.quantized(leduc.infoset_keys[infoset], class_of(leduc, infoset)) == tuple(
                tiered.weights[offsets[row]:offsets[row + 1]].tolist())


def test_a_game_whose_keys_show_ranks_only_keeps_its_keys_unless_cards_are_asked_for(tmp_path):
    tree = load_game("P111")
    abstraction = _card_abstraction(tree, [2, 3])
    strategy = CFRPlusSolver(abstraction.infoset_map(tree)).iterate(5).average_strategy()
    export = export_compact(strategy, tmp_path / "p.efgs",
                            card_abstraction=abstraction)
    assert export.key_map in ("class", "explicit")
    with pytest.raises(ParameterError, match="cannot read the cards"):
        export_compact(strategy, tmp_path / "q.efgs",
                       card_abstraction=abstraction, key_map="cards")


def _set_card_byte(position, value):
    def change(data):
        cards_at = HEADER.unpack_from(bytes(data), 0)[19]
        data[cards_at + position] = value
    return change


def test_a_cell_without_a_row_is_a_missing_cell_in_both_readers(tmp_path, leduc, card_exports,
                                                                 query_tool):
    """A valid key (cards, betting) whose cell is empty (all ones: never dealt, or pruned;
    made here by emptying one row of a copy) is a MissingCell in Python and "no row for its
    cards" from efgs_query, which reads on."""
    export = card_exports[((3, 3), "imperfect")][1][(8, False, False)]
    key = leduc.infoset_keys[0]
    with CompactStrategy(export.path) as compact:
        _, lo, hi, _ = compact._located(key, None)
        start = compact._values_at + compact._value_bit(lo) // 8
    path = _damaged(tmp_path, export.path, lambda data: data.__setitem__(
        slice(start, start + hi - lo), b"\xff" * (hi - lo)))
    with CompactStrategy(str(path)) as compact:
        missing = [key for key in leduc.infoset_keys if compact.row_of(key) < 0]
        with pytest.raises(MissingCell, match="no row for these cards after bets=") as raised:
            compact.probabilities(key)
    assert "\n" not in str(raised.value)
    kept = next(key for key in leduc.infoset_keys if key not in missing)
    answers, errors, code = _query(query_tool, path, [missing[0], kept])
    assert code == 1 and [answer.split("\t")[0] for answer in answers] == [kept]
    assert errors == [f"efgs_query: line 1: {missing[0]}: no row for its cards after this betting "
                      f"(a cell never dealt, or pruned)"]


@pytest.mark.parametrize("change", [_set_card_byte(1, 63), _set_card_byte(0, 0),
                                    _set_card_byte(3, 0), _set_card_byte(9, 30)])
def test_a_damaged_card_table_is_refused_by_both_readers(tmp_path, card_exports, query_tool,
                                                         change):
    source = card_exports[((3, 3), "imperfect")][1][(8, False, False)].path
    path = _damaged(tmp_path, source, change)
    with pytest.raises(CompactFormatError, match="card table is corrupted"):
        CompactStrategy(str(path))
    result = subprocess.run([str(query_tool / "efgs_query"), str(path)], input="",
                            capture_output=True, text=True)
    assert result.returncode == 2 and "not a compact" in result.stderr


def test_a_bucket_out_of_range_is_never_read(tmp_path, leduc, card_exports, query_tool):
    export = card_exports[((3, 3), "imperfect")][1][(8, False, False)]
    with CompactStrategy(export.path) as compact:
        first_table = compact.card_table._tables[0][1]
    path = _damaged(tmp_path, export.path, lambda d: d.__setitem__(first_table, 0xFF))
    key = "P0 card=Js board=- bets=-"  # hand 0, the table's first entry
    with CompactStrategy(str(path)) as compact:
        with pytest.raises(CompactFormatError, match="card table is corrupted"):
            compact.quantized(key)
    result = subprocess.run([str(query_tool / "efgs_query"), str(path)], input=key + "\n",
                            capture_output=True, text=True)
    assert result.returncode == 2 and "corrupted" in result.stderr


# ---------------------------------------------------------------------- command line
def test_export_json_reports_size_and_nash_conv_change(tmp_path, leduc_strategy):
    save_strategy(tmp_path / "s.h5", leduc_strategy, provenance={"algorithm": "cfr+"})
    result = CliRunner().invoke(main, ["export", str(tmp_path / "s.h5"), "--bits", "16", "--out",
                                       str(tmp_path / "s.efgs"), "--json"])
    assert result.exit_code == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["bytes"] == (tmp_path / "s.efgs").stat().st_size
    assert data["infosets"] == 936
    before = BestResponse(leduc_strategy.infoset_map).evaluate(leduc_strategy).nash_conv
    assert data["nash_conv_before"] == pytest.approx(before, rel=1e-12)
    assert abs(data["nash_conv_after"] - before) < 0.01 * before  # 16 bits: well under 1%


def test_export_stores_the_class_rule_unless_asked_for_explicit_keys(tmp_path, refined):
    strategies, _, _ = refined
    save_strategy(tmp_path / "c.h5", strategies["coarsest"], provenance={"algorithm": "cfr+"})
    reports = {}
    for key_map in ("auto", "explicit"):
        result = CliRunner().invoke(main, ["export", str(tmp_path / "c.h5"), "--key-map", key_map,
                                           "--out", str(tmp_path / f"{key_map}.efgs"), "--json"])
        assert result.exit_code == 0, result.stderr
        reports[key_map] = json.loads(result.stdout)
    assert (reports["auto"]["classes"], reports["auto"]["explicit_entries"]) == (14, 0)
    assert (reports["explicit"]["classes"], reports["explicit"]["explicit_entries"]) == (0, 936)
    assert reports["auto"]["bytes"] < reports["explicit"]["bytes"]
    assert reports["auto"]["nash_conv_after"] == reports["explicit"]["nash_conv_after"]


def test_export_refuses_efgs_options_for_other_formats(tmp_path, leduc_strategy):
    save_strategy(tmp_path / "s.h5", leduc_strategy, provenance={"algorithm": "cfr+"})
    result = CliRunner().invoke(main, ["export", str(tmp_path / "s.h5"), "--bits", "4", "--out",
                                       str(tmp_path / "s.json")])
    assert result.exit_code == 2 and "--bits applies to --format efgs" in result.stderr
    assert not (tmp_path / "s.json").exists()


def test_json_export_holds_every_probability_exactly(tmp_path, leduc, leduc_strategy):
    save_strategy(tmp_path / "s.h5", leduc_strategy, provenance={"algorithm": "cfr+"})
    result = CliRunner().invoke(main, ["export", str(tmp_path / "s.h5"), "--out",
                                       str(tmp_path / "s.json")])
    assert result.exit_code == 0, result.stderr
    table = json.loads((tmp_path / "s.json").read_text())
    assert table["game"] == "leduc" and table["tree_fingerprint"] == leduc.fingerprint
    for key in leduc.infoset_keys[::50]:
        assert table["infosets"][key] == leduc_strategy.probabilities_of(key)


def test_openspiel_export_loads_as_a_tabular_policy_with_the_same_nash_conv(tmp_path,
                                                                           leduc_strategy):
    pyspiel = pytest.importorskip("pyspiel")
    save_strategy(tmp_path / "s.h5", leduc_strategy, provenance={"algorithm": "cfr+"})
    result = CliRunner().invoke(main, ["export", str(tmp_path / "s.h5"), "--format", "openspiel",
                                       "--out", str(tmp_path / "policy.json"), "--json"])
    assert result.exit_code == 0, result.stderr
    table = json.loads((tmp_path / "policy.json").read_text())
    policy = pyspiel.TabularPolicy({state: [tuple(pair) for pair in actions]
                                    for state, actions in table.items()})
    ours = json.loads(result.stdout)["nash_conv_before"]
    assert pyspiel.nash_conv(pyspiel.load_game("leduc_poker"), policy) == pytest.approx(ours,
                                                                                        rel=1e-9)


def test_export_stores_the_card_abstraction_the_strategy_was_solved_on(tmp_path, leduc,
                                                                       monkeypatch):
    """efgkit solve --abstraction records the file (path, content digest); export stores
    its bucket tables, refuses a missing file or one with another digest in one line, and
    takes a moved file with --card-abstraction; the file plays."""
    monkeypatch.chdir(tmp_path)
    runner = CliRunner()
    for name, buckets in (("abs.h5", "3,3"), ("other.h5", "2,2")):
        assert runner.invoke(main, ["cards", "leduc", "-b", buckets, "--out", name]).exit_code == 0
    solved = runner.invoke(main, ["solve", "leduc", "-a", "cfr+", "-n", "50", "--abstraction",
                                  "abs.h5", "--out", "s.h5"])
    assert solved.exit_code == 0, solved.stderr
    _, provenance = load_strategy("s.h5", leduc)
    reference = provenance["parameters"]["card_abstraction"]
    assert reference["path"] == str(tmp_path / "abs.h5") and len(reference["sha256"]) == 64
    reports = {}
    for key_map in ("auto", "explicit"):
        result = runner.invoke(main, ["export", "s.h5", "--key-map", key_map, "--out",
                                      f"{key_map}.efgs", "--rounding", "nearest", "--json"])
        assert result.exit_code == 0, result.stderr
        reports[key_map] = json.loads(result.stdout)
    assert reports["auto"]["key_map"] == "cards" and reports["explicit"]["key_map"] == "explicit"
    assert reports["auto"]["bytes"] < reports["explicit"]["bytes"] / 2
    assert reports["auto"]["nash_conv_after"] == reports["explicit"]["nash_conv_after"]
    played = runner.invoke(main, ["play", "leduc", "auto.efgs", "--against",
                                  "explicit.efgs", "-n", "200", "--json"])
    assert played.exit_code == 0, played.stderr
    assert json.loads(played.stdout)["expected_payoff"] == pytest.approx(0.0, abs=1e-12)

    Path("abs.h5").rename("moved.h5")
    for extra, message in (([], "which is missing; pass the file"),
                           (["--card-abstraction", "other.h5"], "content digest differs"),
                           (["--card-abstraction", "nowhere.h5"], "which is missing")):
        result = runner.invoke(main, ["export", "s.h5", "--out", "x.efgs", *extra])
        assert result.exit_code == 2 and message in result.stderr
        assert len(result.stderr.strip().splitlines()) == 1 and not Path("x.efgs").exists()
    moved = runner.invoke(main, ["export", "s.h5", "--out", "moved.efgs", "--card-abstraction",
                                 "moved.h5", "--rounding", "nearest", "--json"])
    assert moved.exit_code == 0, moved.stderr
    assert Path("moved.efgs").read_bytes() == Path("auto.efgs").read_bytes()


def test_export_opens_the_recorded_card_abstraction_only_beside_the_strategy(tmp_path, monkeypatch):
    """The path a strategy records is its content: export looks for the file's name beside
    the strategy, never in the folder recorded; one elsewhere is named with --card-abstraction."""
    monkeypatch.chdir(tmp_path)
    runner = CliRunner()
    Path("run").mkdir()
    Path("elsewhere").mkdir()
    assert runner.invoke(main, ["cards", "leduc", "-b", "3,3", "--out", "elsewhere/abs.h5"]).exit_code == 0
    solved = runner.invoke(main, ["solve", "leduc", "-n", "20", "--abstraction", "elsewhere/abs.h5", "--out",
                                  "run/s.h5"])
    assert solved.exit_code == 0, solved.stderr
    refused = runner.invoke(main, ["export", "run/s.h5", "--out", "s.efgs"])
    assert refused.exit_code == 2 and "run/abs.h5, which is missing" in refused.stderr
    assert "--card-abstraction" in refused.stderr and not Path("s.efgs").exists()
    named = runner.invoke(main, ["export", "run/s.h5", "--out", "named.efgs", "--card-abstraction",
                                 "elsewhere/abs.h5"])
    assert named.exit_code == 0, named.stderr
    shutil.copy("elsewhere/abs.h5", "run/abs.h5")
    beside = runner.invoke(main, ["export", "run/s.h5", "--out", "beside.efgs"])
    assert beside.exit_code == 0, beside.stderr
    assert Path("beside.efgs").read_bytes() == Path("named.efgs").read_bytes()


def test_export_takes_a_card_abstraction_for_a_strategy_that_recorded_none(tmp_path, leduc):
    abstraction = _card_abstraction(leduc, [3, 3])
    infoset_map = save_card_abstraction(tmp_path / "abs.h5", abstraction, leduc)
    strategy = CFRPlusSolver(infoset_map).iterate(20).average_strategy()
    save_strategy(tmp_path / "s.h5", strategy, provenance={"algorithm": "cfr+"})
    runner = CliRunner()
    result = runner.invoke(main, ["export", str(tmp_path / "s.h5"), "--out",
                                  str(tmp_path / "s.efgs"), "--card-abstraction",
                                  str(tmp_path / "abs.h5"), "--json"])
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)["key_map"] == "cards"
    for extra, message in ((["--key-map", "explicit"], "--card-abstraction goes with"),
                           (["--format", "json"], "--card-abstraction applies to --format efgs")):
        refused = runner.invoke(main, ["export", str(tmp_path / "s.h5"), "--out",
                                       str(tmp_path / "t.efgs"), "--card-abstraction",
                                       str(tmp_path / "abs.h5"), *extra])
        assert refused.exit_code == 2 and message in refused.stderr
    full = CFRPlusSolver(leduc).iterate(5).average_strategy()
    save_strategy(tmp_path / "full.h5", full, provenance={"algorithm": "cfr+"})
    refused = runner.invoke(main, ["export", str(tmp_path / "full.h5"), "--out",
                                   str(tmp_path / "f.efgs"), "--card-abstraction",
                                   str(tmp_path / "abs.h5")])
    assert refused.exit_code == 2 and "not on this card abstraction" in refused.stderr
