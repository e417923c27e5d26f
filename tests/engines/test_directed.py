"""Property-directed learning (capver.engines.directed, capver.engines.mcqs.focus):
verdicts checked against known truths, the stopping rule, the tier history, and the
focus leaving the distinguishing MDP unchanged where it restricts nothing."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from capver import synthetic
from capver.api import learn
from capver.core.dataset import TransitionDataset
from capver.core.properties import Eventually, Globally, holds
from capver.core.state import Transition
from capver.core.vocabulary import Vocabulary
from capver.engines.directed import CONFIRMATION_BATCH, STALL, PropertyTracker
from capver.engines.lattice import LatticeBuilder
from capver.engines.learning import StopReason
from capver.engines.mcqs.distinguishing import DistinguishingMDP
from capver.engines.mcqs.focus import Focus
from capver.engines.verification.agent_verdict import AgentVerdict, Query, Tier, decide
from capver.engines.verification.explicit import pmax_reach
from capver.engines.verification.sampling import SamplingBounds, executions_for
from capver.engines.verification.symbolic import SymbolicEngine
from capver.io.properties_text import parse_properties
from capver.logic.condition import LogicContext
from capver.model.abstraction import Projection
from capver.model.capability_model import CompoundModel
from capver.settings import model_assessment
from tests.helpers.cli import capver_in_process
from tests.helpers.examples import scaled
from tests.helpers.paths import ROOT


def _truth(seed: int) -> tuple[CompoundModel, np.random.Generator]:
    rng = np.random.default_rng(seed)
    ctx = LogicContext(synthetic.propositional_vocabulary(4))
    return synthetic.random_model(ctx, rng, n_capabilities=3, max_rules=2, max_effects=2, total=True), rng


def _missing_mass_event(truth: CompoundModel, data: TransitionDataset, delta: float) -> bool:
    """Every tried pair's true unseen mass is within its bound (the event of sampling.py)."""
    bounds = SamplingBounds(data, delta)
    for c in truth:
        for s in data.states_of(c):
            seen = set(data.successors(s, c))
            unseen = sum(float(p) for s2, p in truth[c].distribution(s).items() if s2 not in seen)
            if unseen > bounds.epsilon(s, c) + 1e-12:
                return False
    return True


def _violating(path: Globally | Eventually, vocab: Vocabulary) -> Callable[[int], bool]:
    """The states a run must reach to break a verdict on ``A [ G φ ]`` / ``E [ F φ ]``."""
    if isinstance(path, Globally):
        inv = path.invariant
        return lambda s: not holds(inv, s, vocab)
    goal = path.goal
    return lambda s: holds(goal, s, vocab)


TOY = ROOT / "models" / "toy_blocks.capm"

PROPS = ("A [ G !p0 ]", "E [ F p1 ]", "A [ G !(p2 & p3) ]", "E [ !p0 U<=3 p2 ]")


@settings(max_examples=scaled(12), deadline=None)
@given(st.integers(0, 2**32 - 1), st.sampled_from(["mcqs-e", "mcqs-s"]))
def test_directed_verdicts_are_true_of_the_truth(seed: int, method: str) -> None:
    truth, rng = _truth(seed)
    init = int(rng.integers(16))
    result = learn(
        model_assessment(truth, init, "random truth"),
        method=method,
        max_steps=3000,
        patience=0,
        seed=int(rng.integers(2**31)),
        properties=PROPS,
        epsilon=0.2,
    )
    event = _missing_mass_event(truth, result.data, 0.05)
    assert len(result.properties) == len(PROPS)
    for status in result.properties:
        v = status.lattice
        assert v is not None
        on_truth = SymbolicEngine(truth).check(status.prop, init).holds
        if v.tier is Tier.OBSERVED:
            assert (v.verdict is AgentVerdict.HOLDS) == on_truth, status.prop.text
        path = status.prop.path
        if v.tier is Tier.CONFIDENT and event and isinstance(path, Globally | Eventually) and path.bound is None:
            # The guarantee, checked exactly on the truth: with the missing-mass event, a
            # violation within k executions has probability ≤ the printed bound.
            assert v.confidence is not None and v.confidence.epsilon <= 0.2
            bad = _violating(path, truth.vocabulary)
            for k, bound in v.confidence.violation:
                assert float(pmax_reach(truth, init, bad, k, exact=False)) <= bound + 1e-9, (status.prop.text, k)
    if all(s.decided for s in result.properties):
        assert result.progress.stop is StopReason.DECIDED


