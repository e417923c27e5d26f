"""Benchmark: are the tiered agent verdicts of ``capver verify`` right?  Each claim
is checked exactly against a known true model
(:mod:`capver.engines.verification.agent_verdict`'s observed, confident,
unconfirmed and unknown tiers).

The agent is the model-backed agent of a true model h⋆ (it executes c from s by
drawing s′ from Pr_h⋆(· | s, c)): random truths of :mod:`capver.synthetic` (four
atoms, three capabilities, a new truth per seed) and three hand-written ones in
``capver/data/truths/`` with the quirks the MCQS paper reports (a rare side effect
of probability 0.04 that a safety property forbids; a capability that reaches its
intent with probability 0.2 and a wrong outcome with 0.8; a capability that works
on one object and not on another).  Each run (one learned dataset) learns h∧/h∨
with MCQS-E or random queries for a simulator-step budget (the whole budget:
no convergence stop), then ``decide`` gives a verdict for ``A [ G ¬a ]``,
``E [ F a ]``, ``A [ G<=5 ¬a ]`` and ``E [ ¬b U<=3 a ]`` for every atom a (b the
next atom).

Every claim is checked against the truth:

* observed verdicts: the truth's verdict (the BDD engine on h⋆) must agree, always;
* confident verdicts: the claim made to the user is "for every scheduler, the
  agent violates the verdict within k executions with probability ≤
  1 − (1 − ε̄)^k"; the truth's exact maximal probability of such a violation
  within k = 10 executions (capver's explicit engine, in rationals) is compared
  with the printed bound.  Separately, the event the confidence level δ is about
  is checked exactly for the whole run: at *every* tried pair (s, c), the truth's
  mass on outcomes never observed at (s, c) is ≤ ε(s, c) (stricter than the
  frontier pairs a verdict uses).  A confident verdict may also disagree with the
  truth's verdict legitimately (a violation within the stated probability): that
  is its own column;
* for every claim's path formula, the data's two-sided bounds on the agent's Pmax
  and Pmin (:func:`~capver.engines.verification.confidence.agent_reach_bounds`,
  sound scope) must contain the truth's exact values: their coverage and widths.

Targets: observed verdicts never wrong; wrong confident claims, and bounds that miss
the truth, each in at most a δ share of the runs.

Run: ``capver bench verdicts [--quick] [--jobs 2] [--out DIR]``; writes ``table.md``,
``runs.csv`` (one row per claim) and ``tiers.png`` (the share of claims per tier
against the budget)."""

from __future__ import annotations

import csv
import importlib.resources
import math
import multiprocessing
import os
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import astuple, dataclass, fields, replace
from fractions import Fraction
from pathlib import Path

import numpy as np

from capver import synthetic
from capver.api import learn
from capver.bench.cli import BenchParser, summary
from capver.bench.markdown import markdown_table, table_row
from capver.commands.argtypes import open_unit_interval, positive
from capver.core.dataset import TransitionDataset
from capver.core.properties import (
    AtomFormula,
    Eventually,
    Globally,
    Optimum,
    PathFormula,
    ProbabilityQuery,
    Property,
    formula_text,
    holds,
)
from capver.core.state import State
from capver.core.vocabulary import Vocabulary
from capver.engines.verification import explicit, quantitative
from capver.engines.verification.agent_verdict import (
    DEFAULT_DELTA,
    DEFAULT_EPSILON,
    AgentVerdict,
    LatticeVerdict,
    Tier,
)
from capver.engines.verification.evidence import Evidence, Verifier
from capver.engines.verification.explicit import Target
from capver.engines.verification.sampling import SamplingBounds
from capver.engines.verification.symbolic import SymbolicEngine
from capver.io import dsl
from capver.io.properties_text import parse_property
from capver.logic.condition import LogicContext
from capver.model.capability_model import CompoundModel
from capver.settings import model_assessment

