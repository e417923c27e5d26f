"""The qualitative model checkers by name, and the automatic choice among them: which
engine answers a property of ``capver verify`` (section 2: the MDP a compound model
induces, read as a nondeterministic transition system for ``E [ path ]`` and
``A [ path ]``; the verdicts about the agent of section 3.1 in
:mod:`capver.engines.verification.agent_verdict`).

**The registry.**  :data:`QUALITATIVE_ENGINES` maps a name to an engine, as pyperplan
names its search algorithms; ``capver verify --engine`` takes its qualitative
choices from it, and ``auto`` (:data:`AUTO`, the default) chooses per property:

* ``bdd`` — :class:`~capver.engines.verification.symbolic.SymbolicEngine`: forward
  onion rings that stop at the first goal state, else least/greatest fixpoints over
  the reachable set.  Every query; exact.  Its cost is the reachable set's BDD.
* ``ic3`` — :class:`~capver.engines.verification.ic3.IC3Engine` (z3's Spacer): the
  safety queries ``A [ G φ ]``, ``E [ F φ ]``, ``E [ ψ U φ ]`` (bounded or not), with
  an inductive invariant when the bad states are unreachable (which ``--save``
  records in the run's certificate for ``capver certify``).  Its cost does not grow
  with the reachable set; finding long runs is its weak side.
* ``abc`` — :class:`~capver.engines.verification.abc_pdr.ABCEngine` (ABC's ``pdr``
  on an AIGER encoding, Debian's ``yosys-abc``): the unbounded safety queries, with
  an inductive invariant as IC3's.  Measured beside Spacer (docs/qualitative_engines.md)
  and not chosen by ``auto``: the comparison there says why.
* ``bmc`` — :class:`~capver.engines.verification.bmc.BoundedModelChecker`: every
  query, by unrolling.  Exact for a bounded operator; an unbounded one is unrolled
  up to as many steps as the model has states (2^atoms, where its verdict is exact),
  so it decides an unbounded property in practice only when it finds a run (the
  witness of ``E``, the counterexample of ``A``).

**Auto** (:func:`plan`, :class:`Portfolio`).  The BDD engine starts alone: on a
model whose reachable set is small it answers in milliseconds and keeps its
reachable set for the next property and for the verdict tiers.  When its forward
rings grow past :data:`LARGE_NODES` BDD nodes or :data:`LARGE_RINGS` rings (counted,
so the same model always switches at the same ring), or when it has not answered
within :data:`HEAD_START` seconds (building a large model's condition BDDs), a
second engine starts beside it in its own process: IC3 for an unbounded safety
query (it proves what holds), BMC for any other (bounded queries are its exact
ground; for E G, A F and A U it looks for the lasso or run).  The first answer
wins and the other process is killed.  ``--timeout`` bounds each check: the
processes still running are killed and :class:`CheckTimeout` names the property,
the engines and what to try instead.

**Measured** (docs/qualitative_engines.md has the table, the commands and the load;
learned runs of ``capver learn`` under /tmp, one ``capver verify --model-kind or|and
--engine E --json`` per row, the check's seconds without the model's read, load
1.4–3.1).  Blocksworld h∨ after 3,000 LAO* steps (30 atoms, 60 capabilities, 551
rules): "never both handempty and handfull" holds — IC3 0.18 s (one 2-literal
lemma), BDD over 240 s (its rings: 1,497 nodes at ring 5, 8,092 at ring 6 after
0.3 s, 204,944 at ring 9 after 39 s), auto 1.1 s by IC3; "never both held" fails by
a 6-step run — BDD 0.22 s, BMC 1.5 s, Spacer 17 s, auto 0.32 s by BDD; ``E [ G
!on(a,b) ]`` holds by a lasso — BDD over 240 s, auto 0.81 s by BMC.  Crafter h∨
after 3,000 steps (76 atoms, 15 capabilities, 275 rules): ``A [ G !has_diamond ]``
holds — IC3 0.24 s, BDD over 240 s, auto 1.25 s by IC3; ``A [ G !dead ]`` fails in one
step — BDD 0.14 s, auto 0.32 s by BDD.  Crafter h∧, ``A [ G !dead ]`` fails by a
14-step run — BDD 0.25 s, Spacer 76 s, auto 0.33 s by BDD.  The shipped First
Responders h∨ (4,608 reachable states, at most 1,412 nodes in any ring): every
engine but BMC's unbounded proof within 0.2 s, auto by BDD.  So auto answers within
about a second of the best engine on every row, and its choice on small models is
the BDD engine's, by a count of nodes rather than by a clock.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import signal
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from multiprocessing.connection import Connection, wait
from typing import Any, Protocol, Self

from capver.core.dataset import TransitionDataset
from capver.core.properties import Eventually, ExistsPath, ForallPath, Globally, Property, Until
from capver.core.state import State
from capver.engines.verification.abc_pdr import ABCEngine
from capver.engines.verification.agent_verdict import (
    DEFAULT_DELTA,
    DEFAULT_EPSILON,
    AgentVerdict,
    LatticeVerdict,
    Tier,
    Within,
    decide,
    first_untried,
)
from capver.engines.verification.bmc import BoundedModelChecker
from capver.engines.verification.ic3 import IC3Engine, safety_problem
from capver.engines.verification.symbolic import (
    LARGE_NODES,
    LARGE_RINGS,
    QualitativeQuery,
    QualitativeResult,
    SymbolicEngine,
    qualitative_query,
)
from capver.errors import CapverError, SolverError, UnsupportedQueryError
from capver.logic.bdd import Node
from capver.model.capability_model import CompoundModel
from capver.model.kinds import ModelKind

__all__ = [
    "AUTO",
    "HEAD_START",
    "LARGE_NODES",
    "LARGE_RINGS",
    "QUALITATIVE_ENGINES",
    "CheckTimeout",
    "Checker",
    "Portfolio",
    "QualitativeEngine",
    "is_safety",
    "is_unbounded_safety",
    "needs_frontier",
    "plan",
]

AUTO = "auto"
HEAD_START = 1.0
"""Seconds the BDD engine runs alone before ``auto`` starts a second engine anyway:
a large model's condition BDDs can take seconds before the first ring (Crafter h∨:
4 s on the loaded machine, 7.4 s in scripts/bench_ic3.py), and the small models
answer within a tenth of that."""


class CheckTimeout(CapverError, TimeoutError):
    """A check that ran out of its time limit: ``prop`` on the model ``on`` by the
    ``engines`` that were running."""

    def __init__(self, message: str, *, prop: Property, on: str, engines: tuple[str, ...], seconds: float) -> None:
        super().__init__(message)
        self.prop = prop
        self.on = on
        self.engines = engines
        self.seconds = seconds


# =====================================================================================
# The registry
# =====================================================================================


class Checker(Protocol):
    """An engine built for one model: the verdict of a qualitative property in an
    initial state."""

    def check(self, item: Property, init: State) -> QualitativeResult: ...


def is_safety(query: QualitativeQuery) -> bool:
    """``A [ G φ ]``, ``E [ F φ ]`` or ``E [ ψ U φ ]`` (bounded or not): one
    reachability question, what IC3 answers."""
    try:
        safety_problem(query)
    except TypeError:
        return False
    return True


def is_unbounded_safety(query: QualitativeQuery) -> bool:
    """A safety query (:func:`is_safety`) without a bound: what ABC's pdr answers."""
    return query.path.bound is None and is_safety(query)


