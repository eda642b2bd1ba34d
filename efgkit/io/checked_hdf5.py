"""Self-checking HDF5 files: the one integrity scheme of every efgkit HDF5 file.

A file names its ``format`` and
``schema_version``; every dataset carries the sha256 of its bytes (checked when it is
read); the root ``content_sha256`` covers every attribute and every dataset's type,
shape and digest, so a reader checks the metadata without reading the data. Problems
are one-line FileFormatErrors. Writers write through ``checked_output`` (atomically).
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import h5py
import numpy as np

import efgkit
from efgkit.errors import FileFormatError
from efgkit.io.atomic import atomic_output_path
from efgkit.io.error_text import one_line
from efgkit.io.input_files import check_input_file
from efgkit.io.mapped_arrays import create_contiguous, create_file, slices
from efgkit.io.metadata import Expected, checked, plain

COMPRESSED_CHUNK_BYTES = 1 << 20
MAX_COMPRESSION = {"lzf": 100, "gzip": 1100}
"""Bounds on what a filter can shrink data to (declared bytes per stored byte)."""


def _attribute_text(value: object) -> str:
    if isinstance(value, bytes):
        value = value.decode()
    if isinstance(value, np.ndarray):
        value = value.tolist()
    if isinstance(value, np.generic):
        value = value.item()
    return json.dumps(value, sort_keys=True)


def links_problem(handle: h5py.File) -> str | None:
    """Why ``handle`` may not be read: a soft or external link (an untrusted file must not
    make efgkit open another file or alias its own datasets), or None."""
    found: list[str] = []

    def check(name: str) -> None:
        if not found and not isinstance(handle.get(name, getlink=True), h5py.HardLink):
            found.append(name)

    handle.visit_links(check)
    return f"holds a soft or external link at /{found[0]}; efgkit files have none" if found else None


def storage_problem(dataset: h5py.Dataset) -> str | None:
    """Why reading ``dataset`` could allocate memory its file does not hold, or None.

    An uncompressed dataset must store every byte it declares, a compressed one at least
    what its filter's best ratio allows (LZF, the one efgkit writes, cannot shrink data more
    than about 90 times; gzip about 1,000): HDF5 lets a tiny file declare a huge dataset that
    reads as fill values, which would allocate gigabytes for nothing.
    """
    stored = dataset.id.get_storage_size()
    ratio = 1 if dataset.compression is None else MAX_COMPRESSION.get(dataset.compression, 1100)
    if stored * ratio < dataset.nbytes:
        return (f"/{dataset.name.lstrip('/')} declares {dataset.nbytes:,} bytes but the file stores "
                f"{stored:,}{f' (compressed {dataset.compression})' if ratio > 1 else ''}")
    return None


def declared_size_problem(handle: h5py.File) -> str | None:
    """``storage_problem`` of the first dataset anywhere in ``handle`` that has one, or None.

    ``open_checked`` asks it before a reader sees the file, so no reader of any format or
    schema version reads a dataset whose declared size the file does not hold.
    """
    found: list[str] = []

    def check(_: str, item: h5py.Group | h5py.Dataset) -> bool | None:
        problem = storage_problem(item) if isinstance(item, h5py.Dataset) else None
        if problem is not None:
            found.append(problem)
            return True  # stops the visit
        return None

    handle.visititems(check)
    return found[0] if found else None


def attribute(item: h5py.File | h5py.Group | h5py.Dataset, name: str, expected: Expected, *,
              json_text: bool = False) -> object:
    """Attribute ``name`` of ``item`` after checking its type (``metadata.checked``); with
    ``json_text`` the attribute is a JSON text and its value is checked. A missing attribute
    or one of another type is a FileFormatError naming the file and ``/PATH@NAME``."""
    where = f"{item.file.filename}: /{item.name.strip('/')}@{name}"
    if name not in item.attrs:
        raise FileFormatError(f"{where} is missing")
    value = item.attrs[name]
    if json_text:
        try:
            value = json.loads(checked(value, str, where))
        except ValueError as exc:  # from json (a FileFormatError is no ValueError)
            raise FileFormatError(f"{where} is not JSON text ({one_line(exc)})") from exc
    return checked(value, expected, where)


def _format_of(handle: h5py.File) -> str | None:
    value = plain(handle.attrs.get("format"))
    return value if isinstance(value, str) else None


def hdf5_format(path: str | os.PathLike) -> str | None:
    """The ``format`` a regular HDF5 file names at its root, or None (anything else, or no text
    there): a cheap look to tell formats apart; the file's own reader reports any damage."""
    if not Path(path).is_file():  # h5py would block on a FIFO
        return None
    try:
        with h5py.File(path, "r") as handle:
            return _format_of(handle)
    except (OSError, KeyError, ValueError, TypeError, RuntimeError):
        return None


def manifest_digest(handle: h5py.File) -> str:
    """sha256 over every attribute and every dataset's type, shape and sha256 attribute.

    With the per-dataset digests this covers every byte a reader uses, while checking it
    reads only metadata (a reader hashes a dataset's data when it reads that dataset).
    """
    lines = []

    def describe(name: str, item: h5py.Group | h5py.Dataset) -> None:
        for key in item.attrs:
            if not (name == "" and key == "content_sha256"):
                lines.append(f"/{name}@{key}={_attribute_text(item.attrs[key])}")
        if isinstance(item, h5py.Dataset):
            lines.append(f"/{name}:{item.dtype.descr}:{item.shape}")

    describe("", handle)
    handle.visititems(describe)
    return hashlib.sha256("\n".join(sorted(lines)).encode()).hexdigest()


