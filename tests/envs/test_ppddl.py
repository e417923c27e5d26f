"""capver's PPDDL simulator: parser, grounding, exact outcome
distributions, simulator protocol, bundled domains, error locations."""

from __future__ import annotations

import functools
from fractions import Fraction
from importlib import resources

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from capver.core.vocabulary import Atom
from capver.envs.base import InvalidActionError, Representation, Simulator
from capver.envs.ppddl import (
    BUNDLED,
    AtomsRepresentation,
    GroundAction,
    PPDDLSimulator,
    PPDDLTask,
    load_task,
    parse_domain,
    parse_problem,
    parse_task,
)
from capver.errors import (
    NotBundledError,
    PDDLSemanticError,
    PDDLSyntaxError,
    SourceError,
    VocabularyError,
)

ALL_PROBLEMS = [(d, p) for d, entry in BUNDLED.items() for p in entry.problems]

# Grounding is deterministic and a task is never mutated by queries (only its
# per-state caches fill up), so hypothesis examples share one task per problem.
cached_task = functools.cache(load_task)


def state_of(task: PPDDLTask, *atoms: str) -> int:
    return task.vocabulary.state(atoms)


def names(task: PPDDLTask, s: int) -> set[str]:
    return {str(a) for a in task.vocabulary.atoms_of(s)}


def random_walk(task: PPDDLTask, seed: int, steps: int) -> list[int]:
    rng = np.random.default_rng(seed)
    s = task.initial_state
    seen = [s]
    for _ in range(steps):
        acts = task.applicable(s)
        if not acts:
            s = task.initial_state
        else:
            s = task.sample(s, acts[int(rng.integers(len(acts)))], rng)
        seen.append(s)
    return seen


def make_task(domain_text: str, problem_text: str) -> PPDDLTask:
    domain = parse_domain(domain_text, "inline-domain.pddl")
    return PPDDLTask(domain, parse_problem(problem_text, domain, "inline-problem.pddl"))


# ------------------------------------------------------------------------------ bundled data
def test_registry_lists_exactly_the_shipped_files():
    root = resources.files("capver.data") / "domains"
    shipped = {p.name for p in root.iterdir() if p.is_dir()}
    assert shipped == set(BUNDLED)
    for name, entry in BUNDLED.items():
        files = {f.name for f in (root / name).iterdir() if f.name.endswith(".pddl")}
        assert files == {"domain.pddl"} | {f"{p}.pddl" for p in entry.problems}
    readme = (root / "README.md").read_text(encoding="utf-8")
    assert "Copyright (c) 2020 Tom Silver and Rohan Chitnis" in readme


@pytest.mark.parametrize("domain,problem", ALL_PROBLEMS)
def test_every_shipped_problem_grounds(domain, problem):
    task = load_task(domain, problem)
    dom = task.domain
    # Action predicates are declared in every shipped domain and are not fluents.
    assert dom.action_predicates
    assert not set(dom.action_predicates) & set(task.vocabulary.predicates)
    vocab_preds = [p for p in dom.predicates if p.name not in dom.action_predicates]
    expected_atoms = 0
    for p in vocab_preds:
        n = 1
        for param in p.parameters:
            n *= len(task.vocabulary.objects_of(param.type))
        expected_atoms += n
    assert len(task.vocabulary) == expected_atoms
    init = {str(Atom(a.predicate, a.args)) for a in task.problem.init}
    assert names(task, task.initial_state) == init
    n_ground = 0
    for schema in dom.actions:
        n = 1
        for param in schema.parameters:
            n *= len(task.vocabulary.objects_of(param.type))
        n_ground += n
    assert len(task.ground_actions) == n_ground
    # applicable() agrees with evaluating every precondition directly, in order.
    s = task.initial_state
    assert task.applicable(s) == [a for a in task.ground_actions if task.is_applicable(s, a)]


def test_blocks_problems_with_4_and_5_blocks_are_bundled():
    sizes = {p: len(load_task("blocks", p).vocabulary.objects_of("block")) for p in BUNDLED["blocks"].problems}
    assert {p for p, n in sizes.items() if n == 4} == {"problem1", "test_problem2"}
    assert {p for p, n in sizes.items() if n == 5} == {"problem3", "problem5", "test_problem4"}


