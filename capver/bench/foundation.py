"""Benchmark of the foundation (section 3.1's lattice bounds h∧ ⪯ h⋆ ⪯ h∨, section 2's
Pr_h(·|s,c), the z3 lattice-order check), against these performance targets:

* on 40 atoms and 10,000 transitions over 20 capabilities, the full h∧/h∨ build takes
  ≤ 5 s and an incremental rebuild after one new transition ≤ 0.1 s on one core;
* Pr_h(·|s,c) answers ≥ 50,000 queries per second.

The data come from a random true model h⋆ (built from the pieces of
:mod:`capver.synthetic`) executed from states drawn from a pool, so that states
recur as they do when MCQS re-queries the same states; the all-distinct-states case is
reported as well.  A micro-benchmark compares two state representations
(Python ``int`` bitsets and numpy packed bit arrays).

Every timing is reported as wall time and as CPU time of this (single-threaded)
process; targets are judged on CPU time, which is what "on one core" means and which
does not depend on what else the machine is running.  ``MISSED`` marks a target that
was not met: the numbers are whatever this machine measures.

Run: ``capver bench foundation [--json PATH] [--quick]`` (or ``python -m capver.bench.foundation``).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np

from capver.bench.cli import BenchParser
from capver.bench.timing import Timing, own_heap, timed
from capver.commands.argtypes import non_negative, positive
from capver.core.dataset import TransitionDataset
from capver.core.state import Capability, Effect, Transition
from capver.core.vocabulary import Literal
from capver.engines.lattice import LatticeBuilder
from capver.engines.verification.relations import refines
from capver.logic.bdd import BACKENDS
from capver.logic.condition import Condition, LogicContext, agreement_counterexample
from capver.model.capability_model import CapabilityModel, CompoundModel, Rule
from capver.synthetic import (
    propositional_vocabulary,
    random_condition,
    random_effect,
    random_fraction_split,
    sample_dataset,
    sample_successor,
)

BUILD_TARGET_S = 5.0
INCREMENTAL_TARGET_S = 0.1
QUERY_TARGET_PER_S = 50_000.0
# Every section still runs, on a tenth of the data; the targets are stated for the
# full sizes, so a quick run's statuses only show that the measurements work.
QUICK: dict[str, int] = {
    "atoms": 20,
    "transitions": 1_000,
    "capabilities": 5,
    "states": 200,
    "incremental_samples": 10,
    "queries": 500,
    "unobserved_queries": 200,
    "representation_states": 2_000,
}


# -- results -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Measure:
    """One reported number.  ``value`` is from wall time, ``cpu`` the same quantity
    from process CPU time; ``target`` is (bound, "max"|"min") where the module's targets set one."""

    section: str
    metric: str
    value: float
    cpu: float | None
    unit: str
    target: tuple[float, str] | None = None
    note: str = ""

    @property
    def status(self) -> str:
        if self.target is None:
            return ""
        bound, kind = self.target
        x = self.value if self.cpu is None else self.cpu
        ok = x <= bound if kind == "max" else x >= bound
        return "ok" if ok else "MISSED"

    def to_json(self) -> dict[str, Any]:
        target = None if self.target is None else {"bound": self.target[0], "kind": self.target[1]}
        return {
            "section": self.section,
            "metric": self.metric,
            "wall": self.value,
            "cpu": self.cpu,
            "unit": self.unit,
            "target": target,
            "status": self.status,
            "note": self.note,
        }


@dataclass(slots=True)
class Report:
    measures: list[Measure] = field(default_factory=list)
    info: dict[str, Any] = field(default_factory=dict)
    echo: bool = True

    def add(self, m: Measure) -> None:
        self.measures.append(m)
        if self.echo:  # progress on stderr; the table goes to stdout at the end
            print(f"  .. {m.section}: {m.metric}: {_fmt(m.value, m.unit)}", file=sys.stderr, flush=True)


def _fmt(value: float | None, unit: str) -> str:
    if value is None:
        return ""
    if unit == "s":
        return f"{value * 1000:.2f} ms" if value < 1 else f"{value:.2f} s"
    if unit == "/s":
        return f"{value:,.0f} /s"
    if unit == "x":
        return f"{value:.2f}x"
    return f"{value:g} {unit}".rstrip()


