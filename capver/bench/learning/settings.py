"""The settings of ``capver bench learning`` and their evaluation dataset D′ (paper,
section 4.2: model agreement is scored against one independent dataset per
setting): setting names, the fixed seeds every method and seed shares, D′ in a form
that crosses process boundaries, and the true transitions of settings whose true
model is known."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from capver.core.dataset import TransitionDataset
from capver.core.setting_args import SettingArgs
from capver.core.state import Capability, Transition
from capver.engines.eval_collection import collect_eval_chunked
from capver.engines.executors import Executor, LocalExecutor
from capver.model.capability_model import CompoundModel
from capver.settings import Assessment, SettingError, SettingSpec, build_assessment

DEFAULT_SETTINGS = ("lao:first_responders", "lao:blocks", "lao:tireworld", "minigrid-rl")
DEFAULT_BUDGETS: dict[str, int] = {
    "lao:first_responders": 1500,
    "lao:blocks": 2000,
    "lao:tireworld": 500,
    "minigrid-rl": 5000,
}
FALLBACK_BUDGET = 1000
QUICK_BUDGET = 40
# The setting (discovered capabilities, MiniGrid start layouts) and D′ are built from
# these seeds in every process, so every method and seed faces the same problem.
SETTING_SEED = 0
EVAL_SEED = 10_007
QACE_SETTING = "primitive:first_responders"


def parse_setting(name: str) -> tuple[str, SettingArgs]:
    """``lao:DOMAIN`` / ``primitive:DOMAIN`` / ``minigrid-rl`` / ``minigrid-search`` / ``crafter`` /
    ``overcooked[:LAYOUT]`` as the (agent, arguments) :func:`capver.settings.build_assessment` takes."""
    agent, _, domain = name.partition(":")
    if agent in ("lao", "primitive"):
        if not domain:
            raise SettingError(f"setting {name!r}: expected {agent}:DOMAIN, e.g. {agent}:first_responders")
        return agent, SettingArgs(domain=domain, seed=SETTING_SEED)
    if agent in ("minigrid-rl", "minigrid-search", "crafter") and not domain:
        return agent, SettingArgs(seed=SETTING_SEED)
    if agent == "tabletop-llm" and not domain:  # needs CAPVER_LLM_* (the tests' scripted server will do)
        return agent, SettingArgs(seed=SETTING_SEED, layouts=10, step_cap=12)
    if agent == "overcooked":  # overcooked or overcooked:LAYOUT (capver.envs.kitchen.LAYOUTS)
        return agent, SettingArgs(domain=domain or "cramped_room", seed=SETTING_SEED)
    raise SettingError(
        f"setting {name!r}: expected lao:DOMAIN, primitive:DOMAIN, minigrid-rl, minigrid-search, crafter, "
        "tabletop-llm or overcooked[:LAYOUT]"
    )


def build_setting(name: str) -> Assessment:
    agent, args = parse_setting(name)
    return build_assessment(agent, args, np.random.default_rng(SETTING_SEED))


@dataclass(frozen=True, slots=True)
class EvalSet:
    """D′ of one setting in a form that crosses process boundaries (the dataset
    itself holds BDD-backed objects)."""

    setting: str
    capabilities: tuple[Capability, ...]
    counts: tuple[tuple[int, str, int, int], ...]  # (s, c, s′, N_e)

    @property
    def fingerprint(self) -> str:
        return hashlib.sha1(repr(self.counts).encode()).hexdigest()[:12]

    @property
    def size(self) -> int:
        return sum(n for *_, n in self.counts)

    def dataset(self, a: Assessment) -> TransitionDataset:
        return _dataset(a, self.capabilities, ((Transition(s, c, s2), n) for s, c, s2, n in self.counts))


def collect_eval_set(
    setting: str, n_sequences: int, executor: Executor | None = None, chunk: int | None = None
) -> EvalSet:
    """D′ for ``setting``, from a fixed seed (section 4.2's independent dataset); in
    chunks of ``chunk`` sequences (None: one stream, in this process), those beyond
    the first on ``executor`` (default: this process)."""
    a = build_setting(setting)
    a.setting.sim.reset(EVAL_SEED)
    agent, args = parse_setting(setting)
    with LocalExecutor() if executor is None else _borrowed(executor) as ex:
        d = collect_eval_chunked(
            a.setting, a.setting.capabilities, n_sequences, EVAL_SEED, ex, SettingSpec(agent, args, SETTING_SEED), chunk
        )
    counts = tuple(sorted((t.s, t.c, t.s_next, n) for t, n in d.items()))
    return EvalSet(setting, tuple(a.setting.capabilities), counts)


def true_transitions(a: Assessment) -> list[Transition]:
    """Every ⟨s, c, s′⟩ with Pr_true(s′|s,c) > 0 from the reachable states."""
    if a.truth is None or a.reachable is None:
        raise SettingError(f"setting {a.name}: its true model is unknown")
    return [
        Transition(s, c, s2)
        for s in sorted(a.reachable)
        for c, m in a.truth.items()
        for s2, p in m.distribution(s).items()
        if p > 0
    ]


def applicable_transitions(truth: CompoundModel, transitions: Sequence[Transition]) -> list[Transition]:
    """The transitions of the (s, c) pairs where the true action changes the state
    (an inapplicable action's no-op is not a transition of the PPDDL model QACE learns)."""
    still = {(t.s, t.c) for t in transitions if t.s_next == t.s and truth.prob(t.s, t.c, t.s) == 1}
    return [t for t in transitions if (t.s, t.c) not in still]


def _dataset(
    a: Assessment, capabilities: Sequence[Capability], counts: Iterable[tuple[Transition, int]]
) -> TransitionDataset:
    d = TransitionDataset(a.ctx.vocab, capabilities)
    for t, n in counts:
        d.add(t, count=n)
    return d


class _borrowed:
    """An executor the caller owns: not closed on leaving the block."""

    def __init__(self, executor: Executor) -> None:
        self.executor = executor

    def __enter__(self) -> Executor:
        return self.executor

    def __exit__(self, *exc: object) -> None:
        pass