@settings(max_examples=4)
@given(seed=st.integers(0, 2**32 - 1))
@pytest.mark.parametrize("domain,problem", ALL_PROBLEMS)
def test_outcome_distributions_are_exact_on_random_walks(domain, problem, seed):
    task = cached_task(domain, problem)
    rng = np.random.default_rng(seed)
    for s in set(random_walk(task, seed, 12)):
        acts = task.applicable(s)
        for a in acts:
            outs = task.outcomes(s, a)
            assert sum(p for p, _ in outs) == 1
            assert all(isinstance(p, Fraction) and p > 0 for p, _ in outs)
            succ = [t for _, t in outs]
            assert succ == sorted(set(succ))
            assert task.sample(s, a, rng) in succ
        # Inapplicable ground actions are refused.
        bad = next((a for a in task.ground_actions if a not in acts), None)
        if bad is not None:
            with pytest.raises(InvalidActionError):
                task.outcomes(s, bad)


# ------------------------------------------------------------------------------ hand-checked
def test_blocks_pick_up_and_stack():
    task = load_task("blocks", "problem1")
    s0 = task.initial_state
    assert names(task, s0) == {
        "clear(a)",
        "clear(b)",
        "clear(c)",
        "clear(d)",
        "ontable(a)",
        "ontable(b)",
        "ontable(c)",
        "ontable(d)",
        "handempty(robot)",
    }
    assert [str(a) for a in task.applicable(s0)] == [
        "pick-up(a,robot)",
        "pick-up(b,robot)",
        "pick-up(c,robot)",
        "pick-up(d,robot)",
    ]
    pick = GroundAction("pick-up", ("a", "robot"))
    assert task.action_literal(pick) == Atom("pickup", ("a",))
    [(p, s1)] = task.outcomes(s0, pick)
    assert p == 1
    assert names(task, s1) == {
        "clear(b)",
        "clear(c)",
        "clear(d)",
        "ontable(b)",
        "ontable(c)",
        "ontable(d)",
        "holding(a)",
        "handfull(robot)",
    }
    assert {str(a) for a in task.applicable(s1)} == {
        "put-down(a,robot)",
        "stack(a,b,robot)",
        "stack(a,c,robot)",
        "stack(a,d,robot)",
    }
    [(p, s2)] = task.outcomes(s1, GroundAction("stack", ("a", "b", "robot")))
    assert names(task, s2) == {
        "clear(a)",
        "clear(c)",
        "clear(d)",
        "ontable(b)",
        "ontable(c)",
        "ontable(d)",
        "on(a,b)",
        "handempty(robot)",
    }
    assert "unstack(a,b,robot)" in {str(a) for a in task.applicable(s2)}
    # Goal of problem1: (on d c) (on c b) (on b a), a conjunction of literals.
    pos, neg = task.goal
    assert neg == 0 and names(task, pos) == {"on(d,c)", "on(c,b)", "on(b,a)"}
    assert not task.goal_holds(s2)
    assert task.goal_holds(pos)


def test_tireworld_move_car_gets_a_flat_with_probability_4_5():
    # tireworld/domain.pddl: (probabilistic 0.8 (and (not (not-flattire))))
    task = load_task("tireworld", "problem1")
    s0 = task.initial_state
    a = GroundAction("move-car", ("l-1-1", "l-1-2"))
    assert task.action_literal(a) == Atom("movecar", ("l-1-2",))
    outs = task.outcomes(s0, a)
    moved = (s0 & ~state_of(task, "vehicle-at(l-1-1)")) | state_of(task, "vehicle-at(l-1-2)")
    flat = moved & ~state_of(task, "not-flattire")
    assert outs == sorted([(Fraction(4, 5), flat), (Fraction(1, 5), moved)], key=lambda pt: pt[1])
    # With a flat tyre the car cannot move; l-1-2 has no spare, so nothing is applicable.
    assert task.applicable(flat) == []
    # At l-2-1 there is a spare: changetire is the only way on.
    b = GroundAction("move-car", ("l-1-1", "l-2-1"))
    flat21 = min(t for _, t in task.outcomes(s0, b))
    assert "not-flattire" not in names(task, flat21)
    assert [str(x) for x in task.applicable(flat21)] == ["changetire(l-2-1)"]
    [(_, fixed)] = task.outcomes(flat21, GroundAction("changetire", ("l-2-1",)))
    assert names(task, fixed) == names(task, flat21) - {"spare-in(l-2-1)"} | {"not-flattire"}