def test_the_run_stops_when_every_property_is_decided_and_records_when() -> None:
    truth, _ = _truth(1)
    result = learn(
        model_assessment(truth, 0, "t"),
        method="mcqs-e",
        max_steps=20_000,
        patience=0,
        seed=0,
        properties=['"safe": A [ G !p0 ]', '"reach": E [ F p3 ]'],
        epsilon=0.1,
    )
    assert result.progress.stop is StopReason.DECIDED
    assert [s.prop.name for s in result.properties] == ["safe", "reach"]
    assert all(s.decided and s.tier in ("observed", "confident") for s in result.properties)
    for name in ("safe", "reach"):
        changes = [h for h in result.history if h.name == name]
        assert changes[0].steps == 0  # the first verdict is on the empty data
        assert [h.steps for h in changes] == sorted(h.steps for h in changes)
        assert changes[-1].tier == next(s.tier for s in result.properties if s.prop.name == name)
        assert changes[-1].steps <= result.progress.steps
    # A confident verdict needs every frontier pair below ε: the run sampled until it was.
    safe = result.properties[0].lattice
    assert safe is not None and safe.confidence is not None and safe.confidence.epsilon <= 0.1


def test_without_properties_the_run_is_the_plain_one() -> None:
    truth, _ = _truth(2)
    a = model_assessment(truth, 0, "t")
    plain = learn(a, method="mcqs-e", max_steps=200, seed=3)
    again = learn(model_assessment(truth, 0, "t"), method="mcqs-e", max_steps=200, seed=3, properties=())
    assert dict(plain.data.items()) == dict(again.data.items())
    assert plain.properties == () and plain.history == ()


@settings(max_examples=scaled(25), deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(0, 15))
def test_a_focus_that_restricts_nothing_changes_no_step(seed: int, s0: int) -> None:
    truth, rng = _truth(seed)
    data = synthetic.sample_dataset(truth, rng, n_transitions=int(rng.integers(1, 40)))
    a = model_assessment(truth, 0, "t")
    lat = LatticeBuilder(a.ctx, data)
    caps = tuple(truth)
    plain = DistinguishingMDP(lat.pessimistic, lat.optimistic, data, caps, xi=1e-5)
    focused = DistinguishingMDP(lat.pessimistic, lat.optimistic, data, caps, xi=1e-5, focus=Focus(lambda s: True, {}))
    rho = ((s0, 1.0),)
    for c in caps:
        for which in (1, 2):
            assert plain.step_one(rho, c, which) == focused.step_one(rho, c, which)


@settings(max_examples=scaled(25), deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(0, 15))
def test_outside_the_focus_no_disagreement_arises(seed: int, s0: int) -> None:
    truth, rng = _truth(seed)
    data = synthetic.sample_dataset(truth, rng, n_transitions=int(rng.integers(0, 40)))
    a = model_assessment(truth, 0, "t")
    lat = LatticeBuilder(a.ctx, data)
    mdp = DistinguishingMDP(
        lat.pessimistic, lat.optimistic, data, tuple(truth), xi=1e-5, focus=Focus(lambda s: False, {})
    )
    rho = ((s0, 1.0),)
    for c in truth:
        assert mdp.step_one(rho, c, 1) == mdp.step_one(rho, c, 2)


def test_a_bonus_at_a_relevant_pair_is_sent_to_the_sink_of_h1() -> None:
    truth, _ = _truth(4)
    data = TransitionDataset(truth.vocabulary, truth.capabilities)
    s = 0
    c = next(iter(truth))
    dist = truth[c].distribution(s)
    s2 = max(dist, key=lambda x: dist[x])
    for _ in range(5):
        data.add(Transition(s, c, s2))
    a = model_assessment(truth, 0, "t")
    lat = LatticeBuilder(a.ctx, data)
    mdp = DistinguishingMDP(
        lat.pessimistic, lat.optimistic, data, tuple(truth), xi=0.0, focus=Focus(lambda x: True, {(s, c): 0.25})
    )
    out = dict(mdp.step_one(((s, 1.0),), c, 1))
    assert abs(out[-1] - 0.25) < 1e-12  # ⊥₁ holds exactly the bonus