TRUTH_FILES: dict[str, str] = {
    "rare-side-effect": "rare_side_effect.capm",
    # The same chip with probability 0.01 and 0.001: rarer than ε, so a confident
    # claim may stand while the property is false; its printed bound must still hold.
    "rare-1in100": "rare_side_effect_1in100.capm",
    "rare-1in1000": "rare_side_effect_1in1000.capm",
    "low-success": "low_success.capm",
    "asymmetry": "asymmetry.capm",
}
RANDOM_TRUTH = "random"
TRUTHS = (RANDOM_TRUTH, *TRUTH_FILES)
METHODS = ("mcqs-e", "random")
LEARN_METHODS = ("mcqs-e", "mcqs-s", "random")
BUDGETS = (20, 100, 300, 1000, 3000)
SEEDS = 10
HORIZON = 10
"""The k of the claim checked against the truth: a violation within k executions."""
G_BOUND = 5
U_BOUND = 3
TIERS = ("observed-holds", "observed-violated", "confident-holds", "confident-violated", "unconfirmed", "unknown")
TARGETS = {
    "observed-holds": "never wrong",
    "observed-violated": "never wrong",
    "confident-holds": "wrong in ≤ a δ share of runs",
    "confident-violated": "wrong in ≤ a δ share of runs",
    "unconfirmed": "no claim",
    "unknown": "no claim",
}
COVER_SLACK = 1e-9
"""The bounds are floats whose rounding is not accounted for (confidence module)."""
QUICK: dict[str, object] = {"steps": [20, 300], "seeds": 1}
# Salts keep the truths' and the learners' random streams apart.
TRUTH_SALT = 7301
LEARN_SALT = 7302


def _csv_list(text: str) -> list[str]:
    return [p.strip() for p in text.split(",") if p.strip()]


def _budgets(text: str) -> list[int]:
    return [positive(p) for p in _csv_list(text)]


# ------------------------------------------------------------------------------ truths
def truth_text(name: str) -> str:
    """The .capm text of a hand-written truth shipped in ``capver/data/truths``."""
    return truth_file_text(TRUTH_FILES[name])


def truth_file_text(file: str) -> str:
    """The text of a file shipped in ``capver/data/truths`` (a truth, an abstraction)."""
    return importlib.resources.files("capver.data").joinpath("truths", file).read_text(encoding="utf-8")


def build_truth(name: str, seed: int) -> tuple[CompoundModel, State]:
    """The true model h⋆ and its initial state: for ``random`` a new random truth per
    seed (as the agent-verdict property tests draw them), else the shipped file."""
    if name == RANDOM_TRUTH:
        rng = np.random.default_rng([seed, TRUTH_SALT])
        ctx = LogicContext(synthetic.propositional_vocabulary(4))
        model = synthetic.random_model(ctx, rng, n_capabilities=3, max_rules=2, max_effects=2, total=True)
        return model, int(rng.integers(2 ** len(ctx.vocab)))
    parsed = dsl.parse(truth_text(name), filename=f"capver/data/truths/{TRUTH_FILES[name]}")
    return parsed.model, parsed.init if parsed.init is not None else 0


def property_texts(vocab: Vocabulary) -> list[str]:
    """The properties checked on every run: per atom a (b the next atom), the safety
    property, reachability, a bounded invariant and a bounded until."""
    names = [formula_text(AtomFormula(a)) for a in vocab.atoms]
    out = []
    for i, a in enumerate(names):
        b = names[(i + 1) % len(names)]
        out += [f"A [ G !{a} ]", f"E [ F {a} ]", f"A [ G<={G_BOUND} !{a} ]", f"E [ !{b} U<={U_BOUND} {a} ]"]
    return out


# ------------------------------------------------------------------------------ checks
@dataclass(frozen=True, slots=True)
class UnseenCheck:
    """The missing-mass bounds of one run against the truth, over every tried pair
    (s, c): ``excess`` = max of (the truth's mass on outcomes never observed at
    (s, c)) − ε(s, c) — the bounds' event, the one δ is the probability of missing,
    is ``excess`` ≤ 0; ``closest`` = the same max over the pairs whose unseen mass is
    positive (−inf when every pair has shown all its outcomes): how near a real unseen
    outcome came to its bound; ``pairs`` / ``unseen_pairs``: tried pairs, and those
    with an outcome not observed yet."""

    excess: float
    closest: float
    pairs: int
    unseen_pairs: int


def unseen_excess(truth: CompoundModel, data: TransitionDataset, bounds: SamplingBounds) -> UnseenCheck:
    """Check the run's missing-mass bounds exactly against the truth (:class:`UnseenCheck`)."""
    worst = closest = -math.inf
    pairs = unseen_pairs = 0
    for c in data.capability_table:
        cm = truth[c]
        for s in data.states_of(c):
            seen = data.successors(s, c)
            unseen = 1 - sum((p for s2, p in cm.distribution(s).items() if s2 in seen), Fraction(0))
            gap = float(unseen) - bounds.epsilon(s, c)
            worst = max(worst, gap)
            pairs += 1
            if unseen > 0:
                closest = max(closest, gap)
                unseen_pairs += 1
    return UnseenCheck(worst, closest, pairs, unseen_pairs)


