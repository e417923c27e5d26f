"""Named assessment settings: an agent, its simulator, α, the capabilities to assess
and, where it is known, the true model h⋆ (for exact VD).

:data:`SETTINGS` is the registry ``capver learn`` / ``capver eval`` take their
``--agent`` choices from.  Capabilities come from discovery by random walks
(section 3) for the PPDDL agents, and grow from later transitions; the
primitive-action agent's capabilities are the ground actions (the QACE setting);
the model-backed agent's are its model's; the MiniGrid agents are asked the intents
the RL agent was trained for (a list of intents, as section 3 allows).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import numpy as np

from capver.agents.base import Agent
from capver.core.setting_args import SettingArgs
from capver.core.state import Capability, State, Transition
from capver.engines.evaluation import reachable_states
from capver.engines.execution import ExecutionBudget
from capver.engines.learning import Setting
from capver.engines.verification.confidence import Scope
from capver.engines.verification.environment import World, explore
from capver.engines.verification.evidence import Evidence
from capver.errors import CapverError, RunFileError
from capver.io import run_dir
from capver.io.run_file import RunManifest
from capver.logic.condition import LogicContext
from capver.model.capability_model import CompoundModel


class SettingError(CapverError, ValueError):
    """An assessment setting that cannot be built from the given arguments."""


@dataclass(frozen=True, slots=True)
class Assessment:
    """A setting ready to learn on."""

    name: str
    ctx: LogicContext
    setting: Setting
    truth: CompoundModel | None = None
    reachable: frozenset[State] | None = None
    grow: Callable[[Transition], Iterable[Capability]] | None = None
    # The name and arguments it was built from (build_assessment sets them), so that
    # a result learned in it can be saved as a run whose run.json rebuilds it.
    origin: SettingSpec | None = None


def _lao(args: SettingArgs, rng: np.random.Generator) -> Assessment:
    from capver.agents.lao_agent import LAOAgent
    from capver.engines.discovery import discover
    from capver.envs.ppddl import AtomsRepresentation, PPDDLSimulator, load_task

    task = load_task(args.domain, args.problem)
    sim = PPDDLSimulator(task, seed=args.seed)
    alpha = AtomsRepresentation(task)
    caps = discover(sim, alpha, rng, n_walks=10, length=50)
    sim.reset(args.seed)
    setting = Setting(
        LAOAgent(task),
        sim,
        alpha,
        tuple(caps.capabilities),
        (task.initial_state,),
        ExecutionBudget(max_steps=args.step_cap, theta=args.theta),
        symbolic_states=True,
    )
    return Assessment(f"lao:{args.domain}/{args.problem}", LogicContext(task.vocabulary), setting, grow=caps.observe)


def _primitive(args: SettingArgs, rng: np.random.Generator) -> Assessment:
    from capver.agents.primitive import PrimitiveAgent, true_primitive_model
    from capver.envs.ppddl import AtomsRepresentation, PPDDLSimulator, load_task

    task = load_task(args.domain, args.problem)
    sim = PPDDLSimulator(task, seed=args.seed)
    alpha = AtomsRepresentation(task)
    agent = PrimitiveAgent(task)
    ctx = LogicContext(task.vocabulary)
    truth = true_primitive_model(task, ctx)
    setting = Setting(
        agent,
        sim,
        alpha,
        tuple(agent.capabilities),
        (task.initial_state,),
        ExecutionBudget(max_steps=2, theta=1),
        symbolic_states=True,
    )
    reach = frozenset(reachable_states(truth, [task.initial_state]))
    return Assessment(f"primitive:{args.domain}/{args.problem}", ctx, setting, truth, reach)


def _model(args: SettingArgs, rng: np.random.Generator) -> Assessment:
    from capver.io import dsl

    if not args.model:
        raise SettingError("--model FILE is required for the model-backed agent")
    try:
        parsed = dsl.read(args.model)
    except OSError as exc:
        raise SettingError(f"--model {args.model!r}: cannot read the file ({exc.strerror or exc})") from None
    init, _ = parsed.initial_state(args.init)
    return model_assessment(parsed.model, init, f"model:{args.model}")


def model_assessment(model: CompoundModel, init: State, name: str) -> Assessment:
    """The model-backed agent of ``model`` in its symbolic simulator, started at
    ``init``: the setting whose true model h⋆ is known (used by ``capver learn
    --agent model`` and by ``capver plan --execute-with model``)."""
    from capver.agents.model_backed import ModelBackedAgent

    agent = ModelBackedAgent(model)
    setting = Setting(
        agent,
        agent.simulator(init),
        agent.representation(),
        tuple(agent.capabilities),
        (init,),
        ExecutionBudget(max_steps=2, theta=None),
        symbolic_states=True,
    )
    truth = agent.true_model
    return Assessment(name, model.ctx, setting, truth, frozenset(reachable_states(truth, [init])))


def _minigrid(kind: str) -> Callable[[SettingArgs, np.random.Generator], Assessment]:
    def build(args: SettingArgs, rng: np.random.Generator) -> Assessment:
        from capver.agents.minigrid_agents import (
            SearchAgent,
            TabularRLAgent,
            training_intents,
        )
        from capver.envs.minigrid_env import (
            MiniGridRepresentation,
            iter_layouts,
            minigrid_simulator,
            start_state,
        )

        sim = minigrid_simulator()
        alpha = MiniGridRepresentation()
        layouts = [start_state(lay) for lay in iter_layouts(rng, args.layouts)]
        agent: Agent
        if kind == "llm":
            from capver.agents.llm import LLMAgent, LLMConfig

            # Endpoint, model, key and cache come from CAPVER_LLM_* (capver.agents.llm);
            # the endpoint's sampling seed is the run's seed.
            agent = LLMAgent(LLMConfig.from_environ(seed=args.seed))
        else:
            agent = TabularRLAgent() if kind == "rl" else SearchAgent()
        caps = tuple(Capability.for_intent(i) for i in training_intents())
        # Θ = ∞ for MiniGrid, as in section 4.2.
        setting = Setting(agent, sim, alpha, caps, tuple(layouts), ExecutionBudget(max_steps=args.step_cap, theta=None))
        return Assessment(f"minigrid-{kind}", LogicContext(alpha.vocabulary), setting)

    return build


def _tabletop_llm(args: SettingArgs, rng: np.random.Generator) -> Assessment:
    from capver.agents.llm import LLMConfig
    from capver.agents.saycan import SayCanAgent, instructions
    from capver.envs.tabletop import TabletopConfig, TabletopRepresentation, TabletopSimulator, random_scene

    config = TabletopConfig()
    scenes = tuple(random_scene(config, rng) for _ in range(args.layouts))
    # Endpoint, model, key and cache come from CAPVER_LLM_* as for the ReAct agent;
    # the endpoint's sampling seed is the run's seed.
    agent = SayCanAgent(config, LLMConfig.from_environ(seed=args.seed))
    alpha = TabletopRepresentation(config)
    setting = Setting(
        agent,
        TabletopSimulator(config, scenes[0], seed=args.seed),
        alpha,
        instructions(config),
        scenes,
        ExecutionBudget(max_steps=args.step_cap, theta=None),
    )
    return Assessment("tabletop-llm", LogicContext(alpha.vocabulary), setting)


def _crafter(args: SettingArgs, rng: np.random.Generator) -> Assessment:
    from capver.agents.crafter_agents import CrafterSkillAgent, crafter_capabilities
    from capver.envs.crafter_env import CrafterRepresentation, CrafterSimulator

    # One world, generated from the run's seed; x₀ is its start.  Θ = ∞ (the paper
    # uses Θ = 1; see docs/agents/crafter.md); the agent gives up after 100 steps, so
    # executions stay under the step cap.
    sim = CrafterSimulator(world_seed=args.seed)
    alpha = CrafterRepresentation()
    setting = Setting(
        CrafterSkillAgent(),
        sim,
        alpha,
        crafter_capabilities(),
        (sim.initial_state,),
        ExecutionBudget(max_steps=args.step_cap, theta=None),
    )
    return Assessment("crafter", LogicContext(alpha.vocabulary), setting)


def _overcooked(args: SettingArgs, rng: np.random.Generator) -> Assessment:
    from capver.agents.kitchen_agents import PlanningChef, kitchen_capabilities
    from capver.envs.kitchen import LAYOUTS, KitchenEnv, KitchenRepresentation, kitchen_simulator, start_states

    # --domain names the kitchen layout; the default domain (a PDDL one) means cramped_room.
    if args.domain in LAYOUTS:
        layout = args.domain
    elif args.domain == SettingArgs().domain:
        layout = "cramped_room"
    else:
        raise SettingError(f"--domain {args.domain!r}: expected a kitchen layout, one of {sorted(LAYOUTS)}")
    sim = kitchen_simulator(layout)
    env = sim.env.unwrapped
    assert isinstance(env, KitchenEnv)  # kitchen_simulator wraps nothing around it
    alpha = KitchenRepresentation(env.layout, env.cook_time)
    # --layouts start states: the layout's own start and drawn ones; Θ = ∞ as for MiniGrid.
    setting = Setting(
        PlanningChef(env.layout, env.cook_time),
        sim,
        alpha,
        kitchen_capabilities(),
        tuple(start_states(env.layout, rng, args.layouts)),
        ExecutionBudget(max_steps=args.step_cap, theta=None),
    )
    return Assessment(f"overcooked:{layout}", LogicContext(alpha.vocabulary), setting)


SETTINGS: dict[str, Callable[[SettingArgs, np.random.Generator], Assessment]] = {
    "lao": _lao,
    "primitive": _primitive,
    "model": _model,
    "minigrid-rl": _minigrid("rl"),
    "minigrid-search": _minigrid("search"),
    "llm": _minigrid("llm"),
    "crafter": _crafter,
    "tabletop-llm": _tabletop_llm,
    "overcooked": _overcooked,
}


def _ppddl_world(args: SettingArgs) -> World | None:
    from capver.envs.ppddl import load_task

    task = load_task(args.domain, args.problem)

    def successors(s: State) -> Iterable[State]:
        return (t for a in task.applicable(s) for _, t in task.outcomes(s, a))

    edges = explore(successors, task.initial_state)
    if edges is None:
        return None
    source = f"the PPDDL task {args.domain}/{args.problem}"
    # With Θ = 1 an execution ends at the first change of the task's state (α is the
    # identity), so the agent's run shows every state it passes through.
    return World.of(task.vocabulary, task.initial_state, edges, source, stepwise=args.theta == 1)


WORLDS: dict[str, Callable[[SettingArgs], World | None]] = {"lao": _ppddl_world, "primitive": _ppddl_world}
"""The agents whose environment is a finite transition system capver can enumerate:
the PPDDL settings, where α is the identity on the task's states
(:mod:`capver.engines.verification.environment`)."""


def world_of(agent: str, args: SettingArgs) -> World | None:
    """The states ``agent``'s environment reaches (None where it is not known as a
    finite transition system, or has more than
    :data:`~capver.engines.verification.environment.WORLD_LIMIT` states)."""
    build = WORLDS.get(agent)
    return build(args) if build is not None else None


def evidence_of(
    run: run_dir.Run,
    *,
    delta: float,
    epsilon: float,
    scope: Scope = "sound",
    environment: bool = True,
    tilde: bool = False,
) -> Evidence:
    """What a run directory's verdicts rest on: its lattice bounds (and h̃ with
    ``tilde``), its data, and with ``environment`` the states its setting's
    environment reaches (:func:`world_of`; none for a custom setting)."""
    data = run.dataset() if run.has(run_dir.DATASET) else None
    world = None
    if environment and run.has(run_dir.MANIFEST):
        world = world_of(run.manifest.agent, run.manifest.setting)
    h_tilde = run.h_tilde if tilde else None
    return Evidence(run.h_and, run.h_or, data, world, h_tilde, delta, epsilon, scope)


@dataclass(frozen=True, slots=True)
class SettingSpec:
    """A setting by name: what a worker of an executor (another process, a Ray
    actor on another machine) needs to build the setting :func:`build_assessment`
    builds here for the same arguments and seed, instead of being sent a live
    agent and simulator.  Picklable and hashable: it keys the worker's cache."""

    agent: str
    args: SettingArgs
    seed: int

    def __call__(self) -> Setting:
        return build_assessment(self.agent, self.args, np.random.default_rng(self.seed)).setting


def assessment_of(manifest: RunManifest, *, need: str = "this command", python: str = "") -> Assessment:
    """The setting a run's manifest (``run.json``) names, built as ``capver learn``
    built it: the run's seed seeds the generator (discovered capabilities,
    simulator, true model).  A run of a setting made in Python cannot be rebuilt:
    the error says that ``need`` needs its live agent, and ``python`` what to call on
    the result instead."""
    if manifest.custom:
        name = f" {manifest.name!r}" if manifest.name else ""
        raise RunFileError(
            f"{need} needs the live agent and simulator, but this run's setting{name} was made in Python "
            f"(capver.gym_setting) and cannot be rebuilt from run.json; in Python, call "
            f"{python or 'the LearnResult'} instead"
        )
    return build_assessment(manifest.agent, manifest.setting, np.random.default_rng(manifest.setting.seed))


def build_assessment(agent: str, args: SettingArgs, rng: np.random.Generator) -> Assessment:
    try:
        factory = SETTINGS[agent]
    except KeyError:
        raise SettingError(f"unknown agent {agent!r}; expected one of {sorted(SETTINGS)}") from None
    return dataclasses.replace(factory(args, rng), origin=SettingSpec(agent, args, args.seed))