class _Unrolled:
    """BMC as a checker: a bounded operator unrolled to its bound, an unbounded one
    to as many steps as the model has states (exact there, bmc module docstring)."""

    def __init__(self, model: CompoundModel) -> None:
        self.bmc = BoundedModelChecker(model)
        self.states = 1 << len(model.vocabulary)

    def check(self, item: Property, init: State) -> QualitativeResult:
        return self.bmc.check(item, init, bound=self.states)


@dataclass(frozen=True, slots=True)
class QualitativeEngine:
    """A qualitative engine: its ``--help`` text, the queries it answers
    (``answers``) and how to build its checker of one model."""

    name: str
    summary: str
    answers: Callable[[QualitativeQuery], bool]
    build: Callable[[CompoundModel], Checker]


QUALITATIVE_ENGINES: dict[str, QualitativeEngine] = {
    "bdd": QualitativeEngine(
        "bdd",
        "BDD fixpoints and forward rings (every E/A property; slow when the reachable set is large)",
        lambda q: True,
        SymbolicEngine,
    ),
    "ic3": QualitativeEngine(
        "ic3",
        "IC3/PDR on z3's Spacer (A [ G φ ], E [ F φ ], E [ ψ U φ ]: an inductive invariant when it holds, "
        "which --save records in the certificate; slow to find long runs)",
        is_safety,
        IC3Engine,
    ),
    "abc": QualitativeEngine(
        "abc",
        "IC3/PDR on ABC's pdr (Debian's yosys-abc) over an AIGER encoding (unbounded A [ G φ ], E [ F φ ], "
        "E [ ψ U φ ]: an inductive invariant when it holds, which --save records in the certificate)",
        is_unbounded_safety,
        ABCEngine,
    ),
    "bmc": QualitativeEngine(
        "bmc",
        "bounded model checking with z3 (exact on bounded properties; an unbounded one only by finding a run, "
        "or by unrolling as many steps as the model has states)",
        lambda q: True,
        _Unrolled,
    ),
}
"""Name → qualitative engine: the qualitative choices of ``capver verify --engine``
(besides ``auto``)."""