def _absorbing(mdp: explicit.ExplicitMDP, stop: Sequence[bool]) -> explicit.ExplicitMDP:
    """``mdp`` with every ``stop`` state made a self-loop: runs that leave the hold
    states of an until without reaching its goal end there."""
    choices = tuple(
        (explicit.Choice(None, ((i, Fraction(1)),)),) if stop[i] else cs for i, cs in enumerate(mdp.choices)
    )
    return explicit.ExplicitMDP(mdp.states, mdp.index, choices)


def _tests(path: PathFormula, vocab: Vocabulary) -> tuple[Target, Target | None]:
    """The goal and hold states of the reachability a path formula is about: ¬φ for
    ``G φ`` (whose probability is 1 minus that of ``F ¬φ``), ψ through φ for
    ``φ U ψ``, ψ for ``F ψ``."""
    if isinstance(path, Globally):
        inv = path.invariant
        return (lambda s: not holds(inv, s, vocab)), None
    if isinstance(path, Eventually):
        goal = path.goal
        return (lambda s: holds(goal, s, vocab)), None
    hold, until = path.hold, path.goal
    return (lambda s: holds(until, s, vocab)), (lambda s: holds(hold, s, vocab))


def truth_reach(
    model: CompoundModel, init: State, goal: Target, hold: Target | None, bound: int | None, maximise: bool
) -> Fraction:
    """Pmax (Pmin) of ``hold U<=bound goal`` from ``init`` on the truth, exactly, by
    capver's explicit engine; a run that leaves the hold states without reaching the
    goal stays where it left."""
    mdp = explicit.explore(model, init)
    mask = mdp.mask(goal)
    if hold is not None:
        inside = mdp.mask(hold)
        mdp = _absorbing(mdp, [not g and not h for g, h in zip(mask, inside, strict=True)])
    if bound is None:
        value = explicit.reach_values(mdp, mask, maximise=maximise, exact=True)[0]
    else:
        value = explicit.bounded_reach_values(mdp, mask, bound, maximise=maximise, exact=True)[0]
    assert isinstance(value, Fraction)
    return value


def violation_probability(prop: Property, truth: CompoundModel, init: State, k: int) -> Fraction:
    """The truth's exact maximal probability (over schedulers) that the agent violates
    a confident verdict of ``prop`` within ``k`` executions: reaching ¬φ for
    ``A [ G φ ]`` holding, reaching ψ through φ for ``E [ φ U ψ ]`` / ``E [ F ψ ]``
    failing (within the property's own bound when it has one)."""
    path = prop.path
    assert path is not None
    goal, hold = _tests(path, truth.vocabulary)
    bound = k if path.bound is None else min(k, path.bound)
    return truth_reach(quantitative.restricted(truth, prop), init, goal, hold, bound, True)


def truth_value(prop: Property, truth: CompoundModel, init: State, maximise: bool) -> Fraction:
    """The truth's exact Pmax (Pmin) of the property's path formula from ``init``."""
    path = prop.path
    assert path is not None
    goal, hold = _tests(path, truth.vocabulary)
    model = quantitative.restricted(truth, prop)
    if isinstance(path, Globally):  # Pmax [G φ] = 1 − Pmin [F ¬φ]
        return 1 - truth_reach(model, init, goal, None, path.bound, not maximise)
    return truth_reach(model, init, goal, hold, path.bound, maximise)


def bound_properties(prop: Property) -> tuple[Property, Property]:
    """``Pmax=? [ path ]`` and ``Pmin=? [ path ]`` of a qualitative property's path
    formula, over its capabilities: the values whose bounds the benchmark checks."""
    path = prop.path
    assert path is not None
    return tuple(  # type: ignore[return-value]  # two, one per optimum
        replace(prop, name=f"{prop.name}-{optimum.value}", query=ProbabilityQuery(optimum, path))
        for optimum in (Optimum.MAX, Optimum.MIN)
    )


# ------------------------------------------------------------------------------ runs
@dataclass(frozen=True, slots=True)
class RunSpec:
    truth: str
    method: str
    budget: int
    seed: int


