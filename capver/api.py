"""capver from Python: what a notebook user needs, in a few calls.

    import capver
    a = capver.load_setting("lao", domain="blocks")          # a bundled setting, or
    # a = capver.gym_setting(env, agent, alpha, capabilities)  # your own agent
    result = capver.learn(a, method="mcqs-s", max_steps=500, seed=0)
    print(result.to_dsl("h_and"))                            # the learned model, readable
    assert result.check().holds                              # z3: h∧ ⪯ h∨ (section 3.1)
    print(result.verify("E [ F on(a,b) ]").verdict)          # about the agent, from h∧ and h∨
    result.export("out/", which="h_and")                     # PPDDL for planners

The objects are the library's own (:class:`~capver.settings.Assessment`,
:class:`~capver.model.capability_model.CompoundModel`,
:class:`~capver.core.dataset.TransitionDataset`), so everything below the API stays
reachable from a result.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from capver.agents.base import Agent
from capver.core.dataset import TransitionDataset
from capver.core.properties import ExistsPath, ForallPath, to_text
from capver.core.setting_args import SettingArgs
from capver.core.state import Capability
from capver.engines.directed import DEFAULT_WIDTH, PropertyStatus, Targets, TierChange
from capver.engines.evaluation import checkpoint_scores, collect_eval_dataset
from capver.engines.execution import ExecutionBudget
from capver.engines.learning import LEARN_DEFAULTS, LearnConfig, Learner, Progress, Setting
from capver.engines.lifting import run_lifted_model
from capver.engines.verification import quantitative
from capver.engines.verification.agent_verdict import DEFAULT_DELTA, DEFAULT_EPSILON, LatticeVerdict, decide
from capver.engines.verification.checkers import QUANTITATIVE_CHECKERS
from capver.engines.verification.environment import World, restriction, settle
from capver.engines.verification.quantitative import QuantitativeResult
from capver.engines.verification.relations import RelationVerdict, equivalent, refines, same_distributions
from capver.envs.base import Representation, Simulator
from capver.errors import UsageError
from capver.io import certificate, dsl, run_dir
from capver.io.literal_text import parse_conjunction, parse_state
from capver.io.ppddl_export.determinised import export_determinized
from capver.io.ppddl_export.ppddl import export_ppddl
from capver.io.properties_text import parse_property
from capver.io.run_dir import Run
from capver.io.run_file import RunBudget, RunManifest
from capver.logic.condition import LogicContext
from capver.model.capability_model import CompoundModel
from capver.model.lifted import LiftedOccam
from capver.settings import Assessment, build_assessment, world_of

__all__ = ["LearnResult", "Run", "gym_setting", "learn", "load_run", "load_setting"]

# The models of a result: the lattice bounds h∧ and h∨ and the Occam model h̃ between them.
MODELS = ("h_and", "h_or", "h_tilde")


def load_setting(agent: str = "lao", *, seed: int = 0, **options: Any) -> Assessment:
    """A named setting of ``capver learn`` (``agent`` is one of
    :data:`capver.settings.SETTINGS`; ``options`` are the fields of
    :class:`~capver.core.setting_args.SettingArgs`: domain, problem, model, init, theta,
    step_cap, layouts)."""
    try:
        args = SettingArgs(seed=seed, **options)
    except TypeError as exc:
        raise UsageError(
            f"load_setting: {exc}; expected options among {list(SettingArgs.__dataclass_fields__)}"
        ) from None
    return build_assessment(agent, args, np.random.default_rng(seed))


def gym_setting(
    sim: Simulator[Any],
    agent: Agent,
    alpha: Representation[Any],
    capabilities: Iterable[Capability],
    initial_states: Sequence[Any] | None = None,
    *,
    theta: int | None = None,
    step_cap: int = 200,
    name: str = "custom",
) -> Assessment:
    """A setting of your own: a simulator (e.g. :class:`capver.envs.gym_adapter.GymSimulator`
    around a gymnasium environment), the agent, α and the capabilities to assess.
    The initial states default to the simulator's current state."""
    initial = tuple(initial_states) if initial_states is not None else (sim.get_state(),)
    setting = Setting(agent, sim, alpha, tuple(capabilities), initial, ExecutionBudget(max_steps=step_cap, theta=theta))
    return Assessment(name, LogicContext(alpha.vocabulary), setting)


def load_run(path: str | Path) -> Run:
    """The run directory ``path`` (written by ``capver learn --out`` or
    :meth:`LearnResult.save`): its models (``run.h_and``, ``run.model("tilde")``),
    data (``run.dataset()``), setting (``run.assessment``) and manifest."""
    return Run.open(path)