def plan(query: QualitativeQuery) -> tuple[str, str]:
    """``auto``'s engines for a query: the one that starts, and the one that joins it
    when the reachable set turns out large (module docstring)."""
    if is_unbounded_safety(query):
        return "bdd", "ic3"
    return "bdd", "bmc"


def needs_frontier(query: QualitativeQuery, on_and: QualitativeResult, on_or: QualitativeResult) -> bool:
    """Whether the verdict about the agent needs BDD work beyond the two model
    verdicts: h∨'s frontier for the confident tier, or (E G, A F, A U) the lasting
    runs of :func:`~capver.engines.verification.agent_verdict.decide`.  False when
    h∧ decides it (observed) or h∧ and h∨ disagree (unknown)."""
    path = query.path
    existential = isinstance(query, ExistsPath) and isinstance(path, Eventually | Until)
    invariant = isinstance(query, ForallPath) and isinstance(path, Globally)
    if not (existential or invariant):
        return True
    if on_and.holds == existential:  # witnessed (E) or violated (A) on h∧: observed
        return False
    return on_or.holds == invariant


# =====================================================================================
# Worker processes
# =====================================================================================


@dataclass(slots=True)
class _Context:
    """What every worker process inherits (forked: nothing is pickled): the models by
    key, the properties, and the data and levels of the verdict tiers."""

    models: Mapping[str, CompoundModel]
    props: Sequence[Property]
    data: TransitionDataset | None
    delta: float
    epsilon: float
    within: Within | None


