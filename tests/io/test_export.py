"""``capver export`` (capver.io.ppddl_export, capver.commands.export): PPDDL and
all-outcomes determinised PDDL of capability models.

* Round trip: the PPDDL re-imported by capver's own PPDDL simulator gives exactly
  Pr_h(·|s,c) (Fractions) on every state of small vocabularies and on sampled states
  of larger ones, for random truths, for h∧/h∨ learned from sampled data and for the
  shipped models/*.capm.
* Independent tools: plado 0.1.6 parses the PPDDL and its successor generator (exact
  Fractions) agrees with Pr_h; the `pddl` package parses the determinised files;
  pyperplan solves them and the plan replays under the model with positive
  probability and reaches the goal.
* Determinisation: in every state the deterministic actions applicable for c are
  those of exactly one region, their successors are exactly supp Pr_h(·|s,c), and
  their outcome probabilities sum to 1; the not- twins stay complementary.
"""

from __future__ import annotations

import contextlib
import io
import logging
from collections.abc import Iterable, Sequence
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from capver import cli, synthetic
from capver.core.state import Capability, State
from capver.core.vocabulary import Atom, Literal, Predicate, Vocabulary
from capver.engines.classical_planning import goal_holds, solve_export, validate_plan
from capver.engines.lattice import LatticeBuilder
from capver.envs.ppddl import GroundAction, PPDDLTask, parse_domain, parse_problem
from capver.envs.ppddl.syntax import EffAnd, EffProbabilistic, EffWhen
from capver.errors import UsageError, VocabularyError
from capver.io import dsl
from capver.io.literal_text import parse_conjunction, parse_state
from capver.io.ppddl_export.determinised import DeterminizedExport, export_determinized
from capver.io.ppddl_export.names import PDDLNames, pddl_name
from capver.io.ppddl_export.ppddl import PPDDLExport, export_ppddl
from capver.logic.condition import LogicContext
from capver.model.capability_model import CapabilityModel, CompoundModel
from tests.helpers.examples import scaled
from tests.helpers.paths import ROOT
from tests.helpers.plado_reader import PladoReader

MODELS = sorted((ROOT / "models").glob("*.capm"))
TOY = ROOT / "models" / "toy_blocks.capm"
seeds = st.integers(min_value=0, max_value=2**32 - 1)

# pyperplan logs every search at INFO on the root logger.
logging.getLogger().setLevel(logging.WARNING)


# =====================================================================================
# helpers
# =====================================================================================


def exact_ppddl(model: CompoundModel, **options: object) -> PPDDLExport:
    """The PPDDL export in capver's exact mode (fractions), idle capabilities kept:
    the form whose round trip must give Pr_h exactly on every state."""
    return export_ppddl(model, exact_fractions=True, keep_idle=True, **options)  # type: ignore[arg-type]


def task_of(domain_text: str, problem_text: str) -> PPDDLTask:
    domain = parse_domain(domain_text, "domain.pddl")
    return PPDDLTask(domain, parse_problem(problem_text, domain, "problem.pddl"))


class StateMap:
    """Model states ↔ states of a PDDL task over the exported names (the task has
    every grounding of every predicate; atoms the model lacks must stay false)."""

    def __init__(self, vocab: Vocabulary, names: PDDLNames, task_vocab: Vocabulary) -> None:
        self.vocab = vocab
        self.bits = [task_vocab.index(names.atom(a)) for a in vocab.atoms]
        self.model_mask = sum(1 << b for b in self.bits)

    def forward(self, s: State) -> int:
        return sum(1 << b for i, b in enumerate(self.bits) if s >> i & 1)

    def back(self, t: int) -> State:
        assert t & ~self.model_mask == 0, "an atom outside the model's vocabulary became true"
        return sum(1 << i for i, b in enumerate(self.bits) if t >> b & 1)


