"""What a qualitative property checked on the lattice bounds says about the *agent*
(section 3.1; Theorem 1 and Theorem 3 of appendix A).

T_h∧ = T_D (Theorem 3): every transition of h∧ was observed, so an existential
reachability property (``E [ F φ ]``, ``E [ φ U ψ ]``, bounded or not) that holds on
h∧ holds for the agent, with an observed witness.  h⋆ ⪯ h∨ where effect completeness
holds (Theorem 1): every transition the agent can make is one of h∨, so an invariant
(``A [ G φ ]``, bounded or not) that holds on h∨ holds for the agent — under that
assumption, which the verdict states.  Dually, ``E [ F φ ]`` failing on h∨ means the
agent cannot reach φ (same assumption), and ``A [ G φ ]`` failing on h∧ is an observed
violation.  Otherwise the verdict is *unknown*, and the first (state, capability) pair
on h∨'s witness that the data never tried is the query that would decide it.

Other path operators (``E [ G φ ]``, ``A [ F φ ]``, ``A [ U ]``) are not monotone in the
transition set once runs stop in dead ends, so for them only the per-model results
are reported.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from capver.engines.verification.symbolic import QualitativeResult, SymbolicEngine, Witness, qualitative_query
from capver.model.capability_model import CompoundModel
from capver.model.dataset import TransitionDataset
from capver.model.properties import Eventually, ExistsPath, ForallPath, Globally, Property, Until
from capver.model.state import State

EFFECT_COMPLETENESS = (
    "effect completeness (Theorem 1): every effect the agent can produce with a capability has been observed "
    "for that capability, so that h⋆ ⪯ h∨"
)


class AgentVerdict(StrEnum):
    HOLDS = "holds"
    VIOLATED = "violated"
    UNKNOWN = "unknown"


@dataclass(frozen=True, slots=True)
class LatticeVerdict:
    """The verdict for the agent, from the results on h∧ and on h∨."""

    verdict: AgentVerdict
    reason: str
    on_and: QualitativeResult
    on_or: QualitativeResult
    witness: Witness | None = None  # the observed witness / counterexample behind the verdict
    assumption: str | None = None  # what the verdict rests on beyond the data
    decisive_query: tuple[State, str] | None = None  # for unknown: the untried pair to execute next


def decide(prop: Property, h_and: CompoundModel, h_or: CompoundModel, data: TransitionDataset | None,
           init: State, *, engines: tuple[SymbolicEngine, SymbolicEngine] | None = None) -> LatticeVerdict:
    """The verdict for the agent; ``engines`` are BDD engines of h∧ and h∨ to reuse
    (their reachable sets are kept) when several properties are checked."""
    query, _ = qualitative_query(prop)
    eng_and, eng_or = engines if engines is not None else (SymbolicEngine(h_and), SymbolicEngine(h_or))
    on_and = eng_and.check(prop, init)
    on_or = eng_or.check(prop, init)
    existential = isinstance(query, ExistsPath) and isinstance(query.path, Eventually | Until)
    invariant = isinstance(query, ForallPath) and isinstance(query.path, Globally)
    if existential:
        if on_and.holds:
            return LatticeVerdict(AgentVerdict.HOLDS, "witnessed on h∧: every step was observed", on_and, on_or,
                                  on_and.witness)
        if not on_or.holds:
            return LatticeVerdict(AgentVerdict.VIOLATED, "impossible on h∨", on_and, on_or,
                                  assumption=EFFECT_COMPLETENESS)
    elif invariant:
        if on_or.holds:
            return LatticeVerdict(AgentVerdict.HOLDS, "holds on h∨ (safety certificate)", on_and, on_or,
                                  assumption=EFFECT_COMPLETENESS)
        if not on_and.holds:
            return LatticeVerdict(AgentVerdict.VIOLATED, "violated on h∧: the counterexample was observed", on_and,
                                  on_or, on_and.witness)
    else:
        why = "not decided on the lattice for this operator (runs stop in dead ends): see the results on h∧ and h∨"
        return LatticeVerdict(AgentVerdict.UNKNOWN, why, on_and, on_or)
    pair = first_untried(on_or.witness, data) if data is not None else None
    why = "holds on h∨ but not on h∧" if existential else "fails on h∨ but not on h∧"
    return LatticeVerdict(AgentVerdict.UNKNOWN, why, on_and, on_or, on_or.witness, decisive_query=pair)


def first_untried(witness: Witness | None, data: TransitionDataset) -> tuple[State, str] | None:
    """The first step of ``witness`` whose (state, capability) the data never tried."""
    if witness is None:
        return None
    s = witness.initial
    for c, s_next in witness.steps:
        if data.count_sc(s, c) == 0:
            return s, c
        s = s_next
    return None