def _fmt_target(m: Measure) -> str:
    if m.target is None:
        return ""
    bound, kind = m.target
    return ("≤ " if kind == "max" else "≥ ") + _fmt(bound, m.unit)


def render(report: Report) -> str:
    lines = ["capver foundation benchmark", ""]
    lines += [f"{k:>16}: {v}" for k, v in report.info.items()]
    width = max((len(m.metric) for m in report.measures), default=10)
    head = f"  {'':<{width}}  {'wall':>14}  {'cpu':>14}  {'target':>12}  {'status':<6}"
    section = None
    for m in report.measures:
        if m.section != section:
            section = m.section
            lines += ["", f"[{section}]", head.rstrip()]
        row = (
            f"  {m.metric:<{width}}  {_fmt(m.value, m.unit):>14}  {_fmt(m.cpu, m.unit):>14}  "
            f"{_fmt_target(m):>12}  {m.status:<6}"
        )
        if m.note:
            row += f"  {m.note}"
        lines.append(row.rstrip())
    return "\n".join(lines)


# -- data ------------------------------------------------------------------------------------


def true_model(ctx: LogicContext, rng: np.random.Generator, n_capabilities: int) -> CompoundModel:
    """A random h⋆ whose rules fire on a useful share of states.

    :func:`capver.synthetic.random_model` draws ~30 % of the atoms as literals
    per cube, i.e. ~12 literals at 40 atoms, so its rules match ~2⁻¹² of the states and
    almost every sampled transition would be the fallback's empty effect (a one-block
    partition).  Here cubes keep ~3 literals, effects touch ~15 % of the atoms, and a
    fallback rule with the empty effect makes every capability executable everywhere
    (a failed execution changes nothing)."""
    n = len(ctx.vocab)
    models = []
    for k in range(n_capabilities):
        cap = Capability(f"c{k}", (Literal(ctx.vocab.atoms[k % n], True),))
        rules = []
        for _ in range(int(rng.integers(1, 4))):
            effects: dict[Effect, Fraction] = {}
            for p in random_fraction_split(rng, int(rng.integers(1, 4))):
                e = random_effect(rng, n, p_touch=0.15)
                effects[e] = effects.get(e, Fraction(0)) + p
            cond = random_condition(ctx, rng, max_cubes=3, p_lit=min(1.0, 3 / n))
            rules.append(Rule.make(cond, [(p, e) for e, p in effects.items()]))
        rules.append(Rule.make(Condition.true(ctx), [(1, Effect(0, 0))]))
        models.append(CapabilityModel(cap, tuple(rules)))
    return CompoundModel(ctx, models)


def random_state(rng: np.random.Generator, n: int) -> int:
    bits = rng.integers(0, 2, size=n, dtype=np.uint8)
    return int.from_bytes(np.packbits(bits, bitorder="little").tobytes(), "little")


def describe(data: TransitionDataset, builder: LatticeBuilder) -> str:
    states = len(set(data.states()))
    pairs = sum(len(data.view(c)) for c in data.capability_table)
    blocks = [len(builder.blocks(c)) for c in data.capability_table]
    noop = sum(n for t, n in data.items() if t.s == t.s_next)
    return (
        f"{len(data)} transitions, {states} distinct states, {pairs} distinct (s,c), "
        f"{sum(blocks)} blocks = rules per bound (≤ {max(blocks)} per capability), {noop / len(data):.0%} no-op"
    )


# -- state representation ------------------------------------------------------------------