def test_first_responders_treat_victim_probabilities():
    task = load_task("first_responders", "problem1")
    s0 = task.initial_state
    assert [str(a) for a in task.applicable(s0)] == [
        "load-fire-unit(f1,l1)",
        "load-medical-unit(m1,l2,z1)",
        "load-medical-unit(m1,l2,z2)",
        "treat-victim-on-scene-medical(m1,l2,z1)",
        "treat-hurt-victim-at-hospital(z1,l2)",
        "treat-dying-victim-at-hospital(z2,l2)",
    ]
    hurt = state_of(task, "victim-hurt(z1)")
    healthy = (s0 & ~hurt) | state_of(task, "victim-healthy(z1)")
    dying = (s0 & ~hurt) | state_of(task, "victim-dying(z1)")
    outs = task.outcomes(s0, GroundAction("treat-victim-on-scene-medical", ("m1", "l2", "z1")))
    assert {t: p for p, t in outs} == {healthy: Fraction(9, 10), dying: Fraction(1, 10)}
    # The fire unit is at l1 (fire at l2): it may not drive into the fire.
    drive = GroundAction("drive-fire-unit", ("f1", "l1", "l2"))
    assert not task.is_applicable(s0, drive)
    [(_, loaded)] = task.outcomes(s0, GroundAction("load-fire-unit", ("f1", "l1")))
    assert names(task, loaded) - names(task, s0) == {"have-water(f1)"}
    [(_, doused)] = task.outcomes(loaded, GroundAction("unload-fire-unit", ("f1", "l1", "l2")))
    assert names(task, doused) == names(task, s0) - {"fire(l2)"} | {"nfire(l2)"}
    assert task.is_applicable(doused, drive)
    # treat-victim-on-scene-fire: 7/10 healthy, 3/10 dying.
    at_l2 = task.outcomes(doused, drive)[0][1]
    outs = task.outcomes(at_l2, GroundAction("treat-victim-on-scene-fire", ("f1", "l2", "z1")))
    assert sorted(p for p, _ in outs) == [Fraction(3, 10), Fraction(7, 10)]


def test_exploding_blocks_and_elevators_probabilities():
    task = load_task("explodingblocks", "problem1")
    s1 = task.outcomes(task.initial_state, GroundAction("pick-up", ("a", "robot")))[0][1]
    outs = task.outcomes(s1, GroundAction("put-down", ("a", "robot")))
    assert {t: p for p, t in outs} == {
        task.initial_state: Fraction(9, 10),
        task.initial_state | state_of(task, "table-destroyed"): Fraction(1, 10),
    }
    task = load_task("probabilistic_elevators", "problem1")
    [(_, s1)] = task.outcomes(task.initial_state, GroundAction("move-to-first-floor", ("f1", "p1")))
    assert names(task, s1) == names(task, task.initial_state) - {"underground"} | {"at(f1,p1)"}
    # problem1 has a gate at f2 only; get the player to f2 p1 by hand.
    s = (s1 & ~state_of(task, "at(f1,p1)")) | state_of(task, "at(f2,p1)")
    outs = task.outcomes(s, GroundAction("move-right-gate", ("f2", "p1", "p2")))
    base = s & ~state_of(task, "at(f2,p1)")
    assert {t: p for p, t in outs} == {
        base | state_of(task, "at(f2,p2)"): Fraction(4, 5),
        base | state_of(task, "underground"): Fraction(1, 5),
    }


# ------------------------------------------------------------------------------ nesting
NEST_DOMAIN = """
; nested when / probabilistic / forall, no action predicates
(define (domain nest)
  (:requirements :typing :probabilistic-effects :conditional-effects :equality)
  (:types item)
  (:constants o1 - item)
  (:predicates (p ?x - item) (q ?x - item) (r) (done))
  (:action a
    :parameters ()
    :precondition (and)
    :effect (and (probabilistic 1/2 (and (r) (when (p o1) (q o1)))
                                0.25 (forall (?x - item) (when (p ?x) (not (p ?x)))))
                 (when (r) (probabilistic .5 (done)))))
  (:action twice
    :parameters ()
    :precondition ()
    :effect (and (probabilistic 1/2 (r)) (probabilistic 0.5 (r))))
  (:action conflict
    :parameters ()
    :precondition (not (done))
    :effect (and (not (r)) (r)))
  (:action others
    :parameters ()
    :precondition (and)
    :effect (forall (?x - item) (when (not (= ?x o1)) (probabilistic 1/3 (q ?x)))))
  (:action certain
    :parameters ()
    :precondition (and)
    :effect (probabilistic 1 (and (done) (probabilistic 0 (r)))))
  (:action sweep
    :parameters ()
    :precondition (and)
    :effect (and (when (forall (?x - item) (not (q ?x))) (done))
                 (when (exists (?x - item) (p ?x)) (probabilistic 1/2 (r)))))
)
"""
NEST_PROBLEM = """
(define (problem nest1) (:domain nest)
  (:objects o2 o3 - item)
  (:init (p o1) (p o2))
  (:goal (or (done) (and (r) (not (p o1))))))
"""


