"""Blocks-World unstacking (section 5 "Example Environment" and section 5.4 of the
introspection paper; Slaney & Thiébaux 2001).

"Episodes begin with blocks in random stacks and the hand empty.  Actions either pick
up a block (from the top of a stack or the table) or place it (on top of a stack or
on the table).  The agent receives a single reward (and the episode terminates
successfully) once all blocks are on the table."  The paper's Algorithm 1 is missing
from our copy; we use the four classical schemas pickup/putdown/stack/unstack and
R̂ = Ĉ = [if ∀X ontable(X): 1], default 0.

The generator makes O(√n) stacks on average (section 5.4): blocks are shuffled and
each one starts a new stack with probability 1/√n, so the expected number of stacks
is 1 + (n − 1)/√n.  An instance with every block on the table is made non-trivial by
moving the last block onto another one.
"""

from __future__ import annotations

import itertools
import math

import numpy as np

from capver.core.vocabulary import Atom, Predicate
from capver.errors import IntrospectionError
from capver.introspection.decision_list import DecisionList, DecisionRule
from capver.introspection.fol import Equal, Not, Var, conj, forall, lit
from capver.introspection.relational import RelationalProblem
from capver.introspection.schema import RelationalAction, RelationalDomain

X = Var("X", "block")
Y = Var("Y", "block")

DOMAIN = RelationalDomain(
    "blocks",
    (
        Predicate("on", ("block", "block")),
        Predicate("ontable", ("block",)),
        Predicate("clear", ("block",)),
        Predicate("holding", ("block",)),
        Predicate("handempty", ()),
    ),
    (
        RelationalAction(
            "pickup",
            (X,),
            conj(lit("clear", X), lit("ontable", X), lit("handempty")),
            add=(lit("holding", X),),
            delete=(lit("clear", X), lit("ontable", X), lit("handempty")),
        ),
        RelationalAction(
            "putdown",
            (X,),
            lit("holding", X),
            add=(lit("ontable", X), lit("clear", X), lit("handempty")),
            delete=(lit("holding", X),),
        ),
        RelationalAction(
            "stack",
            (X, Y),
            conj(lit("holding", X), lit("clear", Y), Not(Equal(X, Y))),
            add=(lit("on", X, Y), lit("clear", X), lit("handempty")),
            delete=(lit("holding", X), lit("clear", Y)),
        ),
        RelationalAction(
            "unstack",
            (X, Y),
            conj(lit("on", X, Y), lit("clear", X), lit("handempty"), Not(Equal(X, Y))),
            add=(lit("holding", X), lit("clear", Y)),
            delete=(lit("on", X, Y), lit("clear", X), lit("handempty")),
        ),
    ),
    (("block", "object"),),
)

ALL_ON_TABLE = forall(X, lit("ontable", X))
REWARD = DecisionList((DecisionRule(ALL_ON_TABLE, 1.0),), 0.0, "blocks reward")
TERMINATION = DecisionList((DecisionRule(ALL_ON_TABLE, 1),), 0, "blocks termination")


def block_names(n: int) -> list[str]:
    return [f"b{i}" for i in range(n)]


def stacks_state(stacks: list[list[str]]) -> list[Atom]:
    """The atoms of a state with the given stacks (each listed bottom to top) and the
    hand empty."""
    atoms = [Atom("handempty")]
    for st in stacks:
        atoms.append(Atom("ontable", (st[0],)))
        atoms.extend(Atom("on", (up, down)) for down, up in itertools.pairwise(st))
        atoms.append(Atom("clear", (st[-1],)))
    return atoms


def problem_from_stacks(stacks: list[list[str]], horizon: int | None = None) -> RelationalProblem:
    blocks = [b for st in stacks for b in st]
    if len(set(blocks)) != len(blocks) or not blocks:
        raise IntrospectionError(f"blocks: stacks must hold distinct blocks, got {stacks}")
    n = len(blocks)
    return RelationalProblem.build(
        DOMAIN,
        dict.fromkeys(blocks, "block"),
        stacks_state(stacks),
        REWARD,
        TERMINATION,
        horizon if horizon is not None else 4 * n + 4,
        name=f"blocks-{n}",
    )


def random_stacks(n: int, rng: np.random.Generator) -> list[list[str]]:
    if n < 2:
        raise IntrospectionError(f"blocks: need at least 2 blocks for a non-trivial instance, got {n}")
    order = [block_names(n)[int(i)] for i in rng.permutation(n)]
    p_new = 1.0 / math.sqrt(n)
    stacks: list[list[str]] = [[order[0]]]
    for b in order[1:]:
        if rng.random() < p_new:
            stacks.append([b])
        else:
            stacks[-1].append(b)
    if all(len(st) == 1 for st in stacks):
        last = stacks.pop()
        stacks[0].extend(last)
    return stacks


def generate(size: int, rng: np.random.Generator) -> RelationalProblem:
    """An unstacking instance with ``size`` blocks."""
    return problem_from_stacks(random_stacks(size, rng))