def bench_representation(report: Report, rng: np.random.Generator, n_atoms: int, k: int) -> None:
    """int bitsets vs numpy packed bit arrays (``np.packbits`` layout, ``tobytes()`` as
    the dict key) for the operations the learner does per transition, one state at a
    time as the library does them.  Ratios are numpy time / int time (> 1: int is
    faster); the vectorised row shows numpy's best case, all k states in one array op."""
    n_bytes = (n_atoms + 7) // 8
    raw = rng.integers(0, 256, size=(4, k, n_bytes), dtype=np.uint8)
    if n_atoms % 8:
        raw[..., -1] &= (1 << (n_atoms % 8)) - 1  # no bits beyond the vocabulary
    s_a, s2_a, add_a, del_a = ([raw[j, i].copy() for i in range(k)] for j in range(4))
    s_i, s2_i, add_i, del_i = (
        [int.from_bytes(a.tobytes(), "little") for a in row] for row in (s_a, s2_a, add_a, del_a)
    )
    effects_i = [Effect(a & ~d, d) for a, d in zip(add_i, del_i)]
    effects_a = [(a & ~d, d) for a, d in zip(add_a, del_a)]
    table_i = {s: i for i, s in enumerate(s_i)}
    table_b = {a.tobytes(): i for i, a in enumerate(s_a)}

    def lookup_int() -> int:
        return sum(table_i[s] for s in s_i)

    def lookup_np() -> int:
        return sum(table_b[a.tobytes()] for a in s_a)

    def apply_int() -> list[int]:
        return [(s & ~e.delete) | e.add for s, e in zip(s_i, effects_i)]

    def apply_np() -> list[np.ndarray]:
        return [(s & ~d) | a for s, (a, d) in zip(s_a, effects_a)]

    def effect_int() -> list[tuple[int, int]]:
        return [(t & ~s, s & ~t) for s, t in zip(s_i, s2_i)]

    def effect_np() -> list[tuple[np.ndarray, np.ndarray]]:
        return [(t & ~s, s & ~t) for s, t in zip(s_a, s2_a)]

    # both representations must compute the same thing, or the comparison is void
    if lookup_int() != lookup_np():
        raise RuntimeError("int and numpy state tables disagree")
    if list(apply_int()) != [int.from_bytes(y.tobytes(), "little") for y in apply_np()]:
        raise RuntimeError("int and numpy apply(s, η) disagree")

    def best(fn: Callable[[], Any]) -> Timing:
        runs = [timed(fn, collect=True)[1] for _ in range(3)]
        return Timing(min(r.wall for r in runs), min(r.cpu for r in runs))

    section = f"state representation, {n_atoms} atoms"
    for name, f_int, f_np in (
        ("hash + dict lookup", lookup_int, lookup_np),
        ("apply(s, η)", apply_int, apply_np),
        ("observed_effect(s, s′)", effect_int, effect_np),
    ):
        ti, tn = best(f_int), best(f_np)
        report.add(
            Measure(
                section,
                f"{name}: numpy / int",
                tn.wall / ti.wall,
                tn.cpu / ti.cpu if ti.cpu > 0 else None,
                "x",
                note=f"int {ti.wall / k * 1e9:.0f} ns, numpy {tn.wall / k * 1e9:.0f} ns per state",
            )
        )
    batch, b_add, b_del = np.stack(s_a), np.stack([a for a, _ in effects_a]), np.stack([d for _, d in effects_a])
    tb, ti = best(lambda: (batch & ~b_del) | b_add), best(apply_int)
    report.add(
        Measure(
            section,
            "apply(s, η), numpy vectorised / int",
            tb.wall / ti.wall,
            tb.cpu / ti.cpu if ti.cpu > 0 else None,
            "x",
            note=f"numpy {tb.wall / k * 1e9:.1f} ns per state as one ({k} × {n_bytes}) array op",
        )
    )
    size_int = statistics.mean(sys.getsizeof(s) for s in s_i[:1000])
    size_np = statistics.mean(sys.getsizeof(a) for a in s_a[:1000])
    size_b = statistics.mean(sys.getsizeof(a.tobytes()) for a in s_a[:1000])
    report.add(
        Measure(
            section,
            "memory per state: ndarray / int",
            size_np / size_int,
            None,
            "x",
            note=f"int {size_int:.0f} B, ndarray {size_np:.0f} B, bytes key {size_b:.0f} B",
        )
    )


# -- measurements --------------------------------------------------------------------------


def bench_build(
    report: Report, label: str, data: TransitionDataset, backends: Sequence[str]
) -> dict[str, LatticeBuilder]:
    """Full h∧/h∨ build from scratch, on a fresh logic context per backend."""
    out = {}
    for backend in backends:
        ctx = LogicContext(data.vocab, backend)
        builder, t = timed(lambda ctx=ctx: LatticeBuilder(ctx, data), collect=True)  # type: ignore[misc]
        report.add(
            Measure(f"build, {label}", f"full h∧/h∨ build, {backend}", t.wall, t.cpu, "s", (BUILD_TARGET_S, "max"))
        )
        out[backend] = builder
    return out


