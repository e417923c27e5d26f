"""The executors (scaling out) and ``capver learn --concurrency``: the bench grid,
D′ and the executions of a query give the same results on every executor.

Real parts throughout: real settings built by name in every worker, a real Ray
instance (2 CPUs, one for the whole module: starting Ray costs seconds), and the
LLM agent against the local chat-completions server process of tests/helpers/llm_server.py
with injected latency.  Every wait is bounded (Ray tasks, server calls, subprocess
timeouts) so that a broken worker fails a test instead of hanging the suite.
"""

from __future__ import annotations

import csv
import faulthandler
import socket
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from capver.bench.learning.cli import main as bench_main
from capver.bench.learning.runs import Job, RunSpec, run_jobs
from capver.bench.learning.settings import collect_eval_set
from capver.core.dataset import TransitionDataset
from capver.core.setting_args import SettingArgs
from capver.core.state import Capability, Transition
from capver.engines.eval_collection import collect_eval_chunked
from capver.engines.evaluation import collect_eval_dataset
from capver.engines.executors import (
    ExecutorError,
    LocalExecutor,
    RayExecutor,
    ThreadExecutor,
    make_executor,
)
from capver.engines.learning import (
    LearnConfig,
    Learner,
    ParallelExecutions,
    SeededExecution,
    execute_seeded,
)
from capver.settings import SettingSpec, build_assessment
from tests.helpers.cli import capver, capver_in_process
from tests.helpers.llm_server import LocalChatServer

SETTING = "lao:blocks"
BLOCKS = SettingSpec("lao", SettingArgs(domain="blocks", seed=0), 0)
TIMEOUT = 120  # seconds any one test may wait on workers


def _square(_: None, x: int) -> int:
    return x * x


def _records(d: TransitionDataset) -> list[tuple[object, int]]:
    return [(t, n) for t, n in d.items()]


class _Records:
    """A sink keeping what the learner records, in order (the dataset file's content)."""

    def __init__(self) -> None:
        self.rows: list[tuple[object, ...]] = []

    def write_capability(self, c: Capability) -> None:
        self.rows.append(("capability", c.name))

    def write(self, t: Transition, steps: int = 0, meta: dict[str, Any] | None = None) -> None:
        self.rows.append((t, steps, meta))


def _learn(
    parallel: ParallelExecutions | None, method: str = "mcqs-s", seed: int = 5, steps: int = 60
) -> tuple[Learner, list[tuple[object, ...]]]:
    """A run and its records, ending with the counters."""
    a = build_assessment(BLOCKS.agent, BLOCKS.args, np.random.default_rng(BLOCKS.seed))
    config = LearnConfig.from_options(
        method, executions=3, iterations=10, horizon=4, xi_cap=1e-5, patience=0, max_steps=steps
    )
    sink = _Records()
    lr = Learner(a.ctx, a.setting, config, np.random.default_rng(seed), sink=sink, grow=a.grow, parallel=parallel)
    p = lr.run()
    return lr, [*sink.rows, (p.queries, p.executions, p.steps, p.unique_transitions)]


@pytest.fixture()
def deadline() -> Iterator[None]:
    """Ends the test process with a traceback if a test waits on workers too long."""
    faulthandler.dump_traceback_later(TIMEOUT, exit=True)
    try:
        yield
    finally:
        faulthandler.cancel_dump_traceback_later()


# -- the registry and the cheap executors ----------------------------------------------------
def test_every_executor_returns_results_in_the_order_of_the_items() -> None:
    seen: list[int] = []
    with LocalExecutor() as local, ThreadExecutor(3) as threads:
        assert local.map(_square, range(7)) == [x * x for x in range(7)]
        assert threads.map(_square, list(range(20)), on_result=lambda i, r: seen.append(i)) == [
            x * x for x in range(20)
        ]
    assert sorted(seen) == list(range(20))


