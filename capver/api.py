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
import warnings
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np

from capver.agents.base import Agent
from capver.core.dataset import TransitionDataset
from capver.core.properties import to_text
from capver.core.setting_args import SettingArgs
from capver.core.state import Capability, State
from capver.core.vocabulary import Atom, Vocabulary
from capver.engines.directed import DEFAULT_WIDTH, PropertyStatus, Targets, TierChange
from capver.engines.evaluation import checkpoint_scores, collect_eval_dataset
from capver.engines.execution import ExecutionBudget
from capver.engines.learning import LEARN_DEFAULTS, LearnConfig, Learner, Progress, Setting
from capver.engines.lifting import run_lifted_model
from capver.engines.replay import Replay, replay
from capver.engines.verification import Evidence, Verdict, smc, verify
from capver.engines.verification.agent_verdict import DEFAULT_DELTA, DEFAULT_EPSILON
from capver.engines.verification.environment import World
from capver.engines.verification.evidence import engine_names
from capver.engines.verification.relations import RelationVerdict, equivalent, refines, same_distributions
from capver.envs.base import Representation, Simulator
from capver.envs.gym_adapter import GymSimulator, time_limits
from capver.envs.representation import AtomsFunction, AtomsLike
from capver.errors import CapverError, SettingWarning, UsageError, VocabularyError
from capver.io import certificate, dsl, run_dir
from capver.io.abstraction_file import load_abstraction
from capver.io.literal_text import parse_conjunction, parse_state
from capver.io.ppddl_export.determinised import export_determinized
from capver.io.ppddl_export.ppddl import export_ppddl
from capver.io.properties_text import parse_property
from capver.io.run_dir import Run
from capver.io.run_file import CUSTOM, RunBudget, RunManifest
from capver.logic.condition import LogicContext
from capver.model.abstraction import Abstraction
from capver.model.capability_model import CompoundModel
from capver.model.kinds import ModelKind
from capver.model.lifted import LiftedOccam
from capver.settings import Assessment, build_assessment, world_of

__all__ = ["LearnResult", "Run", "gym_setting", "learn", "load_run", "load_setting"]

_CLI = SettingArgs()  # capver learn's defaults, which gym_setting shares

# The models of a result: the lattice bounds h∧ and h∨ and the Occam model h̃ between them.


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
    env: gym.Env[Any, Any] | Simulator[Any],
    agent: Agent,
    alpha: Representation[Any] | Callable[[Any], AtomsLike],
    capabilities: Iterable[Capability | str],
    initial_states: Sequence[Any] | None = None,
    *,
    vocabulary: Vocabulary | Iterable[Atom | str] | None = None,
    theta: int | None = _CLI.theta,
    step_cap: int = _CLI.step_cap,
    name: str = "custom",
    seed: int = 0,
) -> Assessment:
    """A setting of your own (docs/your_agent.md walks through one): your agent in
    your environment, seen through your α.

    ``env``: a gymnasium environment (wrapped in a :class:`GymSimulator`; unwrap it
    or not, a ``TimeLimit`` counts each execution's steps) or any
    :class:`~capver.envs.base.Simulator`.  ``agent``: an object with ``name``,
    ``begin(capability, sim, rng)`` and ``act(sim, rng)`` returning an action or
    :class:`Stop`.  ``alpha``: α, a function from the environment state
    (``sim.env.unwrapped`` is live while it runs) to the atoms true in it — a set or
    list of atom strings or :class:`Atom` objects — over ``vocabulary`` (a
    :class:`Vocabulary`, or the list of every atom); or a representation with its
    own ``.vocabulary``.  ``capabilities``: :class:`Capability` objects, or their
    intents as text (``"goal"``, ``"on(a,b) & ~clear(a)"``).  ``initial_states``:
    the states queries start from (default: the environment after ``reset(seed)``,
    or a simulator's current state); learning starts every query from one of them
    or a state reached since, and ``verify`` and ``save`` start from the first
    unless told otherwise (``init=``).  ``theta`` (Θ: the α changes after which an
    execution ends, None for ∞) and ``step_cap`` (the simulator steps one execution
    may take) default as in ``capver learn``.

    Everything that can be checked before learning is checked here, and a mistake
    fails with one line saying what was expected."""
    if not isinstance(step_cap, int) or isinstance(step_cap, bool) or step_cap < 1:
        raise UsageError(f"gym_setting: argument 'step_cap': expected a whole number >= 1, got {step_cap!r}")
    if theta is not None and (not isinstance(theta, int) or isinstance(theta, bool) or theta < 1):
        raise UsageError(f"gym_setting: argument 'theta': expected a whole number >= 1 or None (∞), got {theta!r}")
    representation = _representation(alpha, vocabulary)
    vocab = representation.vocabulary
    caps = _capabilities(capabilities, vocab)
    for method in ("begin", "act"):
        if not callable(getattr(agent, method, None)):
            raise UsageError(
                f"gym_setting: argument 'agent': expected an object with a {method}() method (capver.Agent)"
            )
    if isinstance(env, gym.Env):
        limits = time_limits(env)
        sim: Simulator[Any] = GymSimulator(env, seed=seed)
        if initial_states is None:
            initial_states = (sim.reset(seed),)
        for limit in limits:
            warnings.warn(
                f"gym_setting: the environment's TimeLimit (max_episode_steps={limit._max_episode_steps}) restarts at "
                f"every execution, so an execution is truncated after {min(limit._max_episode_steps, step_cap)} "
                "steps (step_cap or the limit, whichever is smaller) and counted as failed",
                SettingWarning,
                stacklevel=2,
            )
    elif isinstance(env, Simulator):
        sim = env
    else:
        raise UsageError(
            f"gym_setting: argument 'env': expected a gymnasium.Env or a capver Simulator, got {type(env).__name__}"
        )
    initial = tuple(initial_states) if initial_states is not None else (sim.get_state(),)
    if not initial:
        raise UsageError("gym_setting: argument 'initial_states': expected at least one state")
    for k, x in enumerate(initial):
        try:
            representation(x)
        except VocabularyError as exc:
            raise UsageError(f"gym_setting: on initial state {k}, {exc}") from None
    setting = Setting(agent, sim, representation, caps, initial, ExecutionBudget(max_steps=step_cap, theta=theta))
    return Assessment(name, LogicContext(vocab), setting)


