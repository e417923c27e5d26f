"""Model introspection for planning (paper 002, *Efficient Planning in Reinforcement
Learning via Model Introspection*): milestones computed by state mutation over
first-order reward models, and the bilevel *introspector* planner with its baselines.

* :mod:`.fol` — first-order formulas over typed objects (section 5);
* :mod:`.decision_list` — FOL decision lists for reward and termination (section 5);
* :mod:`.schema` — action schemas and grounding (section 5);
* :mod:`.mutation` — state mutation (section 5.1);
* :mod:`.relational` — relational RL problems and their milestones (sections 5.1, 5.3);
* :mod:`.search` — the introspector and the GREEDY / RANDOM[K] / BEAM[K] baselines
  (sections 4, 5.3);
* :mod:`.domains` — the grid (section 4), Blocks-World unstacking, Drawers and Bins
  (section 5.4).

This subpackage is self-contained: it uses capver's vocabulary and bitset states but
none of the MCQS machinery.
"""

from capver.introspection.decision_list import DecisionList, DecisionRule
from capver.introspection.fol import (
    And,
    Equal,
    Exists,
    Forall,
    Formula,
    Lit,
    Not,
    Or,
    Prev,
    Var,
    evaluate,
)
from capver.introspection.mutation import IMMUTABLY_VALID, Mutability, Mutation, mutate
from capver.introspection.relational import RelationalProblem
from capver.introspection.schema import GroundTask, RelationalAction, RelationalDomain

__all__ = [
    "IMMUTABLY_VALID",
    "And",
    "DecisionList",
    "DecisionRule",
    "Equal",
    "Exists",
    "Forall",
    "Formula",
    "GroundTask",
    "Lit",
    "Mutability",
    "Mutation",
    "Not",
    "Or",
    "Prev",
    "RelationalAction",
    "RelationalDomain",
    "RelationalProblem",
    "Var",
    "evaluate",
    "mutate",
]