def assert_round_trip(model: CompoundModel, states: Iterable[State], export: PPDDLExport | None = None) -> int:
    """Pr from the re-imported PPDDL == Pr_h on ``states``; returns how many
    (state, capability) pairs had a prediction."""
    export = export or exact_ppddl(model)
    task = task_of(export.domain, export.problem)
    sm = StateMap(model.vocabulary, export.names, task.vocabulary)
    exported = {export.names.actions[c] for c, cm in model.items() if cm.rules}
    assert {a.name for a in task.ground_actions} == exported
    predicted = 0
    for s in states:
        t = sm.forward(s)
        for c, cm in model.items():
            want = cm.distribution(s)
            if not cm.rules:
                continue
            a = GroundAction(export.names.actions[c])
            if not want:
                assert not task.is_applicable(t, a), (c, model.vocabulary.format_state(s))
                continue
            got: dict[State, Fraction] = {}
            for p, t2 in task.outcomes(t, a):
                s2 = sm.back(t2)
                got[s2] = got.get(s2, Fraction(0)) + p
            assert got == want, (c, model.vocabulary.format_state(s))
            predicted += 1
    return predicted


def assert_exact_mass(export_domain: str) -> None:
    """Every probabilistic effect of the PPDDL sums to exactly 1 (no implicit no-op)."""
    domain = parse_domain(export_domain)
    seen = 0

    def walk(e: object) -> None:
        nonlocal seen
        if isinstance(e, EffProbabilistic):
            assert e.remainder == 0, e
            seen += 1
            for _, b in e.branches:
                walk(b)
        elif isinstance(e, EffAnd):
            for p in e.parts:
                walk(p)
        elif isinstance(e, EffWhen):
            walk(e.body)

    for a in domain.actions:
        walk(a.effect)


def assert_determinization(model: CompoundModel, det: DeterminizedExport, states: Iterable[State]) -> None:
    """In every state the successors of c's applicable deterministic actions are
    exactly supp Pr_h(·|s,c), except that s itself may be missing (outcomes that
    change nothing are dropped); the twins stay complementary."""
    task = task_of(det.domain, det.problem)
    vocab = model.vocabulary
    sm = StateMap(vocab, det.names, task.vocabulary)
    twin_bits = {i: task.vocabulary.index(det.twin(vocab.atoms[i])) for i in det.twins}
    twin_mask = sum(1 << b for b in twin_bits.values())
    b = model.ctx.bdd
    for s in states:
        t = sm.forward(s) | sum(1 << b for i, b in twin_bits.items() if not s >> i & 1)
        support: dict[str, set[State]] = {}
        for a in task.applicable(t):
            da = det.actions[a.name]
            ((p, t2),) = task.outcomes(t, a)
            assert p == 1
            assert b.evaluate(da.where, s)
            for i, bit in twin_bits.items():  # the twins stay complementary
                assert bool(t2 >> bit & 1) != bool(t2 >> sm.bits[i] & 1)
            s2 = sm.back(t2 & ~twin_mask)
            assert s2 == da.effect.apply(s)
            assert model.prob(s, da.capability, s2) > 0 and da.probability > 0
            support.setdefault(da.capability, set()).add(s2)
        for c, cm in model.items():
            want = set(cm.distribution(s))
            got = support.get(c, set())
            assert got <= want and want - {s} <= got, (c, vocab.format_state(s))