def test_make_executor_refuses_bad_arguments(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ExecutorError, match="expected one of"):
        make_executor("dask", 2)
    with pytest.raises(ExecutorError, match="only --executor ray"):
        make_executor("local", 2, "localhost:6379")
    with pytest.raises(ExecutorError, match="positive"):
        make_executor("threads", 0)
    # ray.init would wait minutes on an address where no head node listens, so the
    # address must be refused before Ray is touched: checked as such, not timed.
    monkeypatch.setattr(RayExecutor, "_ray", property(lambda _: pytest.fail("ray.init was reached")))
    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        port = free.getsockname()[1]
    with pytest.raises(ExecutorError, match="no Ray head node answers"):
        make_executor("ray", 2, f"127.0.0.1:{port}")
    with pytest.raises(ExecutorError, match="expected HOST:PORT"):
        make_executor("ray", 2, "nowhere")


def test_a_seeded_execution_depends_on_its_entropy_alone() -> None:
    """The unit of parallel work: the same (capability, x₀, entropy) gives the same
    execution whatever the worker ran before; another entropy may differ."""
    st = BLOCKS()
    other = BLOCKS()
    cap = st.capabilities[0]
    x0 = st.initial_states[0]
    tasks = [SeededExecution(c, x0, (7, j, 0)) for j, c in enumerate(st.capabilities[:6])]
    first = [execute_seeded(st, t) for t in tasks]
    again = [execute_seeded(other, t) for t in reversed(tasks)][::-1]
    assert [(r.execution.transition, r.execution.steps, r.state) for r in first] == [
        (r.execution.transition, r.execution.steps, r.state) for r in again
    ]
    assert execute_seeded(st, SeededExecution(cap, x0, (1,))).execution.transition.s == x0


def test_dprime_of_one_chunk_is_the_sequential_dprime() -> None:
    """Without a chunk size (and up to one chunk), D′ is what collect_eval_dataset
    always gave, so the recorded benchmark numbers stand."""
    a = build_assessment(BLOCKS.agent, BLOCKS.args, np.random.default_rng(0))
    b = build_assessment(BLOCKS.agent, BLOCKS.args, np.random.default_rng(0))
    old = collect_eval_dataset(a.setting, a.setting.capabilities, 12, np.random.default_rng(3))
    with LocalExecutor() as ex:
        new = collect_eval_chunked(b.setting, b.setting.capabilities, 12, 3, ex, BLOCKS)
    assert _records(new) == _records(old) and new.simulator_steps == old.simulator_steps
    # The learner goes on from the same simulator state.
    assert a.setting.sim.step(a.setting.sim.available_actions()[0]) == b.setting.sim.step(
        b.setting.sim.available_actions()[0]
    )


def test_dprime_in_chunks_is_the_same_in_process_and_on_threads() -> None:
    def collect(executor: LocalExecutor | ThreadExecutor) -> TransitionDataset:
        a = build_assessment(BLOCKS.agent, BLOCKS.args, np.random.default_rng(0))
        with executor:
            return collect_eval_chunked(a.setting, a.setting.capabilities, 25, 3, executor, BLOCKS, chunk=6)

    local, threads = collect(LocalExecutor()), collect(ThreadExecutor(2))
    assert _records(local) == _records(threads) and len(local) == len(threads) > 25 * 10
    assert local.simulator_steps == threads.simulator_steps


@pytest.fixture(scope="module")
def rounds_on_one_thread() -> tuple[Learner, list[tuple[object, ...]]]:
    """The rounds' run on one thread, which two tests compare other runs with; neither
    changes it, and learning it again costs seconds under coverage."""
    with LocalExecutor() as one:
        return _learn(ParallelExecutions(one, BLOCKS))


def test_learn_in_rounds_is_the_same_on_one_thread_and_three(
    rounds_on_one_thread: tuple[Learner, list[tuple[object, ...]]], deadline: None
) -> None:
    a, a_log = rounds_on_one_thread
    with ThreadExecutor(3) as three:
        b, b_log = _learn(ParallelExecutions(three, BLOCKS))
    assert a_log == b_log
    assert a.progress.executions >= 3 and a.progress.steps >= 60 and b.progress.queries == a.progress.queries


