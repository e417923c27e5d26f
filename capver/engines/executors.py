"""Executors for capver's embarrassingly parallel work (scaling out, and
``capver learn --concurrency`` for agents that wait on an endpoint, such as LLM agents).

Three kinds of work are independent item by item: the benchmark's grid of runs
(settings × methods × seeds), the sequences of the evaluation dataset D′, and the n
executions of one query.  An :class:`Executor` maps a module-level function over a
list of items and returns the results in the order of the items, whatever order
they complete in, so that what a caller records never depends on the executor:

* ``local`` – in this process (1 worker), or a pool of spawned processes (BDD and z3
  state must not be shared with forks);
* ``threads`` – a thread pool, for agents whose time goes into waiting on an
  endpoint (the LLM agent): the GIL is released while a request is in flight;
* ``ray`` – Ray actors on this machine or a cluster (``address``); Ray is imported
  only when this executor is made, so capver runs without it.

The state a function needs that is expensive to build or must not be shared (an
agent and its simulator) is made by a *setup*: a picklable, hashable callable,
e.g. a :class:`capver.settings.SettingSpec`, that each worker (process, thread or
actor) calls once and keeps; items then carry only what differs between them.
Nothing live – no simulator, no BDD – crosses a process boundary.

:data:`EXECUTORS` is the registry the command line takes its ``--executor``
choices from.
"""

from __future__ import annotations

import importlib.util
import logging
import multiprocessing
import socket
import threading
from collections.abc import Callable, Hashable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from typing import Any, Protocol, TypeVar

from capver.errors import CapverError

T = TypeVar("T")
R = TypeVar("R")

Setup = Callable[[], Any]
"""Builds a worker's context; must be picklable and hashable (it keys the cache)."""

Task = Callable[[Any, T], R]
"""A module-level function of (the worker's context, one item)."""

OnResult = Callable[[int, Any], None]
"""Told (index, result) as each result arrives, in completion order (progress lines)."""


class ExecutorError(CapverError):
    """An executor that cannot be made (unknown name, ray missing, bad worker count)."""


class Executor(Protocol):
    name: str
    workers: int

    @property
    def in_process(self) -> bool:
        """True when :meth:`map` runs the items one after another in the calling thread."""
        ...

    def map(
        self, fn: Task[T, R], items: Sequence[T], setup: Setup | None = None, on_result: OnResult | None = None
    ) -> list[R]:
        """``[fn(context, item) for item in items]``, computed by the workers; the list
        is in the order of ``items``."""
        ...

    def start(self) -> None:
        """Bring the workers up now, in the calling thread; call it before mapping
        from a helper thread (Ray must be initialised from the main thread: a
        driver initialised in a helper thread exits with it)."""
        ...

    def close(self) -> None: ...


def _context(cache: dict[Hashable, Any], setup: Setup | None) -> Any:
    """The worker's context for ``setup``, built on first use and kept."""
    if setup is None:
        return None
    key: Hashable = setup
    if key not in cache:
        cache[key] = setup()
    return cache[key]


class _Closing:
    def __enter__(self) -> Any:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()  # type: ignore[attr-defined]


# -- local: this process, or a pool of spawned processes -----------------------------
_PROCESS_CONTEXTS: dict[Hashable, Any] = {}  # one per worker process


def _process_call(job: tuple[Setup | None, Task[Any, Any], int, Any]) -> tuple[int, Any]:
    setup, fn, i, item = job
    return i, fn(_context(_PROCESS_CONTEXTS, setup), item)


class LocalExecutor(_Closing):
    """Sequential in this process with one worker; otherwise a spawn process pool,
    started on first use and kept until :meth:`close`."""

    name = "local"

    def __init__(self, workers: int = 1) -> None:
        self.workers = workers
        self._contexts: dict[Hashable, Any] = {}
        self._pool: Any = None

    @property
    def in_process(self) -> bool:
        return self.workers <= 1

    def start(self) -> None:
        if not self.in_process and self._pool is None:
            self._pool = multiprocessing.get_context("spawn").Pool(self.workers)

    def map(
        self, fn: Task[T, R], items: Sequence[T], setup: Setup | None = None, on_result: OnResult | None = None
    ) -> list[R]:
        if self.in_process or (len(items) <= 1 and self._pool is None):
            out = []
            for i, item in enumerate(items):
                r = fn(_context(self._contexts, setup), item)
                if on_result is not None:
                    on_result(i, r)
                out.append(r)
            return out
        self.start()
        results: dict[int, Any] = {}
        jobs = [(setup, fn, i, item) for i, item in enumerate(items)]
        for i, r in self._pool.imap_unordered(_process_call, jobs):
            results[i] = r
            if on_result is not None:
                on_result(i, r)
        return [results[i] for i in range(len(items))]

    def close(self) -> None:
        if self._pool is not None:
            self._pool.close()
            self._pool.join()
            self._pool = None


