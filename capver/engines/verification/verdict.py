"""One verdict of the verification entry point (:mod:`.evidence`), and the only place
its words and its record are made: what ``capver verify`` prints and ``--save``
writes, what ``learn --properties`` says of a tier, what ``capver report`` reads
back and what ``str(verdict)`` shows in Python.

A :class:`Verdict` is the property, the state it was checked from, what it was
checked on and the engine's answer: a :class:`LatticeVerdict` about the *agent*
(section 3.1 of the paper; the tiers of :mod:`.agent_verdict`), a
:class:`QualitativeResult` about one model, or a :class:`QuantitativeResult` (the
value on a model and the agent's bounds at 1 − δ, :mod:`.confidence`).  Its
:attr:`~Verdict.outcome` is one :class:`Outcome`; HOLDS and VIOLATED are printed
only where they are exact (observed, settled by the environment, or about a model),
and a confident verdict about the agent says what was seen and its bound
(:func:`claim_words`), since a confident claim is a bound on a violation's chance,
not its absence.  :meth:`Verdict.to_record` gives the :class:`VerdictRecord` that
``--json`` prints and ``verdicts.json`` keeps (:meth:`VerdictRecord.from_json` reads it
back).  Exit statuses are those of ``capver verify``: 0 holds, :data:`EXIT_VIOLATED`,
:data:`EXIT_UNKNOWN`, :data:`EXIT_TIMEOUT`.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from fractions import Fraction
from typing import TYPE_CHECKING

from capver.core.properties import (
    Comparison,
    ProbabilityBound,
    Property,
    probability_text,
    terminating_places,
    to_text,
)
from capver.core.state import State
from capver.core.vocabulary import Vocabulary
from capver.engines.verification import quantitative
from capver.engines.verification.agent_verdict import AbstractionNote, AgentVerdict, Confidence, LatticeVerdict, Tier
from capver.engines.verification.confidence import AgentBounds
from capver.engines.verification.ic3 import IC3Result
from capver.engines.verification.quantitative import BoundVerdict, QuantitativeResult
from capver.engines.verification.smc import SchedulerResult
from capver.engines.verification.symbolic import QualitativeResult, Witness
from capver.errors import RunFileError
from capver.model.kinds import ModelKind

if TYPE_CHECKING:
    from capver.engines.verification.qualitative import CheckTimeout

EXIT_VIOLATED = 1
EXIT_UNKNOWN = 3
EXIT_TIMEOUT = 4


class Outcome(StrEnum):
    """What a verdict says, as ``--json``'s ``"verdict"`` token.  The two confident
    outcomes are the data's bound, worded as what was seen; :attr:`VALUE` is a
    ``=?`` query's number, which is no verdict."""

    HOLDS = "holds"
    VIOLATED = "violated"
    NO_VIOLATION_SEEN = "no-violation-seen"
    NOT_SEEN_TO_HOLD = "not-seen-to-hold"
    UNCONFIRMED = "unconfirmed"
    UNKNOWN = "unknown"
    VALUE = "value"
    TIMEOUT = "timeout"
    WITHIN_BOUND = "within-the-bound"
    OUTSIDE_BOUND = "outside-the-bound"
    UNDECIDED = "undecided"


