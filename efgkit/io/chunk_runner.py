"""Where chunked work runs (the hold'em pipeline's features and k-means, the streamed best
response's flops): in this process, or on a dask.distributed cluster.

``ChunkRunner(scheduler=None, workers=0)`` runs every chunk here, one after another;
``workers=N`` starts a LocalCluster of N single-threaded worker processes on this machine;
``scheduler="tcp://host:8786"`` connects to a running cluster (``dask scheduler`` plus
``dask worker`` processes that can import efgkit). Chunk functions are pure top-level
functions of plain arrays, and results always come back in chunk order, so the
pipeline's output is the same bit for bit wherever the chunks ran. Calls that must run at
the same time, each on a worker of its own, start with ``start_apart``.

Clustering maps the same point chunks again at every Lloyd iteration; a read-only array
argument of a megabyte or more (a slice of a non-writeable array, whose content cannot
change) is sent to the cluster once and reused while its array lives, so an iteration ships
the centres and per-point state only, not the points (about 3 s per GB saved here).
"""

from __future__ import annotations

import logging
import threading
import weakref
from collections import deque
from collections.abc import Callable, Iterator, Sequence

import numpy as np

from efgkit.errors import ParameterError
from efgkit.io.error_text import one_line
from efgkit.io.mapped_arrays import Closing

LOCAL_WORKER_TTL = None
"""How long a LocalCluster's scheduler waits for a worker's heartbeat before it restarts the
worker: never. The scheduler runs in a thread of this process, and a numba kernel holds the
GIL: a driver kernel of more than Dask's default 5 minutes (1,024 sampled CFR+ iterations on
HULHE) starved it, and it restarted both idle workers, losing their scattered data and the
batched solver's walkers. A worker process that dies is still seen by its nanny."""
CONNECT_TIMEOUT = "20s"
CONNECT_DEADLINE = 30.0
"""Seconds a --scheduler has to accept the connection and answer."""
SCATTER_MIN_BYTES = 1 << 20


def scheduler_address(text: str) -> str:
    """``text`` as a Dask scheduler address ``tcp://host:port`` (``host:port`` taken as tcp);
    ParameterError otherwise. Other schemes need a security or transport configuration that
    efgkit does not take (``tls://`` wants certificates)."""
    scheme, _, rest = text.rpartition("://")
    host, _, port = rest.rpartition(":")
    if scheme not in ("", "tcp") or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise ParameterError(f"--scheduler {text!r}: expected a Dask scheduler address tcp://HOST:PORT "
                             f"(a port 1-65535; tcp only)")
    return f"tcp://{host}:{port}"


def _connect(address: str):
    """A dask Client of the scheduler at ``address``, or ParameterError within CONNECT_DEADLINE
    seconds: the Client's own timeout does not cover a server that accepts the connection and
    never answers, so the Client is made in a daemon thread that is abandoned at the deadline."""
    from distributed import Client

    made: dict = {}

    def connect() -> None:
        try:
            made["client"] = Client(address, timeout=CONNECT_TIMEOUT)
        except BaseException as exc:  # reported below; a stray server can make it any exception
            made["error"] = exc

    thread = threading.Thread(target=connect, name="efgkit scheduler connection", daemon=True)
    thread.start()
    thread.join(CONNECT_DEADLINE)
    if thread.is_alive():
        raise ParameterError(f"--scheduler {address}: no answer from a Dask scheduler within "
                             f"{CONNECT_DEADLINE:.0f} s (is it a Dask scheduler, and running?)")
    if "error" in made:
        raise ParameterError(f"--scheduler {address}: cannot connect to a Dask scheduler there: "
                             f"{one_line(made['error'])}") from made["error"]
    return made["client"]


def _read_only_owner(array: np.ndarray) -> np.ndarray | None:
    """The array owning ``array``'s memory if no array on the way can write it, else None."""
    while True:
        if array.flags.writeable:
            return None
        if not isinstance(array.base, np.ndarray):
            return array
        array = array.base


