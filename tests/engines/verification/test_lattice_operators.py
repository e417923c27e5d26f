"""``E [ G φ ]``, ``A [ F φ ]`` and ``A [ φ U ψ ]`` (bounded or not) decided for the
agent on the lattice h∧ ⪯ h⋆ ⪯ h∨ (capver.engines.verification.agent_verdict, "Runs
that never stop"), checked against known truths.

The agent never stops, so the reference semantics is the one without dead ends: the
truth's verdict comes from a brute-force search over the explicit transition graph of
the model-backed agent's true model (h⋆ completed with its no-op where no rule
matches), a *lasting run* — through stay states to an escape state within k
executions, or k executions inside stay (unbounded: as many as there are states,
which repeats one, a lasso).

* :meth:`SymbolicEngine.lasting_run` finds a lasting run exactly when the brute force
  does, on random models with dead ends, and its run is one (replays, stays, loops);
* on random truths learned by MCQS for a random budget: every observed verdict is the
  truth's, its run replays on the truth and is a lasting run; a confident verdict is
  the truth's whenever the data are effect complete on the truth's reachable states;
  an unknown verdict's decisive query is an untried pair;
* on property-directed runs with confident verdicts: whenever every tried pair's
  unseen mass is within its bound (the event δ is about), the truth's exact greatest
  probability of a violation within the stated horizon h (the frontier's size d, or
  the property's bound k if smaller) is at most 1 − (1 − ε̄)^h;
* by hand: a run of h∧ that ends in a dead end is no evidence (unknown, with the
  dead end's pair to try), the observed lasso that closes it is.
"""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from capver import synthetic
from capver.api import learn
from capver.core.dataset import TransitionDataset
from capver.core.properties import (
    Eventually,
    ExistsPath,
    ForallPath,
    Globally,
    Property,
    StateFormula,
    Until,
    holds,
)
from capver.core.state import Capability, Effect, State, Transition
from capver.engines.evaluation import reachable_states
from capver.engines.lattice import LatticeBuilder
from capver.engines.verification import explicit
from capver.engines.verification.agent_verdict import AgentVerdict, LatticeVerdict, Tier, decide, lasting_sets
from capver.engines.verification.quantitative import restricted
from capver.engines.verification.sampling import SamplingBounds
from capver.engines.verification.symbolic import SymbolicEngine, Witness
from capver.io.properties_text import parse_property
from capver.logic.condition import Condition, LogicContext
from capver.model.capability_model import CapabilityModel, CompoundModel, Rule
from capver.settings import model_assessment
from tests.helpers.examples import scaled

seeds = st.integers(min_value=0, max_value=2**32 - 1)
Pred = Callable[[State], bool]


# -- the brute-force reference ----------------------------------------------------------


def _successors(model: CompoundModel, init: State, caps: frozenset[str] | None) -> dict[State, list[State]]:
    """The reachable states of ``model`` from ``init`` and their successors under the
    allowed capabilities (positive probability), from ``distribution`` alone."""
    names = [c for c in model if caps is None or c in caps]
    succ: dict[State, list[State]] = {}
    todo = [init]
    while todo:
        s = todo.pop()
        if s in succ:
            continue
        succ[s] = sorted({t for c in names for t, p in model[c].distribution(s).items() if p > 0})
        todo += [t for t in succ[s] if t not in succ]
    return succ


def _sets(prop: Property) -> tuple[Pred, Pred]:
    """(stay, escape) of a lasting-run operator as predicates over states, written
    from the operator's meaning (the module docstring of agent_verdict)."""
    query, path = prop.query, prop.path

    def sat(f: StateFormula) -> Pred:
        return lambda s: holds(f, s, VOCAB)

    if isinstance(query, ExistsPath) and isinstance(path, Globally):
        return sat(path.invariant), lambda s: False
    if isinstance(query, ForallPath) and isinstance(path, Eventually):
        goal = sat(path.goal)
        return lambda s: not goal(s), lambda s: False
    assert isinstance(query, ForallPath) and isinstance(path, Until)
    phi, psi = sat(path.hold), sat(path.goal)
    return lambda s: phi(s) and not psi(s), lambda s: not phi(s) and not psi(s)


