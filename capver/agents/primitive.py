"""The primitive-action agent: a BBAI whose capabilities are the domain's ground
actions (section 2.1 with each option κ(i) a one-step option).

Capability ``str(a)`` (with an empty intent) executes ground action a once if it is
applicable and otherwise does nothing.  Its true capability model is the domain
itself, so :func:`true_primitive_model` can write it down exactly as a compound
model (section 2's rules): per action one rule whose condition is the action's
precondition and whose effects are its outcomes, plus a no-op rule on the
complement of the precondition.  That is possible only when an outcome's effect
does not depend on the state it is applied in — no ``when`` clause anywhere in the
action's effect — and the function refuses other actions with a clear error.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import numpy as np
from pysmt.fnode import FNode

from capver.agents.base import Stop
from capver.core.state import NO_EFFECT, Capability, Effect
from capver.envs.base import Action, Simulator
from capver.envs.ppddl.simulator import (
    GDisj,
    GEffect,
    GroundAction,
    GroundFormula,
    PPDDLTask,
)
from capver.errors import ModelError
from capver.logic.condition import Condition, LogicContext
from capver.logic.smt import SmtContext
from capver.model.capability_model import CapabilityModel, CompoundModel, Rule


def primitive_capabilities(task: PPDDLTask) -> list[Capability]:
    """One capability per ground action, in the task's action order."""
    return [Capability(str(a), ()) for a in task.ground_actions]


class PrimitiveAgent:
    """Executes the ground action a capability names, once, if applicable."""

    name = "primitive"

    def __init__(self, task: PPDDLTask) -> None:
        self.task = task
        self._by_name = {str(a): a for a in task.ground_actions}
        self._pending: GroundAction | None = None
        self._reason = "done"

    @property
    def capabilities(self) -> tuple[Capability, ...]:
        return tuple(primitive_capabilities(self.task))

    def begin(self, capability: Capability, sim: Simulator[Any], rng: np.random.Generator) -> None:
        a = self._by_name.get(capability.name)
        if a is None:
            self._pending, self._reason = None, "unknown capability"
        elif a not in sim.available_actions():
            self._pending, self._reason = None, "not applicable"
        else:
            self._pending, self._reason = a, "done"

    def act(self, sim: Simulator[Any], rng: np.random.Generator) -> Action | Stop:
        a, self._pending = self._pending, None
        return Stop(self._reason) if a is None else a


# ------------------------------------------------------------------------------ true model
def formula_to_smt(smt: SmtContext, f: GroundFormula) -> FNode:
    """A ground precondition (negation normal form over bit masks) as a pysmt formula."""
    mgr = smt.mgr
    if isinstance(f, GDisj):
        return mgr.Or([formula_to_smt(smt, c) for c in f.parts])
    lits = []
    for mask, positive in ((f.pos, True), (f.neg, False)):
        for i in range(mask.bit_length()):
            if mask >> i & 1:
                lits.append(smt.cur[i] if positive else mgr.Not(smt.cur[i]))
    lits.extend(formula_to_smt(smt, d) for d in f.rest)
    return mgr.And(lits)


def _has_when(e: GEffect) -> bool:
    return bool(e.whens) or any(_has_when(body) for branches in e.choices for _, body in branches)


def action_effects(task: PPDDLTask, a: GroundAction) -> list[tuple[Fraction, Effect]]:
    """The state-independent outcome distribution of ``a`` as effects.

    Raises :class:`ModelError` if ``a``'s effect has a ``when`` clause, i.e. its
    outcomes depend on the state and no single rule can describe them."""
    eff = task.effect(a)
    if _has_when(eff):
        raise ModelError(
            f"action {a} of domain {task.domain.name!r} has conditional (when) effects: "
            "its outcomes depend on the state, so the primitive agent's model needs more "
            "than one rule per action"
        )
    merged: dict[Effect, Fraction] = {}
    # Without `when`, the distribution ignores the state it is given.
    for (add, delete), p in eff.distribution(0).items():
        # PPDDL: an atom both added and deleted ends up true, as in Effect.apply.
        eta = Effect(add, delete & ~add)
        merged[eta] = merged.get(eta, Fraction(0)) + p
    return [(p, eta) for eta, p in merged.items() if p]


def true_primitive_model(task: PPDDLTask, ctx: LogicContext | None = None) -> CompoundModel:
    """The exact capability model of :class:`PrimitiveAgent` on ``task``.

    ``ctx`` must be over ``task.vocabulary`` (a new one is made if omitted).  Actions
    whose precondition can never hold get only the no-op rule."""
    if ctx is None:
        ctx = LogicContext(task.vocabulary)
    elif ctx.vocab != task.vocabulary:
        raise ModelError("the logic context's vocabulary is not the task's vocabulary")
    mgr = ctx.smt.mgr
    models = []
    for a in task.ground_actions:
        pre = formula_to_smt(ctx.smt, task.precondition(a))
        rules = []
        applicable = Condition.formula(ctx, pre)
        if applicable.is_satisfiable():
            rules.append(Rule.make(applicable, action_effects(task, a)))
        rest = Condition.formula(ctx, mgr.Not(pre))
        if rest.is_satisfiable():
            rules.append(Rule.make(rest, [(1, NO_EFFECT)]))
        models.append(CapabilityModel(Capability(str(a), ()), tuple(rules)))
    return CompoundModel(ctx, models)


__all__ = [
    "PrimitiveAgent",
    "action_effects",
    "formula_to_smt",
    "primitive_capabilities",
    "true_primitive_model",
]