@dataclass(frozen=True, slots=True)
class Verdict:
    """A property checked from ``init`` on ``on`` (the words: "the agent", "h∧",
    "h∧ (MLE)", "the model" ...; ``kind`` the run's model when it is one of them).
    ``result`` is None when the check ran out of its timeout (``stopped``)."""

    prop: Property
    vocabulary: Vocabulary
    init: State
    on: str
    result: LatticeVerdict | QualitativeResult | QuantitativeResult | SchedulerResult | None
    kind: ModelKind | None = None
    seconds: float = 0.0
    stopped: CheckTimeout | None = field(default=None, compare=False)

    @property
    def lattice(self) -> LatticeVerdict | None:
        """The verdict about the agent (E/A properties on a run's lattice)."""
        return self.result if isinstance(self.result, LatticeVerdict) else None

    @property
    def quantity(self) -> QuantitativeResult | None:
        return self.result if isinstance(self.result, QuantitativeResult) else None

    @property
    def witness(self) -> Witness | None:
        r = self.result
        return r.witness if isinstance(r, LatticeVerdict | QualitativeResult) else None

    @property
    def agent(self) -> AgentBounds | None:
        """The agent's bounds at 1 − δ (quantitative properties on a run's h∧)."""
        q = self.quantity
        return None if q is None else q.agent

    @property
    def tier(self) -> str | None:
        """The tier of a verdict about the agent (:class:`Tier`'s value), else None."""
        v = self.lattice
        return None if v is None else v.tier.value

    @property
    def outcome(self) -> Outcome:
        r = self.result
        if r is None:
            return Outcome.TIMEOUT
        if isinstance(r, LatticeVerdict):
            return Outcome(outcome(r.verdict.value, r.tier.value))
        if isinstance(r, QualitativeResult):
            return Outcome.HOLDS if r.holds else Outcome.VIOLATED
        if isinstance(r, SchedulerResult):
            # Sampled: the interval decides a bound, never HOLDS or VIOLATED.
            return Outcome.VALUE if r.answer is None else _SAMPLED[r.answer]
        if r.holds is None:
            return Outcome.VALUE
        return Outcome.HOLDS if r.holds else Outcome.VIOLATED

    def model_results(self) -> tuple[tuple[ModelKind | None, QualitativeResult], ...]:
        """The verdicts on the models behind this one, each with its model (h∧ and
        h∨ for a verdict about the agent): where an IC3 engine's invariants come from."""
        r = self.result
        if isinstance(r, LatticeVerdict):
            return ((ModelKind.AND, r.on_and), (ModelKind.OR, r.on_or))
        if isinstance(r, QualitativeResult):
            return ((self.kind, r),)
        return ()

    def _rendered(self) -> tuple[str, dict[str, object], int]:
        r, vocab = self.result, self.vocabulary
        if r is None:
            return f"{self.prop.name}: no verdict: {self.stopped}", _timeout_record(self), EXIT_TIMEOUT
        if isinstance(r, LatticeVerdict):
            return agent_line(self.prop, r, vocab)
        if isinstance(r, QualitativeResult):
            return model_line(self.prop, r, vocab, self.on)
        if isinstance(r, SchedulerResult):
            return scheduler_line(self.prop, r)
        return quantitative_line(self.prop, r, self.on, vocab)

    @property
    def exit_status(self) -> int:
        return self._rendered()[2]

    def to_text(self) -> str:
        """What ``capver verify`` prints for it."""
        line, _, _ = self._rendered()
        return line if self.result is None else echo(self.prop, line)

    def __str__(self) -> str:
        return self.to_text()

    def to_record(self) -> VerdictRecord:
        """What ``capver verify --json`` prints for it and ``--save`` keeps."""
        _, record, _ = self._rendered()
        record.update(seconds=round(self.seconds, 4), init=self.vocabulary.format_state(self.init))
        return VerdictRecord.from_json(record, "a verdict")

    def to_json(self) -> dict[str, object]:
        return self.to_record().to_json()


@dataclass(frozen=True, slots=True)
class VerdictRecord:
    """A verdict as data: the property's ``name`` and ``text``, the outcome token (None for
    a ``=?`` query's value), and the rest of ``--json``'s object as JSON values
    (reason, tier, witness, bounds, ...).  :meth:`to_json` and :meth:`from_json` are
    inverse (``from_json(r.to_json()) == r``)."""

    name: str
    text: str
    verdict: str | None
    fields: Mapping[str, object]

    @property
    def reason(self) -> str:
        return str(self.fields.get("reason") or "")

    @property
    def tier(self) -> str | None:
        t = self.fields.get("tier")
        return t if isinstance(t, str) else None

    def get(self, key: str) -> object:
        """A field of the record (None when absent)."""
        if key == "property":
            return self.name
        if key in ("text", "verdict"):
            return getattr(self, key)
        return self.fields.get(key)

    def with_fields(self, **more: object) -> VerdictRecord:
        return VerdictRecord(self.name, self.text, self.verdict, {**self.fields, **more})

    def to_json(self) -> dict[str, object]:
        head: dict[str, object] = {"property": self.name, "text": self.text}
        if self.verdict is not None:
            head["verdict"] = self.verdict
        return {**head, **self.fields}

    @classmethod
    def from_json(cls, data: object, source: str) -> VerdictRecord:
        """The record of a JSON object; a :class:`RunFileError` naming ``source`` and
        what was expected otherwise."""
        if not isinstance(data, Mapping):
            raise RunFileError(f"{source}: a verdict is a JSON object, not {type(data).__name__}")
        name, text, verdict = data.get("property"), data.get("text"), data.get("verdict")
        if not isinstance(name, str) or not isinstance(text, str):
            raise RunFileError(f'{source}: a verdict needs the property\'s "property" and "text" as strings')
        if verdict is not None and not isinstance(verdict, str):
            raise RunFileError(f'{source}: {name}: "verdict" is a string, not {verdict!r}')
        rest = {k: v for k, v in data.items() if k not in ("property", "text", "verdict")}
        return cls(name, text, verdict, rest)