@dataclass(frozen=True, slots=True)
class LearnResult:
    """What :func:`learn` found: the lattice bounds h∧ ⪯ h⋆ ⪯ h∨, the data, and (built
    on first use) the Occam model h̃ between them."""

    assessment: Assessment
    h_and: CompoundModel
    h_or: CompoundModel
    data: TransitionDataset
    progress: Progress
    seed: int = 0
    properties: tuple[PropertyStatus, ...] = ()  # with learn(properties=...): each property's status
    history: tuple[TierChange, ...] = ()  # and the changes of tier, with the steps each took
    method: str = "mcqs-s"
    budget: RunBudget = field(default_factory=RunBudget)
    # What is built on first use and kept: h̃ ("h_tilde") and the environment's
    # reachable states ("world", None where they are not known).
    _cache: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @property
    def h_tilde(self) -> CompoundModel:
        """The Occam model h̃ exactly as ``capver learn`` writes it for this seed."""
        return self._lifted().model

    def _lifted(self) -> LiftedOccam:
        if "h_tilde" not in self._cache:
            self._cache["h_tilde"] = run_lifted_model(self.h_and, self.data, self.seed)
        lifted: LiftedOccam = self._cache["h_tilde"]
        return lifted

    def _world(self) -> World | None:
        """The states the environment reaches (a breadth-first enumeration), once."""
        if "world" not in self._cache:
            self._cache["world"] = _world(self.assessment)
        world: World | None = self._cache["world"]
        return world

    def save(self, path: str | Path, *, certify: bool = True) -> Run:
        """Write the result as a run directory that ``capver verify``, ``report``,
        ``plan``, ``export`` and ``certify`` accept: the three models (starting in
        the setting's initial state when it has one), the data, the properties, the
        certificate (with ``certify``) and, for a setting of :func:`load_setting`,
        ``run.json`` (a :func:`gym_setting` cannot be rebuilt from a name, so its
        run has none and ``capver eval`` / ``--replay`` do not apply).  Writes into
        a new or empty directory or a run capver wrote, nothing else."""
        origin = self.assessment.origin
        manifest = RunManifest(origin.agent, origin.args, self.method, self.budget) if origin is not None else None
        st = self.assessment.setting
        starts = {st.alpha(x) for x in st.initial_states}
        props = "".join(f"{to_text(p.prop)};\n" for p in self.properties) or None
        run = run_dir.save(
            path,
            h_and=self.h_and,
            h_or=self.h_or,
            tilde=self._lifted(),
            data=self.data,
            manifest=manifest,
            init=next(iter(starts)) if len(starts) == 1 else None,
            properties_text=props,
        )
        if not certify:
            return run
        # The models in memory are those the files hold (the DSL reads back exactly
        # what it wrote), so the certificate need not read them again.
        models = {certificate.AND: self.h_and, certificate.OR: self.h_or, certificate.TILDE: self.h_tilde}
        certificate.certify(run.path, self.assessment.truth, models)
        return Run.open(run.path)

    def model(self, which: str = "h_and") -> CompoundModel:
        if which not in MODELS:
            raise UsageError(f"which={which!r}: expected one of {MODELS}")
        return self.h_and if which == "h_and" else self.h_or if which == "h_or" else self.h_tilde

    def to_dsl(self, which: str = "h_and") -> str:
        """The model in capver's readable DSL (``dsl.read`` gives it back exactly)."""
        names = {"h_and": "pessimistic", "h_or": "optimistic", "h_tilde": "occam"}
        return dsl.emit(self.model(which), name=names[which])

    def check(self, relation: str = "refines") -> RelationVerdict:
        """z3's proof (or counterexample) of a relation between h∧ and h∨: ``refines``
        (h∧ ⪯ h∨, which the lattice guarantees), ``equivalent`` or
        ``same-probabilities``."""
        checks = {"refines": refines, "equivalent": equivalent, "same-probabilities": same_distributions}
        if relation not in checks:
            raise UsageError(f"relation={relation!r}: expected one of {sorted(checks)}")
        return checks[relation](self.h_and, self.h_or)

    def evaluate(self, sequences: int = 300, seed: int = 0) -> dict[str, float]:
        """Section 4.2's scores of h∧ on a fresh evaluation dataset D′ of random
        capability sequences executed by the agent."""
        a = self.assessment
        d_eval = collect_eval_dataset(a.setting, a.setting.capabilities, sequences, np.random.default_rng(seed))
        return checkpoint_scores(self.h_and, self.data, d_eval, a.truth, a.reachable)

    def verify(
        self,
        prop: str,
        *,
        init: str = "",
        engine: str = "explicit",
        delta: float = DEFAULT_DELTA,
        epsilon: float = DEFAULT_EPSILON,
        environment: bool = True,
    ) -> LatticeVerdict | QuantitativeResult:
        """Check a property (``capver verify``'s language) from the setting's initial
        state (or the atoms ``init``): a qualitative one gives the verdict about the
        agent from h∧ and h∨, in its tier (confident at ``delta`` and ``epsilon``); a
        quantitative one its value on h∧ by ``engine`` (a name of
        :data:`capver.engines.verification.checkers.QUANTITATIVE_CHECKERS`) and the agent's value
        bounded at confidence 1 − ``delta`` (``.agent``; ``.agent_verdict`` for a
        ``P<op>p`` bound).  ``environment``: what the states the environment reaches
        settle (the PPDDL settings) is exact, and the agent's bounds are 0 where none
        of its runs reaches the goal, as in ``capver verify``."""
        vocab = self.h_and.vocabulary
        parsed = parse_property(prop, vocab, tuple(self.h_and), source="prop")
        st = self.assessment.setting
        start = parse_state(init, vocab, what="init") if init.strip() else st.alpha(st.initial_states[0])
        if isinstance(parsed.query, ExistsPath | ForallPath):
            world = self._world() if environment else None
            within = restriction(world, start, vocab)
            verdict = decide(
                parsed, self.h_and, self.h_or, self.data, start, delta=delta, epsilon=epsilon, within=within
            )
            return settle(verdict, parsed, world, start, vocab)
        if engine not in QUANTITATIVE_CHECKERS:
            raise UsageError(f"engine={engine!r}: expected one of {', '.join(QUANTITATIVE_CHECKERS)}")
        return quantitative.check(
            parsed,
            self.h_and,
            start,
            QUANTITATIVE_CHECKERS[engine](),
            data=self.data,
            delta=delta,
            world=self._world() if environment else None,
        )

    def export(
        self, out: str | Path, *, which: str = "h_and", init: str = "", goal: str = "", determinize: bool = False
    ) -> list[Path]:
        """Write the model as PPDDL (and an all-outcomes determinised PDDL) into the
        directory ``out``; ``init`` and ``goal`` are written as in ``capver export``."""
        model = self.model(which)
        vocab = model.vocabulary
        s0 = parse_state(init, vocab, what="init")
        lits = parse_conjunction(goal, vocab, what="goal") if goal.strip() else ()
        written = list(export_ppddl(model, init=s0, goal=lits, name=which).write(Path(out)))
        if determinize:
            written += export_determinized(model, init=s0, goal=lits, name=which).write(Path(out))
        return written


