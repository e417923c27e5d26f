"""Benchmark: verdicts about the agent under a stated abstraction against known truths —
claims and false statements with and without the abstraction, and how often and how
soon the homogeneity test refutes an abstraction the truth breaks.

The agent is the model-backed agent of a hand-written truth in ``capver/data/truths``
(the lights: four lights switched on with probability 9/10 while the power is on,
switched off, the power toggled), under two abstractions: ``lights.abs`` (a switch's
effects depend on the power and its own light: 26 classes) and ``symmetry`` (the four
lights are interchangeable: :class:`~capver.model.abstraction.Symmetry`).  ``lights``
satisfies both; three truths break them on purpose: ``lights-one-state`` (at one
state switching l1 fails half the time, harmless for the house),
``lights-rare-break`` (at that state it breaks the house with probability 1/100) and
``lights-one-object`` (while l1 is on, switching l3 fails six times in ten).  Each
run learns with capver's learner (random queries, the whole budget), and the verdicts
are taken at every budget from the dataset's prefix of that many executions (the data
the run had then), once per pair (δ at its default) and once under each abstraction.

Every claim is checked against the truth, as ``capver bench verdicts`` does: an
observed verdict must be the truth's; a confident one states "a run that breaks it
within k = 10 executions has probability ≤ b", which the truth's exact probability
(capver's explicit engine, in rationals) must not exceed.  A refutation is a claim too
("the data refute the abstraction"): on ``lights`` it is false.

**Directed learning** (``learn --properties``, MCQS-E; under an abstraction with
confirmation queries, :mod:`capver.engines.directed`): the executions until
``A [ G !broken ]`` is decided on ``lights``, per pair and under each abstraction,
within :data:`DIRECTED_BUDGET`.

**Steps to decide on capver's own settings** (``--settings``): a run directed at the
safety properties (``learn --properties --abstraction``) pools its executions by an
abstraction — the symmetry of the objects, stated before any data, or h̃'s condition
atoms, fixed by a pilot run (MCQS-S) and pooled only in a second, independent run;
the table gives the simulator steps (pilot included) until each property is decided,
or what is still missing at the budget, and what the directed run's data give per
pair.  Blocksworld (LAO*, from the data alone, as ``--ignore-environment``, under the
symmetry of the blocks), the MiniGrid RL agent, the Crafter agent and slippery
FrozenLake with a Q-learning agent (a gymnasium world plugged in as a user would).

Run: ``capver bench abstraction [--quick] [--settings NAME ...] [--out DIR]``; writes
``table.md`` and ``results.json``.
"""

from __future__ import annotations

import itertools
import statistics
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from capver.api import learn
from capver.bench.cli import BenchParser, summary, write_results
from capver.bench.markdown import markdown_table
from capver.bench.verdicts import HORIZON, tier_name, truth_file_text, violation_probability
from capver.commands.argtypes import positive
from capver.core.dataset import TransitionDataset
from capver.core.state import State
from capver.engines.lattice import build_bounds
from capver.engines.verification.agent_verdict import AgentVerdict, LatticeVerdict, Tier
from capver.engines.verification.evidence import Evidence, Verifier
from capver.engines.verification.symbolic import SymbolicEngine
from capver.io import dsl
from capver.io.abstraction_file import SYMMETRY, TILDE, parse_abstraction_text
from capver.io.properties_text import parse_property
from capver.model.abstraction import Abstraction, Projection, Symmetry
from capver.model.capability_model import CompoundModel
from capver.settings import model_assessment

TRUTHS: dict[str, tuple[str, bool]] = {
    "lights": ("lights.capm", True),
    "lights-one-state": ("lights_one_state.capm", False),
    "lights-rare-break": ("lights_rare_break.capm", False),
    "lights-one-object": ("lights_one_object.capm", False),
}
"""name → (file, whether the truth satisfies lights.abs)."""
ABSTRACTION_FILE = "lights.abs"
ABSTRACTIONS = (ABSTRACTION_FILE, SYMMETRY)
"""The abstractions the truths are decided under."""
PROPERTIES = ("A [ G !broken ]", "A [ G<=5 !broken ]", "E [ F broken ]")
BUDGETS = (3000, 10000, 30000)
DIRECTED_BUDGET = 40000
QUICK: dict[str, object] = {"steps": [3000], "seeds": 1, "directed_seeds": 0}
SALT = 7401