def test_the_default_learner_is_the_sequential_loop(
    rounds_on_one_thread: tuple[Learner, list[tuple[object, ...]]],
) -> None:
    """Without ParallelExecutions nothing changes: the executions share the learner's
    stream, so a run differs from the rounds' run of the same seed."""
    sequential, seq_log = _learn(None)
    _, rounds_log = rounds_on_one_thread
    assert seq_log != rounds_log and sequential.progress.steps >= 60


@pytest.mark.slow
def test_learn_rounds_on_the_command_line_are_the_same_for_any_concurrency(tmp_path: Path, deadline: None) -> None:
    common = (
        "learn",
        "--agent",
        "lao",
        "--domain",
        "blocks",
        "--method",
        "random",
        "--max-steps",
        "40",
        "--eval-sequences",
        "5",
        "--executions",
        "3",
        "--seed",
        "2",
        "--quiet",
        "--executor",
        "threads",
    )
    # In this process (threads only, no service to start): a fresh interpreter per run
    # cost more than the run.
    for n in ("1", "3"):
        r = capver_in_process(*common, "--concurrency", n, "--out", str(tmp_path / n))
        assert r.returncode == 0, r.stderr
    for name in ("dataset.jsonl", "eval.jsonl", "h_and.capm", "h_or.capm"):
        assert (tmp_path / "1" / name).read_bytes() == (tmp_path / "3" / name).read_bytes(), name


# -- threads overlap the waits of an I/O-bound agent -----------------------------------------
@pytest.fixture(scope="module")
def chat() -> Iterator[LocalChatServer]:
    with LocalChatServer() as srv:
        yield srv


def test_threads_overlap_llm_calls_and_change_nothing(
    chat: LocalChatServer, monkeypatch: pytest.MonkeyPatch, deadline: None
) -> None:
    """n executions of the LLM agent with latency L per call: on N threads the calls
    overlap (the server counts how many it serves at once), with the same executions."""
    monkeypatch.setenv("CAPVER_LLM_BASE_URL", chat.base_url)
    monkeypatch.setenv("CAPVER_LLM_MODEL", "scripted")
    monkeypatch.setenv("CAPVER_LLM_CACHE", "none")  # every call pays the latency
    spec = SettingSpec("llm", SettingArgs(layouts=4, step_cap=12, seed=0), 0)
    st = spec()
    tasks = [
        SeededExecution(st.capabilities[j % len(st.capabilities)], st.initial_states[j % 4], (11, j, 0))
        for j in range(8)
    ]
    latency, n_threads = 0.05, 4

    def timed(executor: LocalExecutor | ThreadExecutor) -> tuple[list[object], float, int, int]:
        chat.control(reset=True, latency=latency)
        start = time.monotonic()
        with executor:
            out = executor.map(execute_seeded, tasks, setup=spec)
        calls = chat.stats()["chat_requests"]
        assert sum(dict(r.usage)["calls"] for r in out) == chat.stats()["chat_requests"]  # each call accounted once
        return (
            [(r.execution.transition, r.execution.steps, r.execution.failure, r.state) for r in out],
            time.monotonic() - start,
            calls,
            chat.max_in_flight(),
        )

    seq, seq_wall, seq_calls, seq_at_once = timed(LocalExecutor())
    par, par_wall, par_calls, par_at_once = timed(ThreadExecutor(n_threads))
    assert par == seq and par_calls == seq_calls >= 16
    assert seq_wall >= seq_calls * latency  # each call waited L, one after another
    print(f"LLM: {seq_calls} calls, sequential {seq_wall:.2f} s, {n_threads} threads {par_wall:.2f} s")
    # Overlap as the server counted it, not as a ratio of wall times: the agent's own
    # CPU work between calls does not overlap, and its share grows on a busy machine.
    assert seq_at_once == 1 and 2 <= par_at_once <= n_threads, (seq_at_once, par_at_once)
    chat.control(reset=True, latency=0.0)


# -- Ray ---------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def ray_session() -> Iterator[None]:
    ray = pytest.importorskip("ray")
    ray.init(num_cpus=2, include_dashboard=False, logging_level="ERROR", log_to_driver=False)
    try:
        yield
    finally:
        ray.shutdown()