def _digest_of(dataset_or_array) -> str:
    digest = hashlib.sha256()
    rows = dataset_or_array.shape[0]
    row_items = int(np.prod(dataset_or_array.shape[1:], dtype=np.int64))
    row_bytes = max(1, row_items * dataset_or_array.dtype.itemsize)
    for part in slices(rows, row_bytes):
        digest.update(memoryview(np.ascontiguousarray(dataset_or_array[part])).cast("B"))
    return digest.hexdigest()


def write_dataset(group: h5py.Group, name: str, array: np.ndarray, *, compressed: bool) -> h5py.Dataset:
    """Store ``array`` with its sha256: chunked and compressed (LZF after byte shuffling), or
    contiguous so that it can be memory-mapped."""
    array = np.asarray(array)
    if compressed and array.size:
        row_bytes = max(1, array.dtype.itemsize * int(np.prod(array.shape[1:], dtype=np.int64)))
        chunk_rows = int(min(array.shape[0], max(1, COMPRESSED_CHUNK_BYTES // row_bytes)))
        dataset = group.create_dataset(name, data=array, chunks=(chunk_rows, *array.shape[1:]),
                                       compression="lzf", shuffle=True)
    elif array.ndim == 1 and array.size:
        dataset = create_contiguous(group, name, array.shape, array.dtype)
        for part in slices(array.shape[0], array.dtype.itemsize):
            dataset[part] = array[part]
    else:
        dataset = group.create_dataset(name, data=array)
    dataset.attrs["sha256"] = _digest_of(array)
    return dataset


def read_dataset(group: h5py.Group, name: str) -> np.ndarray:
    """The dataset's data after checking it against its sha256 (of a file ``open_checked``
    opened, which checked its declared size)."""
    if name not in group:
        raise FileFormatError(f"{group.file.filename}: {group.name}/{name} is missing")
    dataset = group[name]
    data = np.asarray(dataset[()])
    if _digest_of(data) != str(dataset.attrs.get("sha256")):
        raise FileFormatError(f"{group.file.filename}: file is corrupted (checksum of {dataset.name})")
    return data


def verify_dataset(dataset: h5py.Dataset, data: np.ndarray | None = None) -> None:
    """Check a dataset against its sha256: ``data`` if already read, else reading it in slices."""
    if _digest_of(dataset if data is None else data) != str(dataset.attrs.get("sha256")):
        raise FileFormatError(f"{dataset.file.filename}: file is corrupted (checksum of {dataset.name})")


def stamp(handle: h5py.File, file_format: str, schema_version: int) -> None:
    """Name the format and version; call ``seal`` once everything is written."""
    handle.attrs["format"] = file_format
    handle.attrs["schema_version"] = schema_version
    handle.attrs["efgkit_version"] = efgkit.__version__


def seal(handle: h5py.File) -> None:
    handle.attrs["content_sha256"] = manifest_digest(handle)


@contextmanager
def checked_output(path: str | os.PathLike, file_format: str, schema_version: int, what: str,
                   expected_bytes: int = 0) -> Iterator[h5py.File]:
    """A new file for ``path``, ``stamp``ed, to fill in the block; then ``seal``ed and put in
    place atomically (``atomic_output_path``: a failure leaves an existing file untouched).
    An OSError is a one-line FileFormatError that cannot write ``what``."""
    try:
        with atomic_output_path(path, expected_bytes) as temporary, create_file(temporary) as handle:
            stamp(handle, file_format, schema_version)
            yield handle
            seal(handle)
    except OSError as exc:
        raise FileFormatError(f"{path}: cannot write {what} ({one_line(exc)})") from exc


@contextmanager
def open_checked(path: str | os.PathLike, file_format: str, schema_version: int,
                 what: str, *, manifest_since: int = 1) -> Iterator[h5py.File]:
    """Open ``path`` read-only after checking its format, version and manifest; ``what`` names
    the kind of file in messages. Versions before ``manifest_since`` carry no manifest (the
    caller checks them its own way). Every dataset's declared size is checked against what
    the file stores (``declared_size_problem``), whatever the version. Errors while reading
    inside the block become one-line FileFormatErrors too."""
    check_input_file(path, what)
    try:
        with h5py.File(path, "r") as handle:
            if _format_of(handle) != file_format:
                raise FileFormatError(f"{path}: not an efgkit {what}")
            problem = links_problem(handle)
            if problem is not None:
                raise FileFormatError(f"{path}: {what} {problem}")
            problem = declared_size_problem(handle)
            if problem is not None:
                raise FileFormatError(f"{path}: {problem}")
            version = handle.attrs.get("schema_version")
            if not isinstance(version, int | np.integer) or version < 1:
                raise FileFormatError(f"{path}: invalid schema version {version!r}")
            if version > schema_version:
                raise FileFormatError(f"{path}: {what} schema version {int(version)} is newer than "
                                      f"this efgkit ({efgkit.__version__}) reads ({schema_version}); "
                                      f"upgrade efgkit")
            if version >= manifest_since and str(handle.attrs.get("content_sha256")) != manifest_digest(
                    handle):
                raise FileFormatError(f"{path}: {what} is corrupted (metadata checksum mismatch)")
            yield handle
    except FileFormatError:
        raise
    except (OSError, KeyError, ValueError, TypeError, AttributeError, RuntimeError) as exc:
        raise FileFormatError(f"{path}: cannot read {what} ({one_line(exc)})") from exc