@pytest.fixture(scope="module")
def nest() -> PPDDLTask:
    return make_task(NEST_DOMAIN, NEST_PROBLEM)


def dist(task: PPDDLTask, s: int, action: str) -> dict[frozenset[str], Fraction]:
    return {frozenset(names(task, t)): p for p, t in task.outcomes(s, GroundAction.parse(action))}


def test_nested_when_probabilistic_forall(nest):
    s0 = nest.initial_state
    assert dist(nest, s0, "a") == {
        frozenset({"p(o1)", "p(o2)", "r", "q(o1)"}): Fraction(1, 2),
        frozenset(): Fraction(1, 4),
        frozenset({"p(o1)", "p(o2)"}): Fraction(1, 4),
    }
    # when-conditions read the pre-state: (r) holds, so (done) is an independent coin.
    s1 = state_of(nest, "p(o1)", "r")
    assert dist(nest, s1, "a") == {
        frozenset({"p(o1)", "r", "q(o1)"}): Fraction(1, 4),
        frozenset({"p(o1)", "r", "q(o1)", "done"}): Fraction(1, 4),
        frozenset({"r"}): Fraction(1, 8),
        frozenset({"r", "done"}): Fraction(1, 8),
        frozenset({"p(o1)", "r"}): Fraction(1, 8),
        frozenset({"p(o1)", "r", "done"}): Fraction(1, 8),
    }


def test_independent_effects_merge_and_add_wins(nest):
    assert dist(nest, 0, "twice") == {frozenset({"r"}): Fraction(3, 4), frozenset(): Fraction(1, 4)}
    assert dist(nest, 0, "conflict") == {frozenset({"r"}): Fraction(1)}
    assert dist(nest, 0, "others") == {
        frozenset(): Fraction(4, 9),
        frozenset({"q(o2)"}): Fraction(2, 9),
        frozenset({"q(o3)"}): Fraction(2, 9),
        frozenset({"q(o2)", "q(o3)"}): Fraction(1, 9),
    }
    assert dist(nest, 0, "certain") == {frozenset({"done"}): Fraction(1)}
    # Quantified when-conditions.
    assert dist(nest, 0, "sweep") == {frozenset({"done"}): Fraction(1)}
    assert dist(nest, state_of(nest, "q(o2)", "p(o3)"), "sweep") == {
        frozenset({"q(o2)", "p(o3)", "r"}): Fraction(1, 2),
        frozenset({"q(o2)", "p(o3)"}): Fraction(1, 2),
    }
    assert not nest.is_applicable(state_of(nest, "done"), GroundAction("conflict"))


def test_disjunctive_goal_is_a_formula(nest):
    assert not isinstance(nest.goal, tuple)
    assert nest.goal_holds(state_of(nest, "done"))
    assert nest.goal_holds(state_of(nest, "r", "p(o2)"))
    assert not nest.goal_holds(state_of(nest, "r", "p(o1)"))
    assert not nest.goal_holds(0)


FORMULA_DOMAIN = """
(define (domain formulas)
  (:requirements :typing :negative-preconditions :equality :disjunctive-preconditions
                 :existential-preconditions :universal-preconditions)
  (:types block cup - thing thing)
  (:constants table - thing)
  (:predicates (p ?x - thing) (q ?x - thing) (r) (bad ?x - block) (mv ?x - thing))
  (:actions mv)
  (:action move
    :parameters (?x - thing)
    :precondition (and (mv ?x)
                       (or (p ?x) (q ?x))
                       (imply (r) (exists (?y - thing) (and (q ?y) (not (= ?y ?x)))))
                       (forall (?b - block) (not (bad ?b))))
    :effect (and (not (p ?x)) (q ?x)))
  (:action never
    :parameters (?x - block)
    :precondition (and (mv ?x) (mv table))
    :effect (r))
)
"""
FORMULA_PROBLEM = """
(define (problem f1) (:domain formulas)
  (:objects b1 - block c1 - cup)
  (:init (p b1) (mv b1) (mv table))
  (:goal (and (q b1) (not (p b1)))))
"""