def _lasting(succ: dict[State, list[State]], init: State, stay: Pred, escape: Pred, bound: int | None) -> bool:
    """A run from init through stay states that reaches escape within k steps or stays
    k steps, k the bound or (unbounded) the number of states: recursion over (state,
    steps left), no dead end allowed (a state without successors has no further step)."""
    k = len(succ) if bound is None else bound
    memo: dict[tuple[State, int], bool] = {}

    def run(s: State, j: int) -> bool:
        if escape(s):
            return True
        if not stay(s):
            return False
        if j == 0:
            return True
        if (s, j) not in memo:
            memo[(s, j)] = any(run(t, j - 1) for t in succ[s])
        return memo[(s, j)]

    return run(init, k)


def _is_lasting_run(w: Witness, stay: Pred, escape: Pred, bound: int | None) -> bool:
    """``w`` is a lasting run: its states before the last are stay and no escape, and
    it ends in an escape state within the bound, or has ``bound`` steps all in stay,
    or (unbounded) closes a loop inside stay."""
    states = w.states
    if not all(stay(s) and not escape(s) for s in states[:-1]):
        return False
    last = states[-1]
    if escape(last):
        return bound is None or len(w) <= bound
    if not stay(last):
        return False
    if bound is not None:
        return len(w) == bound
    return w.loop is not None and states[w.loop] == last


def _truth_lasting(truth: CompoundModel, prop: Property, init: State) -> bool:
    stay, escape = _sets(prop)
    path = prop.path
    assert path is not None
    return _lasting(_successors(truth, init, prop.capability_names), init, stay, escape, path.bound)


def _truth_verdict(truth: CompoundModel, prop: Property, init: State) -> AgentVerdict:
    """The agent's verdict by brute force: a lasting run makes E G hold, A F / A U fail."""
    lasting = _truth_lasting(truth, prop, init)
    exists = isinstance(prop.query, ExistsPath)
    return AgentVerdict.HOLDS if lasting == exists else AgentVerdict.VIOLATED


def _violation_probability(truth: CompoundModel, prop: Property, init: State, h: int) -> float:
    """The truth's greatest probability (over schedulers, exact) of a lasting run of h
    executions or fewer: G<=h φ for E G, G<=h ¬φ for A F, ¬(φ U<=h ψ) for A U."""
    model = restricted(truth, prop)
    stay, _ = _sets(prop)
    if isinstance(prop.path, Until):
        hold, goal = prop.path.hold, prop.path.goal
        ok = explicit.until(
            model, init, lambda s: holds(hold, s, VOCAB), lambda s: holds(goal, s, VOCAB), h, maximise=False, exact=True
        )
        return float(1 - ok)
    return float(explicit.globally(model, init, stay, h, maximise=True, exact=True))


# -- models -----------------------------------------------------------------------------

CTX = LogicContext(synthetic.propositional_vocabulary(4))
VOCAB = CTX.vocab


def _truth(seed: int) -> tuple[CompoundModel, np.random.Generator]:
    """A random truth whose capabilities act everywhere, each with a fallback rule of
    random effects.  ``random_model(total=True)``'s fallback is the no-op, which puts
    a self-loop on every state: every E G φ would hold and every A F φ fail at once
    (by a lasso of one observed no-op) and the h∨ side would never be exercised."""
    rng = np.random.default_rng(seed)
    base = synthetic.random_model(CTX, rng, n_capabilities=3, max_rules=2, max_effects=2)
    caps = []
    for cm in base.values():
        split = synthetic.random_fraction_split(rng, int(rng.integers(1, 3)))
        effects: dict[Effect, Fraction] = {}
        for p in split:
            e = synthetic.random_effect(rng, len(VOCAB), p_touch=0.6)
            effects[e] = effects.get(e, Fraction(0)) + p
        fallback = Rule.make(Condition.true(CTX), [(p, e) for e, p in effects.items()])
        caps.append(CapabilityModel(cm.capability, (*cm.rules, fallback)))
    return CompoundModel(CTX, caps), rng