def learned_bounds(vocab: Vocabulary, seed: int, n_transitions: int) -> tuple[CompoundModel, ...]:
    """A random model (no prediction off its rules), and the h∧, h∨ learned from data
    sampled from a random model with a fallback rule (so that every sampled state
    yields a transition)."""
    ctx = LogicContext(vocab)
    rng = np.random.default_rng(seed)
    partial = synthetic.random_model(ctx, rng, n_capabilities=3, max_rules=3, max_effects=3)
    truth = synthetic.random_model(ctx, rng, n_capabilities=3, max_rules=3, max_effects=3, total=True)
    data = synthetic.sample_dataset(truth, rng, n_transitions, n_states=max(4, n_transitions // 3))
    lb = LatticeBuilder(ctx, data)
    return partial, lb.pessimistic, lb.optimistic


def random_states(rng: np.random.Generator, n_atoms: int, k: int) -> list[State]:
    return [int(x) for x in rng.integers(0, 1 << n_atoms, size=k, dtype=np.int64)] if n_atoms < 63 else []


# -- plado (independent PPDDL parser + successor generator, exact Fractions) -----------


def assert_plado_agrees(model: CompoundModel, states: Sequence[State], tmp: Path) -> int:
    """plado's applicable actions and successor distributions equal the model's on
    ``states``; returns the number of (state, action) distributions compared.

    plado keeps predicates that no effect changes as static facts of the problem, so
    the states are grouped by their static part, with one problem per group."""
    vocab = model.vocabulary
    checked = 0
    todo = list(states)
    domain_text: str | None = None
    while todo:
        export = exact_ppddl(model, init=todo[0])
        assert domain_text is None or export.domain == domain_text  # deterministic output
        domain_text = export.domain
        (tmp / "domain.pddl").write_text(export.domain)
        (tmp / "problem.pddl").write_text(export.problem)
        reader = PladoReader(tmp / "domain.pddl", tmp / "problem.pddl", export.names, vocab)
        group = [x for x in todo if x & reader.static == todo[0] & reader.static]
        todo = [x for x in todo if x & reader.static != todo[0] & reader.static]
        for x in group:
            applicable = reader.distributions(x)
            want = {export.names.actions[c] for c, cm in model.items() if cm.distribution(x)}
            assert set(applicable) == want, vocab.format_state(x)
            for name, got in applicable.items():
                assert got == model[reader.capability_of[name]].distribution(x), (name, vocab.format_state(x))
                checked += 1
    return checked


@pytest.fixture(scope="module")
def pddl_parsers():
    """The `pddl` package's (AI-Planning/pddl) parsers; building one takes ~0.3 s."""
    from pddl.parser.domain import DomainParser
    from pddl.parser.problem import ProblemParser

    return DomainParser(), ProblemParser()


# =====================================================================================
# names and arguments
# =====================================================================================


class TestNames:
    @pytest.mark.parametrize(
        ("text", "expected"),
        [
            ("on(a,b)&~clear(a)", "on-a-b-not-clear-a"),
            ("pick-up-key", "pick-up-key"),
            ("Holding_Key", "holding_key"),
            ("2d", "n-2d"),
            ("and", "and-x"),
            ("p q", "p-q"),
            ("(((", "n"),
        ],
    )
    def test_pddl_name(self, text: str, expected: str) -> None:
        assert pddl_name(text) == expected

    def test_intent_capability_reads_as_its_goal(self) -> None:
        vocab = synthetic.typed_vocabulary()
        ctx = LogicContext(vocab)
        intent = (Literal(Atom("on", ("a", "b"))), Literal(Atom("clear", ("a",)), False))
        cap = Capability.for_intent(intent)
        base = synthetic.random_model(ctx, np.random.default_rng(0), n_capabilities=1)
        model = CompoundModel(ctx, [CapabilityModel(cap, base["c0"].rules)])
        export = exact_ppddl(model)
        assert export.names.actions["on(a,b)&~clear(a)"] == "achieve-on-a-b-not-clear-a"
        assert '"on(a,b)&~clear(a)"  ->  achieve-on-a-b-not-clear-a' in export.domain
        assert "(:action achieve-on-a-b-not-clear-a" in export.domain

    def test_parse_state_and_goal(self) -> None:
        vocab = synthetic.typed_vocabulary()
        s = parse_state("on(a, b)  clear(a) handempty", vocab)
        assert vocab.atoms_of(s) == [Atom("on", ("a", "b")), Atom("clear", ("a",)), Atom("handempty")]
        goal = parse_conjunction("on(a,b)&~clear(b) handempty", vocab)
        assert goal == (
            Literal(Atom("on", ("a", "b"))),
            Literal(Atom("clear", ("b",)), False),
            Literal(Atom("handempty")),
        )
        assert goal_holds(vocab, goal, s) and not goal_holds(vocab, goal, s | vocab.state(["clear(b)"]))
        for bad in ("on(a,c)", "on(a,b", "~clear(a)", "unknown"):
            with pytest.raises(UsageError):
                parse_state(bad, vocab)
        with pytest.raises(UsageError, match="both"):
            parse_conjunction("clear(a) ~clear(a)", vocab)
        with pytest.raises(VocabularyError):
            exact_ppddl(CompoundModel(LogicContext(vocab), []), init=1 << len(vocab))


# =====================================================================================
# PPDDL round trip through capver's own simulator
# =====================================================================================


class TestRoundTrip:
    @settings(max_examples=scaled(12))
    @given(seed=seeds, n_atoms=st.integers(1, 5), n_transitions=st.integers(5, 40))
    def test_random_truth_and_learned_bounds_every_state(self, seed: int, n_atoms: int, n_transitions: int) -> None:
        vocab = synthetic.propositional_vocabulary(n_atoms)
        for model in learned_bounds(vocab, seed, n_transitions):
            export = exact_ppddl(model)
            assert_exact_mass(export.domain)
            assert_round_trip(model, range(1 << n_atoms), export)

    @settings(max_examples=scaled(6))
    @given(seed=seeds)
    def test_typed_vocabulary_on_sampled_and_observed_states(self, seed: int) -> None:
        vocab = synthetic.typed_vocabulary()
        truth, pess, opt = learned_bounds(vocab, seed, 30)
        observed = [s for cm in pess.values() for r in cm.rules for s in r.condition.states]
        states = observed + random_states(np.random.default_rng(seed), len(vocab), 200)
        for model in (truth, pess, opt):
            assert_round_trip(model, states)

    @settings(max_examples=scaled(5))
    @given(seed=seeds)
    def test_larger_vocabulary_on_sampled_and_observed_states(self, seed: int) -> None:
        vocab = synthetic.propositional_vocabulary(22)
        rng = np.random.default_rng(seed)
        truth, pess, opt = learned_bounds(vocab, seed, 60)
        observed = [s for cm in pess.values() for r in cm.rules for s in r.condition.states]
        states = observed + random_states(rng, len(vocab), 150)
        assert_round_trip(truth, states)
        # h∧ predicts exactly at the observed states; h∨ everywhere
        assert assert_round_trip(pess, states) >= len(set(observed))
        assert assert_round_trip(opt, states) >= len(states)

    @pytest.mark.parametrize("path", MODELS, ids=lambda p: p.stem)
    def test_shipped_models_every_state(self, path: Path) -> None:
        parsed = dsl.read(path)
        export = exact_ppddl(parsed.model, name=parsed.name)
        assert_exact_mass(export.domain)
        n = assert_round_trip(parsed.model, range(1 << len(parsed.vocabulary)), export)
        assert n > 0

    def test_overlapping_rules_give_the_average(self) -> None:
        # toy_blocks' stack-a-on-b: both rules match when a is held and b is clear
        parsed = dsl.read(TOY)
        vocab = parsed.vocabulary
        export = exact_ppddl(parsed.model, name=parsed.name)
        task = task_of(export.domain, export.problem)
        sm = StateMap(vocab, export.names, task.vocabulary)
        s = parse_state("holding(a) clear(b) ontable(b)", vocab)
        outs = {sm.back(t): p for p, t in task.outcomes(sm.forward(s), GroundAction("stack-a-on-b"))}
        stacked = parse_state("on(a,b) ontable(b) clear(a) handempty", vocab)
        dropped = parse_state("ontable(a) ontable(b) clear(a) clear(b) handempty", vocab)
        assert outs == {stacked: Fraction(3, 4), dropped: Fraction(1, 4)}  # (1 + 1/2)/2, (0 + 1/2)/2
        # stack-b-on-a has no rules: no prediction anywhere, so no action
        assert "stack-b-on-a" not in {a.name for a in task.ground_actions}
        assert (
            '1 capabilities have no rules (no prediction anywhere) and are not exported: "stack-b-on-a".'
            in " ".join(line.lstrip("; ") for line in export.domain.splitlines())
        )

    def test_odd_names_subset_atoms_and_collisions(self, tmp_path: Path) -> None:
        vocab = Vocabulary.build(
            [
                Predicate("On", ("Block", "Block")),
                Predicate("on", ("2d",)),
                Predicate("not-on", ()),
                Predicate("and", ()),
            ],
            objects={"A": "Block", "a": "2d", "and": "Block"},
            types={"Block": "object", "2d": "Block"},
            atoms=[Atom("On", ("A", "and")), Atom("On", ("and", "a")), Atom("on", ("a",)), Atom("not-on"), Atom("and")],
        )
        ctx = LogicContext(vocab)
        base = synthetic.random_model(ctx, np.random.default_rng(7), n_capabilities=3, total=True)
        intent = (Literal(Atom("On", ("A", "and"))), Literal(Atom("not-on"), False))
        caps = [Capability.for_intent(intent), Capability("c 1"), Capability("C-1")]
        model = CompoundModel(ctx, [CapabilityModel(cap, cm.rules) for cap, cm in zip(caps, base.values())])
        export = exact_ppddl(
            model, name="Odd Model!", init=vocab.state(["and"]), goal=(Literal(Atom("not-on"), False),)
        )
        names = export.names
        # ~not-on is not spelled not-not-on; since on is a predicate too, it is not-on-false
        assert dict(names.actions) == {
            "On(A,and)&~not-on": "achieve-on-a-and-x-not-on-false",
            "c 1": "c-1",
            "C-1": "c-1-2",
        }
        assert names.predicates["On"] == "on" and names.predicates["on"] == "on-2"
        assert names.predicates["and"] == "and-x-2"  # objects keep their names first
        assert names.objects["A"] == "a" and names.objects["a"] == "a-2" and names.objects["and"] == "and-x"
        assert names.types["2d"] == "n-2d" and names.domain == "odd-model"
        assert_round_trip(model, range(1 << len(vocab)), export)
        assert assert_plado_agrees(model, range(1 << len(vocab)), tmp_path) > 0
        det = export_determinized(model, init=vocab.state(["and"]), goal=(Literal(Atom("not-on"), False),))
        assert det.twin_predicates["not-on"] == "not-on-false"
        assert "not-not-on" not in det.domain
        assert_determinization(model, det, range(1 << len(vocab)))


# =====================================================================================
# Independent tools
# =====================================================================================


class TestIndependentTools:
    @pytest.mark.parametrize("path", MODELS, ids=lambda p: p.stem)
    def test_plado_agrees_on_shipped_models(self, path: Path, tmp_path: Path) -> None:
        model = dsl.read(path).model
        checked = assert_plado_agrees(model, list(range(1 << len(model.vocabulary))), tmp_path)
        assert checked > 0

    @settings(max_examples=scaled(6))
    @given(seed=seeds, n_atoms=st.integers(3, 4))
    def test_plado_agrees_on_learned_bounds(self, seed: int, n_atoms: int) -> None:
        import tempfile

        vocab = synthetic.propositional_vocabulary(n_atoms)
        checked = 0
        with tempfile.TemporaryDirectory() as tmp:
            for model in learned_bounds(vocab, seed, 25):
                checked += assert_plado_agrees(model, list(range(1 << n_atoms)), Path(tmp))
        assert checked > 0  # not every capability of all three models is idle

    @pytest.mark.parametrize("path", MODELS, ids=lambda p: p.stem)
    def test_pddl_package_parses_the_determinised_files(self, path: Path, pddl_parsers) -> None:
        parsed = dsl.read(path)
        vocab = parsed.vocabulary
        goal = (Literal(vocab.atoms[0]), Literal(vocab.atoms[-1], False))
        from pddl.requirements import Requirements

        dparser, pparser = pddl_parsers
        for keep_negative in (False, True):
            det = export_determinized(parsed.model, goal=goal, name=parsed.name, negative_preconditions=keep_negative)
            domain = dparser(det.domain)
            problem = pparser(det.problem)
            assert {a.name for a in domain.actions} == set(det.actions)
            assert {c.name for c in domain.constants} == set(det.names.objects.values())
            assert str(problem.domain_name) == str(domain.name)
            assert len(problem.goal.operands) == 2
            # both models need negative literals: kept, or compiled into not- twins
            text = " ".join(str(a.precondition) for a in domain.actions)
            assert ("(not " in text) == keep_negative
            assert ("(not-" in text) == (not keep_negative)
            assert (Requirements.NEG_PRECONDITION in domain.requirements) == keep_negative

    def test_pyperplan_plan_is_valid_under_the_model(self) -> None:
        parsed = dsl.read(TOY)
        vocab = parsed.vocabulary
        init = parse_state("ontable(a) ontable(b) clear(a) clear(b) handempty", vocab)
        goal = parse_conjunction("on(a,b) ~clear(b) handempty", vocab)
        det = export_determinized(parsed.model, init=init, goal=goal, name=parsed.name)
        plan = solve_export(det)
        assert plan is not None and len(plan) == 2  # pick up a, stack it (bfs is optimal)
        check = validate_plan(parsed.model, det, plan)
        assert check.valid
        assert [st_.capability for st_ in check.steps] == ["pick-up-a", "stack-a-on-b"]
        # the chosen outcomes: grasp from the table (3/4), stack with b clear (3/4)
        assert check.probability == Fraction(9, 16)

    @pytest.mark.parametrize(("search", "heuristic", "optimal"), [("astar", "hmax", True), ("gbf", "hff", False)])
    def test_heuristic_searches(self, search: str, heuristic: str, optimal: bool) -> None:
        parsed = dsl.read(TOY)
        vocab = parsed.vocabulary
        init = parse_state("on(a,b) ontable(b) clear(a) handempty", vocab)
        goal = parse_conjunction("~handempty ~holding(a)", vocab)  # unreachable: nothing ever grasps b
        det = export_determinized(parsed.model, init=init, goal=goal)
        assert solve_export(det, search=search, heuristic=heuristic) is None
        init = parse_state("ontable(a) ontable(b) clear(a) clear(b) handempty", vocab)
        det = export_determinized(parsed.model, init=init, goal=parse_conjunction("on(a,b)", vocab))
        plan = solve_export(det, search=search, heuristic=heuristic)
        assert plan is not None and validate_plan(parsed.model, det, plan).valid
        if optimal:  # hmax is admissible: pick up a, stack it
            assert len(plan) == 2

    def test_unreachable_goal_has_no_plan(self) -> None:
        parsed = dsl.read(TOY)
        vocab = parsed.vocabulary
        init = parse_state("ontable(a) ontable(b) clear(a) clear(b) handempty", vocab)
        det = export_determinized(parsed.model, init=init, goal=parse_conjunction("on(b,a)", vocab))
        assert solve_export(det) is None  # only stack-b-on-a could, and it has no rules

    def test_validation_rejects_impossible_plans(self) -> None:
        parsed = dsl.read(TOY)
        vocab = parsed.vocabulary
        init = parse_state("ontable(a) ontable(b) clear(a) clear(b) handempty", vocab)
        det = export_determinized(parsed.model, init=init, goal=parse_conjunction("on(a,b)", vocab))
        stack = next(n for n, a in det.actions.items() if a.capability == "stack-a-on-b")
        bad = validate_plan(parsed.model, det, [stack])  # a is not held
        assert not bad.valid and bad.failure is not None and "stack-a-on-b" in bad.failure
        pick = next(n for n, a in det.actions.items() if a.capability == "pick-up-a" and a.effect.add)
        short = validate_plan(parsed.model, det, [pick])
        assert short.failure is None and not short.goal_reached and not short.valid
        assert not validate_plan(parsed.model, det, ["no-such-action"]).valid

    @settings(max_examples=scaled(8))
    @given(seed=seeds, n_atoms=st.integers(2, 5), walk=st.integers(0, 4))
    def test_goals_reached_by_a_random_walk_are_planned_and_validated(self, seed: int, n_atoms: int, walk: int) -> None:
        vocab = synthetic.propositional_vocabulary(n_atoms)
        ctx = LogicContext(vocab)
        rng = np.random.default_rng(seed)
        model = synthetic.random_model(ctx, rng, n_capabilities=3)
        init = s = int(rng.integers(1 << n_atoms))
        for _ in range(walk):
            options = [c for c in model if model[c].distribution(s)]
            if not options:
                break
            s = synthetic.sample_successor(model[options[int(rng.integers(len(options)))]], s, rng)
        atoms = rng.choice(n_atoms, size=min(n_atoms, 3), replace=False).tolist()
        goal = tuple(Literal(vocab.atoms[i], bool(s >> i & 1)) for i in sorted(atoms))
        det = export_determinized(model, init=init, goal=goal)
        assert_determinization(model, det, range(1 << n_atoms))
        plan = solve_export(det)
        assert plan is not None and len(plan) <= walk
        check = validate_plan(model, det, plan)
        assert check.valid and check.probability > 0


# =====================================================================================
# Determinisation, exhaustively
# =====================================================================================


class TestDeterminization:
    @settings(max_examples=scaled(10))
    @given(seed=seeds, n_atoms=st.integers(1, 5), keep_negative=st.booleans())
    def test_all_outcomes_on_learned_bounds(self, seed: int, n_atoms: int, keep_negative: bool) -> None:
        vocab = synthetic.propositional_vocabulary(n_atoms)
        for model in learned_bounds(vocab, seed, 25):
            det = export_determinized(
                model, negative_preconditions=keep_negative, goal=(Literal(vocab.atoms[0], False),)
            )
            assert (not det.twins) == keep_negative
            assert_determinization(model, det, range(1 << n_atoms))

    @pytest.mark.parametrize("path", MODELS, ids=lambda p: p.stem)
    def test_shipped_models(self, path: Path) -> None:
        parsed = dsl.read(path)
        det = export_determinized(parsed.model, name=parsed.name)
        assert_determinization(parsed.model, det, range(1 << len(parsed.vocabulary)))
        assert "(not-" in det.domain and ":negative-preconditions" not in det.domain
        assert "negative preconditions are compiled away" in det.domain.lower()


# =====================================================================================
# Command line
# =====================================================================================


def run_cli(monkeypatch: pytest.MonkeyPatch, argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = cli.main(["export", *argv])
    return rc, out.getvalue(), err.getvalue()


class TestCommandLine:
    def test_writes_ppddl_only_by_default(self, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
        rc, out, _ = run_cli(monkeypatch, [str(TOY), "--out", str(tmp_path / "o"), "--goal", "on(a,b)"])
        assert rc == 0
        assert sorted(p.name for p in (tmp_path / "o").iterdir()) == [
            "capver-export.json",
            "domain.pddl",
            "problem.pddl",
        ]
        assert "exported 3 of 4 capabilities of 'toy-blocks' over 11 atoms" in out
        parsed = dsl.read(TOY)
        d = (tmp_path / "o" / "domain.pddl").read_text()
        p = (tmp_path / "o" / "problem.pddl").read_text()
        goal = parse_conjunction("on(a,b)", parsed.vocabulary)
        assert d == export_ppddl(parsed.model, name=parsed.name, init=parsed.init or 0, goal=goal).domain
        # the model's own (:init ...) when no --init is given, and the output says so
        assert parsed.init is not None and task_of(d, p).initial_state == parsed.init
        assert "initial state from the (:init ...) of" in out

    def test_plan(self, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
        rc, out, _ = run_cli(
            monkeypatch,
            [
                str(TOY),
                "--out",
                str(tmp_path),
                "--init",
                "ontable(a) ontable(b) clear(a) clear(b) handempty",
                "--goal",
                "on(a,b)&handempty",
                "--plan",
            ],
        )
        assert rc == 0
        assert sorted(p.name for p in tmp_path.iterdir()) == [
            "capver-export.json",
            "domain.pddl",
            "domain_det.pddl",
            "problem.pddl",
            "problem_det.pddl",
        ]
        assert "pyperplan plan (2 steps" in out
        assert "capability 'pick-up-a'" in out and "capability 'stack-a-on-b'" in out
        assert "probability of this outcome chain: 9/16" in out
        problem = (tmp_path / "problem.pddl").read_text()
        assert "(:goal (and (on a b) (handempty)))" in problem

    def test_no_plan_exit_status(self, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
        rc, out, _ = run_cli(monkeypatch, [str(TOY), "--out", str(tmp_path), "--goal", "on(b,a)", "--plan"])
        assert rc == 1 and "pyperplan (bfs) found no plan (the goal is unreachable" in out

    @pytest.mark.parametrize(
        ("argv", "needle"),
        [
            (["--goal", "on(a,c)"], "--goal 'on(a,c)': column 1: on(a,c): unknown object 'c'"),
            (["--goal", "clear(a) ~clear(a)"], "--goal"),
            (["--init", "~clear(a)"], "--init '~clear(a)'"),
            (["--init", "on(a,b"], "--init 'on(a,b'"),
            (["--plan", "--search", "nope"], "--search 'nope' --heuristic None: unknown pyperplan search 'nope'"),
            (["--plan", "--search", "gbf"], "--search 'gbf' --heuristic None: pyperplan search 'gbf' needs"),
            (["--plan", "--heuristic", "hff"], "search 'bfs' takes no heuristic"),
            (["--plan", "--search", "gbf", "--heuristic", "hnope"], "unknown pyperplan heuristic 'hnope'"),
        ],
    )
    def test_errors_name_the_argument(
        self, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, argv: list[str], needle: str
    ) -> None:
        rc, _, err = run_cli(monkeypatch, [str(TOY), "--out", str(tmp_path), *argv])
        assert rc == 2
        assert err.startswith("capver export: error: ") and needle in err

    def test_missing_model_file(self, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
        rc, _, err = run_cli(monkeypatch, [str(tmp_path / "none.capm"), "--out", str(tmp_path)])
        assert rc == 2 and "none.capm: No such file or directory" in err