def test_quantitative_properties_are_decided_on_the_agents_bounds() -> None:
    truth, _ = _truth(1)
    result = learn(
        model_assessment(truth, 0, "t"),
        method="mcqs-e",
        max_steps=30_000,
        patience=0,
        seed=0,
        properties=['"bound": P<=1 [ F<=2 p3 ]', '"value": Pmax=? [ F<=2 p3 ]'],
        width=0.5,
    )
    by_name = {s.prop.name: s for s in result.properties}
    # P<=1 holds for every agent: its upper bound 1 confirms it at once.
    assert by_name["bound"].decided and by_name["bound"].verdict == "holds"
    assert [h.steps for h in result.history if h.name == "bound"] == [0]
    value = by_name["value"]
    if value.decided:
        lo, hi = (float(x) for x in value.verdict.split("[")[1].rstrip("]").split(", "))
        assert hi - lo <= 0.5
        bit = 1 << truth.vocabulary.index("p3")
        true = float(pmax_reach(truth, 0, lambda s: bool(s & bit), 2, exact=False))
        assert lo - 1e-9 <= true <= hi + 1e-9
    else:
        assert value.tier == "bounded" and "untried" in value.missing


def test_learn_properties_from_the_command_line_and_resume(tmp_path: Path) -> None:
    props = tmp_path / "toy.props"
    props.write_text('"stack": E [ F on(a,b) ];\n"never both": A [ G !(holding(a) & holding(b)) ];\n', encoding="utf-8")
    out = tmp_path / "run"
    common = (
        "learn",
        "--agent",
        "model",
        "--model",
        str(TOY),
        "--method",
        "mcqs-e",
        "--eval-sequences",
        "5",
        "--out",
        str(out),
    )
    first = capver_in_process(*common, "--max-steps", "40", "--properties", str(props), "--epsilon", "0.3")
    assert first.returncode == 0, first.stderr
    assert "Properties (confident: with confidence 1 − δ = 0.95, unseen effects ≤ ε = 0.3" in first.stdout
    stored = json.loads((out / "properties.json").read_text(encoding="utf-8"))
    assert stored["format"] == "capver-properties" and stored["epsilon"] == 0.3
    assert [p["name"] for p in stored["properties"]] == ["stack", "never both"]
    assert (out / "properties.props").read_text(encoding="utf-8") == props.read_text(encoding="utf-8")
    before = stored["history"]
    assert all(h["steps"] <= 40 + 10 for h in before)  # the budget, and the last query's overshoot
    # --resume without --properties continues the run's own, with its ε and its history.
    again = capver_in_process(*common, "--resume", "--max-steps", "4000")
    assert again.returncode == 0, again.stderr
    resumed = json.loads((out / "properties.json").read_text(encoding="utf-8"))
    assert resumed["epsilon"] == 0.3 and resumed["history"][: len(before)] == before
    for line in ("  stack: ", "  never both: "):
        assert line in again.stdout
    stack = next(p for p in resumed["properties"] if p["name"] == "stack")
    assert stack["tier"] == "observed" and stack["verdict"] == "holds"  # the toy arm stacks a on b
    # Options that only make sense with properties are refused without them.
    bare = capver_in_process(
        "learn", "--agent", "model", "--model", str(TOY), "--out", str(tmp_path / "x"), "--epsilon", "0.1"
    )
    assert bare.returncode == 2 and "need --properties" in bare.stderr


def _tracker_on(seed: int, n: int) -> tuple[PropertyTracker, CompoundModel, CompoundModel, TransitionDataset]:
    """A tracker of three properties of a random truth after ``n`` sampled transitions."""
    truth, rng = _truth(seed)
    data = synthetic.sample_dataset(truth, rng, n_transitions=n)
    lat = LatticeBuilder(truth.ctx, data)
    props = parse_properties(
        '"a": A [ G !(p0 & p1) ]; "b": E [ F p2 ]; "c": A [ G<=3 !p3 ]', truth.ctx.vocab, tuple(truth)
    )
    tracker = PropertyTracker(props, 0)
    return tracker, lat.pessimistic, lat.optimistic, data


@settings(max_examples=scaled(15), deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(0, 60))
def test_the_focus_is_the_cheapest_undecided_propertys_until_it_stalls(seed: int, n: int) -> None:
    tracker, h_and, h_or, data = _tracker_on(seed, n)
    tracker.update(h_and, h_or, data, steps=n, queries=0)
    focus = tracker.focus()
    undecided = [st for st in tracker.status.values() if not st.decided]
    assert (focus is None) == (not tracker._regions)
    if focus is None:
        return
    # Each undecided qualitative property's cost is what its verdict still needs.
    for cost, name, _ in tracker._regions:
        st_ = tracker.status[name]
        assert st_ in undecided and st_.lattice is not None
        c = st_.lattice.confidence
        if c is not None:
            assert cost == c.executions and cost >= c.untried
    cost, name, (region, _) = min(tracker._regions, key=lambda r: (r[0], r[1]))
    bdd = h_or.ctx.bdd
    states = range(16)  # the four atoms' states
    assert [focus.relevant(s) for s in states] == [bool(bdd.evaluate(region, s)) for s in states]
    # Without progress the focus widens to every undecided property after STALL updates.
    for _ in range(STALL):
        assert tracker.update(h_and, h_or, data, steps=n, queries=0) == []
    wide = tracker.focus()
    assert wide is not None
    union = [any(bdd.evaluate(r, s) for _, _, (r, _) in tracker._regions) for s in states]
    assert [wide.relevant(s) for s in states] == union