def _ladder(rare: Fraction) -> CompoundModel:
    """A truth whose runs climb p0, p1, p2, p3 (the first missing one is added): ``up``
    adds it, except that with probability ``rare`` it resets every atom; ``jump`` adds
    the next two.  So A [ F p3 ] is violated (climb and reset forever) but only through
    the rare effect: while the data have not shown it, h∨ has no cycle below p3, and a
    confident verdict says A [ F p3 ] holds with a violation bound the truth must keep."""
    smt = CTX.smt
    cur, mgr = smt.cur, smt.mgr
    up, jump = [], []
    for i in range(4):
        below = [cur[j] for j in range(i)]
        cond = Condition.formula(CTX, mgr.And([*below, mgr.Not(cur[i])]))
        step = Effect(1 << i, 0)
        reset = Effect(0, (1 << i) - 1)
        up.append(Rule.make(cond, [(1 - rare, step), (rare, reset)] if i else [(1, step)]))
        jump.append(Rule.make(cond, [(1, Effect((3 << i) & 15, 0))]))
    done = Condition.formula(CTX, mgr.And(cur))
    stay = [Rule.make(done, [(1, Effect(0, 0))])]
    return CompoundModel(
        CTX, [CapabilityModel(Capability("up"), (*up, *stay)), CapabilityModel(Capability("jump"), (*jump, *stay))]
    )


def _texts(rng: np.random.Generator) -> list[str]:
    i, j = (int(x) for x in rng.choice(4, size=2, replace=False))
    k = int(rng.integers(0, 4))
    return [
        f"E [ G !p{i} ]",
        f"E [ G<={k} p{i} | p{j} ]",
        f"A [ F p{i} ]",
        f"A [ F<={k} p{i} ]",
        f"A [ !p{j} U p{i} ]",
        f"A [ p{j} U<={k} p{i} ]",
        f"E [ G p{i} => p{j} ] {{caps: c0, c1}}",
        f"A [ F p{i} & !p{j} ] {{caps: c1}}",
    ]


# -- the engine's lasting run -----------------------------------------------------------


@settings(max_examples=scaled(40), deadline=None)
@given(seed=seeds)
def test_lasting_run_equals_the_brute_force_reference(seed: int) -> None:
    rng = np.random.default_rng(seed)
    # Partial random models: dead ends, which a lasting run may not use.
    model = synthetic.random_model(
        CTX, rng, n_capabilities=3, max_rules=3, max_effects=3, total=bool(rng.random() < 0.3)
    )
    init = int(rng.integers(16))
    engine = SymbolicEngine(model)
    for text in _texts(rng):
        prop = parse_property(text, VOCAB, tuple(model))
        query, path = prop.query, prop.path
        assert isinstance(query, ExistsPath | ForallPath) and path is not None
        eng = engine.restricted(prop.capability_names)
        stay_node, escape_node = lasting_sets(eng, query)
        run = eng.lasting_run(init, stay_node, escape_node, path.bound)
        stay, escape = _sets(prop)
        want = _lasting(_successors(model, init, prop.capability_names), init, stay, escape, path.bound)
        assert (run is not None) == want, text
        if run is not None:
            assert run.replays(model) and set(run.capability_names) <= set(eng.capability_names), text
            assert _is_lasting_run(run, stay, escape, path.bound), (text, run)


# -- verdicts about the agent -----------------------------------------------------------