def bench_incremental(
    report: Report,
    label: str,
    truth: CompoundModel,
    builders: dict[str, LatticeBuilder],
    rng: np.random.Generator,
    samples: int,
) -> None:
    """Median time of ``update()`` after adding one transition to the builder's dataset,
    from a state new to the capability and from a state it was already observed in.
    All builders share one dataset; each first catches up, untimed, with the
    additions made while measuring the others."""
    caps = list(truth)
    n = len(truth.vocabulary)
    for backend, builder in builders.items():
        data = builder.data
        builder.update()
        for kind in ("new state", "repeated state"):
            gc.collect()
            walls, cpus = [], []
            for k in range(samples):
                c = caps[k % len(caps)]
                if kind == "new state":
                    s = random_state(rng, n)
                    while data.count_sc(s, c):
                        s = random_state(rng, n)
                else:
                    seen = list(data.states_of(c))
                    s = seen[int(rng.integers(len(seen)))]
                s2 = sample_successor(truth[c], s, rng)
                if s2 is None:
                    raise RuntimeError(f"the true model has no rule for {c} in {s:x}")
                data.add(Transition(s, c, s2))
                rebuilt, t = timed(builder.update)
                walls.append(t.wall)
                cpus.append(t.cpu)
                if rebuilt != {c}:
                    raise RuntimeError(f"update() rebuilt {sorted(rebuilt)} after one transition of {c}")
            report.add(
                Measure(
                    f"incremental, {label}",
                    f"rebuild after 1 transition, {kind}, {backend}",
                    statistics.median(walls),
                    statistics.median(cpus),
                    "s",
                    (INCREMENTAL_TARGET_S, "max"),
                    f"median of {samples}; worst wall {_fmt(max(walls), 's')}",
                )
            )


def bench_queries(
    report: Report, label: str, builder: LatticeBuilder, rng: np.random.Generator, n_observed: int, n_unobserved: int
) -> None:
    """Pr_h(·|s,c) via ``distribution(s, c)`` on freshly built bounds: the first pass
    over a list of distinct (s, c) is cold (nothing cached), the second warm."""
    data = builder.data
    caps = list(data.capability_table)
    n = len(data.vocab)
    observed = [(s, c) for c in caps for s in data.states_of(c)]
    q_obs = [observed[int(i)] for i in rng.permutation(len(observed))[:n_observed]]
    q_unobs: list[tuple[int, str]] = []
    seen: set[tuple[int, str]] = set()
    while len(q_unobs) < n_unobserved:
        s, c = random_state(rng, n), caps[int(rng.integers(len(caps)))]
        if not data.count_sc(s, c) and (s, c) not in seen:
            seen.add((s, c))
            q_unobs.append((s, c))
    for bound, h in (("h∧", builder.pessimistic), ("h∨", builder.optimistic)):
        for where, queries in (("observed", q_obs), ("unobserved", q_unobs)):
            for temp in ("cold", "warm"):

                def run(h: CompoundModel = h, queries: list[tuple[int, str]] = queries) -> int:
                    total = 0
                    for s, c in queries:
                        total += len(h.distribution(s, c))
                    return total

                _, t = timed(run, collect=True)
                k = len(queries)
                report.add(
                    Measure(
                        f"Pr queries, {label}",
                        f"Pr_{bound}(·|s,c), {where} s, {temp}",
                        k / t.wall,
                        k / t.cpu if t.cpu > 0 else None,
                        "/s",
                        (QUERY_TARGET_PER_S, "min"),
                        f"{k} distinct (s,c)",
                    )
                )


def bench_z3(report: Report, label: str, builder: LatticeBuilder) -> None:
    verdict, t = timed(lambda: refines(builder.pessimistic, builder.optimistic), collect=True)
    note = "proved: every query UNSAT" if verdict.holds else f"REFUTED by {verdict.counterexample}"
    metric = f"refines(h∧, h∨), {len(builder.pessimistic)} capability queries"
    report.add(Measure(f"z3, {label}", metric, t.wall, t.cpu, "s", None, note))