@dataclass(frozen=True, slots=True)
class Claim:
    """One verdict of one run, checked against the truth (a row of runs.csv).  The
    ``run_*`` fields belong to the run and repeat on each of its claims."""

    truth: str
    method: str
    budget: int
    seed: int
    steps: int  # simulator steps the run spent
    property_text: str
    tier: str  # one of TIERS
    truth_holds: bool  # the truth's verdict on the property
    differs: bool  # the claim's verdict differs from the truth's (observed / confident tiers)
    wrong: bool  # observed: differs; confident: truth_violation > bound (k = HORIZON)
    epsilon: float  # ε̄ over the frontier pairs (nan for the observed and unknown tiers)
    bound: float  # the printed violation bound for k = HORIZON (nan unless confident)
    truth_violation: float  # the truth's exact maximal violation probability within HORIZON (nan unless confident)
    frontier_pairs: int  # frontier pairs (-1 for the observed and unknown tiers); 0: decided at the initial state
    untried: int  # frontier pairs never tried (-1 for the observed and unknown tiers)
    thin: int  # frontier pairs tried but with ε > the threshold (-1 likewise)
    run_excess: float  # max over the run's tried pairs of (true unseen mass − ε); > 0: the event δ bounds failed
    run_pairs: int  # tried pairs of the run
    run_closest: float  # the same max over the pairs with an unseen outcome (-inf: none)
    run_unseen_pairs: int  # tried pairs with an outcome the run never observed there
    # The data's two-sided bounds on the agent's Pmax / Pmin of the path formula, and the truth's values.
    pmax_lower: float
    pmax_upper: float
    pmax_truth: float
    pmin_lower: float
    pmin_upper: float
    pmin_truth: float

    @property
    def confident(self) -> bool:
        return self.tier.startswith("confident")

    @property
    def covered(self) -> tuple[bool, bool]:
        """Whether the Pmax and the Pmin bounds contain the truth's value (up to the
        bounds' float rounding)."""
        return (
            self.pmax_lower - COVER_SLACK <= self.pmax_truth <= self.pmax_upper + COVER_SLACK,
            self.pmin_lower - COVER_SLACK <= self.pmin_truth <= self.pmin_upper + COVER_SLACK,
        )

    @property
    def run_key(self) -> tuple[str, str, int, int]:
        return self.truth, self.method, self.budget, self.seed


def tier_name(v: LatticeVerdict) -> str:
    if v.tier in (Tier.OBSERVED, Tier.CONFIDENT):
        return f"{v.tier.value}-{'holds' if v.verdict is AgentVerdict.HOLDS else 'violated'}"
    return v.tier.value


def verifier_for(
    h_and: CompoundModel,
    h_or: CompoundModel,
    data: TransitionDataset,
    props: Sequence[Property],
    init: State,
    delta: float,
    epsilon: float,
    sampling: SamplingBounds | None = None,
) -> Verifier:
    """The verification entry point as the benchmark asks it: about the agent from
    h∧ and h∨, as ``capver verify`` decides without an environment (a truth is a
    model, not an environment), the agent's bounds without h∧'s values, one pair of
    BDD engines across the properties."""
    return Verifier(
        Evidence(h_and, h_or, data, delta=delta, epsilon=epsilon),
        props,
        init,
        engines=(SymbolicEngine(h_and), SymbolicEngine(h_or)),
        values=False,
        sampling=sampling,
    )


