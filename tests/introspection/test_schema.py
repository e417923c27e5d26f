"""Action schemas and grounding (section 5 of the introspection paper)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from capver.core.vocabulary import Atom, Predicate
from capver.errors import IntrospectionError
from capver.introspection.domains import bins, blocks
from capver.introspection.fol import Not, Var, conj, evaluate, lit
from capver.introspection.schema import GroundTask, RelationalAction, RelationalDomain


def three_blocks() -> GroundTask:
    return blocks.problem_from_stacks([["b", "a"], ["c"]]).task


def test_blocks_grounding_drops_statically_false_groundings() -> None:
    task = three_blocks()
    names = sorted(ga.name for ga in task.actions)
    # pickup/putdown: 3 each; stack/unstack: 3·2 ordered pairs each (X = Y is excluded
    # by the precondition's ¬(X = Y), decided at grounding time).
    assert len(names) == 3 + 3 + 6 + 6
    assert "stack(a,a)" not in names and "unstack(b,b)" not in names


def test_applicable_actions_and_strips_successor() -> None:
    task = three_blocks()
    s = task.init
    assert [task.actions[i].name for i in task.applicable(s)] == ["pickup(c)", "unstack(a,b)"]
    s2 = task.successor(s, task.find("unstack(a,b)"))
    assert task.vocab.format_state(s2) == "{ontable(b), ontable(c), clear(b), clear(c), holding(a)}"
    s3 = task.successor(s2, task.find("putdown(a)"))
    assert sorted(str(a) for a in task.vocab.atoms_of(s3)) == sorted(
        ["ontable(a)", "ontable(b)", "ontable(c)", "clear(a)", "clear(b)", "clear(c)", "handempty"]
    )


def test_add_wins_over_delete() -> None:
    d = RelationalDomain(
        "toggle",
        (Predicate("p", ()),),
        (RelationalAction("refresh", (), lit("p"), add=(lit("p"),), delete=(lit("p"),)),),
    )
    task = GroundTask.ground(d, {}, [Atom("p")])
    assert task.successor(task.init, 0) == task.init
    assert task.addable == task.init and task.deletable == 0


def _random_walk_states(task: GroundTask, rng: np.random.Generator, steps: int) -> list[int]:
    s = task.init
    out = [s]
    for _ in range(steps):
        acts = task.applicable(s)
        if not acts:
            break
        s = task.successor(s, acts[int(rng.integers(len(acts)))])
        out.append(s)
    return out


@given(st.integers(0, 2**32 - 1))
def test_applicable_matches_the_precondition_formulas(seed: int) -> None:
    """The trigger index and the compiled masks give exactly the groundings whose
    precondition formula holds (checked by direct evaluation), including the
    non-conjunctive precondition of Bins' open_bin (∃i in(i, b))."""
    rng = np.random.default_rng(seed)
    for problem in (blocks.generate(4, rng), bins.generate(2, rng)):
        task = problem.task
        for s in _random_walk_states(task, rng, 12):
            expected = []
            for i, ga in enumerate(task.actions):
                sc = task.domain.schema(ga.schema)
                binding = dict(zip(sc.params, ga.args))
                if evaluate(sc.precondition, s, task.vocab, binding=binding):
                    expected.append(i)
            assert task.applicable(s) == expected


def test_static_predicates_are_folded_into_preconditions() -> None:
    item, box = Var("I", "item"), Var("B", "box")
    d = RelationalDomain(
        "labels",
        (Predicate("fits", ("item", "box")), Predicate("in", ("item", "box"))),
        (
            RelationalAction(
                "put", (item, box), conj(lit("fits", item, box), Not(lit("in", item, box))), add=(lit("in", item, box),)
            ),
        ),
        (("item", "object"), ("box", "object")),
    )
    task = GroundTask.ground(d, {"i1": "item", "b1": "box", "b2": "box"}, [Atom.parse("fits(i1,b2)")])
    assert [ga.name for ga in task.actions] == ["put(i1,b2)"]
    assert task.vocab.atoms_of(task.addable) == [Atom.parse("in(i1,b2)")]


@pytest.mark.parametrize(
    ("schema", "message"),
    [
        (RelationalAction("a", (Var("X", "block"),), lit("clear", Var("Y", "block"))), "variable \\?Y is not bound"),
        (
            RelationalAction(
                "a", (Var("X", "block"),), lit("clear", Var("X", "block")), add=(lit("glow", Var("X", "block")),)
            ),
            "unknown predicate 'glow'",
        ),
        (RelationalAction("a", (Var("X", "ghost"),), lit("handempty")), "unknown type 'ghost'"),
    ],
)
def test_malformed_schemas_are_rejected(schema: RelationalAction, message: str) -> None:
    d = RelationalDomain("bad", blocks.DOMAIN.predicates, (schema,), blocks.DOMAIN.types)
    with pytest.raises(IntrospectionError, match=message):
        GroundTask.ground(d, {"a": "block"}, [])