@pytest.mark.slow
def test_ray_gives_the_local_results(ray_session: None, deadline: None) -> None:
    """One Ray session (2 CPUs) for the bench grid, D′ and a learn run."""
    with RayExecutor(2) as ray_ex:
        # The bench grid: the in-process runs' rows, in the order of the jobs.
        eval_set = collect_eval_set(SETTING, 5)
        jobs = [Job(RunSpec(SETTING, m, 0, 15, 5, iterations=10, horizon=4), eval_set) for m in ("mcqs-s", "random")]

        def strip(rows: tuple[dict[str, object], ...]) -> list[dict[str, object]]:
            return [{k: v for k, v in r.items() if not k.endswith("seconds")} for r in rows]

        local_runs = run_jobs(jobs, 1, lambda _: None)
        ray_runs = run_jobs(jobs, 2, lambda _: None, ray_ex)
        assert [r.spec for r in ray_runs] == [j.spec for j in jobs]
        assert [strip(r.rows) for r in ray_runs] == [strip(r.rows) for r in local_runs]

        # D′ in chunks: three chunks, two of them on the actors.
        def dprime(executor: LocalExecutor | RayExecutor) -> TransitionDataset:
            a = build_assessment(BLOCKS.agent, BLOCKS.args, np.random.default_rng(0))
            return collect_eval_chunked(a.setting, a.setting.capabilities, 15, 4, executor, BLOCKS, chunk=5)

        with LocalExecutor() as local:
            expected = dprime(local)
        assert _records(dprime(ray_ex)) == _records(expected)

        # capver learn's executions of a query, in rounds on the actors.
        with LocalExecutor() as local:
            _, reference = _learn(ParallelExecutions(local, BLOCKS), method="mcqs-e", steps=40)
        _, on_ray = _learn(ParallelExecutions(ray_ex, BLOCKS), method="mcqs-e", steps=40)
        assert on_ray == reference


def test_bench_learning_on_threads_with_dprime_chunks_writes_the_local_table(tmp_path: Path) -> None:
    """The command-line path: --executor/--jobs/--eval-chunk change where the work
    runs, not runs.csv."""
    argv = [
        "--quick",
        "--settings",
        SETTING,
        "--methods",
        "mcqs-s,random",
        "--seeds",
        "1",
        "--no-ablation",
        "--no-qace",
        "--eval-sequences",
        "7",
        "--eval-chunk",
        "3",
        "--max-seconds",
        "0",
    ]

    def rows(out: Path) -> list[dict[str, str]]:
        with open(out / "runs.csv", newline="") as f:
            return [{k: v for k, v in r.items() if not k.endswith("seconds")} for r in csv.DictReader(f)]

    assert bench_main([*argv, "--jobs", "1", "--out", str(tmp_path / "local")]) == 0
    assert bench_main([*argv, "--executor", "threads", "--jobs", "2", "--out", str(tmp_path / "threads")]) == 0
    assert rows(tmp_path / "local") == rows(tmp_path / "threads") != []
    assert "2 threads worker(s)" in (tmp_path / "threads" / "table.md").read_text()


@pytest.mark.slow
def test_capver_learn_on_ray_writes_the_run_of_threads(tmp_path: Path) -> None:
    """capver learn as typed, with its own Ray instance started from the command (not
    from a test fixture): D′ chunks and the rounds on two actors give the files the
    threads executor writes."""
    common = (
        "learn",
        "--agent",
        "lao",
        "--domain",
        "blocks",
        "--method",
        "mcqs-s",
        "--max-steps",
        "30",
        "--eval-sequences",
        "7",
        "--eval-chunk",
        "3",
        "--executions",
        "2",
        "--seed",
        "4",
        "--quiet",
        "--concurrency",
        "2",
    )
    for executor in ("threads", "ray"):
        r = capver(*common, "--executor", executor, "--out", str(tmp_path / executor), timeout=TIMEOUT)
        assert r.returncode == 0, r.stdout + r.stderr
    for name in ("eval.jsonl", "dataset.jsonl", "h_and.capm", "h_or.capm"):
        assert (tmp_path / "threads" / name).read_bytes() == (tmp_path / "ray" / name).read_bytes(), name
