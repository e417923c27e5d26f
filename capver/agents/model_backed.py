"""An agent whose capabilities behave exactly as a given capability model h⋆
(section 2's capability model and Pr_h, used as ground truth for evaluation).

Executing capability c from state s draws s′ ~ Pr_h⋆(· | s, c): a matching rule is
chosen uniformly from R_s and one of its effects with its probability, which is
exactly the mixture Pr_h = (1/|R_s|) Σ_r Σ_j p_j 1[s′ = apply(s, η_j)].  The agent
then takes a single low-level step in a :class:`~capver.envs.symbolic.SymbolicSimulator`
(the effect itself) and stops.

Where no rule of c matches s (and for a capability h⋆ does not know) nothing
changes: the paper's Appendix A.3 relies on "it is always valid to ask an agent to
achieve an intent", so every state–capability pair has an outcome, and an agent that
cannot act simply stays put.  ``Pr_h⋆`` itself is 0 there; :attr:`ModelBackedAgent.true_model`
is therefore h⋆ completed with a no-op rule on the states no rule covers, the model
whose predictions match this agent's behaviour everywhere.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from capver.agents.base import Stop
from capver.core.state import NO_EFFECT, Capability, Effect, State
from capver.envs.base import Action, Simulator
from capver.envs.symbolic import IdentityRepresentation, SymbolicSimulator
from capver.logic.condition import Condition
from capver.model.capability_model import CapabilityModel, CompoundModel, Rule


def complete_with_noop(model: CompoundModel) -> CompoundModel:
    """h⋆ plus, per capability, a rule ``¬(cond(r₁) ∨ … ∨ cond(r_k)) → {(1, ∅)}``
    unless the conditions already cover every state."""
    ctx = model.ctx
    changed = []
    for cm in model.values():
        covered = ctx.bdd.false
        for r in cm.rules:
            covered = ctx.bdd.disj(covered, r.condition.bdd)
        if covered == ctx.bdd.true:
            continue
        rest = Condition.formula(ctx, ctx.smt.mgr.Not(ctx.smt.mgr.Or([r.condition.smt for r in cm.rules])))
        changed.append(CapabilityModel(cm.capability, (*cm.rules, Rule.make(rest, [(1, NO_EFFECT)]))))
    return model.replace(changed)


def model_effects(model: CompoundModel) -> set[Effect]:
    """Every effect some rule of ``model`` can produce."""
    return {eta for cm in model.values() for r in cm.rules for _, eta in r.effects}


def sample_effect(cm: CapabilityModel, s: State, rng: np.random.Generator) -> Effect | None:
    """An effect drawn from h_c at s (uniform rule of R_s, then its effect
    distribution), exactly, with integer draws; None when R_s is empty."""
    rules = cm.matching(s)
    if not rules:
        return None
    rule = rules[int(rng.integers(len(rules)))] if len(rules) > 1 else rules[0]
    denom = math.lcm(*(p.denominator for p, _ in rule.effects))
    u = int(rng.integers(denom))
    acc = 0
    for p, eta in rule.effects:
        acc += int(p * denom)
        if u < acc:
            return eta
    raise AssertionError("rule probabilities do not sum to 1")


class ModelBackedAgent:
    """A BBAI whose true capability model is known (see the module docstring)."""

    name = "model"

    def __init__(self, model: CompoundModel) -> None:
        self.given_model = model
        self.true_model = complete_with_noop(model)
        self._pending: Effect | None = None
        self._reason = "done"

    @property
    def capabilities(self) -> tuple[Capability, ...]:
        return self.given_model.capabilities

    def simulator(self, initial_state: State = 0) -> SymbolicSimulator:
        """The symbolic world this agent acts in (its actions: h⋆'s effects)."""
        return SymbolicSimulator(
            self.given_model.vocabulary, initial_state, model_effects(self.given_model) | {NO_EFFECT}
        )

    def representation(self) -> IdentityRepresentation:
        return IdentityRepresentation(self.given_model.vocabulary)

    def begin(self, capability: Capability, sim: Simulator[Any], rng: np.random.Generator) -> None:
        cm = self.given_model.get(capability.name)
        if cm is None:
            self._pending, self._reason = None, "unknown capability"
            return
        self._pending = sample_effect(cm, sim.get_state(), rng)
        self._reason = "done" if self._pending is not None else "no rule applies"

    def act(self, sim: Simulator[Any], rng: np.random.Generator) -> Action | Stop:
        eta, self._pending = self._pending, None
        if eta is None:
            return Stop(self._reason)
        return eta
