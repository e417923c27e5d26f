"""The one entry point of verification: :class:`Evidence` (what a verdict rests on) and
:func:`verify` / :class:`Verifier` (a property's :class:`~.verdict.Verdict`).

``capver verify``, :meth:`capver.LearnResult.verify`, the property tracker of
``learn --properties`` (:mod:`capver.engines.directed`) and ``capver bench verdicts``
all come through here, so that a property gets one verdict whichever of them asks.
The steps of a verdict about the agent (section 3.1 of the paper; Theorems 1 and 3
of appendix A) are taken here and nowhere else:

1. the property on h∧ and on h∨ — by the engine portfolio of
   :mod:`.qualitative` (the BDD engine, raced by IC3 or BMC on large models, each in
   a worker process a timeout can stop), or in this process by BDD engines the caller
   keeps (the tracker re-decides after every query);
2. the tier (:func:`.agent_verdict.decide`), its frontier restricted to the states
   the environment reaches (:func:`.environment.restriction`);
3. what the environment settles exactly (:func:`.environment.settle`);
4. for ``P``/``R`` properties the value on h∧, the data's maximum-likelihood model
   (section 4.2), and the agent's two-sided bounds at 1 − δ with the environment's
   hopeless states at 0 (:func:`.quantitative.agent_bounds`);
5. with a fixed scheduler (a plan or a policy, :class:`.smc.SchedulerCheck`) and the
   agent itself (``Evidence.agent``), a ``P`` property's probability under that
   scheduler, sampled with the agent until decided (:mod:`.smc`).

With one model and no data (:meth:`Evidence.of_model`) a verdict is about that model.
"""

from __future__ import annotations

import time
from collections.abc import Generator, Iterable, Mapping, Sequence
from dataclasses import dataclass
from types import TracebackType
from typing import Self

import numpy as np

from capver.core.dataset import TransitionDataset
from capver.core.properties import ExistsPath, ForallPath, Property
from capver.core.state import State
from capver.engines.verification import checkers, quantitative, storm
from capver.engines.verification.agent_verdict import DEFAULT_DELTA, DEFAULT_EPSILON, LatticeVerdict, decide
from capver.engines.verification.confidence import Scope
from capver.engines.verification.environment import World, restriction, settle
from capver.engines.verification.pooled import FAMILIES, Pooled, decide_pooled, pool, pooled_h_or
from capver.engines.verification.qualitative import AUTO, QUALITATIVE_ENGINES, CheckTimeout, Portfolio
from capver.engines.verification.sampling import SamplingBounds
from capver.engines.verification.smc import Executor, SchedulerCheck, SchedulerResult, check_scheduler
from capver.engines.verification.symbolic import QualitativeResult, SymbolicEngine
from capver.engines.verification.verdict import Verdict
from capver.errors import UnsupportedQueryError, UsageError
from capver.model.abstraction import Abstraction
from capver.model.capability_model import CompoundModel
from capver.model.kinds import ModelKind

ONE_MODEL = "the model"
"""What a verdict of :meth:`Evidence.of_model` is on."""
MLE = "h∧ (MLE)"
"""What a run's quantitative values are computed on by default: h∧, which section 4.2
evaluates as the data's maximum-likelihood model."""


@dataclass(frozen=True, slots=True)
class Evidence:
    """What verdicts rest on: the lattice bounds learned from ``data`` (and h̃ when
    it is to be checked), the states the environment reaches (``world``, where known),
    and the statistics' parameters: ``delta`` (every statement that rests on the
    data's bounds holds with probability ≥ 1 − δ), ``epsilon`` (the confident tier's
    threshold on unseen-effect mass) and ``scope`` of the agent's quantitative bounds
    (``sound``, or ``observed``: the data read as complete).  ``agent``: the agent
    itself in its simulator (a learned setting), which a scheduler's check executes.
    ``abstraction``: verdicts about the agent may also rest on the assumption that its
    capabilities behave alike within the abstraction's classes (:mod:`.pooled`); δ is
    then split three ways (:attr:`pair_delta`); ``abstraction_since``: the executions
    of the data that chose the abstraction (h̃'s atoms, say), which are not pooled."""

    h_and: CompoundModel
    h_or: CompoundModel | None = None
    data: TransitionDataset | None = None
    world: World | None = None
    h_tilde: CompoundModel | None = None
    delta: float = DEFAULT_DELTA
    epsilon: float = DEFAULT_EPSILON
    scope: Scope = "sound"
    agent: Executor | None = None  # the agent in its simulator, for a scheduler's check
    abstraction: Abstraction | None = None  # classes whose executions pool (pooled verdicts)
    abstraction_since: int = 0  # executions of D before the abstraction was fixed: not pooled

    @classmethod
    def of_model(cls, model: CompoundModel) -> Evidence:
        """One model file's evidence: its verdicts are about that model."""
        return cls(model)

    @property
    def pair_delta(self) -> float:
        """The δ of the per-pair bounds: all of δ, or a third of it beside the pooled
        bounds and the homogeneity tests of an abstraction (:mod:`.pooled`)."""
        return self.delta / FAMILIES if self.abstraction is not None else self.delta

    @property
    def lattice(self) -> bool:
        """Whether verdicts can be about the agent (h∧ and h∨ are both given)."""
        return self.h_or is not None

    def model(self, kind: ModelKind) -> CompoundModel:
        found = {ModelKind.AND: self.h_and, ModelKind.OR: self.h_or, ModelKind.TILDE: self.h_tilde}[kind]
        if found is None:
            raise UsageError(f"{kind.symbol} ({kind.file}) is not part of this evidence")
        return found