def load_truth(name: str) -> tuple[CompoundModel, State]:
    file, _ = TRUTHS[name]
    parsed = dsl.parse(truth_file_text(file), filename=f"capver/data/truths/{file}")
    assert parsed.init is not None
    return parsed.model, parsed.init


@dataclass(frozen=True, slots=True)
class Row:
    """One property at one budget of one run, decided per pair and under the abstraction."""

    truth: str
    abstraction: str
    satisfies: bool
    seed: int
    budget: int
    prop: str
    truth_holds: bool
    plain: str
    pooled: str
    plain_wrong: bool
    pooled_wrong: bool
    used: bool
    refuted: int
    refuted_at: int | None
    classes: int
    seconds: float


def _wrong(v: LatticeVerdict, truth_holds: bool, exact: Fraction) -> bool:
    """Whether the verdict's statement is false of the truth."""
    if v.tier is Tier.OBSERVED:
        return (v.verdict is AgentVerdict.HOLDS) != truth_holds
    if v.tier is Tier.CONFIDENT:
        assert v.confidence is not None
        return exact > Fraction(dict(v.confidence.violation)[HORIZON])
    return False


def _verdicts(
    model: CompoundModel, data: TransitionDataset, init: State, abstraction: Abstraction | None
) -> list[LatticeVerdict]:
    b = build_bounds(model.ctx, data)
    props = [parse_property(text, model.vocabulary, tuple(model)) for text in PROPERTIES]
    ev = Evidence(b.pessimistic, b.optimistic, data, abstraction=abstraction)
    engines = (SymbolicEngine(b.pessimistic), SymbolicEngine(b.optimistic))
    out = []
    with Verifier(ev, props, init, engines=engines, values=False) as verifier:
        for p in props:
            v = verifier.check(p).lattice
            assert v is not None  # E/A properties on a lattice are verdicts about the agent
            out.append(v)
    return out


def truth_abstraction(spelling: str, model: CompoundModel) -> Abstraction:
    """``lights.abs`` or the symmetry of the lights, over a truth's capabilities."""
    if spelling == SYMMETRY:
        return Symmetry.of_objects(model.vocabulary, model.capabilities)
    return parse_abstraction_text(truth_file_text(spelling), model.vocabulary, tuple(model), spelling)


def run_one(
    name: str, seed: int, budgets: Sequence[int], abstractions: Sequence[str] = (ABSTRACTION_FILE,)
) -> list[Row]:
    """One learned run on a truth, decided at each budget's prefix of its data, per
    pair and under each of ``abstractions``."""
    model, init = load_truth(name)
    result = learn(
        model_assessment(model, init, name),
        method="random",
        max_steps=max(budgets),
        seed=seed * 1000 + SALT,
        patience=0,
    )
    truth = result.assessment.truth
    assert truth is not None  # a model-backed agent's truth is known
    props = [parse_property(text, model.vocabulary, tuple(model)) for text in PROPERTIES]
    on_truth = SymbolicEngine(truth)
    holds = [on_truth.check(p, init).holds for p in props]
    exact = [violation_probability(p, truth, init, HORIZON) for p in props]
    rows = []
    # Built once per run: a symmetry keeps the classes it has computed.
    built = {spelling: truth_abstraction(spelling, model) for spelling in abstractions}
    for budget in budgets:
        data = result.data.first(budget)
        plain = _verdicts(model, data, init, None)
        for spelling, ab in built.items():
            start = time.perf_counter()
            pooled = _verdicts(model, data, init, ab)
            seconds = time.perf_counter() - start
            refuted_at = _first_refutation(data, ab)  # one per budget, not per property
            for text, p, q, h, x in zip(PROPERTIES, plain, pooled, holds, exact, strict=True):
                note = q.abstraction
                assert note is not None  # decided under the abstraction
                rows.append(
                    Row(
                        name,
                        spelling,
                        TRUTHS[name][1],
                        seed,
                        budget,
                        text,
                        h,
                        tier_name(p),
                        tier_name(q),
                        _wrong(p, h, x),
                        _wrong(q, h, x) or (TRUTHS[name][1] and bool(note.refuted)),
                        note.used,
                        len(note.refuted),
                        refuted_at,
                        note.classes,
                        seconds,
                    )
                )
    return rows