def _complete(truth: CompoundModel, h_or: CompoundModel, init: State) -> bool:
    """Effect completeness on the truth's reachable states: every successor the truth
    gives an allowed capability there, h∨ gives too."""
    return all(
        set(truth[c].distribution(s)) <= (set(h_or[c].distribution(s)) if c in h_or else set())
        for s in reachable_states(truth, [init])
        for c in truth
    )


def _check_verdict(
    v: LatticeVerdict, truth: CompoundModel, prop: Property, init: State, data: TransitionDataset, complete: bool
) -> None:
    text = prop.text
    path = prop.path
    assert path is not None
    assert "not decided on the lattice" not in v.reason, text
    stay, escape = _sets(prop)
    if v.tier is Tier.OBSERVED:
        assert v.verdict is _truth_verdict(truth, prop, init), (text, v.reason)
        if (v.verdict is AgentVerdict.HOLDS) != isinstance(prop.query, ExistsPath):
            # No lasting run from the initial state at all (outside stay, or k = 0).
            assert (v.witness is None and not (stay(init) or escape(init))) or path.bound == 0, (text, v.reason)
            return
        assert v.witness is not None and v.witness.replays(truth), text
        assert _is_lasting_run(v.witness, stay, escape, path.bound), (text, v.witness)
        assert prop.capability_names is None or set(v.witness.capability_names) <= prop.capability_names
    elif v.tier is Tier.CONFIDENT:
        assert v.confidence is not None and v.confidence.confirmed
        if complete:
            assert v.verdict is _truth_verdict(truth, prop, init), (text, v.reason)
    elif v.tier is Tier.UNKNOWN:
        assert v.witness is not None, text  # h∨'s lasting run
        if v.decisive_query is not None:
            s, c = v.decisive_query
            assert data.count_sc(s, c) == 0, text


@settings(max_examples=scaled(20), deadline=None)
@given(seed=seeds, steps=st.integers(2, 300))
def test_agent_verdicts_of_lasting_operators_are_true_of_the_truth(seed: int, steps: int) -> None:
    truth, rng = _truth(seed)
    init = int(rng.integers(16))
    assessment = model_assessment(truth, init, "random truth")
    agent_truth = assessment.truth  # h⋆ with the agent's no-op where no rule matches
    assert agent_truth is not None
    result = learn(assessment, method="mcqs-s", max_steps=steps, seed=int(rng.integers(2**31)))
    complete = _complete(agent_truth, result.h_or, init)
    engines = (SymbolicEngine(result.h_and), SymbolicEngine(result.h_or))
    for text in _texts(rng):
        prop = parse_property(text, VOCAB, tuple(truth))
        v = decide(prop, result.h_and, result.h_or, result.data, init, engines=engines)
        _check_verdict(v, agent_truth, prop, init, result.data, complete)


def _missing_mass_event(truth: CompoundModel, data: TransitionDataset, delta: float) -> bool:
    """Every tried pair's true unseen mass is within its bound (the event δ is about)."""
    bounds = SamplingBounds(data, delta)
    for c in truth:
        for s in data.states_of(c):
            seen = set(data.successors(s, c))
            unseen = sum(p for s2, p in truth[c].distribution(s).items() if s2 not in seen)
            if float(unseen) > bounds.epsilon(s, c) + 1e-12:
                return False
    return True


LADDER = (
    "A [ F p3 ]",
    "A [ !p3 U p3 ]",
    "A [ (p0 | !p1) U p3 ]",
    "E [ G !p3 ]",
    "E [ G<=5 !p3 ]",
    "A [ F<=6 p3 ]",
    "A [ F p2 ] {caps: up}",
)