def run_one(spec: RunSpec, delta: float, epsilon: float) -> list[Claim]:
    """Learn one dataset on the truth and check the verdict of every property."""
    given, init = build_truth(spec.truth, spec.seed)
    a = model_assessment(given, init, f"truth {spec.truth}")
    truth = a.truth  # h⋆ completed with the no-op where no rule matches: what the agent does
    assert truth is not None
    # Each run's own stream: runs at different budgets are independent datasets.
    rng = np.random.default_rng(
        [spec.seed, LEARN_SALT, TRUTHS.index(spec.truth), LEARN_METHODS.index(spec.method), spec.budget]
    )
    # patience=0: every run spends its whole budget, so that budgets compare.
    result = learn(a, method=spec.method, max_steps=spec.budget, seed=int(rng.integers(2**31 - 1)), patience=0)
    data = result.data
    sampling = SamplingBounds(data, delta)
    check = unseen_excess(truth, data, sampling)
    on_truth = SymbolicEngine(truth)
    caps = tuple(truth)
    texts = property_texts(truth.vocabulary)
    props = [parse_property(text, truth.vocabulary, caps) for text in texts]
    bounded = [bound_properties(prop) for prop in props]
    verifier = verifier_for(
        result.h_and,
        result.h_or,
        data,
        [*props, *(q for pair in bounded for q in pair)],
        init,
        delta,
        epsilon,
        sampling,
    )
    out = []
    nan = math.nan
    for text, prop, pair in zip(texts, props, bounded, strict=True):
        v = verifier.check(prop).lattice
        assert v is not None  # E/A properties on a lattice are verdicts about the agent
        truth_holds = on_truth.check(prop, init).holds
        tier = tier_name(v)
        claimed = v.verdict is AgentVerdict.HOLDS
        differs = v.tier in (Tier.OBSERVED, Tier.CONFIDENT) and claimed != truth_holds
        wrong = differs if v.tier is Tier.OBSERVED else False
        eps = bound = violation = nan
        frontier = untried = thin = -1
        if v.confidence is not None:
            eps, frontier = v.confidence.epsilon, v.confidence.pairs
            untried, thin = v.confidence.untried, v.confidence.thin
        if v.tier is Tier.CONFIDENT:
            assert v.confidence is not None
            bound = dict(v.confidence.violation)[HORIZON]
            exact = violation_probability(prop, truth, init, HORIZON)
            violation = float(exact)
            wrong = exact > Fraction(bound)
        quant = []
        for maximise, q in zip((True, False), pair, strict=True):
            b = verifier.check(q).agent
            assert b is not None  # Pmax and Pmin are always bounded
            quant += [b.lower, b.upper, float(truth_value(prop, truth, init, maximise))]
        out.append(
            Claim(
                spec.truth,
                spec.method,
                spec.budget,
                spec.seed,
                result.progress.steps,
                text,
                tier,
                truth_holds,
                differs,
                wrong,
                eps,
                bound,
                violation,
                frontier,
                untried,
                thin,
                check.excess,
                check.pairs,
                check.closest,
                check.unseen_pairs,
                *quant,
            )
        )
    return out


def _run(job: tuple[RunSpec, float, float]) -> list[Claim]:
    return run_one(*job)


def run_all(
    specs: Sequence[RunSpec], delta: float, epsilon: float, jobs: int, log: Callable[[str], None]
) -> list[Claim]:
    """Every run's claims, in the order of ``specs`` (large budgets are started first
    so that the pool's last jobs are short)."""
    order = sorted(range(len(specs)), key=lambda i: -specs[i].budget)
    work = [(specs[i], delta, epsilon) for i in order]
    done: dict[int, list[Claim]] = {}
    if jobs <= 1:
        for n, (i, w) in enumerate(zip(order, work, strict=True), 1):
            done[i] = _run(w)
            log(f"[{n}/{len(work)}] {specs[i]}")
    else:
        with multiprocessing.get_context("spawn").Pool(jobs) as pool:
            for n, (i, r) in enumerate(zip(order, pool.imap(_run, work), strict=True), 1):
                done[i] = r
                log(f"[{n}/{len(work)}] {specs[i]}")
    return [c for i in range(len(specs)) for c in done[i]]


# ------------------------------------------------------------------------------ tables
def _median(xs: Sequence[float]) -> str:
    return f"{statistics.median(xs):.3g}" if xs else "—"


def _runs(claims: Sequence[Claim]) -> dict[tuple[str, str, int, int], list[Claim]]:
    runs: dict[tuple[str, str, int, int], list[Claim]] = {}
    for c in claims:
        runs.setdefault(c.run_key, []).append(c)
    return runs


TIER_HEADER = [
    "tier",
    "claims",
    "share of claims",
    "with no frontier pair",
    "wrong",
    "verdict ≠ truth's",
    "in a run whose missing-mass event failed",
    "median ε̄",
    "median untried pairs",
    "median thin pairs",
    "target",
]


def tier_table(claims: Sequence[Claim]) -> list[str]:
    """Per tier: claims, how many are wrong against the truth (observed: the verdict;
    confident: the k-execution bound), how many differ from the truth's verdict, and
    the frontier statistics."""
    lines = markdown_table(TIER_HEADER)
    total = len(claims)
    for tier in TIERS:
        cs = [c for c in claims if c.tier == tier]
        decided = tier.startswith(("observed", "confident"))
        lines.append(
            table_row(
                [
                    tier,
                    len(cs),
                    f"{len(cs) / total:.3f}" if total else "—",
                    sum(c.frontier_pairs == 0 for c in cs) if tier.startswith(("confident", "unconfirmed")) else "—",
                    sum(c.wrong for c in cs) if decided else "—",
                    sum(c.differs for c in cs) if decided else "—",
                    sum(c.run_excess > 0 for c in cs) if tier.startswith("confident") else "—",
                    _median([c.epsilon for c in cs]) if tier.startswith(("confident", "unconfirmed")) else "—",
                    _median([c.untried for c in cs]) if tier == "unconfirmed" else "—",
                    _median([c.thin for c in cs]) if tier == "unconfirmed" else "—",
                    TARGETS[tier],
                ]
            )
        )
    return lines