def _representation(
    alpha: Representation[Any] | Callable[[Any], AtomsLike], vocabulary: Vocabulary | Iterable[Atom | str] | None
) -> Representation[Any]:
    """α as capver calls it, converting what the user's function returns."""
    own = getattr(alpha, "vocabulary", None)
    if vocabulary is None and isinstance(own, Vocabulary):
        vocabulary = own
    if vocabulary is None:
        raise UsageError(
            "gym_setting: argument 'vocabulary': expected the Vocabulary of α's atoms, or the list of every atom "
            "(e.g. ['goal', 'hole']), since α has no .vocabulary"
        )
    if not callable(alpha):
        raise UsageError(f"gym_setting: argument 'alpha': expected a function of the environment state, got {alpha!r}")
    try:
        vocab = vocabulary if isinstance(vocabulary, Vocabulary) else Vocabulary.of_atoms(vocabulary)
    except (VocabularyError, TypeError) as exc:
        raise UsageError(f"gym_setting: argument 'vocabulary': {exc}") from None
    if not len(vocab):
        raise UsageError("gym_setting: argument 'vocabulary': expected at least one atom")
    return AtomsFunction(alpha, vocab)


def _capabilities(capabilities: Iterable[Capability | str], vocab: Vocabulary) -> tuple[Capability, ...]:
    """The capabilities, each intent checked against the vocabulary."""
    caps: list[Capability] = []
    for given in capabilities:
        try:
            c = (
                Capability.for_intent(tuple(parse_conjunction(given, vocab, what="intent")))
                if isinstance(given, str)
                else given
            )
        except CapverError as exc:  # the parser's message, without its caret line
            raise UsageError(f"gym_setting: capability {given!r}: {str(exc).splitlines()[0]}") from None
        if not isinstance(c, Capability):
            raise UsageError(
                f"gym_setting: argument 'capabilities': expected Capability objects or intents as text, got {c!r}"
            )
        for lit in c.intent:
            if lit.atom not in vocab:
                raise UsageError(
                    f"gym_setting: capability {c.name!r}: its intent names {lit.atom}, which is not in the "
                    f"vocabulary (expected one of {', '.join(str(a) for a in vocab.atoms[:8])}"
                    f"{', …' if len(vocab) > 8 else ''})"
                )
        if any(c.name == d.name for d in caps):
            raise UsageError(f"gym_setting: capability {c.name!r} is given twice")
        caps.append(c)
    if not caps:
        raise UsageError("gym_setting: argument 'capabilities': expected at least one capability")
    return tuple(caps)


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
        certificate (with ``certify``), ``run.json`` and, after :meth:`evaluate`,
        the evaluation dataset D′.  ``capver report``, ``eval``, ``verify``,
        ``export``, ``plan`` and ``certify`` read it.  A :func:`gym_setting`'s agent
        and simulator live in your code, so ``run.json`` marks the run as custom, and
        what needs them (``verify --replay``, ``eval``'s E3) is :meth:`replay` and
        :meth:`evaluate` here.  Writes into a new or empty directory or a run capver
        wrote, nothing else."""
        origin = self.assessment.origin
        st = self.assessment.setting
        if origin is not None:
            manifest = RunManifest(origin.agent, origin.args, self.method, self.budget)
        else:
            # A setting made in Python: run.json says so, and what it can of the setting.
            args = SettingArgs(seed=self.seed, theta=st.budget.theta, step_cap=st.budget.max_steps)
            manifest = RunManifest(CUSTOM, args, self.method, self.budget, self.assessment.name)
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
        d_eval = self._cache.get("d_eval")
        if d_eval is not None and not run.has(run_dir.EVAL_DATASET):
            run_dir.write_dataset(run.file(run_dir.EVAL_DATASET), d_eval)
        if not certify:
            return run
        # The models in memory are those the files hold (the DSL reads back exactly
        # what it wrote), so the certificate need not read them again.
        models = {certificate.AND: self.h_and, certificate.OR: self.h_or, certificate.TILDE: self.h_tilde}
        certificate.certify(run.path, self.assessment.truth, models)
        return Run.open(run.path)

    def model(self, which: str = "h_and") -> CompoundModel:
        kind = ModelKind.parse(which, what="which")
        return self.h_and if kind is ModelKind.AND else self.h_or if kind is ModelKind.OR else self.h_tilde

    def to_dsl(self, which: str = "h_and") -> str:
        """The model in capver's readable DSL (``dsl.read`` gives it back exactly)."""
        return dsl.emit(self.model(which), name=ModelKind.parse(which, what="which").dsl)

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
        capability sequences executed by the agent (kept: :meth:`save` writes it)."""
        a = self.assessment
        d_eval = collect_eval_dataset(a.setting, a.setting.capabilities, sequences, np.random.default_rng(seed))
        self._cache["d_eval"] = d_eval  # save() writes it, for capver eval
        return checkpoint_scores(self.h_and, self.data, d_eval, a.truth, a.reachable)

    def evidence(
        self, *, delta: float = DEFAULT_DELTA, epsilon: float = DEFAULT_EPSILON, environment: bool = True
    ) -> Evidence:
        """What this result's verdicts rest on (:class:`Evidence`, the input of
        :func:`capver.engines.verification.verify`): the lattice, the data and, with
        ``environment``, the states the setting's environment reaches where capver
        knows them (the PPDDL settings)."""
        world = self._world() if environment else None
        return Evidence(self.h_and, self.h_or, self.data, world, delta=delta, epsilon=epsilon)

    def verify(
        self,
        prop: str,
        *,
        init: str | None = None,
        engine: str | Sequence[str] = "auto",
        timeout: float | None = None,
        delta: float = DEFAULT_DELTA,
        epsilon: float = DEFAULT_EPSILON,
        environment: bool = True,
        scheduler: Sequence[str] | Callable[[State], str | None] | None = None,
        width: float = smc.DEFAULT_WIDTH,
        max_runs: int = smc.DEFAULT_MAX_RUNS,
        max_executions: int = smc.DEFAULT_MAX_EXECUTIONS,
        seed: int = 0,
        abstraction: Abstraction | str | None = None,
    ) -> Verdict:
        """Check a property (``capver verify``'s language) from the setting's initial
        state (or the atoms ``init``; ``""`` is the empty state), exactly as ``capver
        verify`` does on the saved run, through the same entry point
        (:func:`capver.engines.verification.verify`): a qualitative one gives the
        verdict about the agent from h∧ and h∨, in its tier (confident at ``delta``
        and ``epsilon``); a quantitative one its value on h∧ and the agent's bounds at
        confidence 1 − ``delta`` (``.agent``).  ``engine`` is what ``--engine`` takes:
        one name, or one of each kind (``("ic3", "storm")``); ``timeout`` bounds each
        qualitative check (seconds).
        ``environment``: what the states the environment reaches settle (the PPDDL
        settings) is exact, and the agent's bounds are 0 where none of its runs
        reaches the goal.  ``print(...)`` shows what ``capver verify`` prints,
        ``.to_json()`` its ``--json`` record.

        ``scheduler``: a plan (capability names in order) or a policy (a function from
        a state to a capability name, None to stop); then a ``P`` property's
        probability under it is sampled with the agent itself until decided
        (``capver verify --scheduler``; ``width``, ``max_runs``, ``max_executions``
        and ``seed`` as its options), and ``.result.data`` holds the executions.

        ``abstraction``: as ``capver verify --abstraction`` (``"tilde"``, ``"symmetry"``,
        a file, or ``"module:function"``), or an :class:`~capver.model.abstraction.Abstraction`;
        verdicts about the agent may then rest on executions pooled per class, under
        the assumption the data are tested for (:mod:`capver.engines.verification.pooled`)."""
        vocab = self.h_and.vocabulary
        parsed = parse_property(prop, vocab, tuple(self.h_and), source="prop")
        qualitative, quantitative = engine_names([engine] if isinstance(engine, str) else engine)
        evidence = self.evidence(delta=delta, epsilon=epsilon, environment=environment)
        if isinstance(abstraction, str):
            abstraction = load_abstraction(abstraction, vocab, self.h_and.capabilities, lambda: self.h_tilde)
        if abstraction is not None:
            evidence = dataclasses.replace(evidence, abstraction=abstraction)
        check = None
        if scheduler is not None:
            if callable(scheduler):
                rule, name = smc.policy_scheduler(scheduler), f"the policy {getattr(scheduler, '__name__', 'given')}"
            else:
                plan = [str(c) for c in scheduler]
                rule, name = smc.plan_scheduler(plan), f"the plan {', '.join(plan)}"
            check = smc.SchedulerCheck(rule, name, width, max_runs, max_executions, seed)
            evidence = dataclasses.replace(evidence, agent=self.assessment.setting)
        return verify(
            evidence,
            parsed,
            self._start(init),
            engine=qualitative,
            quantitative_engine=quantitative,
            timeout=timeout,
            scheduler=check,
        )

    def _start(self, init: str | None) -> State:
        """The state ``init`` names, else the setting's initial state, which must be
        one: with several, the caller says which."""
        vocab = self.h_and.vocabulary
        if init is not None:
            return parse_state(init, vocab, what="init")
        st = self.assessment.setting
        starts = sorted({st.alpha(x) for x in st.initial_states})
        if len(starts) > 1:
            shown = "; ".join(vocab.format_state(s) for s in starts[:3])
            raise UsageError(
                f"init: the setting has {len(starts)} initial states ({shown}{'; …' if len(starts) > 3 else ''}); "
                "pass init='atom, ...' to say which to check from"
            )
        return starts[0]

    def replay(self, prop: str, *, runs: int = 100, seed: int = 0, init: str | None = None) -> Replay:
        """Execute the witness of ``prop``'s verdict (a run of h∧) ``runs`` times with
        the agent itself and count how often it reached the property's goal (for
        ``A [ G φ ]``, the violation), as ``capver verify --replay`` does for a run
        capver can rebuild."""
        checked = self.verify(prop, init=init)
        witness = checked.witness
        if witness is None or not witness.steps:
            raise UsageError(f"replay: {prop!r} has no witness run to replay ({checked.to_text().splitlines()[0]})")
        path = checked.prop.query.path  # type: ignore[union-attr]  # E/A properties have witnesses
        st = self.assessment.setting
        return replay(
            st, self.h_and.vocabulary, path, witness, runs, np.random.default_rng(seed), self.data.capability_table
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
    abstraction: Abstraction | str | None = None,
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
    --ignore-environment``); ``abstraction`` (with ``properties``) lets their verdicts
    rest on executions pooled per class, fixed in advance (``capver learn
    --abstraction``: ``"symmetry"``, a file, ``"module:function"`` or an
    :class:`~capver.model.abstraction.Abstraction`; :mod:`capver.engines.verification.pooled`)."""
    vocab = assessment.ctx.vocab
    if abstraction is not None and not properties:
        raise UsageError("abstraction= needs properties= (it serves their verdicts)")
    if isinstance(abstraction, str):

        def no_tilde() -> CompoundModel:
            raise UsageError("abstraction='tilde' needs a run's h̃: learn first, then learn --resume or verify")

        abstraction = load_abstraction(abstraction, vocab, assessment.setting.capabilities, no_tilde)
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
        abstraction=abstraction,
    )
    if assessment.origin is None:
        # A setting made in Python: seed its simulator, so that a run is reproducible
        # bit for bit (a setting built by name was seeded when it was built).
        assessment.setting.sim.reset(seed)
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