def bench_agreement(
    report: Report, label: str, builder: LatticeBuilder, rng: np.random.Generator, caps_sample: int, opt_sample: int
) -> None:
    """z3 proof that each condition's SMT formula equals its BDD
    (:func:`agreement_counterexample`).  Checking every condition takes far longer
    than the rest of the benchmark, so by default h∧ is checked for ``caps_sample``
    whole capabilities and h∨ for ``opt_sample`` random conditions (0 skips a part,
    -1 checks all), and the total for all conditions is extrapolated (marked as such)."""
    pess, opt = builder.pessimistic, builder.optimistic
    caps = list(pess)
    all_opt = [r.condition for m in opt.values() for r in m.rules]
    n_pess = sum(len(m.rules) for m in pess.values())
    disagreements = 0

    def check(conds: list[Condition]) -> int:
        bad = sum(agreement_counterexample(cond) is not None for cond in conds)
        # from_bdd's recursive closure leaves BDD nodes in reference cycles; they are
        # collected here, while the builder still holds the BDD manager, because
        # dd.cudd complains if its manager is freed before them
        gc.collect()
        return bad

    if caps_sample < 0 or caps_sample >= len(caps):
        chosen = caps
    else:
        chosen = [caps[int(i)] for i in rng.choice(len(caps), size=caps_sample, replace=False)]
    if opt_sample < 0 or opt_sample >= len(all_opt):
        o_conds = all_opt
    else:
        o_conds = [all_opt[int(i)] for i in rng.choice(len(all_opt), size=opt_sample, replace=False)]
    totals = []
    if chosen:
        p_conds = [r.condition for c in chosen for r in pess[c].rules]
        bad, t = timed(lambda: check(p_conds), collect=True)
        disagreements += bad
        scale = len(caps) / len(chosen)
        totals.append(Timing(t.wall * scale, t.cpu * scale))
        report.add(
            Measure(
                f"BDD/SMT agreement, {label}",
                f"h∧: {len(p_conds)} conditions of {len(chosen)} capabilit{'y' if len(chosen) == 1 else 'ies'}",
                t.wall,
                t.cpu,
                "s",
                note=f"{t.cpu / max(len(p_conds), 1) * 1000:.1f} ms cpu per condition",
            )
        )
    if o_conds:
        bad, t = timed(lambda: check(o_conds), collect=True)
        disagreements += bad
        scale = len(all_opt) / len(o_conds)
        totals.append(Timing(t.wall * scale, t.cpu * scale))
        report.add(
            Measure(
                f"BDD/SMT agreement, {label}",
                f"h∨: {len(o_conds)} random conditions",
                t.wall,
                t.cpu,
                "s",
                note=f"{t.cpu / len(o_conds) * 1000:.1f} ms cpu per condition",
            )
        )
    if len(totals) == 2:
        exact = len(chosen) == len(caps) and len(o_conds) == len(all_opt)
        report.add(
            Measure(
                f"BDD/SMT agreement, {label}",
                f"all {n_pess + len(all_opt)} conditions ({n_pess} h∧ + {len(all_opt)} h∨)",
                sum(x.wall for x in totals),
                sum(x.cpu for x in totals),
                "s",
                note=("measured" if exact else "EXTRAPOLATED from the samples above")
                + (f"; {disagreements} DISAGREE" if disagreements else "; all checked agree"),
            )
        )


# -- driver -----------------------------------------------------------------------------------


def machine_info(pinned: bool) -> dict[str, Any]:
    import dd
    import z3

    load = ""
    if hasattr(os, "getloadavg"):
        load = ", load average {:.2f} {:.2f} {:.2f} at start".format(*os.getloadavg())
    return {
        "machine": f"{platform.machine()}, os.cpu_count() = {os.cpu_count()}"
        + (", pinned to one core" if pinned else ", single-threaded process")
        + load,
        "platform": platform.platform(),
        "python": f"{platform.python_implementation()} {platform.python_version()}",
        "libraries": f"numpy {np.__version__}, dd {dd.__version__}, z3 {z3.get_version_string()}",
    }


def _pin_to_one_core() -> bool:
    if not hasattr(os, "sched_setaffinity"):
        return False
    os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
    return True