def _serve(conn: Connection, name: str, ctx: _Context) -> None:
    """A worker's loop: one engine (``name``) of every model, built on first use and
    kept, so that a BDD engine's reachable sets serve later properties.  Requests
    ``(id, "check", key, index, init)`` and ``(id, "decide", index, init, on_and,
    on_or)``; answers ``(id, "result", value)``, ``(id, "error", text)`` and, from the
    BDD engine, ``(id, "large", text)`` once its rings pass the budget."""
    # A process group of its own, so that killing the worker also kills what its
    # engine started (ABC's process), which would otherwise run on as an orphan.
    os.setpgid(0, 0)
    engine = QUALITATIVE_ENGINES[name]
    checkers: dict[str, Any] = {}
    current = [0]
    signalled: set[int] = set()

    def checker(key: str) -> Any:
        hit = checkers.get(key)
        if hit is None:
            hit = checkers[key] = engine.build(ctx.models[key])
            if isinstance(hit, SymbolicEngine):
                hit.ring_hooks.append(partial(watch, bdd=hit.bdd))
        return hit

    def watch(ring: int, seen: Node, bdd: Any) -> None:
        rid = current[0]
        if rid in signalled:
            return
        nodes = bdd.dag_size(seen)
        if ring >= LARGE_RINGS or nodes > LARGE_NODES:
            signalled.add(rid)
            conn.send((rid, "large", f"{ring} rings, {nodes:,} BDD nodes"))

    while True:
        try:
            request = conn.recv()
        except EOFError:
            return
        rid, kind, *args = request
        current[0] = rid
        try:
            if kind == "check":
                key, index, init = args
                conn.send((rid, "result", checker(key).check(ctx.props[index], init)))
            else:
                index, init, on_and, on_or = args
                eng_and, eng_or = checker("and"), checker("or")
                verdict = decide(
                    ctx.props[index],
                    ctx.models["and"],
                    ctx.models["or"],
                    ctx.data,
                    init,
                    engines=(eng_and, eng_or),
                    results=(on_and, on_or),
                    delta=ctx.delta,
                    epsilon=ctx.epsilon,
                    within=ctx.within,
                )
                conn.send((rid, "result", verdict))
        except Exception as e:  # noqa: BLE001 - every failure goes back to the parent, which raises it
            conn.send((rid, "error", f"{type(e).__name__}: {e}"))


@dataclass(slots=True)
class _Worker:
    name: str
    process: Any
    conn: Connection

    def kill(self) -> None:
        """Kill the worker and its process group (what its engine started)."""
        with contextlib.suppress(ProcessLookupError):  # the worker had not made its group yet
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.kill()
        self.process.join()
        self.conn.close()


@dataclass(slots=True)
class _Running:
    """A check sent to one worker, and what it said so far."""

    worker: _Worker
    rid: int
    large: str | None = None
    error: str | None = None


