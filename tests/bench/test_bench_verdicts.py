"""``capver bench verdicts``: the quick run writes a table whose columns, counts and
medians are those of its runs.csv (recomputed here), every run has a claim for
every property, no observed claim is wrong; and the exact checks the benchmark
makes against the truth compute what they say on the hand-written truths."""

from __future__ import annotations

import csv
import math
import statistics
from fractions import Fraction
from pathlib import Path

import pytest

from capver.bench.verdicts import (
    TRUTHS,
    build_truth,
    main,
    property_texts,
    truth_text,
    truth_value,
    unseen_excess,
    violation_probability,
)
from capver.core.dataset import TransitionDataset
from capver.core.state import Transition
from capver.engines.verification.sampling import SamplingBounds, missing_mass_bound
from capver.io import dsl
from capver.io.properties_text import parse_property
from capver.settings import model_assessment

TIERS = ["observed-holds", "observed-violated", "confident-holds", "confident-violated", "unconfirmed", "unknown"]
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
TRUTH_HEADER = ["truth", "runs", "properties", "claims", *TIERS, "confident ≠ truth's verdict"]
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
QUICK_BUDGETS = (20, 300)
METHODS = ("mcqs-e", "random")

Row = dict[str, str]


def _tables(text: str) -> list[tuple[list[str], list[Row]]]:
    """The markdown tables of ``text`` as (header, rows as {column: cell})."""
    out: list[tuple[list[str], list[Row]]] = []
    block: list[list[str]] = []
    for line in [*text.splitlines(), ""]:
        if line.startswith("|"):
            block.append([c.strip() for c in line.strip().strip("|").split("|")])
        elif block:
            header, _, *rows = block
            out.append((header, [dict(zip(header, r, strict=True)) for r in rows]))
            block = []
    return out


def _median(xs: list[float]) -> str:
    return f"{statistics.median(xs):.3g}" if xs else "—"


@pytest.fixture(scope="module")
def quick(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, list[Row], Path]:
    out = tmp_path_factory.mktemp("verdicts")
    assert main(["--quick", "--jobs", "1", "--out", str(out)]) == 0
    with (out / "runs.csv").open() as f:
        rows = list(csv.DictReader(f))
    return (out / "table.md").read_text(), rows, out