class ChunkRunner(Closing):
    """Runs chunk functions locally or on Dask (see the module docstring); a context manager
    that shuts down the cluster it started."""

    def __init__(self, scheduler: str | None = None, workers: int = 0) -> None:
        if workers < 0:
            raise ParameterError(f"--workers must be 0 (no Dask, this process) or more, got {workers}")
        self.scheduler, self.workers = scheduler, workers
        self._client = self._cluster = None
        self._scattered: dict[tuple, tuple[weakref.ref, object]] = {}
        if scheduler is None and workers == 0:
            return
        from distributed import Client, LocalCluster

        if scheduler is not None:
            self.scheduler = scheduler_address(scheduler)
            self._client = _connect(self.scheduler)
            return
        import dask

        try:
            with dask.config.set({"distributed.scheduler.worker-ttl": LOCAL_WORKER_TTL}):
                self._cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                                             dashboard_address=":0", silence_logs=logging.ERROR)
            self._client = Client(self._cluster)
        except (OSError, TimeoutError, ValueError) as exc:
            self.close()
            raise ParameterError(f"cannot start Dask on a LocalCluster of {workers} workers: "
                                 f"{one_line(exc)}") from exc

    @property
    def description(self) -> str:
        if self._client is None:
            return "this process"
        if self.scheduler is not None:
            return f"Dask cluster {self.scheduler} ({len(self._client.scheduler_info()['workers'])} workers)"
        return f"Dask LocalCluster ({self.workers} worker processes)"

    @property
    def distributed(self) -> bool:
        """Whether chunks run on Dask workers (else in this process)."""
        return self._client is not None

    @property
    def parallelism(self) -> int:
        """How many chunks run at once."""
        if self._client is None:
            return 1
        return max(1, sum(w.get("nthreads", 1) for w in self._client.scheduler_info()["workers"].values()))

    def share(self, value):
        """``value`` as an argument for many chunks: sent to every worker once on Dask (under a
        key of its own: a value shared again while an earlier copy is being released stays)."""
        if self._client is None:
            return value
        return self._client.scatter(value, broadcast=True, hash=False)

    def _argument(self, value, used: set):
        """A read-only array of SCATTER_MIN_BYTES or more as a future of its copy on the cluster
        (scattered on first use), anything else as itself."""
        if not isinstance(value, np.ndarray) or value.nbytes < SCATTER_MIN_BYTES:
            return value
        owner = _read_only_owner(value)
        if owner is None:
            return value
        key = (id(owner), value.__array_interface__["data"][0], value.shape, value.strides, value.dtype.str)
        entry = self._scattered.get(key)
        if entry is None or entry[0]() is not owner:
            entry = (weakref.ref(owner), self._client.scatter(value, hash=False))
            self._scattered[key] = entry
        used.add(key)
        return entry[1]

    def imap(self, function: Callable, arguments: Sequence[tuple]) -> Iterator:
        """``function(*a)`` for every ``a`` in ``arguments``, yielded in order; on Dask a few
        chunks per worker are in flight at a time, so results never pile up in memory."""
        if self._client is None:
            for chunk in arguments:
                yield function(*chunk)
            return
        in_flight: deque = deque()
        window = 3 * self.parallelism
        used: set = set()
        for chunk in arguments:
            shipped = [self._argument(value, used) for value in chunk]
            in_flight.append(self._client.submit(function, *shipped, pure=False))
            if len(in_flight) >= window:
                yield in_flight.popleft().result()
        while in_flight:
            yield in_flight.popleft().result()
        self._scattered = {key: entry for key, entry in self._scattered.items() if key in used}

    @property
    def worker_count(self) -> int:
        """How many Dask workers the cluster has now (0 when the chunks run in this process)."""
        if self._client is None:
            return 0
        return len(self._client.scheduler_info()["workers"])

    def start_apart(self, function: Callable, arguments: Sequence[tuple]) -> list:
        """``function(*a)`` for every ``a`` in ``arguments``, all started at once, each on a Dask
        worker of its own (calls that wait on each other: two on one single-threaded worker
        would wait forever): their Dask futures, in order. ParameterError if the cluster has
        fewer workers than calls."""
        workers = sorted(self._client.scheduler_info()["workers"]) if self._client is not None else []
        if len(workers) < len(arguments):
            raise ParameterError(f"{len(arguments)} calls that wait on each other need as many Dask workers; "
                                 f"{self.description} has {len(workers)}")
        return [self._client.submit(function, *chunk, workers=[worker], allow_other_workers=False, pure=False)
                for worker, chunk in zip(workers, arguments, strict=False)]

    def on_workers(self, function: Callable) -> list:
        """``function()`` run once on every Dask worker (e.g. to read their CPU time or peak
        memory); empty when the chunks run in this process."""
        if self._client is None:
            return []
        return list(self._client.run(function).values())

    def map_chunks(self, function: Callable, arguments: Sequence[tuple]) -> list:
        """The ``map_chunks`` of efgkit's clustering estimators: every chunk, results in order."""
        return list(self.imap(function, arguments))

    def close(self) -> None:
        self._scattered = {}
        if self._client is not None:
            self._client.close()
        if self._cluster is not None:
            self._cluster.close()
        self._client = self._cluster = None