class Verifier:
    """Verdicts of ``properties`` from ``init`` on one :class:`Evidence`, with the
    engines kept across properties (use as a context manager: worker processes are
    stopped on exit).

    ``on``: None checks E/A properties about the agent from h∧ and h∨ and P/R ones on
    h∧ with the agent's bounds; a :class:`ModelKind` checks every property on that
    model alone (the agent's bounds only on h∧, which the data are).  ``engine``: the
    qualitative engine (:data:`QUALITATIVE_ENGINES` or ``auto``); ``quantitative_engine``:
    the checker of :data:`checkers.QUANTITATIVE_CHECKERS` (or ``auto``); ``timeout``
    bounds each qualitative check (seconds; a check that runs out gives a verdict
    whose outcome is ``timeout``).  ``engines``: BDD engines of h∧ and h∨ to decide
    in this process instead of the portfolio's workers (the tracker keeps them across
    updates); ``values``: False skips the model's value of a P/R property, leaving
    the agent's bounds (what the tracker and the benchmarks decide on).
    ``sampling``: the data's :class:`SamplingBounds` at δ to reuse.  ``scheduler``:
    P properties are checked under that scheduler with the agent itself (:mod:`.smc`;
    the evidence needs ``agent`` and the data, whose capabilities it may execute).
    ``pooled``: the data pooled by the evidence's abstraction, to reuse (the tracker
    keeps a :class:`.pooled.Pooler`)."""

    def __init__(
        self,
        evidence: Evidence,
        properties: Sequence[Property],
        init: State,
        *,
        on: ModelKind | None = None,
        engine: str = AUTO,
        quantitative_engine: str = AUTO,
        timeout: float | None = None,
        engines: tuple[SymbolicEngine, SymbolicEngine] | None = None,
        values: bool = True,
        sampling: SamplingBounds | None = None,
        scheduler: SchedulerCheck | None = None,
        pooled: Pooled | None = None,
    ) -> None:
        if engine != AUTO and engine not in QUALITATIVE_ENGINES:
            raise UsageError(f"engine {engine!r}: expected {AUTO} or one of {', '.join(QUALITATIVE_ENGINES)}")
        if engines is not None and engine not in (AUTO, "bdd"):
            raise UsageError(f"engine {engine!r}: BDD engines were given, so the checks are the BDD engine's")
        if not evidence.lattice and on is not None:
            raise UsageError(f"on={on.value}: the evidence is one model; the kinds are models of a run")
        if on is not None:
            evidence.model(on)
        if scheduler is not None and (evidence.agent is None or evidence.data is None):
            raise UsageError("a scheduler is checked with the agent itself: the evidence needs its agent and data")
        self.evidence = evidence
        self.properties = tuple(properties)
        self.init = init
        self.on = on
        self.engine = engine
        self.timeout = timeout
        self.values = values
        self._checker = checkers.make(_quantitative_engine(quantitative_engine))
        self._engines = engines
        self._sampling = sampling
        self._within = restriction(evidence.world, init, evidence.h_and.ctx.vocab)
        self._portfolio: Portfolio | None = None
        self._pooled = pooled
        self._widened: tuple[SymbolicEngine, SymbolicEngine] | None = None
        self._scheduler = scheduler
        self._rng = np.random.default_rng(scheduler.seed if scheduler is not None else 0)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.close()

    def close(self) -> None:
        if self._portfolio is not None:
            self._portfolio.close()
            self._portfolio = None

    # -- the models checked ---------------------------------------------------------
    def _models(self) -> Mapping[str, CompoundModel]:
        """The portfolio's models, by the keys its workers use."""
        ev = self.evidence
        if not ev.lattice:
            return {ONE_MODEL: ev.h_and}
        if self.on is None:
            return {ModelKind.AND.value: ev.h_and, ModelKind.OR.value: ev.model(ModelKind.OR)}
        return {self.on.value: ev.model(self.on)}

    def _key(self) -> str:
        return ONE_MODEL if not self.evidence.lattice else (self.on or ModelKind.AND).value

    def _on_words(self) -> str:
        if not self.evidence.lattice:
            return ONE_MODEL
        return self.on.symbol if self.on is not None else "the agent"

    # -- checks ---------------------------------------------------------------------
    def check(self, prop: Property) -> Verdict:
        """The verdict of ``prop`` (one of the verifier's properties).
        :class:`UnsupportedQueryError` when the chosen engine does not answer it."""
        start = time.perf_counter()
        vocab = self.evidence.h_and.ctx.vocab
        kind = None if not self.evidence.lattice else self.on
        try:
            if self._scheduler is not None:
                assert self.evidence.agent is not None  # checked in __init__
                return Verdict(
                    prop,
                    self.evidence.agent.alpha.vocabulary,  # the state is the setting's
                    self.init,
                    "the agent",
                    self._sampled(prop, self._scheduler),
                    None,
                    time.perf_counter() - start,
                )
            if not isinstance(prop.query, ExistsPath | ForallPath):
                q, on = self._quantitative(prop)
                qkind = (self.on or ModelKind.AND) if self.evidence.lattice else None
                return Verdict(prop, vocab, self.init, on, q, qkind, time.perf_counter() - start)
            result: LatticeVerdict | QualitativeResult
            result = self._about_agent(prop) if self.evidence.lattice and self.on is None else self._on_model(prop)
        except CheckTimeout as exc:
            return Verdict(prop, vocab, self.init, self._on_words(), None, kind, time.perf_counter() - start, exc)
        return Verdict(prop, vocab, self.init, self._on_words(), result, kind, time.perf_counter() - start)

    def _quantitative(self, prop: Property) -> tuple[quantitative.QuantitativeResult, str]:
        ev = self.evidence
        kind = self.on or ModelKind.AND
        # The data bound the agent through h∧ (T_h∧ = T_D), the model they are.
        data = ev.data if ev.lattice and kind is ModelKind.AND else None
        if not ev.lattice:
            on = ONE_MODEL
        else:
            on = MLE if self.on is None else kind.symbol
        if not self.values:
            if data is None:
                raise UsageError(f"{prop.name}: the agent's bounds need the data the models were learned from")
            return quantitative.agent_result(
                prop, data, self.init, ev.pair_delta, scope=ev.scope, sampling=self._sampling, world=ev.world
            ), on
        q = quantitative.check(
            prop,
            ev.h_and if not ev.lattice else ev.model(kind),
            self.init,
            self._checker,
            data=data,
            delta=ev.pair_delta,
            observed_only=ev.scope == "observed",
            world=ev.world,
        )
        return q, on

    def _sampled(self, prop: Property, check: SchedulerCheck) -> SchedulerResult:
        ev = self.evidence
        assert ev.agent is not None and ev.data is not None  # checked in __init__
        return check_scheduler(
            ev.agent,
            ev.data.capability_table,
            prop,
            self.init,
            check.scheduler,
            self._rng,
            name=check.name,
            delta=ev.delta,
            width=check.width,
            max_runs=check.max_runs,
            max_executions=check.max_executions,
        )

    def _portfolio_of(self) -> Portfolio:
        if self._portfolio is None:
            ev = self.evidence
            # Worker processes are forked from this one with the properties, so the
            # qualitative ones are all sent once.
            self._portfolio = Portfolio(
                self._models(),
                self.properties,
                engine=self.engine,
                timeout=self.timeout,
                data=ev.data,
                delta=ev.pair_delta,
                epsilon=ev.epsilon,
                within=self._within,
            )
        return self._portfolio

    def _on_model(self, prop: Property) -> QualitativeResult:
        if self._engines is not None:
            engine = self._engines[0] if self._key() in (ONE_MODEL, ModelKind.AND.value) else self._engines[1]
            return engine.check(prop, self.init)
        return self._portfolio_of().check(self._key(), self._index(prop), self.init)

    def _about_agent(self, prop: Property) -> LatticeVerdict:
        ev = self.evidence
        h_or = ev.model(ModelKind.OR)
        vocab = ev.h_and.ctx.vocab
        if self._engines is not None:
            v = decide(
                prop,
                ev.h_and,
                h_or,
                ev.data,
                self.init,
                engines=self._engines,
                delta=ev.pair_delta,
                epsilon=ev.epsilon,
                within=self._within,
            )
        else:
            portfolio, index = self._portfolio_of(), self._index(prop)
            on_and = portfolio.check(ModelKind.AND.value, index, self.init)
            on_or = portfolio.check(ModelKind.OR.value, index, self.init)
            v = portfolio.verdict(index, self.init, on_and, on_or)
        if ev.abstraction is not None and ev.data is not None:
            v = decide_pooled(
                prop, v, self.pooled_engines(), ev.data, self.pooled(), self.init, ev.epsilon, self._within
            )
        return settle(v, prop, ev.world, self.init, vocab)

    def pooled(self) -> Pooled:
        """The data pooled by the evidence's abstraction (which it must have)."""
        if self._pooled is None:
            ev = self.evidence
            assert ev.abstraction is not None and ev.data is not None
            self._pooled = pool(ev.data, ev.abstraction, ev.delta, ev.abstraction_since)
        return self._pooled

    def pooled_engines(self) -> tuple[SymbolicEngine, SymbolicEngine]:
        """BDD engines of h∧ and of h∨ under the evidence's abstraction
        (:func:`.pooled.pooled_h_or`), kept across properties."""
        if self._widened is None:
            ev = self.evidence
            assert ev.data is not None
            on_and = self._engines[0] if self._engines is not None else SymbolicEngine(ev.h_and)
            self._widened = (on_and, SymbolicEngine(pooled_h_or(ev.model(ModelKind.OR), ev.data, self.pooled())))
        return self._widened

    def _index(self, prop: Property) -> int:
        for k, p in enumerate(self.properties):
            if p is prop:
                return k
        return self.properties.index(prop)