# A P<op>p bound decided on an interval (the agent's bounds, a scheduler's sample): its
# outcome, its words (the interval decides it; HOLDS and VIOLATED are for exact verdicts)
# and capver verify's exit status.
_SAMPLED = {
    BoundVerdict.CONFIRMED: Outcome.WITHIN_BOUND,
    BoundVerdict.REFUTED: Outcome.OUTSIDE_BOUND,
    BoundVerdict.UNDECIDED: Outcome.UNDECIDED,
}
_SAMPLED_EXIT = {BoundVerdict.CONFIRMED: 0, BoundVerdict.REFUTED: EXIT_VIOLATED, BoundVerdict.UNDECIDED: EXIT_UNKNOWN}


def _interval_words(answer: BoundVerdict) -> str:
    return _SAMPLED[answer].value.replace("-", " ").upper()


def scheduler_line(prop: Property, r: SchedulerResult) -> tuple[str, dict[str, object], int]:
    """A scheduler's probability for the agent, sampled (:mod:`.smc`)."""
    query = prop.query
    limit = f"runs cut after {r.max_executions} capability executions"
    how = (
        f"{r.successes} of {r.runs} runs with the agent satisfied it ({r.executions:,} capability "
        f"executions, {r.failed_executions} failed, {r.steps:,} simulator steps; {limit}); Clopper–Pearson "
        f"at looks fixed in advance, valid for all of them together, stopped: {r.stopped}"
    )
    interval = f"[{r.lower:.4g}, {r.upper:.4g}]"
    record: dict[str, object] = {
        "property": prop.name,
        "text": to_text(prop),
        "scheduler": r.scheduler,
        "lower": r.lower,
        "upper": r.upper,
        "delta": r.delta,
        "runs": r.runs,
        "successes": r.successes,
        "executions": r.executions,
        "failed_executions": r.failed_executions,
        "steps": r.steps,
        "max_executions": r.max_executions,
        "stopped": r.stopped,
    }
    if r.answer is None or not isinstance(query, ProbabilityBound):
        line = f"{prop.name}: P = {interval} for the agent under {r.scheduler}, with probability ≥ {1 - r.delta:g}"
        code = 0
    else:
        record["verdict"] = _SAMPLED[r.answer].value
        line = (
            f"{prop.name}: {_interval_words(r.answer)} for the agent under {r.scheduler} at confidence "
            f"{1 - r.delta:g}: its probability lies in {interval} and the bound asks P {query.comparison.value} "
            f"{float(query.probability):g}"
        )
        code = _SAMPLED_EXIT[r.answer]
    record["reason"] = how
    return f"{line}\n  {how}", record, code


def _timeout_record(v: Verdict) -> dict[str, object]:
    exc = v.stopped
    return {
        "property": v.prop.name,
        "text": to_text(v.prop),
        "verdict": Outcome.TIMEOUT.value,
        "reason": str(exc),
        "engine": " and ".join(exc.engines) if exc is not None else "",
        "timeout": exc.seconds if exc is not None else None,
    }


def echo(prop: Property, line: str) -> str:
    """``line`` with the property's text after its name, ``p1: A [ G !dead ] — HOLDS
    ...``, so that a verdict can be read without the command line that asked for it;
    done here once for every kind of result."""
    head = f"{prop.name}: "
    # to_text names the property first (quoted); the name is already at the front.
    text = to_text(prop).removeprefix(f"{json.dumps(prop.name, ensure_ascii=False)}: ")
    return f"{head}{text} — {line.removeprefix(head)}"