@dataclass(slots=True)
class Portfolio:
    """The qualitative checks of one ``capver verify`` call, each in a worker process
    forked from this one (it inherits the models; a killed worker takes only its
    own engine's state along).  ``engine`` is a name of :data:`QUALITATIVE_ENGINES`
    or :data:`AUTO`; ``timeout`` (seconds, None: none) bounds each check and each
    tier computation; ``head_start`` is :data:`HEAD_START` (infinite: the second
    engine joins only when the rings pass the budget, so that the choice is the same
    on any machine).  ``models`` are keyed as ``capver verify --model-kind`` names
    them ("and" and "or" for a run's lattice verdicts); ``data``, ``delta`` and
    ``epsilon`` (and ``within``, the environment's states) are those of
    :func:`~capver.engines.verification.agent_verdict.decide`.
    Use as a context manager: the workers are killed on exit."""

    models: Mapping[str, CompoundModel]
    props: Sequence[Property]
    engine: str = AUTO
    timeout: float | None = None
    data: TransitionDataset | None = None
    delta: float = DEFAULT_DELTA
    epsilon: float = DEFAULT_EPSILON
    head_start: float = HEAD_START
    within: Within | None = None
    _workers: dict[str, _Worker] = field(default_factory=dict)
    _next: int = 0

    def __post_init__(self) -> None:
        if self.engine != AUTO and self.engine not in QUALITATIVE_ENGINES:
            raise ValueError(f"engine {self.engine!r}: expected {AUTO} or one of {', '.join(QUALITATIVE_ENGINES)}")

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        for w in self._workers.values():
            w.kill()
        self._workers.clear()

    # -- workers ------------------------------------------------------------------------
    def _worker(self, name: str) -> _Worker:
        hit = self._workers.get(name)
        if hit is not None and hit.process.is_alive():
            return hit
        ctx = multiprocessing.get_context("fork")
        parent, child = ctx.Pipe()
        shared = _Context(self.models, self.props, self.data, self.delta, self.epsilon, self.within)
        process = ctx.Process(target=_serve, args=(child, name, shared), daemon=True, name=f"capver-{name}")
        process.start()
        child.close()
        hit = self._workers[name] = _Worker(name, process, parent)
        return hit

    def _send(self, name: str, *request: object) -> _Running:
        self._next += 1
        w = self._worker(name)
        w.conn.send((self._next, *request))
        return _Running(w, self._next)

    def _drop(self, name: str) -> None:
        w = self._workers.pop(name, None)
        if w is not None:
            w.kill()

    # -- checks -------------------------------------------------------------------------
    def check(self, key: str, index: int, init: State) -> QualitativeResult:
        """The verdict of property ``index`` on model ``key`` in ``init``, by the
        chosen engine or (auto) the first of the planned ones to answer;
        :class:`CheckTimeout` when none answers within the timeout,
        :class:`SolverError` when every engine failed, :class:`UnsupportedQueryError` when the
        chosen engine does not answer the query (IC3 for E G, say)."""
        prop = self.props[index]
        query, _ = qualitative_query(prop)
        if self.engine == AUTO:
            first, helper = plan(query)
        else:
            if not QUALITATIVE_ENGINES[self.engine].answers(query):
                raise UnsupportedQueryError(
                    f"{prop.name}: --engine {self.engine} does not answer this property "
                    f"({QUALITATIVE_ENGINES[self.engine].summary}); use --engine auto or bdd"
                )
            first, helper = self.engine, None
        start = time.monotonic()
        deadline = None if self.timeout is None else start + self.timeout
        running = {first: self._send(first, "check", key, index, init)}
        errors: list[str] = []
        while True:
            now = time.monotonic()
            joins = helper is not None and helper not in running
            waits = [] if deadline is None else [deadline - now]
            if joins and self.head_start != float("inf"):
                waits.append(start + self.head_start - now)
            ready = wait([r.worker.conn for r in running.values()], timeout=max(0.0, min(waits)) if waits else None)
            for name, r in list(running.items()):
                if r.worker.conn not in ready:
                    continue
                try:
                    rid, kind, value = r.worker.conn.recv()
                except (EOFError, OSError):
                    r.worker.process.join()
                    died = f"the {name} process ended (exit status {r.worker.process.exitcode})"
                    rid, kind, value = r.rid, "died", died
                if rid != r.rid:
                    continue  # an answer to a request given up on
                if kind == "result":
                    for other in running:
                        if other != name:
                            self._drop(other)  # the loser is killed
                    return value
                if kind == "large":
                    r.large = value
                    continue
                errors.append(f"{name}: {value}")
                del running[name]
                if kind == "died":
                    self._drop(name)
            now = time.monotonic()
            if joins and (now >= start + self.head_start or any(r.large for r in running.values()) or not running):
                assert helper is not None
                running[helper] = self._send(helper, "check", key, index, init)
                continue
            if not running:
                raise SolverError(f"{prop.name}: every engine failed: {'; '.join(errors)}")
            if deadline is not None and now >= deadline:
                names = tuple(running)
                for name in names:
                    self._drop(name)
                raise CheckTimeout(
                    _timeout_message(prop, key, names, query, self.timeout or 0.0, self.engine),
                    prop=prop,
                    on=key,
                    engines=names,
                    seconds=self.timeout or 0.0,
                )

    def verdict(self, index: int, init: State, on_and: QualitativeResult, on_or: QualitativeResult) -> LatticeVerdict:
        """The verdict about the agent from the verdicts on h∧ ("and") and h∨ ("or"):
        :func:`~capver.engines.verification.agent_verdict.decide` here when it needs
        no BDD, else in the BDD worker (which may already hold h∨'s reachable set)
        within the timeout; when that runs out, the verdict that needs no frontier
        (:func:`without_frontier`)."""
        prop = self.props[index]
        query, _ = qualitative_query(prop)
        if not needs_frontier(query, on_and, on_or):
            return decide(
                prop,
                self.models["and"],
                self.models["or"],
                self.data,
                init,
                results=(on_and, on_or),
                delta=self.delta,
                epsilon=self.epsilon,
            )
        r = self._send("bdd", "decide", index, init, on_and, on_or)
        deadline = None if self.timeout is None else time.monotonic() + self.timeout
        while True:
            left = None if deadline is None else max(0.0, deadline - time.monotonic())
            if not wait([r.worker.conn], timeout=left):
                self._drop("bdd")
                return without_frontier(query, on_and, on_or, self.data, self.timeout or 0.0)
            try:
                rid, kind, value = r.worker.conn.recv()
            except (EOFError, OSError):
                self._workers.pop("bdd", None)
                raise SolverError(
                    f"{prop.name}: the bdd process ended (exit status {r.worker.process.exitcode})"
                ) from None
            if rid != r.rid or kind == "large":
                continue
            if kind == "error":
                raise SolverError(f"{prop.name}: {value}")
            return value