def verify(
    evidence: Evidence,
    prop: Property,
    init: State,
    *,
    on: ModelKind | None = None,
    engine: str = AUTO,
    quantitative_engine: str = AUTO,
    timeout: float | None = None,
    scheduler: SchedulerCheck | None = None,
) -> Verdict:
    """The verdict of one property (:func:`verify_all` of it alone)."""
    verdicts = verify_all(
        evidence,
        (prop,),
        init,
        on=on,
        engine=engine,
        quantitative_engine=quantitative_engine,
        timeout=timeout,
        scheduler=scheduler,
    )
    try:
        return next(verdicts)
    finally:
        verdicts.close()  # stops the verifier's worker processes now, not when collected


def verify_all(
    evidence: Evidence,
    properties: Iterable[Property],
    init: State,
    *,
    on: ModelKind | None = None,
    engine: str = AUTO,
    quantitative_engine: str = AUTO,
    timeout: float | None = None,
    scheduler: SchedulerCheck | None = None,
) -> Generator[Verdict, None, None]:
    """The verdicts of several properties, each as soon as it is checked, with the
    engines shared among them (``capver verify`` prints each as it comes)."""
    props = tuple(properties)
    with Verifier(
        evidence,
        props,
        init,
        on=on,
        engine=engine,
        quantitative_engine=quantitative_engine,
        timeout=timeout,
        scheduler=scheduler,
    ) as verifier:
        for prop in props:
            yield verifier.check(prop)