BUDGET_HEADER = [
    "method",
    "budget",
    "runs",
    "claims",
    *TIERS,
    "observed wrong",
    "confident wrong (k = 10)",
    "confident ≠ truth's verdict",
    "runs with a confident claim",
    "runs with a wrong confident claim",
    "runs whose missing-mass event failed",
]


def budget_table(claims: Sequence[Claim]) -> list[str]:
    lines = markdown_table(BUDGET_HEADER)
    for method in dict.fromkeys(c.method for c in claims):
        for budget in sorted({c.budget for c in claims if c.method == method}):
            cs = [c for c in claims if c.method == method and c.budget == budget]
            runs = _runs(cs).values()
            lines.append(
                table_row(
                    [
                        method,
                        budget,
                        len(runs),
                        len(cs),
                        *(sum(c.tier == t for c in cs) for t in TIERS),
                        sum(c.wrong for c in cs if not c.confident),
                        sum(c.wrong for c in cs if c.confident),
                        sum(c.differs for c in cs if c.confident),
                        sum(any(c.confident for c in r) for r in runs),
                        sum(any(c.confident and c.wrong for c in r) for r in runs),
                        sum(r[0].run_excess > 0 for r in runs),
                    ]
                )
            )
    return lines


TRUTH_HEADER = ["truth", "runs", "properties", "claims", *TIERS, "confident ≠ truth's verdict"]


def truth_table(claims: Sequence[Claim]) -> list[str]:
    lines = markdown_table(TRUTH_HEADER)
    for truth in dict.fromkeys(c.truth for c in claims):
        cs = [c for c in claims if c.truth == truth]
        runs = _runs(cs)
        props = {len(r) for r in runs.values()}
        lines.append(
            table_row(
                [
                    truth,
                    len(runs),
                    "/".join(map(str, sorted(props))),
                    len(cs),
                    *(sum(c.tier == t for c in cs) for t in TIERS),
                    sum(c.differs for c in cs if c.confident),
                ]
            )
        )
    return lines


QUANT_HEADER = [
    "method",
    "budget",
    "runs",
    "bounds",
    "covered",
    "runs with a bound missing the truth",
    "median width Pmax",
    "median width Pmin",
    "Pmax bounds of width ≤ 0.1",
    "Pmin bounds of width ≤ 0.1",
]


def quant_table(claims: Sequence[Claim]) -> list[str]:
    """Per method and budget: how many of the two-sided bounds (a Pmax and a Pmin one
    per claim) contain the truth's value, in how many runs one misses, and how wide
    they are."""
    lines = markdown_table(QUANT_HEADER)
    groups = [
        (m, b)
        for m in dict.fromkeys(c.method for c in claims)
        for b in sorted({c.budget for c in claims if c.method == m})
    ]
    for method, budget in [*groups, ("all", 0)]:
        cs = [c for c in claims if method == "all" or (c.method == method and c.budget == budget)]
        runs = _runs(cs).values()
        wmax = [c.pmax_upper - c.pmax_lower for c in cs]
        wmin = [c.pmin_upper - c.pmin_lower for c in cs]
        lines.append(
            table_row(
                [
                    method,
                    budget if method != "all" else "all",
                    len(runs),
                    2 * len(cs),
                    sum(sum(c.covered) for c in cs),
                    sum(not all(all(c.covered) for c in r) for r in runs),
                    _median(wmax),
                    _median(wmin),
                    sum(w <= 0.1 for w in wmax),
                    sum(w <= 0.1 for w in wmin),
                ]
            )
        )
    return lines


