"""The evaluation dataset D′ (section 4.2) collected in chunks on an executor, so
that the paper's 100,000 sequences per setting are a matter of workers (see
:mod:`capver.engines.executors`).

D′ is a function of (setting, seed, number of sequences, chunk size) alone, never
of the executor or of how many workers it has:

* chunk 0 runs in the calling process on the setting's own simulator with
  ``default_rng(seed)``, exactly as
  :func:`~capver.engines.evaluation.collect_eval_dataset` always collected D′.
  Without a chunk size D′ is this one chunk, so every recorded D′ (the benchmarks'
  300 sequences and ``capver bench dprime``'s 100,000) is unchanged, and so is the
  simulator state the learner continues from;
* chunk k ≥ 1 runs on a worker's own copy of the setting (built once per worker
  from a picklable setup) with the agent stream and simulator seed that
  :func:`~capver.engines.execution.derived_streams` derives from (seed, k).

A worker sends back the chunk's transition counts, not its executions: at most
the number of unique transitions of the chunk (a few thousand), however many
executions it took.  They are merged in chunk order.
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np

from capver.core.dataset import TransitionDataset
from capver.core.state import Capability, Transition
from capver.engines.evaluation import collect_eval_dataset
from capver.engines.execution import derived_streams
from capver.engines.executors import Executor, Setup
from capver.engines.learning import Setting

SUGGESTED_CHUNK = 1_000
"""A chunk size for large D′ (the command line's help names it): 100,000 sequences
keep 100 workers busy, and a chunk's ~20,000 executions dwarf shipping it."""


@dataclass(frozen=True, slots=True)
class EvalChunk:
    """Chunk ``index`` (≥ 1) of D′: what a worker needs besides its setting."""

    index: int
    sequences: int
    seed: int
    capabilities: tuple[Capability, ...]


@dataclass(frozen=True, slots=True)
class ChunkCounts:
    """A chunk's result: its unique transitions with their counts, in the order the
    chunk's dataset lists them, and the simulator steps taken."""

    counts: tuple[tuple[Transition, int], ...]
    steps: int


def collect_chunk(setting: Setting, chunk: EvalChunk) -> ChunkCounts:
    """Module-level so that every executor can ship it by name."""
    rng, sim_seed = derived_streams((chunk.seed, chunk.index))
    setting.sim.reset(sim_seed)
    d = collect_eval_dataset(setting, chunk.capabilities, chunk.sequences, rng)
    return ChunkCounts(tuple(d.items()), d.simulator_steps)


def chunk_sizes(n_sequences: int, chunk: int | None = None) -> list[int]:
    step = n_sequences if chunk is None else chunk
    return [min(step, n_sequences - start) for start in range(0, n_sequences, step)]


def collect_eval_chunked(
    setting: Setting,
    capabilities: Sequence[Capability],
    n_sequences: int,
    seed: int,
    executor: Executor,
    worker_setting: Setup,
    chunk: int | None = None,
) -> TransitionDataset:
    """D′ of ``n_sequences`` sequences in chunks of ``chunk`` (None: one chunk):
    chunk 0 here on ``setting``, the others on ``executor``'s workers (each builds
    its setting with ``worker_setting``), at the same time when the executor has
    workers of its own."""
    if n_sequences < 1 or (chunk is not None and chunk < 1):
        raise ValueError(f"n_sequences and chunk must be positive, got {n_sequences} and {chunk}")
    sizes = chunk_sizes(n_sequences, chunk)
    caps = tuple(capabilities)
    chunks = [EvalChunk(k, size, seed, caps) for k, size in enumerate(sizes) if k > 0]

    def remote() -> list[ChunkCounts]:
        return executor.map(collect_chunk, chunks, setup=worker_setting) if chunks else []

    if executor.in_process:
        d = collect_eval_dataset(setting, caps, sizes[0], np.random.default_rng(seed))
        results = remote()
    else:
        # The workers' map waits in a helper thread while this one collects chunk 0;
        # the workers are brought up here, in the calling thread (see Executor.start).
        if chunks:
            executor.start()
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="capver-eval") as waiter:
            pending = waiter.submit(remote)
            d = collect_eval_dataset(setting, caps, sizes[0], np.random.default_rng(seed))
            results = pending.result()
    for part in results:
        steps = part.steps
        for t, n in part.counts:
            d.add(t, count=n, steps=steps)
            steps = 0
    return d