def engine_names(names: Iterable[str], *, option: str = "engine") -> tuple[str, str]:
    """(the qualitative engine, the quantitative checker) that ``names`` give: each
    name is an engine of one kind (``--engine`` is repeatable, one of each kind), a
    kind not named stays ``auto``."""
    names = list(names)
    for n in names:
        if n != AUTO and n not in QUALITATIVE_ENGINES and n not in checkers.QUANTITATIVE_CHECKERS:
            known = ", ".join((AUTO, *QUALITATIVE_ENGINES, *checkers.QUANTITATIVE_CHECKERS))
            raise UsageError(f"{option} {n!r}: expected one of {known}")
    qualitative = [n for n in names if n in QUALITATIVE_ENGINES]
    quantitative = [n for n in names if n in checkers.QUANTITATIVE_CHECKERS]
    for kind, chosen in (("E/A", qualitative), ("P/R", quantitative)):
        if len(set(chosen)) > 1:
            raise UsageError(
                f"{option}: {' and '.join(sorted(set(chosen)))} are both engines of {kind} properties; "
                "name at most one of each kind"
            )
    return (qualitative[0] if qualitative else AUTO), (quantitative[0] if quantitative else AUTO)


def _quantitative_engine(name: str) -> str:
    if name.startswith("storm") and not storm.available():
        raise UsageError(f"engine {name}: stormpy is not installed (pip install 'stormpy>=2.0'), or use explicit")
    if name != AUTO and name not in checkers.QUANTITATIVE_CHECKERS:
        raise UsageError(f"engine {name!r}: expected auto or one of {', '.join(checkers.QUANTITATIVE_CHECKERS)}")
    return name


__all__ = ["MLE", "ONE_MODEL", "Evidence", "UnsupportedQueryError", "Verifier", "engine_names", "verify", "verify_all"]