_ON = {k.value: k.symbol for k in ModelKind}


def _timeout_message(
    prop: Property, key: str, engines: tuple[str, ...], query: QualitativeQuery, seconds: float, chosen: str
) -> str:
    """One line: the property, the model, the engines that ran out, what to try."""
    tries: list[str] = []
    safety = is_safety(query)
    if chosen != AUTO:
        tries.append("--engine auto")
    if safety and "ic3" not in engines:
        tries.append("--engine ic3 (proves invariants without the reachable set)")
    if query.path.bound is None:
        tries.append("a bounded property (e.g. G<=10, F<=10) with --engine bmc")
    tries.append(f"a larger --timeout than {seconds:g} s")
    which = " and ".join(engines)
    return (
        f"{prop.name}: no verdict on {_ON.get(key, key)} within --timeout {seconds:g} s ({which} still running, "
        f"stopped); try {', or '.join(tries)}"
    )


def without_frontier(
    query: QualitativeQuery,
    on_and: QualitativeResult,
    on_or: QualitativeResult,
    data: TransitionDataset | None,
    seconds: float,
) -> LatticeVerdict:
    """The verdict about the agent when the BDD work beyond the two model verdicts
    (h∨'s frontier, the lasting runs) did not finish within ``seconds``: nothing
    beyond what was computed — unconfirmed where h∨ decides (the confident tier
    needs the frontier), unknown where h∧'s lasting run was not computed."""
    note = f"h∨'s frontier not computed within --timeout {seconds:g} s: unconfirmed"
    path = query.path
    existential = isinstance(query, ExistsPath) and isinstance(path, Eventually | Until)
    invariant = isinstance(query, ForallPath) and isinstance(path, Globally)
    if existential or invariant:
        on = "holds on h∨" if invariant else "impossible on h∨"
        return LatticeVerdict(AgentVerdict.UNCONFIRMED, Tier.UNCONFIRMED, f"{on}, but {note}", on_and, on_or)
    exists = isinstance(query, ExistsPath)
    lasting_on_or = on_or.holds if exists else not on_or.holds
    if not lasting_on_or:
        on = "impossible on h∨" if exists else "holds on h∨"
        return LatticeVerdict(
            AgentVerdict.UNCONFIRMED,
            Tier.UNCONFIRMED,
            f"{on} (dead ends continuing anywhere), but {note}",
            on_and,
            on_or,
        )
    pair = first_untried(on_or.witness, data) if data is not None else None
    return LatticeVerdict(
        AgentVerdict.UNKNOWN,
        Tier.UNKNOWN,
        f"{'holds' if exists else 'fails'} on h∨, and h∧'s runs that never stop were not computed "
        f"within --timeout {seconds:g} s",
        on_and,
        on_or,
        on_or.witness,
        decisive_query=pair,
    )