def _value_text(v: object) -> str:
    """A value as people read it: a decimal when it is exactly one (0.75), else the
    fraction and its first digits (28/9 (3.11111))."""
    if isinstance(v, Fraction):
        if terminating_places(v) is not None:
            return probability_text(v)
        return f"{v.numerator}/{v.denominator} ({float(v):.6g})"
    return f"{v:.6g}" if isinstance(v, float) else str(v)


def _value_json(v: quantitative.Value) -> dict[str, object]:
    """A value in a JSON record: the number, and for an exact one the fraction, which
    the number only approximates (``"value": 0.333..., "exact": "1/3"``).  JSON has no
    infinity, so an infinite expectation is ``"value": null, "infinite": true``."""
    if isinstance(v, Fraction):
        return {"value": float(v), "exact": str(v)}
    if math.isinf(v):
        return {"value": None, "infinite": True}
    return {"value": float(v)}


_SYMBOL = {Comparison.LT: "<", Comparison.LE: "≤", Comparison.GE: "≥", Comparison.GT: ">"}
_NEGATION = {
    Comparison.LT: Comparison.GE,
    Comparison.LE: Comparison.GT,
    Comparison.GE: Comparison.LT,
    Comparison.GT: Comparison.LE,
}


def _comparison(bound: ProbabilityBound, q: QuantitativeResult) -> tuple[str, str]:
    """Why a ``P<op>p`` verdict is what it is: the value compared and the relation
    between it and p (``Pmin = 0.8 ≥ 0.75``), and why that value — the bound is
    about every scheduler, so the extreme over schedulers decides it."""
    p = probability_text(bound.probability)
    relation = bound.comparison if q.holds else _NEGATION[bound.comparison]
    extreme = "maximum" if bound.comparison in (Comparison.LT, Comparison.LE) else "minimum"
    must = "holds" if q.holds else "must hold"
    return (
        f"{q.what} = {_value_text(q.value)} {_SYMBOL[relation]} {p}",
        f"P{bound.comparison.value}{p} {must} for every scheduler, so the {extreme} over schedulers is compared",
    )


def quantitative_line(
    prop: Property, q: QuantitativeResult, on: str, vocab: Vocabulary
) -> tuple[str, dict[str, object], int]:
    if q.value is None:
        # The agent's bounds alone: no model value was asked for (the property tracker's
        # and the benchmarks' verdicts).
        record: dict[str, object] = {"property": prop.name, "text": to_text(prop), "quantity": q.what}
        line = f"{prop.name}: {q.what} of the agent"
    else:
        record = {
            "property": prop.name,
            "text": to_text(prop),
            **_value_json(q.value),
            "quantity": q.what,
            "model": on,
            "engine": q.engine,
            "guarantee": q.guarantee,
        }
        line = f"{prop.name}: {q.what} = {_value_text(q.value)} on {on} (engine {q.engine}: {q.guarantee})"
    bound = prop.query
    if q.holds is not None and isinstance(bound, ProbabilityBound):  # the only query with a verdict
        compared, why = _comparison(bound, q)
        p = bound.probability
        record.update(
            verdict="holds" if q.holds else "violated",
            reason=f"{compared} ({why})",
            threshold={"comparison": bound.comparison.value, "value": float(p), "exact": str(p)},
        )
        line = f"{prop.name}: {'HOLDS' if q.holds else 'VIOLATED'} on {on}: {compared} ({why}; engine {q.engine}: {q.guarantee})"
    code = EXIT_VIOLATED if q.holds is False else 0
    if q.agent is not None:
        line += _agent_bounds_text(q.agent, vocab)
        record["agent"] = _agent_bounds_json(q.agent, vocab)
    if q.agent_verdict is not None and isinstance(bound, ProbabilityBound) and q.agent is not None:
        # On a run the verdict is about the agent: the bounds decide it, not h∧'s value.
        b = q.agent
        verdict = q.agent_verdict
        record["agent_verdict"] = verdict.value
        asked = float(bound.probability)
        line += (
            f"\n  {_interval_words(verdict)} for the agent at confidence {1 - b.delta:g}: its {b.quantity} lies in "
            f"[{b.lower:.4g}, {b.upper:.4g}] and the bound asks {b.quantity} {bound.comparison.value} {asked:g}"
        )
        code = _SAMPLED_EXIT[verdict]
    return line, record, code


