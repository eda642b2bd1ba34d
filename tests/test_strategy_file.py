"""HDF5 strategy files: round trip, and a clear FileFormatError (file untouched) for bad files."""

import h5py
import numpy as np
import pytest

from efgkit.errors import FileFormatError, ParameterError
from efgkit.io.checked_hdf5 import manifest_digest
from efgkit.maps.infoset_map import InfosetMap
from efgkit.solvers import CFRPlusSolver
from efgkit.specs import game_of_strategy_file, load_game
from efgkit.storage.strategy_file import SCHEMA_VERSION, load_strategy, save_strategy

PROVENANCE = {
    "algorithm": "cfr+",
    "parameters": {"delay": 0, "alternating": True},
    "iterations": 20,
    "nash_conv_history": [(10, 0.25), (20, 0.125)],
}


@pytest.fixture(scope="module")
def kuhn():
    return load_game("kuhn")


@pytest.fixture(scope="module")
def kuhn_strategy(kuhn):
    return CFRPlusSolver(kuhn).iterate(20).average_strategy()


@pytest.fixture
def saved(tmp_path, kuhn_strategy):
    path = tmp_path / "kuhn.h5"
    save_strategy(path, kuhn_strategy, provenance=PROVENANCE)
    return path


def _load_fails_and_leaves_file(path, tree=None, match=None):
    before = path.read_bytes()
    with pytest.raises(FileFormatError, match=match) as info:
        load_strategy(path, tree)
    assert "\n" not in str(info.value)
    assert path.read_bytes() == before


def test_round_trip_keeps_strategy_map_and_provenance(saved, kuhn, kuhn_strategy):
    strategy, provenance = load_strategy(saved, kuhn)
    np.testing.assert_array_equal(strategy.probabilities, kuhn_strategy.probabilities)
    np.testing.assert_array_equal(strategy.infoset_map.abstract_of,
                                  kuhn_strategy.infoset_map.abstract_of)
    assert {k: provenance[k] for k in PROVENANCE} == PROVENANCE
    assert provenance["efgkit_version"]


def test_game_of_strategy_file_builds_the_stored_game(saved, kuhn):
    tree = game_of_strategy_file(saved)
    assert (tree.spec, tree.fingerprint) == ("kuhn", kuhn.fingerprint)
    assert load_strategy(saved, tree)[0].tree is tree


def test_game_read_from_a_file_is_never_built_on_the_files_say_so(tmp_path, kuhn_strategy):
    path = tmp_path / "forged.h5"
    save_strategy(path, kuhn_strategy, provenance={"algorithm": "lp"})
    with h5py.File(path, "r+") as handle:
        handle.attrs["game_spec"] = "acpc:/etc/shadow"
        handle.attrs["content_sha256"] = manifest_digest(handle)
    with pytest.raises(FileFormatError, match="name it yourself as GAME"):
        game_of_strategy_file(path)


def test_round_trip_of_an_abstract_strategy(tmp_path, kuhn):
    coarse = InfosetMap.coarsest(kuhn)
    original = CFRPlusSolver(coarse).iterate(5).average_strategy()
    path = tmp_path / "coarse.h5"
    save_strategy(path, original, provenance={"algorithm": "cfr+"})
    strategy, provenance = load_strategy(path, kuhn)
    assert strategy.infoset_map.num_abstract == coarse.num_abstract
    np.testing.assert_array_equal(strategy.probabilities, original.probabilities)
    assert provenance["iterations"] == 0 and provenance["nash_conv_history"] == []


def test_file_schema_matches_the_documentation(saved, kuhn):
    with h5py.File(saved, "r") as handle:
        assert handle.attrs["format"] == "efgkit-strategy"
        assert handle.attrs["schema_version"] == SCHEMA_VERSION
        assert handle.attrs["game_spec"] == "kuhn"
        assert handle.attrs["tree_fingerprint"] == kuhn.fingerprint
        assert handle["abstraction/abstract_of"].dtype == np.int32
        assert handle["strategy/probabilities"].dtype == np.float64
        assert handle["provenance/nash_conv"]["iteration"].tolist() == [10, 20]
        assert handle["provenance"].attrs["algorithm"] == "cfr+"


