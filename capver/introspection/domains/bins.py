"""Emptying bins (section 5.4 and Appendix D of the introspection paper).

"n bins begin with items randomly distributed among them.  The agent must take all
items out of every bin, placing them on a shelf.  Each time a bin is emptied and
closed, the agent gets a reward; the episode terminates successfully when all bins
are empty and closed."  Appendix D is not in our copy; our encoding: 2n items, every
bin starts open with at least one item; ``take_out(i, b)`` moves an item of an open
bin straight to the shelf; a bin is closed iff not ``open(b)``, and only a non-empty
bin can be (re)opened (otherwise closing an emptied bin again would pay again).

Bins start open because with closed bins the literal-counting heuristic sees
opening the bin one is working on as a step away from its milestone (¬open(b) is
one of its literals) while opening any other bin costs nothing, and the inner greedy
search then wanders a plateau that grows exponentially with n.

Because the reward is paid on the transition that closes an empty bin (and not on
every later step), R̂ uses a ``Prev`` condition:

    if ∃b [¬open(b) ∧ ∀i ¬in(i,b) ∧ prev[open(b) ∨ ∃i in(i,b)]]: 1, default 0,

and Ĉ = [if ∀b [¬open(b) ∧ ∀i ¬in(i,b)]: 1], default 0.  The reward formula gives
one mutation per bin not yet done, so the introspector follows n milestones in
succession.
"""

from __future__ import annotations

import numpy as np

from capver.core.vocabulary import Atom, Predicate
from capver.errors import IntrospectionError
from capver.introspection.decision_list import DecisionList, DecisionRule
from capver.introspection.fol import Formula, Not, Prev, Var, conj, disj, exists, forall, lit
from capver.introspection.relational import RelationalProblem
from capver.introspection.schema import RelationalAction, RelationalDomain

I = Var("I", "item")  # noqa: E741 - named as the formulas print it, like B
B = Var("B", "bin")

DOMAIN = RelationalDomain(
    "bins",
    (
        Predicate("in", ("item", "bin")),
        Predicate("on_shelf", ("item",)),
        Predicate("open", ("bin",)),
    ),
    (
        # Only a bin with something in it can be opened, so a bin that is done stays
        # done and its reward cannot be collected twice by reopening and closing it.
        RelationalAction(
            "open_bin", (B,), conj(Not(lit("open", B)), exists(I, lit("in", I, B))), add=(lit("open", B),)
        ),
        RelationalAction("close_bin", (B,), lit("open", B), delete=(lit("open", B),)),
        RelationalAction(
            "take_out",
            (I, B),
            conj(lit("in", I, B), lit("open", B)),
            add=(lit("on_shelf", I),),
            delete=(lit("in", I, B),),
        ),
    ),
    (("item", "object"), ("bin", "object")),
)


def _done(b: Var) -> Formula:
    return conj(Not(lit("open", b)), forall(I, Not(lit("in", I, b))))


REWARD = DecisionList(
    (DecisionRule(exists(B, conj(_done(B), Prev(disj(lit("open", B), exists(I, lit("in", I, B)))))), 1.0),),
    0.0,
    "bins reward",
)
TERMINATION = DecisionList((DecisionRule(forall(B, _done(B)), 1),), 0, "bins termination")


def build(contents: list[list[int]], n_items: int, horizon: int | None = None) -> RelationalProblem:
    """Bin b starts open holding the items listed in ``contents[b]``."""
    n = len(contents)
    placed = sorted(i for c in contents for i in c)
    if n < 1 or placed != list(range(n_items)):
        raise IntrospectionError(f"bins: every one of the {n_items} items must be in exactly one bin, got {contents}")
    objects = {f"item{i}": "item" for i in range(n_items)} | {f"bin{b}": "bin" for b in range(n)}
    atoms = [Atom("in", (f"item{i}", f"bin{b}")) for b, c in enumerate(contents) for i in c]
    atoms.extend(Atom("open", (f"bin{b}",)) for b in range(n))
    return RelationalProblem.build(
        DOMAIN,
        objects,
        atoms,
        REWARD,
        TERMINATION,
        horizon if horizon is not None else 2 * n_items + 2 * n + 4,
        name=f"bins-{n}",
    )


def generate(size: int, rng: np.random.Generator) -> RelationalProblem:
    """``size`` bins and 2·size items; bin b gets item b, the others go to uniform
    random bins."""
    if size < 1:
        raise IntrospectionError(f"bins: need at least one bin, got {size}")
    n_items = 2 * size
    contents: list[list[int]] = [[b] for b in range(size)]
    for i in range(size, n_items):
        contents[int(rng.integers(size))].append(i)
    return build(contents, n_items)