def _first_refutation(data: TransitionDataset, ab: Abstraction) -> int | None:
    from capver.engines.verification.agent_verdict import DEFAULT_DELTA
    from capver.engines.verification.pooled import pool

    times = [k.refuted_at for k in pool(data, ab, DEFAULT_DELTA).classes.values() if k.refuted_at is not None]
    return min(times) if times else None


def table(rows: Sequence[Row]) -> list[str]:
    """Per truth and budget: confident claims per pair and under the abstraction, false
    statements, and the refutations."""
    header = [
        "truth",
        "abstraction",
        "the truth satisfies it",
        "budget",
        "claims per pair (confident)",
        "claims under the abstraction (confident)",
        "false statements (per pair / abstraction)",
        "refuted in",
        "median executions to refute",
    ]
    out: list[list[str]] = []
    for name, spelling in itertools.product(TRUTHS, ABSTRACTIONS):
        for budget in sorted({r.budget for r in rows}):
            sel = [r for r in rows if r.truth == name and r.abstraction == spelling and r.budget == budget]
            if not sel:
                continue
            runs = sorted({r.seed for r in sel})
            fired = [r for r in sel if r.prop == PROPERTIES[0] and r.refuted]
            at = [r.refuted_at for r in fired if r.refuted_at is not None]
            out.append(
                [
                    name,
                    spelling,
                    "yes" if sel[0].satisfies else "no",
                    f"{budget:,}",
                    f"{sum(r.plain.startswith('confident') for r in sel)} of {len(sel)}",
                    f"{sum(r.pooled.startswith('confident') for r in sel)} of {len(sel)}",
                    f"{sum(r.plain_wrong for r in sel)} / {sum(r.pooled_wrong for r in sel)}",
                    f"{len(fired)} of {len(runs)} runs",
                    f"{statistics.median(at):,.0f}" if at else "—",
                ]
            )
    return markdown_table(header, out)


@dataclass(frozen=True, slots=True)
class DirectedRow:
    """One directed run on ``lights``: per pair (``abstraction`` "per pair") or under an abstraction."""

    abstraction: str
    seed: int
    tier: str
    executions: int
    decided: bool
    seconds: float


def run_directed(spelling: str | None, seed: int, budget: int = DIRECTED_BUDGET) -> DirectedRow:
    """``learn --properties`` on ``lights`` until its first property is decided."""
    model, init = load_truth("lights")
    ab = truth_abstraction(spelling, model) if spelling is not None else None
    start = time.perf_counter()
    result = learn(
        model_assessment(model, init, "lights"),
        method="mcqs-e",
        max_steps=budget,
        seed=seed,
        properties=[PROPERTIES[0]],
        abstraction=ab,
    )
    (st,) = result.properties
    return DirectedRow(spelling or "per pair", seed, st.tier, len(result.data), st.decided, time.perf_counter() - start)


def directed_table(rows: Sequence[DirectedRow]) -> list[str]:
    header = ["abstraction", "decided in", f"executions to decide `{PROPERTIES[0]}` (median, range)"]
    out = []
    for name in dict.fromkeys(r.abstraction for r in rows):
        sel = [r for r in rows if r.abstraction == name]
        done = [r.executions for r in sel if r.decided]
        spread = f"{statistics.median(done):,.0f} ({min(done):,}–{max(done):,})" if done else "—"
        budget = max(r.executions for r in sel)
        out.append([name, f"{len(done)} of {len(sel)} runs", spread if done else f"not within {budget:,}"])
    return markdown_table(header, out)


