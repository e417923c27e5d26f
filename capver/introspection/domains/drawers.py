"""Placing items in drawers (section 5.4 of the introspection paper).

"Every item and each of the n drawers is given a label in {1, …, n}.  Items begin in
random locations (any drawer or the 'shelf') and must be moved into the drawer with
the same label.  The singular reward state (and termination state) is when all items
are in the correct drawer and all drawers are closed."

Our encoding (the paper's schemas are not in our copy): n items and n drawers, the
static predicate ``label(i, d)`` (same label), a hand holding one item at a time, and
drawers that must be open to take from or put into; a drawer is closed iff not
``open(d)``.  Initially each drawer is open with probability 1/2 and the hand is
empty; at least one item is misplaced.

R̂ = Ĉ = [if (∀i ∃d label(i,d) ∧ in(i,d)) ∧ (∀d ¬open(d)): 1], default 0.  State
mutation shows off immutability here: for a drawer d with a different label,
``label(i, d)`` is false and static, so that disjunct is unsatisfiable and the ∃
collapses to the one right drawer.
"""

from __future__ import annotations

import numpy as np

from capver.core.vocabulary import Atom, Predicate
from capver.errors import IntrospectionError
from capver.introspection.decision_list import DecisionList, DecisionRule
from capver.introspection.fol import Not, Var, conj, exists, forall, lit
from capver.introspection.relational import RelationalProblem
from capver.introspection.schema import RelationalAction, RelationalDomain

I = Var("I", "item")  # noqa: E741 - named as the formulas print it, like D
D = Var("D", "drawer")

DOMAIN = RelationalDomain(
    "drawers",
    (
        Predicate("in", ("item", "drawer")),
        Predicate("on_shelf", ("item",)),
        Predicate("holding", ("item",)),
        Predicate("handempty", ()),
        Predicate("open", ("drawer",)),
        Predicate("label", ("item", "drawer")),
    ),
    (
        RelationalAction("open_drawer", (D,), Not(lit("open", D)), add=(lit("open", D),)),
        RelationalAction("close_drawer", (D,), lit("open", D), delete=(lit("open", D),)),
        RelationalAction(
            "take",
            (I, D),
            conj(lit("in", I, D), lit("open", D), lit("handempty")),
            add=(lit("holding", I),),
            delete=(lit("in", I, D), lit("handempty")),
        ),
        RelationalAction(
            "put",
            (I, D),
            conj(lit("holding", I), lit("open", D)),
            add=(lit("in", I, D), lit("handempty")),
            delete=(lit("holding", I),),
        ),
        RelationalAction(
            "take_from_shelf",
            (I,),
            conj(lit("on_shelf", I), lit("handempty")),
            add=(lit("holding", I),),
            delete=(lit("on_shelf", I), lit("handempty")),
        ),
        RelationalAction(
            "put_on_shelf",
            (I,),
            lit("holding", I),
            add=(lit("on_shelf", I), lit("handempty")),
            delete=(lit("holding", I),),
        ),
    ),
    (("item", "object"), ("drawer", "object")),
)

SOLVED = conj(
    forall(I, exists(D, conj(lit("label", I, D), lit("in", I, D)))),
    forall(D, Not(lit("open", D))),
)
REWARD = DecisionList((DecisionRule(SOLVED, 1.0),), 0.0, "drawers reward")
TERMINATION = DecisionList((DecisionRule(SOLVED, 1),), 0, "drawers termination")


def build(locations: list[int | None], open_drawers: list[bool], horizon: int | None = None) -> RelationalProblem:
    """Item i (label i) starts in drawer ``locations[i]`` (None: on the shelf);
    drawer d has label d."""
    n = len(open_drawers)
    if len(locations) != n or n < 1:
        raise IntrospectionError(f"drawers: need n items and n drawers, got {len(locations)} and {n}")
    objects = {f"item{i}": "item" for i in range(n)} | {f"drawer{d}": "drawer" for d in range(n)}
    atoms = [Atom("handempty")]
    for i, loc in enumerate(locations):
        atoms.append(Atom("label", (f"item{i}", f"drawer{i}")))
        if loc is None:
            atoms.append(Atom("on_shelf", (f"item{i}",)))
        else:
            atoms.append(Atom("in", (f"item{i}", f"drawer{loc}")))
    atoms.extend(Atom("open", (f"drawer{d}",)) for d, o in enumerate(open_drawers) if o)
    return RelationalProblem.build(
        DOMAIN, objects, atoms, REWARD, TERMINATION, horizon if horizon is not None else 8 * n + 4, name=f"drawers-{n}"
    )


def generate(size: int, rng: np.random.Generator) -> RelationalProblem:
    """``size`` items and drawers; locations uniform over the drawers and the shelf."""
    if size < 1:
        raise IntrospectionError(f"drawers: need at least one drawer, got {size}")
    locs: list[int | None] = []
    for _ in range(size):
        k = int(rng.integers(size + 1))
        locs.append(None if k == size else k)
    if all(loc == i for i, loc in enumerate(locs)):
        locs[0] = None  # guarantee at least one misplaced item
    open_drawers = [bool(rng.random() < 0.5) for _ in range(size)]
    return build(locs, open_drawers)
