"""Benchmark: verdicts about the agent under a stated abstraction against known truths —
claims and false statements with and without the abstraction, and how often and how
soon the homogeneity test refutes an abstraction the truth breaks.

The agent is the model-backed agent of a hand-written truth in ``capver/data/truths``
(the lights: four lights switched on with probability 9/10 while the power is on,
switched off, the power toggled), the abstraction ``lights.abs`` (a switch's effects
depend on the power and its own light: 26 classes).  ``lights`` satisfies it; three
truths break it on purpose: ``lights-one-state`` (at one state of a class switching l1
fails half the time, harmless for the house), ``lights-rare-break`` (at that state it
breaks the house with probability 1/100) and ``lights-one-object`` (while l1 is on,
switching l3 fails six times in ten).  Each run learns with capver's learner (random
queries, the whole budget), and the verdicts are taken at every budget from the
dataset's prefix of that many executions (the data the run had then), once per pair
(δ at its default) and once under the abstraction.

Every claim is checked against the truth, as ``capver bench verdicts`` does: an
observed verdict must be the truth's; a confident one states "a run that breaks it
within k = 10 executions has probability ≤ b", which the truth's exact probability
(capver's explicit engine, in rationals) must not exceed.  A refutation is a claim too
("the data refute the abstraction"): on ``lights`` it is false.

Run: ``capver bench abstraction [--quick] [--out DIR]``; writes ``table.md`` and
``results.json``.
"""

from __future__ import annotations

import importlib.resources
import statistics
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from fractions import Fraction

from capver.api import learn
from capver.bench.cli import BenchParser, summary, write_results
from capver.bench.markdown import markdown_table
from capver.bench.verdicts import HORIZON, violation_probability
from capver.commands.argtypes import positive
from capver.core.dataset import TransitionDataset
from capver.core.state import State
from capver.engines.lattice import build_bounds
from capver.engines.verification.agent_verdict import AgentVerdict, LatticeVerdict, Tier
from capver.engines.verification.evidence import Evidence, Verifier
from capver.engines.verification.symbolic import SymbolicEngine
from capver.io import dsl
from capver.io.abstraction_file import parse_abstraction_text
from capver.io.properties_text import parse_property
from capver.model.abstraction import Abstraction
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
PROPERTIES = ("A [ G !broken ]", "A [ G<=5 !broken ]", "E [ F broken ]")
BUDGETS = (3000, 10000, 30000)
QUICK: dict[str, object] = {"budgets": [3000], "seeds": 1}
SALT = 7401


def _data_text(file: str) -> str:
    return importlib.resources.files("capver.data").joinpath("truths", file).read_text(encoding="utf-8")


def load_truth(name: str) -> tuple[CompoundModel, State]:
    file, _ = TRUTHS[name]
    parsed = dsl.parse(_data_text(file), filename=f"capver/data/truths/{file}")
    assert parsed.init is not None
    return parsed.model, parsed.init


@dataclass(frozen=True, slots=True)
class Row:
    """One property at one budget of one run, decided per pair and under the abstraction."""

    truth: str
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


def _tier(v: LatticeVerdict) -> str:
    if v.tier in (Tier.OBSERVED, Tier.CONFIDENT):
        return f"{v.tier.value}-{'holds' if v.verdict is AgentVerdict.HOLDS else 'violated'}"
    return v.tier.value


def _wrong(v: LatticeVerdict, truth_holds: bool, exact: Fraction) -> bool:
    """Whether the verdict's statement is false of the truth."""
    if v.tier is Tier.OBSERVED:
        return (v.verdict is AgentVerdict.HOLDS) != truth_holds
    if v.tier is Tier.CONFIDENT:
        assert v.confidence is not None
        return exact > Fraction(dict(v.confidence.violation)[HORIZON])
    return False


def _prefix(data: TransitionDataset, n: int) -> TransitionDataset:
    out = TransitionDataset(data.vocab, data.capabilities)
    seen = 0
    for t, count, steps in data.additions():
        if seen + count > n:
            break
        out.add(t, count, steps)
        seen += count
    return out


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


def run_one(name: str, seed: int, budgets: Sequence[int]) -> list[Row]:
    """One learned run on a truth, decided at each budget's prefix of its data."""
    model, init = load_truth(name)
    ab = parse_abstraction_text(_data_text(ABSTRACTION_FILE), model.vocabulary, tuple(model), ABSTRACTION_FILE)
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
    for budget in budgets:
        data = _prefix(result.data, budget)
        start = time.perf_counter()
        plain = _verdicts(model, data, init, None)
        pooled = _verdicts(model, data, init, ab)
        seconds = time.perf_counter() - start
        for text, p, q, h, x in zip(PROPERTIES, plain, pooled, holds, exact, strict=True):
            note = q.abstraction
            assert note is not None  # decided under the abstraction
            rows.append(
                Row(
                    name,
                    TRUTHS[name][1],
                    seed,
                    budget,
                    text,
                    h,
                    _tier(p),
                    _tier(q),
                    _wrong(p, h, x),
                    _wrong(q, h, x) or (TRUTHS[name][1] and bool(note.refuted)),
                    note.used,
                    len(note.refuted),
                    _first_refutation(data, ab),
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
        "satisfies lights.abs",
        "budget",
        "claims per pair (confident)",
        "claims under the abstraction (confident)",
        "false statements (per pair / abstraction)",
        "refuted in",
        "median executions to refute",
    ]
    out: list[list[str]] = []
    for name in TRUTHS:
        for budget in sorted({r.budget for r in rows}):
            sel = [r for r in rows if r.truth == name and r.budget == budget]
            if not sel:
                continue
            runs = sorted({r.seed for r in sel})
            fired = [r for r in sel if r.prop == PROPERTIES[0] and r.refuted]
            at = [r.refuted_at for r in fired if r.refuted_at is not None]
            out.append(
                [
                    name,
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


def build_parser() -> BenchParser:
    parser = BenchParser("abstraction", summary(__doc__))
    parser.add_argument(
        "--truths", nargs="+", choices=sorted(TRUTHS), default=list(TRUTHS), help="the truths (default: all four)"
    )
    parser.add_argument(
        "--budgets",
        nargs="+",
        type=positive,
        default=list(BUDGETS),
        help=f"executions at which the verdicts are taken (default: {' '.join(map(str, BUDGETS))})",
    )
    parser.add_argument("--seeds", type=positive, default=10, help="runs per truth, seeds 0, 1, … (default: 10)")
    parser.add_out()
    parser.add_quick(QUICK)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse(argv)
    rows: list[Row] = []
    for name in args.truths:
        for seed in range(args.seeds):
            start = time.perf_counter()
            got = run_one(name, seed, sorted(args.budgets))
            rows += got
            last = [r for r in got if r.budget == max(args.budgets)]
            print(
                f"{name} seed {seed}: at {max(args.budgets):,} executions "
                + ", ".join(f"{r.prop}: {r.plain} per pair, {r.pooled} pooled" for r in last)
                + f" ({time.perf_counter() - start:.1f} s)",
                flush=True,
            )
    lines = table(rows)
    print("\n".join(lines))
    if args.out is not None:
        write_results(args.out, lines, [asdict(r) for r in rows])
    return 0


if __name__ == "__main__":
    sys.exit(main())