# -- threads ----------------------------------------------------------------------------
class ThreadExecutor(_Closing):
    """A pool of ``workers`` threads, each with its own contexts (its own agent and
    simulator: they are not thread-safe).  Worth it when the work waits on I/O."""

    name = "threads"

    def __init__(self, workers: int = 1) -> None:
        self.workers = workers
        self._pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="capver-exec")
        self._local = threading.local()

    @property
    def in_process(self) -> bool:
        return False

    def start(self) -> None:
        pass  # threads start on first use, from any thread

    def _call(self, fn: Task[T, R], setup: Setup | None, item: T) -> R:
        cache = getattr(self._local, "contexts", None)
        if cache is None:
            cache = self._local.contexts = {}
        return fn(_context(cache, setup), item)

    def map(
        self, fn: Task[T, R], items: Sequence[T], setup: Setup | None = None, on_result: OnResult | None = None
    ) -> list[R]:
        futures: dict[Future[R], int] = {
            self._pool.submit(self._call, fn, setup, item): i for i, item in enumerate(items)
        }
        pending = set(futures)
        try:
            while pending:
                done, pending = wait(pending, return_when=FIRST_COMPLETED)
                for f in done:
                    r = f.result()  # re-raises a worker's exception here
                    if on_result is not None:
                        on_result(futures[f], r)
        finally:
            for f in pending:
                f.cancel()
        return [f.result() for f in futures]

    def close(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)


# -- ray ---------------------------------------------------------------------------------
class _RayWorker:
    """The body of one Ray actor: keeps its contexts across tasks, so that an agent
    and its simulator are built once per actor, not once per task."""

    def __init__(self) -> None:
        self.contexts: dict[Hashable, Any] = {}

    def run(self, setup: Setup | None, fn: Task[Any, Any], i: int, item: Any) -> tuple[int, Any]:
        return i, fn(_context(self.contexts, setup), item)


def _check_reachable(address: str) -> None:
    """Refuse a HOST:PORT nobody listens on at once: ray.init would wait minutes for
    it.  ('auto' and ray:// addresses are left to Ray, which fails fast on them.)"""
    if address == "auto" or "://" in address:
        return
    host, sep, port = address.rpartition(":")
    if not sep or not port.isdigit() or not host:
        raise ExecutorError(
            f"--address {address!r}: expected HOST:PORT (e.g. 10.0.0.1:6379), 'auto' or ray://HOST:PORT"
        )
    try:
        socket.create_connection((host, int(port)), timeout=5.0).close()
    except OSError as exc:
        raise ExecutorError(
            f"--address {address}: no Ray head node answers there ({exc.strerror or exc}); start "
            "one with 'ray start --head --port=PORT'"
        ) from None


class RayExecutor(_Closing):
    """``workers`` Ray actors of one CPU each, on the cluster at ``address`` (``None``:
    a Ray instance already started in this process, else a new local one).  Results
    come back in the order of the items."""

    name = "ray"

    def __init__(self, workers: int = 1, address: str | None = None) -> None:
        if importlib.util.find_spec("ray") is None:
            raise ExecutorError("--executor ray: the 'ray' package is not installed; pip install 'ray[default]'")
        if address is not None:
            _check_reachable(address)
        self.workers = workers
        self.address = address
        self._started = False
        self._actors: list[Any] = []
        self._setup_refs: dict[Hashable, Any] = {}

    @property
    def _ray(self) -> Any:
        # Imported and connected on first use: a run that never maps anything (a
        # small D′, sequential executions) does not pay Ray's start-up.
        import ray

        if not ray.is_initialized():
            try:
                ray.init(
                    address=self.address, include_dashboard=False, logging_level=logging.ERROR, log_to_driver=False
                )
            except ConnectionError as exc:
                raise ExecutorError(f"--address {self.address}: cannot connect to a Ray cluster ({exc})") from None
            self._started = True
        return ray

    @property
    def in_process(self) -> bool:
        return False

    def start(self) -> None:
        self._pool()

    def _pool(self) -> Any:
        if not self._actors:
            actor = self._ray.remote(num_cpus=1)(_RayWorker)
            self._actors = [actor.remote() for _ in range(self.workers)]
        from ray.util import ActorPool

        return ActorPool(self._actors)

    def map(
        self, fn: Task[T, R], items: Sequence[T], setup: Setup | None = None, on_result: OnResult | None = None
    ) -> list[R]:
        if not items:
            return []
        # The setup goes to the object store once per executor, not once per task
        # (nor per round of a learner's executions).
        key: Hashable = setup
        setup_ref = self._setup_refs.get(key)
        if setup_ref is None:
            setup_ref = self._setup_refs[key] = self._ray.put(setup)
        pool = self._pool()
        results: dict[int, Any] = {}
        for i, r in pool.map_unordered(lambda a, v: a.run.remote(setup_ref, fn, v[0], v[1]), list(enumerate(items))):
            results[i] = r
            if on_result is not None:
                on_result(i, r)
        return [results[i] for i in range(len(items))]

    def close(self) -> None:
        if not self._actors and not self._started:
            return
        import ray

        for a in self._actors:
            ray.kill(a)
        self._actors = []
        self._setup_refs = {}
        if self._started:
            ray.shutdown()
            self._started = False


EXECUTORS: dict[str, Callable[[int, str | None], Executor]] = {
    "local": lambda workers, address: LocalExecutor(workers),
    "threads": lambda workers, address: ThreadExecutor(workers),
    "ray": RayExecutor,
}


def make_executor(name: str, workers: int, address: str | None = None) -> Executor:
    """The executor ``name`` with ``workers`` workers; ``address`` only for ray."""
    if name not in EXECUTORS:
        raise ExecutorError(f"--executor {name!r}: expected one of {sorted(EXECUTORS)}")
    if workers < 1:
        raise ExecutorError(f"workers: expected a positive number, got {workers}")
    if address is not None and name != "ray":
        raise ExecutorError(f"--address {address}: only --executor ray connects to a cluster")
    return EXECUTORS[name](workers, address)