@dataclass(frozen=True, slots=True)
class SettingCase:
    """A setting of capver's whose safety properties are decided under an abstraction:
    ``symmetry`` or ``tilde`` (h̃'s atoms after a pilot run of ``pilot`` steps)."""

    agent: str
    options: tuple[tuple[str, str], ...]
    properties: tuple[str, ...]
    pilot: int  # simulator steps of the run that fixes the abstraction (tilde)
    budget: int  # simulator steps in all
    environment: bool
    abstraction: str = TILDE

    def assessment(self, seed: int) -> Any:
        """The setting, from capver's own (``agent``, ``options``) or, for ``gym:WORLD``,
        a gymnasium world of ``capver bench gym`` plugged in as a user would."""
        from capver.api import load_setting

        if self.agent.startswith("gym:"):
            from capver.bench import gym as gym_bench

            world = gym_bench.WORLDS[self.agent.removeprefix("gym:")](np.random.default_rng(seed))
            with gym_bench.expected_warnings():
                return gym_bench.user_setting(world, seed)
        return load_setting(self.agent, seed=seed, **dict(self.options))


SETTINGS: dict[str, SettingCase] = {
    # Under h̃'s atoms an 8,000-step pilot made 4,337 classes: the LAO* agent's first
    # step towards a goal depends on the whole tower.  The blocks are interchangeable.
    "blocks": SettingCase(
        "lao",
        (("domain", "blocks"),),
        ("A [ G !(holding(a) & holding(b)) ]", "A [ G !(on(a,b) & on(b,a)) ]"),
        0,
        50000,
        False,
        SYMMETRY,
    ),
    "minigrid-rl": SettingCase(
        "minigrid-rl",
        (),
        ("A [ G locked(door_w) ]", "A [ G !(open(door_n) & locked(door_n)) & !(open(door_w) & locked(door_w)) ]"),
        10000,
        20000,
        True,
    ),
    # Crafter steps are slow (about 5 a second with MCQS-S): a 2,000-step pilot.
    "crafter": SettingCase("crafter", (), ("A [ G !dead ]",), 2000, 5000, True),
    # Slippery FrozenLake 4×4 with its Q-learning agent (capver bench gym), from the data alone.
    "frozenlake": SettingCase("gym:frozenlake4", (), ("A [ G !hole ]",), 500, 20000, False),
}


@dataclass(frozen=True, slots=True)
class SettingRow:
    """One property of one setting: decided under the abstraction after ``steps``
    simulator steps (pilot included), or what was missing at the budget."""

    setting: str
    abstraction: str
    prop: str
    pilot: int
    budget: int
    tier: str
    steps: int | None
    executions: int
    classes: int
    refuted: int
    missing: str
    per_pair: str
    seconds: float


def run_setting(name: str, seed: int, budget: int | None = None, pilot: int | None = None) -> list[SettingRow]:
    """The directed run under the setting's abstraction, after the pilot run that fixes
    h̃ for ``tilde`` (module docstring)."""
    from capver.engines.directed import missing_text

    case = SETTINGS[name]
    budget = case.budget if budget is None else budget
    pilot = case.pilot if pilot is None else pilot
    start = time.perf_counter()
    ab: Abstraction
    if case.abstraction == SYMMETRY:
        assessment = case.assessment(seed)
        ab = Symmetry.of_objects(assessment.ctx.vocab, assessment.setting.capabilities)
        used = 0
    else:
        first = learn(case.assessment(seed), method="mcqs-s", max_steps=pilot, seed=seed)
        ab = Projection.of_model(first.h_tilde, f"h̃'s condition atoms of a {first.progress.steps:,}-step pilot run")
        used = first.progress.steps
    # MCQS-E for the directed run: a tenth of MCQS-S's cost per step on Blocksworld
    # (44 ms against 0.4 s with the property focus, measured), the same focus.
    second = learn(
        case.assessment(seed),
        method="mcqs-e",
        max_steps=max(budget - used, 1),
        seed=seed + 1,
        properties=case.properties,
        abstraction=ab,
        environment=case.environment,
    )
    rows = []
    for text, st in zip(case.properties, second.properties, strict=True):
        reached = next((h for h in second.history if h.name == st.prop.name and h.tier == st.tier), None)
        v = st.lattice
        note = v.abstraction if v is not None else None
        assert st.checked is not None  # every property was checked at least once
        init = st.checked.vocabulary.format_state(st.checked.init)
        plain = second.verify(text, init=init, environment=case.environment).lattice
        per_pair = "—"
        if plain is not None:
            per_pair = plain.tier.value
            if plain.confidence is not None and plain.tier is Tier.UNCONFIRMED:
                per_pair += f", {plain.confidence.executions:,} more executions"
        rows.append(
            SettingRow(
                name,
                case.abstraction,
                text,
                used,
                budget,
                st.tier,
                used + reached.steps if st.decided and reached is not None else None,
                len(second.data),
                note.classes if note is not None else 0,
                len(note.refuted) if note is not None else 0,
                "" if st.decided or v is None else missing_text(v),
                per_pair,
                time.perf_counter() - start,
            )
        )
    return rows