def build_parser() -> BenchParser:
    p = BenchParser(
        "foundation",
        "Time the h∧/h∨ build, incremental rebuilds, Pr_h queries, the z3 checks and the "
        "state representation against their performance targets; print a table.",
    )
    p.add_argument("--atoms", type=positive, default=40, help="atoms in the vocabulary (default 40)")
    p.add_argument("--transitions", type=positive, default=10_000, help="transitions in D (default 10000)")
    p.add_argument("--capabilities", type=positive, default=20, help="capabilities (default 20)")
    p.add_argument("--states", type=positive, default=2_000, help="size of the state pool (default 2000)")
    p.add_argument("--seed", type=non_negative, default=0, help="seed of the numpy Generator (default 0)")
    p.add_argument(
        "--backends",
        default="cudd,autoref",
        help="comma-separated BDD backends timed on the pooled dataset (default cudd,autoref); "
        "the all-distinct dataset uses the first",
    )
    p.add_argument("--incremental-samples", type=positive, default=50, help="single additions per kind (default 50)")
    p.add_argument("--queries", type=positive, default=5_000, help="observed (s,c) queries (default 5000)")
    p.add_argument("--unobserved-queries", type=positive, default=1_000, help="unobserved (s,c) queries (default 1000)")
    p.add_argument(
        "--agreement-capabilities",
        type=int,
        default=1,
        help="capabilities whose h∧ conditions are all z3-checked (default 1; 0 skips, -1 all)",
    )
    p.add_argument(
        "--agreement-optimistic",
        type=int,
        default=4,
        help="random h∨ conditions z3-checked (default 4; 0 skips, -1 all: about an hour at the defaults)",
    )
    p.add_argument("--no-z3", action="store_true", help="skip the z3 refinement and agreement checks")
    p.add_argument("--no-distinct", action="store_true", help="skip the all-distinct-states dataset")
    p.add_argument(
        "--representation-states", type=positive, default=20_000, help="states in the micro-benchmark (default 20000)"
    )
    p.add_argument("--pin", action="store_true", help="pin the process to one core")
    p.add_argument("--json", metavar="PATH", help="also write the results as JSON to PATH")
    p.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    p.add_quick(QUICK, "a smoke run on a tenth of the data (the targets are meant for the full sizes)")
    return p


def _check_args(parser: argparse.ArgumentParser, args: argparse.Namespace) -> list[str]:
    # The sizes are positive by their argument type; these two also take -1 ("all").
    for name, minimum in (
        ("agreement_capabilities", -1),
        ("agreement_optimistic", -1),
    ):
        value = getattr(args, name)
        if value < minimum:
            parser.error(f"argument --{name.replace('_', '-')}: expected an integer ≥ {minimum}, got {value}")
    backends = [b.strip() for b in args.backends.split(",") if b.strip()]
    if not backends or any(b not in BACKENDS for b in backends):
        parser.error(f"argument --backends: expected names from {sorted(BACKENDS)}, got {args.backends!r}")
    return backends


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse(argv)
    backends = _check_args(parser, args)
    pinned = _pin_to_one_core() if args.pin else False
    report = Report(info=machine_info(pinned), echo=not args.quiet)
    started = time.perf_counter()
    rng = np.random.default_rng(args.seed)

    vocab = propositional_vocabulary(args.atoms)
    truth = true_model(LogicContext(vocab), rng, args.capabilities)
    report.info["setup"] = (
        f"{args.atoms} atoms, {args.capabilities} capabilities, {args.transitions} transitions, seed {args.seed}"
    )
    if args.quick:
        report.info["mode"] = "--quick: smaller than the sizes the targets are stated for"
    runs = [("pooled", backends, args.states)]
    if not args.no_distinct:
        runs.append(("all-distinct", backends[:1], None))
    with own_heap():
        for label, run_backends, pool in runs:
            data = sample_dataset(truth, rng, args.transitions, n_states=pool)
            builders = bench_build(report, label, data, run_backends)
            first = builders[run_backends[0]]
            report.info[f"D {label}"] = describe(data, first)
            bench_queries(report, label, first, rng, args.queries, args.unobserved_queries)
            if not args.no_z3 and label == "pooled":
                bench_z3(report, label, first)
                bench_agreement(report, label, first, rng, args.agreement_capabilities, args.agreement_optimistic)
            bench_incremental(report, label, truth, builders, rng, args.incremental_samples)
            del builders, first
            gc.collect()

        for n in sorted({40, 200, args.atoms}):
            bench_representation(report, rng, n, args.representation_states)

    report.info["run time"] = f"{time.perf_counter() - started:.1f} s wall, {time.process_time():.1f} s cpu"
    print(render(report))
    if args.json:
        payload = {"info": report.info, "measures": [m.to_json() for m in report.measures]}
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(payload, f, indent=2, ensure_ascii=False)
            f.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