def _agent_bounds_text(b: AgentBounds, vocab: Vocabulary) -> str:
    upper = "∞" if math.isinf(b.upper) else f"{b.upper:.4g}"
    lower = "∞" if math.isinf(b.lower) else f"{b.lower:.4g}"
    scope = (
        "unseen outcomes bounded by the missing mass, untried pairs counted at their worst"
        if b.scope == "sound"
        else "restricted to the observed pairs and outcomes"
    )
    text = (
        f"\n  for the agent, with probability ≥ {1 - b.delta:g} (anytime-valid): {lower} ≤ {b.quantity} ≤ "
        f"{upper} ({b.tried:,} tried and {b.untried:,} untried (state, capability) pairs met; {scope}; "
        f"largest ε {b.max_epsilon:.3g}"
        + (f"; exact at the states from which no run of {b.environment} can change the value" if b.environment else "")
        + ")"
    )
    if b.untried_pairs:
        text += "\n  to narrow it, execute (never tried):" + "".join(
            f"\n    {c} from {vocab.format_state(s)}" for s, c in b.untried_pairs
        )
    return text


def _agent_bounds_json(b: AgentBounds, vocab: Vocabulary) -> dict[str, object]:
    return {
        "quantity": b.quantity,
        # JSON has no infinity: null stands for ∞ (an Rmin no agent can make finite).
        "lower": None if math.isinf(b.lower) else b.lower,
        "upper": None if math.isinf(b.upper) else b.upper,
        "delta": b.delta,
        "scope": b.scope,
        "tried": b.tried,
        "untried": b.untried,
        "max_epsilon": b.max_epsilon,
        "converged": b.converged,
        "environment": b.environment,
        "untried_pairs": [{"state": [str(a) for a in vocab.atoms_of(s)], "capability": c} for s, c in b.untried_pairs],
    }


def _how(r: QualitativeResult) -> str:
    """How the engine decided: the states the BDD engine explored, IC3's invariant or
    where its run came from, the steps BMC searched."""
    if isinstance(r, IC3Result):
        if r.invariant is not None:
            inv = r.invariant
            if inv.lemmas == 0:
                return "proved by the invariant true: no state is its goal"
            return (
                f"proved by an inductive invariant of {inv.lemmas} lemma{'s' if inv.lemmas != 1 else ''}, "
                f"{inv.literals} literal{'s' if inv.literals != 1 else ''}"
            )
        return _RUN_FOUND_BY.get(r.witness_source or "", "a run found by bounded model checking")
    if r.engine == "bmc":
        if r.witness is not None:
            return "a run found by bounded model checking"
        return f"no run within {r.bound:,} steps"
    if r.reachable is not None:
        return f"{r.reachable} reachable states"
    if r.explored == 0:
        return "no state is its goal: decided without a search"
    return f"decided after exploring {r.explored} states"


_RUN_FOUND_BY = {"spacer": "a run found by Spacer", "abc": "a run found by ABC's pdr"}


def _engine_json(r: QualitativeResult) -> dict[str, object]:
    """What the engine that answered adds to a record: IC3's invariant."""
    if isinstance(r, IC3Result) and r.invariant is not None:
        inv = r.invariant
        return {"invariant": {"lemmas": inv.lemmas, "literals": inv.literals, "smtlib": inv.smtlib}}
    return {}


def model_line(prop: Property, r: QualitativeResult, vocab: Vocabulary, on: str) -> tuple[str, dict[str, object], int]:
    states = _how(r)
    reason = f"{r.verdict} on {on} ({states})"
    label = "witness" if r.holds else "counterexample"
    if r.witness is not None:
        n = len(r.witness)
        reason += f"; {label}: a run of {n} step{'s' if n != 1 else ''}"
    record: dict[str, object] = {
        "property": prop.name,
        "text": to_text(prop),
        "verdict": r.verdict,
        "reason": reason,
        "model": on,
        "engine": r.engine,
        "reachable": r.reachable,
        "explored": r.explored,
        **_engine_json(r),
    }
    line = f"{prop.name}: {r.verdict.upper()} on {on} ({states}, engine {r.engine})"
    if r.witness is not None:
        record["witness"] = r.witness.to_json(vocab)
        line += f"\n  {label}: {r.witness.format_changes(vocab)}"
    return line, record, 0 if r.holds else EXIT_VIOLATED