def test_preconditions_with_or_imply_exists_forall_and_types():
    task = make_task(FORMULA_DOMAIN, FORMULA_PROBLEM)
    vocab = task.vocabulary
    assert vocab.objects_of("thing") == ["b1", "c1", "table"]
    assert {str(a) for a in vocab.groundings("bad")} == {"bad(b1)"}
    assert "mv" not in vocab.predicates
    # (mv ...) atoms of the init are dropped: pddlgym action literals are not fluents.
    assert names(task, task.initial_state) == {"p(b1)"}
    move = {x: GroundAction("move", (x,)) for x in ("b1", "c1", "table")}

    def applicable(*atoms: str) -> set[str]:
        return {a.args[0] for a in task.applicable(state_of(task, *atoms)) if a.name == "move"}

    assert applicable("p(b1)") == {"b1"}
    assert applicable("p(b1)", "q(c1)") == {"b1", "c1"}
    # With (r) someone other than ?x must be q.
    assert applicable("r", "p(b1)", "q(c1)") == {"b1"}
    assert applicable("r", "q(b1)", "q(c1)") == {"b1", "c1"}
    assert applicable("p(b1)", "p(table)", "bad(b1)") == set()
    # A second action predicate in a precondition is false for that action.
    assert all(a.name != "never" for a in task.applicable(task.vocabulary.full_mask))
    assert task.action_literal(move["table"]) == Atom("mv", ("table",))
    [(_, s1)] = task.outcomes(task.initial_state, move["b1"])
    assert names(task, s1) == {"q(b1)"} and task.goal_holds(s1)


PROB_FORMATS = """
(DEFINE (DOMAIN Fmt)
  (:Requirements :probabilistic-effects)
  (:predicates (a) (b) (c) (d))
  (:action go :parameters () :precondition (AND)
    :effect (Probabilistic 1/2 (a) 0.25 (b) .125 (c) 1/16 (d))))
"""


def test_probability_formats_and_case_insensitive_keywords():
    task = make_task(PROB_FORMATS, "(define (problem x) (:domain FMT) (:init) (:goal (and)))")
    assert task.domain.name == "fmt"
    assert dist(task, 0, "go") == {
        frozenset({"a"}): Fraction(1, 2),
        frozenset({"b"}): Fraction(1, 4),
        frozenset({"c"}): Fraction(1, 8),
        frozenset({"d"}): Fraction(1, 16),
        frozenset(): Fraction(1, 16),
    }
    assert task.goal == (0, 0) and task.goal_holds(0)


# ------------------------------------------------------------------------------ errors
def test_syntax_error_reports_line_column_and_expected():
    text = "(define (domain x)\n  (:predicates (p ?x))\n  (:action a :parameters (?x)\n    :effect (probabilistic (p ?x))))\n"
    with pytest.raises(PDDLSyntaxError) as info:
        parse_domain(text, "bad.pddl")
    err = info.value
    assert (err.filename, err.line, err.column) == ("bad.pddl", 4, 28)
    assert "a probability (0.5 or 1/2)" in err.expected
    assert err.context.splitlines()[1].index("^") == 27
    assert str(err).startswith("bad.pddl:4:28: unexpected '('")

    with pytest.raises(PDDLSyntaxError) as info:
        parse_domain("(define (domain x)\n (:predicates (p ?x & )))", "amp.pddl")
    assert (info.value.line, info.value.column) == (2, 21)
    assert "unexpected character '&'" in info.value.reason

    with pytest.raises(PDDLSyntaxError) as info:
        parse_domain("(define (domain x)\n (:predicates (p ?x))\n", "eof.pddl")
    assert "end of the file" in info.value.reason and info.value.line == 2