def test_truncated_file_is_refused(saved):
    saved.write_bytes(saved.read_bytes()[: saved.stat().st_size // 2])
    _load_fails_and_leaves_file(saved)


def test_garbage_file_is_refused(tmp_path):
    path = tmp_path / "garbage.h5"
    path.write_bytes(np.random.default_rng(0).bytes(4096))
    _load_fails_and_leaves_file(path)


def test_missing_file_is_refused(tmp_path, kuhn):
    with pytest.raises(FileFormatError):
        load_strategy(tmp_path / "absent.h5", kuhn)


def test_damaged_probabilities_are_refused(saved):
    with h5py.File(saved, "r+") as handle:
        handle["strategy/probabilities"][0] = 7.0
    _load_fails_and_leaves_file(saved, match="corrupted")


def test_other_hdf5_file_is_refused(tmp_path):
    path = tmp_path / "other.h5"
    with h5py.File(path, "w") as handle:
        handle["x"] = np.arange(3)
    _load_fails_and_leaves_file(path, match="not an efgkit strategy file")


def test_wrong_game_is_refused(saved):
    _load_fails_and_leaves_file(saved, load_game("kuhn(cards=4)"), match="for game 'kuhn'")


def test_future_version_is_refused(saved):
    with h5py.File(saved, "r+") as handle:
        handle.attrs["schema_version"] = SCHEMA_VERSION + 1
    _load_fails_and_leaves_file(saved, match="newer")


def test_failed_save_leaves_existing_file_untouched(saved, kuhn_strategy):
    before = saved.read_bytes()
    with pytest.raises(ParameterError):
        save_strategy(saved, kuhn_strategy, provenance={"algorithm": "cfr+", "parameters": {1j}})
    with pytest.raises(FileFormatError):
        save_strategy(saved.parent / "missing-dir" / "x.h5", kuhn_strategy,
                      provenance={"algorithm": "cfr+"})
    assert saved.read_bytes() == before
    assert sorted(p.name for p in saved.parent.iterdir()) == ["kuhn.h5"]


def test_save_replaces_an_existing_file(saved, kuhn_strategy, kuhn):
    save_strategy(saved, kuhn_strategy, provenance={"algorithm": "lp"})
    assert load_strategy(saved, kuhn)[1]["algorithm"] == "lp"


def _write_schema_1(path, strategy, provenance):
    """A file exactly as schema 1 wrote it: one content checksum over metadata and data."""
    import hashlib
    import json

    from efgkit.storage.strategy_file import HISTORY_DTYPE

    tree = strategy.tree
    parameters = json.dumps(provenance["parameters"], sort_keys=True)
    history = np.array(provenance["nash_conv_history"], dtype=HISTORY_DTYPE)
    abstract_of = strategy.infoset_map.abstract_of.astype("<i4")
    digest = hashlib.sha256()
    for text in (tree.spec, tree.fingerprint, provenance["algorithm"], parameters,
                 str(provenance["iterations"])):
        digest.update(text.encode() + b"\x1f")
    for array in (abstract_of, strategy.probabilities, history):
        digest.update(array.tobytes())
    with h5py.File(path, "w", libver=("v108", "v108")) as handle:
        handle.attrs.update(format="efgkit-strategy", schema_version=1, efgkit_version="0.1.0",
                            game_spec=tree.spec, tree_fingerprint=tree.fingerprint,
                            content_sha256=digest.hexdigest())
        handle.create_group("abstraction").create_dataset("abstract_of", data=abstract_of)
        handle.create_group("strategy").create_dataset("probabilities", data=strategy.probabilities)
        record = handle.create_group("provenance")
        record.attrs.update(algorithm=provenance["algorithm"], parameters=parameters,
                            iterations=provenance["iterations"])
        record.create_dataset("nash_conv", data=history)


def test_schema_1_files_are_still_read(tmp_path, kuhn, kuhn_strategy):
    path = tmp_path / "v1.h5"
    _write_schema_1(path, kuhn_strategy, PROVENANCE)
    strategy, provenance = load_strategy(path, kuhn)
    np.testing.assert_array_equal(strategy.probabilities, kuhn_strategy.probabilities)
    assert {k: provenance[k] for k in PROVENANCE} == PROVENANCE
    with h5py.File(path, "r+") as handle:
        handle["strategy/probabilities"][0] = 0.0
    _load_fails_and_leaves_file(path, kuhn, match="corrupted")


def test_a_schema_1_file_declaring_a_huge_dataset_is_refused_before_reading(tmp_path, kuhn, kuhn_strategy,
                                                                           runner):
    """Schema 1 files get the declared-size check of schema 2: a tiny file may not make the
    reader allocate what it declares (here 80 MB; a forged file declared 3.2 GB)."""
    from efgkit.cli import main

    path = tmp_path / "v1.h5"
    _write_schema_1(path, kuhn_strategy, PROVENANCE)
    with h5py.File(path, "r+") as handle:
        del handle["strategy/probabilities"]
        handle.create_dataset("strategy/probabilities", shape=(10_000_000,), dtype="<f8")
    assert path.stat().st_size < 100_000
    _load_fails_and_leaves_file(path, kuhn, match="declares 80,000,000 bytes but the file stores 0")
    for command in (["evaluate", "kuhn", str(path)], ["export", str(path), "-o", str(tmp_path / "s.efgs")]):
        result = runner.invoke(main, command)
        assert result.exit_code == 2 and "declares 80,000,000 bytes" in result.stderr
        assert len(result.stderr.splitlines()) == 1


@pytest.mark.parametrize("group, name, value, words", [
    ("provenance", "parameters", "null", "/provenance@parameters is None, expected a JSON object"),
    ("provenance", "parameters", "[1, 2]", "/provenance@parameters is [1, 2], expected a JSON object"),
    ("provenance", "iterations", "many", "/provenance@iterations is 'many', expected an integer"),
    ("provenance", "algorithm", 7, "/provenance@algorithm is 7, expected a text"),
    ("/", "game_spec", np.array([1, 2]), "/@game_spec is array([1, 2]), expected a text"),
    ("/", "format", np.array([1, 2]), "not an efgkit strategy file"),
])
def test_edited_metadata_of_a_strategy_file_is_one_line(saved, runner, tmp_path, group, name, value, words):
    """Metadata is checked by type as it is read: a re-sealed file whose attributes have the
    wrong type is one line and exit code 2 for evaluate and export, never a traceback."""
    from efgkit.cli import main

    with h5py.File(saved, "r+") as handle:
        handle[group].attrs[name] = value
        handle.attrs["content_sha256"] = manifest_digest(handle)
    for command in (["evaluate", "kuhn", str(saved)], ["export", str(saved), "-o", str(tmp_path / "s.efgs")]):
        result = runner.invoke(main, command)
        assert result.exit_code == 2, result.exception
        assert len(result.stderr.splitlines()) == 1 and words in result.stderr, result.stderr


def test_every_dataset_carries_its_checksum_and_any_change_is_caught(saved, kuhn):
    with h5py.File(saved, "r") as handle:
        names = []
        handle.visititems(lambda name, item: names.append(name)
                          if isinstance(item, h5py.Dataset) else None)
        assert names and all(len(handle[name].attrs["sha256"]) == 64 for name in names)
    with h5py.File(saved, "r+") as handle:
        handle["provenance"].attrs["iterations"] = 21
    _load_fails_and_leaves_file(saved, kuhn, match="metadata checksum")


def test_datasets_are_contiguous_so_they_can_be_memory_mapped(saved):
    with h5py.File(saved, "r") as handle:
        dataset = handle["strategy/probabilities"]
        assert dataset.chunks is None and dataset.compression is None
        assert dataset.id.get_offset() is not None