def run_summary(claims: Sequence[Claim], delta: float) -> list[str]:
    """The share of runs with a wrong confident claim, beside δ, and the exact
    missing-mass event."""
    runs = list(_runs(claims).values())
    n = len(runs)
    wrong = sum(any(c.confident and c.wrong for c in r) for r in runs)
    failed = sum(r[0].run_excess > 0 for r in runs)
    with_confident = sum(any(c.confident for c in r) for r in runs)
    observed_wrong = sum(c.wrong for c in claims if c.tier.startswith("observed"))
    confident = [c for c in claims if c.confident]
    lines = [
        f"- runs: {n}; runs with at least one confident claim: {with_confident}",
        f"- observed claims wrong: {observed_wrong} (target: 0) — {'met' if observed_wrong == 0 else 'NOT met'}",
        (
            f"- runs with a wrong confident claim (the truth's violation probability within {HORIZON} executions above "
            f"the printed bound): {wrong} / {n} = {wrong / n if n else 0:.4f} (target: ≤ δ = {delta}) — "
            f"{'met' if not n or wrong / n <= delta else 'NOT met'}"
        ),
        (
            f"- runs whose missing-mass event failed (some tried pair's true unseen mass > its ε): {failed} / {n} = "
            f"{failed / n if n else 0:.4f} (at most δ = {delta} in expectation)"
        ),
        (
            f"- confident claims whose verdict differs from the truth's (allowed within the printed bound): "
            f"{sum(c.differs for c in confident)} of {len(confident)}"
        ),
    ]
    missed = sum(not all(all(c.covered) for c in r) for r in runs)
    lines.append(
        f"- runs in which a two-sided Pmax/Pmin bound misses the truth's value: {missed} / {n} = "
        f"{missed / n if n else 0:.4f} (target: ≤ δ = {delta}) — "
        f"{'met' if not n or missed / n <= delta else 'NOT met'}"
    )
    worst = max((c.run_excess for c in claims), default=math.nan)
    closest = max((c.run_closest for c in claims), default=math.nan)
    with_unseen = sum(r[0].run_unseen_pairs > 0 for r in runs)
    lines.append(
        f"- largest (true unseen mass − ε) over every tried pair of every run: {worst:.4f}; over the pairs "
        f"with an outcome not observed yet (in {with_unseen} of the {n} runs): {closest:.4f}"
    )
    if confident:
        slack = max(c.truth_violation - c.bound for c in confident)
        lines.append(
            f"- largest (truth's violation probability − printed bound) at k = {HORIZON} over confident "
            f"claims: {slack:.4f}"
        )
    return lines


def write_csv(claims: Sequence[Claim], path: Path) -> None:
    with path.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow([fl.name for fl in fields(Claim)])
        for c in claims:
            # repr: floats round-trip, so that numbers recomputed from the file are the table's.
            w.writerow([repr(x) if isinstance(x, float) else int(x) if isinstance(x, bool) else x for x in astuple(c)])