def setting_table(rows: Sequence[SettingRow]) -> list[str]:
    header = [
        "setting",
        "property",
        "abstraction",
        "tier under it",
        "steps to decide (pilot + directed)",
        "classes (refuted)",
        "still missing at the budget",
        "the same data per pair",
    ]
    return markdown_table(
        header,
        [
            [
                r.setting,
                f"`{r.prop}`",
                "h̃'s atoms" if r.abstraction == TILDE else r.abstraction,
                r.tier,
                f"{r.steps:,}" if r.steps is not None else f"not within {r.budget:,}",
                f"{r.classes:,} ({r.refuted})",
                r.missing or "—",
                r.per_pair,
            ]
            for r in rows
        ],
    )


def build_parser() -> BenchParser:
    parser = BenchParser("abstraction", summary(__doc__))
    parser.add_argument(
        "--truths",
        nargs="*",
        choices=sorted(TRUTHS),
        default=list(TRUTHS),
        help="the truths (default: all four; none with --settings measures only the settings)",
    )
    parser.add_argument(
        "--steps",
        nargs="+",
        type=positive,
        default=list(BUDGETS),
        help=f"executions at which the verdicts are taken (default: {' '.join(map(str, BUDGETS))})",
    )
    parser.add_argument("--seeds", type=positive, default=10, help="runs per truth, seeds 0, 1, … (default: 10)")
    parser.add_argument(
        "--directed-seeds",
        type=int,
        default=3,
        help="directed runs on lights per pair and per abstraction, seeds 0, 1, … (default: 3; 0: none)",
    )
    parser.add_argument(
        "--settings",
        nargs="*",
        choices=sorted(SETTINGS),
        default=[],
        help="also measure the steps to decide these settings' safety properties (default: none; "
        f"{', '.join(SETTINGS)} are the measured ones)",
    )
    parser.add_argument(
        "--setting-budget",
        type=positive,
        default=None,
        help="with --settings: simulator steps in all, pilot included (default: each setting's own)",
    )
    parser.add_argument(
        "--pilot", type=positive, default=None, help="with --settings: the pilot run's steps (default: each setting's)"
    )
    parser.add_out()
    parser.add_quick(QUICK)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse(argv)
    rows: list[Row] = []
    for name in args.truths:
        for seed in range(args.seeds):
            start = time.perf_counter()
            got = run_one(name, seed, sorted(args.steps), ABSTRACTIONS)
            rows += got
            last = [r for r in got if r.budget == max(args.steps)]
            print(
                f"{name} seed {seed}: at {max(args.steps):,} executions "
                + ", ".join(f"{r.prop}: {r.plain} per pair, {r.pooled} under {r.abstraction}" for r in last)
                + f" ({time.perf_counter() - start:.1f} s)",
                flush=True,
            )
    lines = table(rows) if rows else []
    directed: list[DirectedRow] = []
    for spelling in (None, *ABSTRACTIONS):
        for seed in range(args.directed_seeds):
            run = run_directed(spelling, seed)
            directed.append(run)
            print(
                f"directed, {run.abstraction}, seed {seed}: {run.tier} after {run.executions:,} executions", flush=True
            )
    if directed:
        lines += ["", *directed_table(directed)]
    setting_rows: list[SettingRow] = []
    for name in args.settings:
        decided = run_setting(name, 0, args.setting_budget, args.pilot)
        setting_rows += decided
        for d in decided:
            print(f"{name}: {d.prop}: {d.tier}, {d.steps or 'not decided'} ({d.seconds:.0f} s)", flush=True)
    if setting_rows:
        lines += ["", *setting_table(setting_rows)]
    print("\n".join(lines))
    if args.out is not None:
        results = {
            "truths": [asdict(r) for r in rows],
            "directed": [asdict(r) for r in directed],
            "settings": [asdict(r) for r in setting_rows],
        }
        write_results(args.out, lines, results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