@settings(max_examples=scaled(15), deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(0, 60), st.integers(0, 15))
def test_a_confirmation_query_is_what_the_focused_verdict_names(seed: int, n: int, known_mask: int) -> None:
    plain, h_and, h_or, data = _tracker_on(seed, n)
    plain.update(h_and, h_or, data, steps=n, queries=0)
    assert plain.confirmation(lambda s: True) is None  # per pair the search keeps every query
    # Under an abstraction (here p0's value makes the class).
    vocab = h_or.vocabulary
    by_p0 = Projection.of_atoms(vocab, {}, "p0", default=[str(vocab.atoms[0])])
    tracker = PropertyTracker(plain.properties, 0, abstraction=by_p0)
    tracker.update(h_and, h_or, data, steps=n, queries=0)

    def restorable(s: int) -> bool:
        return s == 0 or bool(known_mask >> (s % 4) & 1)

    q = tracker.confirmation(restorable)
    # The focused (cheapest) property's verdict names the queries, in its order; the
    # first one that starts where the learner can restore is taken.
    expected = None
    if tracker._regions:
        _, name, _ = min(tracker._regions, key=lambda r: (r[0], r[1]))
        v = tracker.status[name].lattice
        named = ()
        if v is not None and v.tier is Tier.UNCONFIRMED and v.confidence is not None:
            named = v.confidence.queries
        elif v is not None and v.tier is Tier.UNKNOWN and v.decisive_query is not None:
            named = (Query(*v.decisive_query, 0, 1.0, 1),)
        expected = next((x for x in named if restorable(x.state)), None)
    if expected is None:
        assert q is None
    else:
        # An untried pair once; a tried one as many times as named, in batches.
        assert q is not None and (q.state, q.capability, q.tried) == (
            expected.state,
            expected.capability,
            expected.tried,
        )
        assert q.executions == (1 if expected.tried == 0 else min(expected.executions, CONFIRMATION_BATCH))
        assert q.executions >= 1 and q.capability in h_or
    assert tracker.confirmation(lambda s: False) is None


@settings(max_examples=scaled(25), deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(0, 80))
def test_the_executions_still_needed_are_zero_exactly_when_confirmed(seed: int, n: int) -> None:
    truth, rng = _truth(seed)
    data = synthetic.sample_dataset(truth, rng, n_transitions=n)
    lat = LatticeBuilder(truth.ctx, data)
    prop = parse_properties('"a": A [ G !(p0 & p1) ]', truth.ctx.vocab, tuple(truth))[0]
    v = decide(prop, lat.pessimistic, lat.optimistic, data, 0, epsilon=0.2)
    c = v.confidence
    if c is None:
        return
    assert (c.executions == 0) == c.confirmed
    # An untried pair needs at least its first execution and the repeats that bring ε to 0.2.
    assert c.executions >= c.untried * (1 + executions_for(0.2, c.delta, data.pairs_tried + 1))
    assert c.executions >= sum(q.executions for q in c.queries if q.tried)


@settings(max_examples=scaled(15), deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 60), st.integers(1, 30))
def test_remembered_checks_give_the_verdicts_a_fresh_tracker_gives(seed: int, n: int, repeats: int) -> None:
    """The tracker reuses its checks while no new transition is observed; repeats of
    observed transitions (which move only the missing-mass bounds) must leave every
    status as a tracker that starts afresh on the same data finds it."""
    tracker, _, _, data = _tracker_on(seed, n)
    truth, _ = _truth(seed)
    lat = LatticeBuilder(truth.ctx, data)
    tracker.update(lat.pessimistic, lat.optimistic, data, steps=n, queries=0)
    observed = [t for t, _ in data.items()]
    for i in range(repeats):
        data.add(observed[i % len(observed)])
    lat.update()
    tracker.update(lat.pessimistic, lat.optimistic, data, steps=n + repeats, queries=1)
    fresh, _, _, _ = _tracker_on(seed, n)
    fresh.update(lat.pessimistic, lat.optimistic, data, steps=n + repeats, queries=1)
    mine = {k: (s.verdict, s.tier, s.decided, s.missing) for k, s in tracker.status.items()}
    assert mine == {k: (s.verdict, s.tier, s.decided, s.missing) for k, s in fresh.status.items()}