def agent_line(prop: Property, v: LatticeVerdict, vocab: Vocabulary) -> tuple[str, dict[str, object], int]:
    engines = {"h_and": v.on_and.engine, "h_or": v.on_or.engine}
    same = v.on_and.engine == v.on_or.engine
    record: dict[str, object] = {
        "property": prop.name,
        "text": to_text(prop),
        "verdict": outcome(v.verdict.value, v.tier.value),
        "reason": v.reason,
        "on_h_and": v.on_and.verdict,
        "on_h_or": v.on_or.verdict,
        "engine": v.on_and.engine if same else f"h∧: {v.on_and.engine}, h∨: {v.on_or.engine}",
        "engines": engines,
        "assumption": v.assumption,
    }
    record["tier"] = v.tier.value
    if v.environment is not None:
        record["environment"] = v.environment
    by = f"by {v.on_and.engine}" if same else f"by {v.on_and.engine} on h∧, {v.on_or.engine} on h∨"
    line = f"{prop.name}: {_verdict_words(v)} — {v.reason} (h∧: {v.on_and.verdict}, h∨: {v.on_or.verdict}) {by}"
    for model, r in (("h∧", v.on_and), ("h∨", v.on_or)):
        extra = _engine_json(r)
        if extra:
            record[f"invariant_{'h_and' if model == 'h∧' else 'h_or'}"] = extra["invariant"]
            line += f"\n  {model}: {_how(r)} ({r.engine})"
    if v.witness is not None:
        record["witness"] = v.witness.to_json(vocab)
        line += f"\n  run: {v.witness.format_changes(vocab)}"
    if v.confidence is not None:
        record["confidence"] = _confidence_json(v.confidence, vocab)
        line += _confidence_text(v, v.confidence, vocab)
    if v.abstraction is not None:
        record["abstraction"] = _abstraction_json(v.abstraction, vocab)
        line += _abstraction_text(v.abstraction, vocab)
    if v.assumption:
        line += f"\n  assuming {v.assumption}"
    if v.decisive_query is not None:
        s, c = v.decisive_query
        record["decisive_query"] = {"state": vocab.format_state(s), "capability": c}
        line += f"\n  to decide it, execute {c} from {vocab.format_state(s)} (never tried)"
    code = {
        AgentVerdict.HOLDS: 0,
        AgentVerdict.VIOLATED: EXIT_VIOLATED,
        AgentVerdict.UNCONFIRMED: EXIT_UNKNOWN,
        AgentVerdict.UNKNOWN: EXIT_UNKNOWN,
    }
    return line, record, code[v.verdict]


def _verdict_words(v: LatticeVerdict) -> str:
    if v.environment is not None:
        return f"{v.verdict.value.upper()} for every agent (exact: the environment settles it)"
    if v.tier is Tier.OBSERVED:
        return f"{v.verdict.value.upper()} for the agent (observed)"
    if v.tier is Tier.CONFIDENT and v.confidence is not None:
        c = v.confidence
        within = ", ".join(f"≤ {b:.3g} within {k}" for k, b in c.violation if k > 1)
        return (
            f"{claim_words(v.verdict.value, v.tier.value)} for the agent: with confidence {1 - c.delta:g}, a run "
            f"that breaks it has probability ≤ ε̄ = {c.epsilon:.3g} per execution"
            + (f" ({within} executions)" if within else "")
        )
    return f"{v.verdict.value.upper()} for the agent"


def claim_words(verdict: str, tier: str) -> str:
    """A verdict about the agent in words: HOLDS and VIOLATED only where they are
    exact (observed, or settled by the environment); a confident verdict is a bound on
    the chance of being wrong, so it says what was seen — no violation, or no run
    that satisfies the property."""
    if tier == "confident":
        return "NO VIOLATION SEEN" if verdict == "holds" else "NOT SEEN TO HOLD"
    return verdict.upper()


def outcome(verdict: str, tier: str) -> str:
    """The ``"verdict"`` of a JSON record: :func:`claim_words` as a token."""
    return claim_words(verdict, tier).lower().replace(" ", "-") if tier == "confident" else verdict