def _world(assessment: Assessment) -> World | None:
    """The environment's reachable states for a setting built by name (None otherwise)."""
    origin = assessment.origin
    return world_of(origin.agent, origin.args) if origin is not None else None


def learn(
    assessment: Assessment,
    *,
    method: str = LEARN_DEFAULTS.method,
    max_steps: int | None = LEARN_DEFAULTS.max_steps,
    max_queries: int | None = None,
    max_seconds: float | None = None,
    executions: int = LEARN_DEFAULTS.executions,
    iterations: int = LEARN_DEFAULTS.iterations,
    horizon: int = LEARN_DEFAULTS.horizon,
    xi: float = LEARN_DEFAULTS.xi_cap,
    patience: int = LEARN_DEFAULTS.patience,
    seed: int = 0,
    properties: Sequence[str] = (),
    delta: float = DEFAULT_DELTA,
    epsilon: float = DEFAULT_EPSILON,
    width: float = DEFAULT_WIDTH,
    focus: bool = True,
    environment: bool = True,
) -> LearnResult:
    """Assess the agent with MCQS-E, MCQS-S or random queries (``method``) until a
    budget is spent or the stopping rule fires; the same loop as ``capver learn``.

    ``properties`` (``capver verify``'s language, optionally ``"name": ...``) make the
    run property-directed, as ``capver learn --properties``: queries go where they can
    change a property's verdict tier (``focus=False`` only tracks the tiers), and the
    run stops once every property is observed or confident at ``delta`` and
    ``epsilon`` (a ``Pmax=?`` / ``Pmin=?`` once the agent's bounds are ``width`` apart); the result's :attr:`LearnResult.properties` lists each property's
    status and :attr:`LearnResult.history` the tier changes with their steps;
    ``environment=False`` leaves out what the environment settles (``capver learn
    --ignore-environment``)."""
    vocab = assessment.ctx.vocab
    caps = tuple(c.name for c in assessment.setting.capabilities)
    props = tuple(
        p if text.lstrip().startswith('"') else dataclasses.replace(p, name=f"p{k}")
        for k, text in enumerate(properties, 1)
        for p in (parse_property(text, vocab, caps, source="properties"),)
    )
    config = LearnConfig.from_options(
        method,
        executions=executions,
        iterations=iterations,
        horizon=horizon,
        xi_cap=xi,
        patience=patience,
        max_steps=max_steps,
        max_queries=max_queries,
        max_seconds=max_seconds,
        properties=props,
        targets=Targets(delta, epsilon, width),
        directed=focus,
        world=_world(assessment) if props and environment else None,
    )
    learner = Learner(assessment.ctx, assessment.setting, config, np.random.default_rng(seed), grow=assessment.grow)
    progress = learner.run()
    tracker = learner.tracker
    return LearnResult(
        assessment,
        learner.h_and,
        learner.h_or,
        learner.data,
        progress,
        seed,
        tuple(tracker.status[p.name] for p in props) if tracker else (),
        tuple(tracker.history) if tracker else (),
        method,
        RunBudget(max_steps, max_queries, max_seconds),
    )