def test_quick_run_claims_add_up(quick: tuple[str, list[Row], Path]) -> None:
    text, rows, out = quick
    runs: dict[tuple[str, str, str, str], list[Row]] = {}
    for r in rows:
        runs.setdefault((r["truth"], r["method"], r["budget"], r["seed"]), []).append(r)
    assert len(runs) == len(TRUTHS) * len(METHODS) * len(QUICK_BUDGETS)  # one seed
    props = {t: property_texts(build_truth(t, 0)[0].vocabulary) for t in TRUTHS}
    for (truth, _, budget, _), claims in runs.items():
        assert [c["property_text"] for c in claims] == props[truth]
        assert {int(c["steps"]) for c in claims} == {int(budget)}  # the whole budget is spent
        # The run's own numbers, repeated on each of its claims.
        assert len({(c["run_excess"], c["run_closest"], c["run_unseen_pairs"]) for c in claims}) == 1
    assert len(rows) == sum(len(props[k[0]]) for k in runs)
    assert {r["tier"] for r in rows} <= set(TIERS)
    for r in rows:
        if r["tier"].startswith("observed"):
            # Observed verdicts are exact: never wrong, and they agree with the truth.
            assert r["wrong"] == "0" and r["differs"] == "0", r
            assert r["truth_holds"] == ("1" if r["tier"] == "observed-holds" else "0"), r
        if r["tier"].startswith("confident"):
            bound, violation = float(r["bound"]), float(r["truth_violation"])
            assert 0 <= violation <= 1 and 0 <= bound <= 1
            if abs(violation - bound) > 1e-12:  # the exact value was compared, not its float
                assert (r["wrong"] == "1") == (violation > bound), r
            assert r["differs"] == ("1" if (r["tier"] == "confident-holds") != (r["truth_holds"] == "1") else "0")
        else:
            assert r["bound"] == "nan" and r["truth_violation"] == "nan"
    assert (out / "tiers.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "# capver bench verdicts" in text


def test_quick_table_matches_runs_csv(quick: tuple[str, list[Row], Path]) -> None:
    text, rows, _ = quick
    tables = _tables(text)
    assert [h for h, _ in tables] == [TIER_HEADER, BUDGET_HEADER, TRUTH_HEADER, QUANT_HEADER]
    (_, tier_rows), (_, budget_rows), (_, truth_rows), (_, quant_rows) = tables

    assert [r["tier"] for r in tier_rows] == TIERS
    for t in tier_rows:
        cs = [r for r in rows if r["tier"] == t["tier"]]
        assert int(t["claims"]) == len(cs)
        assert t["share of claims"] == f"{len(cs) / len(rows):.3f}"
        decided = t["tier"].startswith(("observed", "confident"))
        confident = t["tier"].startswith("confident")
        assert t["wrong"] == (str(sum(r["wrong"] == "1" for r in cs)) if decided else "—")
        assert t["verdict ≠ truth's"] == (str(sum(r["differs"] == "1" for r in cs)) if decided else "—")
        if t["tier"].startswith("observed"):
            assert t["wrong"] == "0" and t["verdict ≠ truth's"] == "0"
        failed = str(sum(float(r["run_excess"]) > 0 for r in cs))
        assert t["in a run whose missing-mass event failed"] == (failed if confident else "—")
        with_frontier = confident or t["tier"] == "unconfirmed"
        assert t["with no frontier pair"] == (
            str(sum(r["frontier_pairs"] == "0" for r in cs)) if with_frontier else "—"
        )
        assert t["median ε̄"] == (_median([float(r["epsilon"]) for r in cs]) if with_frontier else "—")
        if t["tier"] == "unconfirmed":
            assert t["median untried pairs"] == _median([int(r["untried"]) for r in cs])
            assert t["median thin pairs"] == _median([int(r["thin"]) for r in cs])
    assert sum(int(t["claims"]) for t in tier_rows) == len(rows)

    assert [(b["method"], int(b["budget"])) for b in budget_rows] == [(m, b) for m in METHODS for b in QUICK_BUDGETS]
    for b in budget_rows:
        cs = [r for r in rows if r["method"] == b["method"] and r["budget"] == b["budget"]]
        runs: dict[tuple[str, str], list[Row]] = {}
        for r in cs:
            runs.setdefault((r["truth"], r["seed"]), []).append(r)
        assert int(b["runs"]) == len(runs) and int(b["claims"]) == len(cs)
        assert [int(b[t]) for t in TIERS] == [sum(r["tier"] == t for r in cs) for t in TIERS]
        assert sum(int(b[t]) for t in TIERS) == int(b["claims"])
        conf = [r for r in cs if r["tier"].startswith("confident")]
        assert int(b["observed wrong"]) == 0
        assert int(b["confident wrong (k = 10)"]) == sum(r["wrong"] == "1" for r in conf)
        assert int(b["confident ≠ truth's verdict"]) == sum(r["differs"] == "1" for r in conf)
        assert int(b["runs with a confident claim"]) == sum(
            any(r["tier"].startswith("confident") for r in rs) for rs in runs.values()
        )
        assert int(b["runs with a wrong confident claim"]) == sum(
            any(r["tier"].startswith("confident") and r["wrong"] == "1" for r in rs) for rs in runs.values()
        )
        assert int(b["runs whose missing-mass event failed"]) == sum(
            float(rs[0]["run_excess"]) > 0 for rs in runs.values()
        )

    assert [t["truth"] for t in truth_rows] == list(TRUTHS)
    for t in truth_rows:
        cs = [r for r in rows if r["truth"] == t["truth"]]
        n_runs = len({(r["method"], r["budget"], r["seed"]) for r in cs})
        assert int(t["runs"]) == n_runs
        assert int(t["claims"]) == len(cs) == n_runs * int(t["properties"])
        assert [int(t[x]) for x in TIERS] == [sum(r["tier"] == x for r in cs) for x in TIERS]

    assert [(q["method"], q["budget"]) for q in quant_rows] == [
        *((m, str(b)) for m in METHODS for b in QUICK_BUDGETS),
        ("all", "all"),
    ]
    missed_runs = set()
    for q in quant_rows:
        cs = [r for r in rows if q["method"] == "all" or (r["method"] == q["method"] and r["budget"] == q["budget"])]
        assert int(q["bounds"]) == 2 * len(cs)
        covered = [
            (r, kind)
            for r in cs
            for kind in ("pmax", "pmin")
            if float(r[f"{kind}_lower"]) - 1e-9 <= float(r[f"{kind}_truth"]) <= float(r[f"{kind}_upper"]) + 1e-9
        ]
        assert int(q["covered"]) == len(covered)
        missed = {(r["truth"], r["method"], r["budget"], r["seed"]) for r in cs} - {
            (r["truth"], r["method"], r["budget"], r["seed"])
            for r in cs
            if all((r, k) in covered for k in ("pmax", "pmin"))
        }
        missed_runs |= missed
        widths = {k: [float(r[f"{k}_upper"]) - float(r[f"{k}_lower"]) for r in cs] for k in ("pmax", "pmin")}
        assert q["median width Pmax"] == _median(widths["pmax"])
        assert q["median width Pmin"] == _median(widths["pmin"])
        assert int(q["Pmax bounds of width ≤ 0.1"]) == sum(w <= 0.1 for w in widths["pmax"])
        assert int(q["Pmin bounds of width ≤ 0.1"]) == sum(w <= 0.1 for w in widths["pmin"])
    for r in rows:  # the bounds are probabilities, lower ≤ upper
        for k in ("pmax", "pmin"):
            assert 0 <= float(r[f"{k}_lower"]) <= float(r[f"{k}_upper"]) <= 1
            assert 0 <= float(r[f"{k}_truth"]) <= 1
        assert float(r["pmin_truth"]) <= float(r["pmax_truth"])

    n = len(TRUTHS) * len(METHODS) * len(QUICK_BUDGETS)
    assert f"- runs: {n};" in text
    assert "- observed claims wrong: 0 (target: 0) — met" in text
    wrong_runs = {
        (r["truth"], r["method"], r["budget"], r["seed"])
        for r in rows
        if r["tier"].startswith("confident") and r["wrong"] == "1"
    }
    assert f"executions above the printed bound): {len(wrong_runs)} / {n} = {len(wrong_runs) / n:.4f}" in text
    assert f"misses the truth's value: {len(missed_runs)} / {n} = {len(missed_runs) / n:.4f}" in text


def test_pool_and_single_process_give_the_same_claims(tmp_path: Path) -> None:
    args = ["--truths", "asymmetry,random", "--methods", "random", "--steps", "30", "--seeds", "2"]
    assert main([*args, "--jobs", "1", "--out", str(tmp_path / "one")]) == 0
    assert main([*args, "--jobs", "2", "--out", str(tmp_path / "two")]) == 0
    assert (tmp_path / "one" / "runs.csv").read_text() == (tmp_path / "two" / "runs.csv").read_text()


def _truth(name: str) -> tuple[dsl.ParsedModel, int]:
    parsed = dsl.parse(truth_text(name))
    return parsed, parsed.init if parsed.init is not None else 0


def test_violation_probability_is_exact() -> None:
    """Within 10 executions the best scheduler alternates the capability with its
    reset: five tries."""
    parsed, init = _truth("low-success")
    m, caps = parsed.model, tuple(parsed.model)
    p = parse_property("E [ F door-open ]", m.vocabulary, caps)
    assert violation_probability(p, m, init, 10) == 1 - Fraction(4, 5) ** 5
    p = parse_property("E [ F<=3 door-open ]", m.vocabulary, caps)  # the property's own bound: two tries
    assert violation_probability(p, m, init, 10) == 1 - Fraction(4, 5) ** 2
    # Through !door-jammed only: a jam ends the run, one try.
    p = parse_property("E [ !door-jammed U door-open ]", m.vocabulary, caps)
    assert violation_probability(p, m, init, 10) == Fraction(1, 5)
    assert truth_value(p, m, init, True) == Fraction(1, 5) and truth_value(p, m, init, False) == 0
    p = parse_property("A [ G !door-jammed ]", m.vocabulary, caps)
    # By duality; an open door never jams, so a scheduler jams it with probability 4/5 at most.
    assert truth_value(p, m, init, True) == 1 and truth_value(p, m, init, False) == Fraction(1, 5)
    p = parse_property("A [ G<=2 !door-open ]", m.vocabulary, caps)
    assert truth_value(p, m, init, False) == Fraction(4, 5)  # one try in two steps
    parsed, init = _truth("rare-side-effect")
    m, caps = parsed.model, tuple(parsed.model)
    p = parse_property("A [ G !chipped(cup) ]", m.vocabulary, caps)
    assert violation_probability(p, m, init, 10) == 1 - Fraction(24, 25) ** 5
    parsed, init = _truth("asymmetry")
    m, caps = parsed.model, tuple(parsed.model)
    p = parse_property("E [ F in-box(b) ]", m.vocabulary, caps)
    assert violation_probability(p, m, init, 10) == 0


def test_unseen_excess_is_the_true_missing_mass_minus_epsilon() -> None:
    parsed, init = _truth("rare-side-effect")
    truth = model_assessment(parsed.model, init, "t").truth
    assert truth is not None
    (clean, _), (chipped, _) = sorted(
        truth["pick-up-cup"].distribution(init).items(), key=lambda kv: kv[1], reverse=True
    )
    data = TransitionDataset(truth.vocabulary, truth.capabilities)
    data.add(Transition(init, "pick-up-cup", clean), count=40)
    bounds = SamplingBounds(data, 0.05)
    eps = missing_mass_bound(data.sample(init, "pick-up-cup"), 0.05)
    check = unseen_excess(truth, data, bounds)
    assert check.pairs == check.unseen_pairs == 1
    assert math.isclose(check.excess, 1 / 25 - eps) and check.closest == check.excess
    data.add(Transition(init, "pick-up-cup", chipped))
    check = unseen_excess(truth, data, SamplingBounds(data, 0.05))
    assert check.excess == -1.0  # nothing unseen; the last execution was new, so ε = 1
    assert check.closest == -math.inf and check.unseen_pairs == 0