@pytest.mark.parametrize(
    "body,anchor,message",
    [
        ("(:action a :parameters (?x) :effect (zz ?x))", "zz", "unknown predicate 'zz'"),
        ("(:action a :parameters (?x) :effect (p ?x ?x))", "p ?x ?x", "takes 1 argument"),
        ("(:action a :parameters (?x - nosuch) :effect (p ?x))", "nosuch", "unknown type 'nosuch'"),
        ("(:action a :parameters (?x) :effect (p ?y))", "?y", "unbound variable '?y'"),
        ("(:action a :parameters () :effect (p k))", "k)", "unknown object 'k'"),
        ("(:action a :parameters (?x) :effect (probabilistic 0.6 (p ?x) 1/2 (r)))", "(probabilistic", "sum to 11/10"),
        ("(:action a :parameters (?x) :effect (probabilistic 3/2 (p ?x)))", "3/2", "greater than 1"),
        ("(:action a :parameters (?x) :effect (q ?x))", "?x))", "'?x' has type 'object'"),
        ("(:action a :parameters (?x ?x) :effect (r))", "?x) ", "duplicate parameter '?x'"),
    ],
)
def test_semantic_errors_are_located(body, anchor, message):
    text = f"(define (domain x)\n (:types t)\n (:predicates (p ?x) (q ?x - t) (r))\n {body})"
    with pytest.raises(PDDLSemanticError) as info:
        parse_domain(text, "sem.pddl")
    err = info.value
    assert message in err.reason
    # line 4 is " " + body: the error points at the first character of the anchor
    assert (err.filename, err.line, err.column) == ("sem.pddl", 4, 2 + body.index(anchor))
    assert err.context.splitlines()[1] == " " * (1 + body.index(anchor)) + "^"


def test_problem_semantic_errors():
    domain = parse_domain(NEST_DOMAIN, "nest.pddl")
    cases = [
        ("(define (problem z) (:domain other) (:init))", "for domain 'other'", 1, 30),
        ("(define (problem z) (:domain nest)\n (:objects o2 - item)\n (:init (p o9)))", "unknown object 'o9'", 3, 12),
        ("(define (problem z) (:domain nest)\n (:objects o2 - nosuch))", "unknown type 'nosuch'", 2, 17),
        ("(define (problem z) (:domain nest)\n (:objects o2 - item)\n (:init (p o2 o2)))", "takes 1 argument", 3, 10),
        ("(define (problem z) (:domain nest)\n (:objects o2 o2 - item))", "duplicate object 'o2'", 2, 15),
        ("(define (problem z) (:domain nest)\n (:objects o1 - item))", "already a constant", 2, 12),
        ("(define (problem z) (:domain nest) (:goal (p ?x)))", "unbound variable '?x'", 1, 46),
    ]
    for text, message, line, column in cases:
        with pytest.raises(PDDLSemanticError) as info:
            parse_problem(text, domain, "p.pddl")
        assert message in info.value.reason
        assert (info.value.line, info.value.column) == (line, column), message
    with pytest.raises(PDDLSemanticError, match="expected a problem file"):
        parse_problem(NEST_DOMAIN, domain)


def test_action_predicate_declarations_are_checked():
    with pytest.raises(PDDLSemanticError) as info:
        parse_domain("(define (domain x)\n ; (:actions go fly)\n (:predicates (go)))", "d.pddl")
    assert "'fly' is not a declared predicate" in info.value.reason
    assert (info.value.line, info.value.column) == (2, 17)
    with pytest.raises(PDDLSemanticError, match="no action predicate") as info:
        parse_domain(
            "(define (domain x)\n (:predicates (go) (p))\n (:actions go)\n (:action walk :parameters () :precondition (p) :effect (p)))"
        )
    assert info.value.line == 4
    with pytest.raises(PDDLSemanticError, match="only occur in action preconditions"):
        parse_domain(
            "(define (domain x) (:predicates (go)) (:actions go) (:action go :precondition (go) :effect (go)))"
        )


BALANCED = NEST_DOMAIN


@settings(max_examples=40)
@given(data=st.data())
def test_mutated_sources_fail_with_a_location(data):
    """Deleting one parenthesis always breaks a domain; the error points into the file."""
    positions = [
        i for i, ch in enumerate(BALANCED) if ch in "()" and ";" not in BALANCED[BALANCED.rfind("\n", 0, i) : i]
    ]
    i = data.draw(st.sampled_from(positions))
    text = BALANCED[:i] + BALANCED[i + 1 :]
    with pytest.raises(SourceError) as info:
        parse_domain(text, "mut.pddl")
    err = info.value
    n_lines = len(text.splitlines())
    assert err.filename == "mut.pddl"
    assert 1 <= err.line <= n_lines and err.column >= 1
    assert "^" in err.context