def plot(claims: Sequence[Claim], path: Path) -> None:
    """Share of claims per tier against the budget, one panel per method (stacked
    bars).  Uses the object-oriented Agg canvas, so no global pyplot state is touched."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    methods = list(dict.fromkeys(c.method for c in claims))
    fig = Figure(figsize=(4.5 * len(methods) + 1.5, 3.8), tight_layout=True)
    FigureCanvasAgg(fig)
    for j, method in enumerate(methods):
        ax = fig.add_subplot(1, len(methods), j + 1)
        budgets = sorted({c.budget for c in claims if c.method == method})
        per = [[c for c in claims if c.method == method and c.budget == b] for b in budgets]
        xs = list(range(len(budgets)))
        bottom = [0.0] * len(budgets)
        for tier in TIERS:
            share = [sum(c.tier == tier for c in cs) / len(cs) for cs in per]
            ax.bar(xs, share, bottom=bottom, label=tier, width=0.7)
            bottom = [b + s for b, s in zip(bottom, share, strict=True)]
        ax.set_xticks(xs, [str(b) for b in budgets])
        ax.set_ylim(0, 1)
        ax.set_xlabel("simulator-step budget")
        ax.set_ylabel("share of claims")
        ax.set_title(f"{method}: verdict tiers")
        ax.grid(True, axis="y", alpha=0.3)
    # One legend beside the last panel: inside, it would hide the bars.
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.02, 1.0))
    fig.savefig(path, dpi=110)


# ------------------------------------------------------------------------------ driver
def build_parser() -> BenchParser:
    p = BenchParser("verdicts", summary(__doc__))
    p.add_argument("--truths", type=_csv_list, default=list(TRUTHS), help=f"truths (default {','.join(TRUTHS)})")
    p.add_argument("--methods", type=_csv_list, default=list(METHODS), help=f"methods (default {','.join(METHODS)})")
    p.add_argument(
        "--steps",
        type=_budgets,
        default=list(BUDGETS),
        help=f"simulator-step budgets of the runs, comma-separated (default {','.join(map(str, BUDGETS))})",
    )
    p.add_argument(
        "--seeds", type=positive, default=SEEDS, help=f"seeds per truth, method and budget (default {SEEDS})"
    )
    p.add_argument(
        "--delta",
        type=open_unit_interval,
        default=DEFAULT_DELTA,
        help=f"confidence parameter δ of the confident tier (default {DEFAULT_DELTA})",
    )
    p.add_argument(
        "--epsilon",
        type=open_unit_interval,
        default=DEFAULT_EPSILON,
        help=f"largest ε̄ a confident verdict allows (default {DEFAULT_EPSILON})",
    )
    p.add_argument("--jobs", type=positive, default=2, help="worker processes (default 2; 1: no pool)")
    p.add_argument("--out", type=Path, default=Path("bench-verdicts"), help="output directory (default bench-verdicts)")
    p.add_quick(QUICK, "a smoke run: budgets 20 and 300, one seed (well under a minute)")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse(argv)
    for name, given, allowed in (("--truths", args.truths, TRUTHS), ("--methods", args.methods, LEARN_METHODS)):
        bad = [x for x in given if x not in allowed]
        if bad or not given:
            parser.error(f"{name}: expected some of {', '.join(allowed)}, got {','.join(given) or 'nothing'}")
    if not args.steps:
        parser.error("--steps: expected at least one budget")

    def log(msg: str) -> None:
        print(msg, file=sys.stderr, flush=True)

    load_before = os.getloadavg()
    start = time.perf_counter()
    specs = [
        RunSpec(t, m, b, s)
        for t in args.truths
        for m in args.methods
        for b in sorted(args.steps)
        for s in range(args.seeds)
    ]
    claims = run_all(specs, args.delta, args.epsilon, args.jobs, log)
    wall = time.perf_counter() - start
    load_after = os.getloadavg()
    # Claims with no frontier pair are decided at the initial state (ε̄ = 0): they
    # exercise nothing of the missing-mass bounds.
    confident = sum(c.confident and c.frontier_pairs > 0 for c in claims)
    lines = [
        "# capver bench verdicts",
        "",
        (
            f"Truths: {', '.join(args.truths)}; methods: {', '.join(args.methods)}; budgets (simulator steps): "
            f"{', '.join(map(str, sorted(args.steps)))}; seeds: {args.seeds}; {len(specs)} runs, "
            f"{len(claims)} claims; δ = {args.delta}, ε threshold = {args.epsilon}; confident claims checked at "
            f"k = {HORIZON} executions."
        ),
        "",
        "## Claims per tier",
        "",
        (
            "wrong: observed — the truth's verdict differs; confident — the truth's exact maximal probability of a "
            f"violation within {HORIZON} executions exceeds the printed bound 1 − (1 − ε̄)^{HORIZON}."
        ),
        "",
        *tier_table(claims),
        "",
        "## Runs",
        "",
        *run_summary(claims, args.delta),
        *(
            []
            if confident
            else [
                (
                    f"- no confident claim with a frontier pair at ε = {args.epsilon}: rerun with a "
                    "larger --epsilon (e.g. 0.2) to exercise the confident tier"
                )
            ]
        ),
        "",
        "## Per method and budget",
        "",
        *budget_table(claims),
        "",
        "## Per truth",
        "",
        *truth_table(claims),
        "",
        "## Two-sided bounds on the agent's Pmax and Pmin (sound scope)",
        "",
        (
            "For each claim's path formula, the data's anytime-valid lower and upper bounds on the agent's Pmax and "
            "Pmin (confidence.agent_reach_bounds / agent_globally_bounds, confidence 1 − δ with every other bound of "
            "the run), against the truth's exact values (explicit engine)."
        ),
        "",
        *quant_table(claims),
        "",
        (
            f"Total wall-clock {wall:.0f} s with {args.jobs} process(es); load average (1, 5, 15 min) "
            f"{' '.join(f'{x:.2f}' for x in load_before)} before, {' '.join(f'{x:.2f}' for x in load_after)} after, "
            f"on {os.cpu_count()} CPU(s)."
        ),
    ]
    text = "\n".join(lines) + "\n"
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "table.md").write_text(text)
    write_csv(claims, args.out / "runs.csv")
    plot(claims, args.out / "tiers.png")
    print(text, end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