@settings(max_examples=scaled(8), deadline=None)
@given(seed=seeds, rare=st.sampled_from([None, Fraction(1, 1000), Fraction(1, 100)]))
def test_confident_lasting_verdicts_keep_their_stated_bound(seed: int, rare: Fraction | None) -> None:
    if rare is None:  # a random truth
        truth, rng = _truth(seed)
        init = int(rng.integers(16))
        texts = _texts(rng)
    else:
        truth, rng, init, texts = _ladder(rare), np.random.default_rng(seed), 0, list(LADDER)
    assessment = model_assessment(truth, init, "truth")
    agent_truth = assessment.truth
    assert agent_truth is not None
    result = learn(
        assessment,
        method="mcqs-e",
        max_steps=3000,
        patience=0,
        seed=int(rng.integers(2**31)),
        properties=texts,
        epsilon=0.2,
    )
    event = _missing_mass_event(agent_truth, result.data, 0.05)
    complete = _complete(agent_truth, result.h_or, init)
    for status in result.properties:
        v = status.lattice
        assert v is not None
        prop = status.prop
        _check_verdict(v, agent_truth, prop, init, result.data, complete)
        if v.tier is not Tier.CONFIDENT or not event:
            continue
        conf = v.confidence
        assert conf is not None and conf.epsilon <= 0.2
        path = prop.path
        assert path is not None
        h = conf.states if path.bound is None else min(conf.states, path.bound)
        bound = 1 - (1 - conf.epsilon) ** h
        if h:
            assert (h, bound) in conf.violation or any(k == h and abs(b - bound) < 1e-12 for k, b in conf.violation), (
                prop.text,
                conf.violation,
            )
        assert _violation_probability(agent_truth, prop, init, h) <= bound + 1e-9, (prop.text, h, bound)


# -- by hand: dead ends of h∧ are no evidence -------------------------------------------


def test_a_dead_end_of_h_and_is_no_evidence_but_an_observed_lasso_is() -> None:
    """One capability c; the data show {} → {p0} only, so h∧ has {p0} as a dead end.
    E [ G true ] holds on h∧ by the model-checking semantics (the run stops there), but
    the agent goes on from {p0} and nothing says how: unknown, to be decided by trying
    c in {p0}.  Once {p0} → {p0} is observed, the lasso is observed: holds.  A [ F p1 ]
    is its mirror: violated by the same lasso, unknown before."""
    c = Capability("c")
    data = TransitionDataset(VOCAB, [c])
    data.add(Transition(0, "c", 1))
    lat = LatticeBuilder(CTX, data)
    g = parse_property("E [ G true ]", VOCAB, ("c",))
    f = parse_property("A [ F p1 ]", VOCAB, ("c",))
    u = parse_property("A [ !p2 U p1 ]", VOCAB, ("c",))
    assert SymbolicEngine(lat.pessimistic).check(g, 0).holds  # the dead end's stutter
    for prop in (g, f, u):
        v = decide(prop, lat.pessimistic, lat.optimistic, data, 0)
        assert (v.verdict, v.tier) == (AgentVerdict.UNKNOWN, Tier.UNKNOWN), v.reason
        assert v.decisive_query == (1, "c")
    data.add(Transition(1, "c", 1))
    lat.update()
    for prop, verdict in ((g, AgentVerdict.HOLDS), (f, AgentVerdict.VIOLATED), (u, AgentVerdict.VIOLATED)):
        v = decide(prop, lat.pessimistic, lat.optimistic, data, 0)
        assert (v.verdict, v.tier) == (verdict, Tier.OBSERVED), v.reason
        assert v.witness is not None and v.witness.states == (0, 1, 1) and v.witness.loop == 1
    # A [ F p0 ] holds on h∨ (every run passes {p0}: the only observed effect adds p0)
    # but the untried pairs of the frontier ({} is tried, {p0} too) leave it unconfirmed
    # until their bounds are tight; the frontier is {} alone.
    v = decide(parse_property("A [ F p0 ]", VOCAB, ("c",)), lat.pessimistic, lat.optimistic, data, 0)
    assert v.verdict in (AgentVerdict.HOLDS, AgentVerdict.UNCONFIRMED) and v.confidence is not None
    assert v.confidence.states == 1 and v.confidence.untried == 0