# ------------------------------------------------------------------------------ simulator
def test_simulator_protocol_reset_set_state_and_determinism():
    task = load_task("tireworld", "problem1")
    sim = PPDDLSimulator(task)
    alpha = AtomsRepresentation(task)
    assert isinstance(sim, Simulator) and isinstance(alpha, Representation)
    assert alpha.vocabulary is task.vocabulary

    def run(seed: int) -> list[int]:
        sim.reset(seed=seed)
        chooser = np.random.default_rng(99)
        trace = [sim.get_state()]
        for _ in range(40):
            acts = sim.available_actions()
            if not acts:
                sim.reset()
            else:
                sim.step(acts[int(chooser.integers(len(acts)))])
            trace.append(sim.get_state())
        return trace

    first = run(7)
    assert run(7) == first
    assert any(run(s) != first for s in (8, 9, 10))
    assert sim.reset(seed=3) == task.initial_state
    assert alpha(sim.get_state()) == task.initial_state

    # set_state / get_state round trip and stepping from a restored state.
    flat = min(t for _, t in task.outcomes(task.initial_state, GroundAction("move-car", ("l-1-1", "l-2-1"))))
    sim.set_state(flat)
    assert sim.get_state() == flat
    assert [str(a) for a in sim.available_actions()] == ["changetire(l-2-1)"]
    with pytest.raises(InvalidActionError):
        sim.step(GroundAction("move-car", ("l-2-1", "l-3-1")))
    with pytest.raises(InvalidActionError):
        sim.step("no-such-action(x)")
    assert sim.get_state() == flat
    after = sim.step("changetire(l-2-1)")
    assert "not-flattire" in names(task, after) and sim.get_state() == after
    with pytest.raises(VocabularyError):
        sim.set_state(1 << len(task.vocabulary))
    with pytest.raises(VocabularyError):
        sim.set_state(-1)


def test_step_frequencies_follow_the_distribution():
    task = load_task("tireworld", "problem1")
    sim = PPDDLSimulator(task, seed=2024)
    a = GroundAction("move-car", ("l-1-1", "l-1-2"))
    flats = 0
    n = 4000
    for _ in range(n):
        sim.set_state(task.initial_state)
        flats += "not-flattire" not in names(task, sim.step(a))
    # 0.8 ± 4 standard deviations of a binomial(4000, 0.8) proportion (≈ 0.0063 each)
    assert abs(flats / n - 0.8) < 4 * (0.8 * 0.2 / n) ** 0.5


def test_load_task_names_and_parse_task(tmp_path):
    assert load_task("blocks", 3).problem.filename.endswith("problem3.pddl")
    assert load_task("blocks", "test_problem2.pddl").problem.name == "blocks"
    with pytest.raises(NotBundledError, match="expected one of"):
        load_task("sokoban")
    with pytest.raises(NotBundledError, match="test_problem4"):
        load_task("blocks", 2)
    (tmp_path / "d.pddl").write_text(NEST_DOMAIN)
    (tmp_path / "p.pddl").write_text(NEST_PROBLEM)
    task = parse_task(tmp_path / "d.pddl", tmp_path / "p.pddl")
    assert task.problem.filename == str(tmp_path / "p.pddl")
    assert names(task, task.initial_state) == {"p(o1)", "p(o2)"}
    (tmp_path / "bad.pddl").write_text(NEST_PROBLEM.replace("(p o2)", "(p o2 o3)"))
    with pytest.raises(PDDLSemanticError) as info:
        parse_task(tmp_path / "d.pddl", tmp_path / "bad.pddl")
    assert info.value.filename == str(tmp_path / "bad.pddl") and info.value.line == 4


def test_ground_action_str_round_trip():
    a = GroundAction("stack", ("a", "b", "robot"))
    assert str(a) == "stack(a,b,robot)" and GroundAction.parse(str(a)) == a
    assert str(GroundAction("noop")) == "noop" and GroundAction.parse("noop") == GroundAction("noop")


def test_indexed_applicable_matches_brute_force_on_large_problems():
    for domain, problem in [("first_responders", "test_problem2"), ("probabilistic_elevators", "test_problem1")]:
        task = load_task(domain, problem)
        for s in random_walk(task, 5, 60):
            fresh = [a for a in task.ground_actions if task.is_applicable(s, a)]
            assert task.applicable(s) == fresh
            assert task.applicable(s) == fresh  # the second answer comes from the cache