def _confidence_text(v: LatticeVerdict, c: Confidence, vocab: Vocabulary) -> str:
    """What the data bound at h∨'s frontier: the guarantee of a confident verdict, or
    why an unconfirmed one is not confident and which queries would make it so."""
    where = " within the states the environment reaches" if c.environment else ""
    frontier = (
        f"{c.frontier_name}{where}: {c.states:,} states × {c.pairs // max(c.states, 1):,} capabilities = "
        f"{c.pairs:,} (state, capability) pairs"
    )
    if not c.complete:
        frontier = (
            f"{c.frontier_name}{where}, its nearest rings only (the whole is h∨'s reachable set, too large to "
            f"enumerate; one untried pair decides the tier): at least {c.states:,} states × "
            f"{c.pairs // max(c.states, 1):,} capabilities = {c.pairs:,} (state, capability) pairs"
        )
    at_least = "" if c.complete else "at least "
    if v.tier is Tier.CONFIDENT:
        ks = ", ".join(f"k = {k}: {b:.3g}" for k, b in c.violation)
        where_bounded = (
            "if the abstraction holds, each class of a capability met by the frontier of h∨ under the abstraction "
            f"({c.states:,} states) shows an effect never observed in the class"
            if c.classes
            else f"each of the {c.pairs:,} (state, capability) pairs of h∨'s frontier shows an effect never observed there"
        )
        return (
            f"\n  guarantee: with probability ≥ {1 - c.delta:g} (whichever queries were chosen and wherever the run "
            f"stopped), {where_bounded} with probability ≤ ε̄ = {c.epsilon:.3g} per execution; so under any "
            f"scheduler a run of the agent that breaks this verdict within k executions has probability ≤ "
            f"1 − (1 − ε̄)^k ({ks})"
        )
    text = (
        f"\n  {frontier}; {at_least}{c.untried:,} {c.unit} never tried, {c.thin:,} tried with ε > {c.threshold:g} "
        f"(largest ε {c.epsilon:.3g}) at δ = {c.delta:g}"
    )
    if c.queries:
        shown = len(c.queries)
        text += f"\n  to confirm it, execute ({shown} of {at_least}{c.untried + c.thin:,}):"
        for q in c.queries:
            where = "never tried" if q.tried == 0 else f"tried {q.tried}×, ε {q.epsilon:.3g}"
            # An untried pair's count rises with the number of untried pairs, which a prefix underestimates.
            least = at_least if q.tried == 0 else ""
            text += (
                f"\n    {q.capability} from {vocab.format_state(q.state)} ({where}): {least}{q.executions} more "
                "executions"
            )
    return text


def _abstraction_text(a: AbstractionNote, vocab: Vocabulary) -> str:
    """Whether the verdict rests on the abstraction, and what the data say of it."""
    if a.used:
        text = f"\n  under the abstraction {a.name} ({a.classes:,} classes)"
    else:
        text = f"\n  the abstraction {a.name} was not needed or did not help: {a.why}; per-pair bounds at δ/3"
    for c, states in a.refuted:
        shown = "; ".join(vocab.format_state(s) for s in states)
        text += f"\n  the data refute it for {c} (homogeneity test at level {a.level:.3g}): at {shown}"
    return text


def _abstraction_json(a: AbstractionNote, vocab: Vocabulary) -> dict[str, object]:
    return {
        "name": a.name,
        "used": a.used,
        "why_not": a.why or None,
        "classes": a.classes,
        "test_level": a.level,
        "refuted": [
            {"capability": c, "states": [[str(x) for x in vocab.atoms_of(s)] for s in states]}
            for c, states in a.refuted
        ],
    }


def _confidence_json(c: Confidence, vocab: Vocabulary) -> dict[str, object]:
    return {
        "delta": c.delta,
        "epsilon_threshold": c.threshold,
        "epsilon": c.epsilon,
        "frontier_states": c.states,
        "frontier_pairs": c.pairs,
        "untried": c.untried,
        "thin": c.thin,
        "frontier_complete": c.complete,
        "frontier_within_environment": c.environment,
        "counted_in": "classes" if c.classes else "pairs",
        "violation": [{"k": k, "bound": b} for k, b in c.violation],
        "queries": [
            {
                "state": [str(a) for a in vocab.atoms_of(q.state)],
                "capability": q.capability,
                "tried": q.tried,
                "epsilon": q.epsilon,
                "executions": q.executions,
            }
            for q in c.queries
        ],
    }
