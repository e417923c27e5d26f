"""``capver verify``: check properties of an agent's capabilities (the property
language of :mod:`capver.io.properties_text`; docs/properties.md) on a learned run or
on one model file.

On a run directory the verdict is about the *agent*, from h∧ and h∨ together
(:mod:`capver.engines.verification.agent_verdict`), in tiers that say what it
licenses: observed (exact: the witness or counterexample was observed), with
confidence 1 − δ (rests on h∨, and the data bound the agent's unseen effects at h∨'s
frontier by ε; the guarantee is printed), unconfirmed (with the queries that would
confirm it) or unknown (with the query that would decide it).  On a model file the
verdict is about that model.  Qualitative properties are checked by the BDD engine;
quantitative ones (Pmax/Pmin, P<=p, Rmin/Rmax) by Storm (exact rationals) or capver's
explicit-state engine (``--engine``), on h∧ of a run — the maximum-likelihood model
section 4.2 evaluates — with the agent's value bounded at confidence 1 − δ
(:func:`capver.engines.verification.quantitative.agent_bounds`), which also decides
a ``P<op>p`` bound for the agent.  ``--model-kind and|or`` checks every property on
one bound of the lattice instead.

Every result repeats its property's text; a witness or counterexample is printed as
its initial state and then, per step, the atoms added and removed
(:meth:`Witness.format_changes`), and in ``--json`` as lists of atoms
(:meth:`Witness.to_json`).  ``--json`` values are numbers, with the exact fraction
beside them when the checker computed one.  ``--save`` writes the records to
``RUN/verdicts.json`` (:mod:`capver.io.verdicts_file`) for ``capver report``.

Exit status, as model checkers do: 0 every property holds, 1 one is violated,
3 none is violated but one is unconfirmed, unknown or undecided, 2 bad input.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import sys
import time
from fractions import Fraction
from pathlib import Path

from capver.commands.argtypes import non_negative, open_unit_interval
from capver.engines.verification import quantitative, storm
from capver.engines.verification.agent_verdict import (
    DEFAULT_DELTA,
    DEFAULT_EPSILON,
    AgentVerdict,
    Confidence,
    LatticeVerdict,
    Tier,
    decide,
)
from capver.engines.verification.confidence import AgentBounds
from capver.engines.verification.quantitative import BoundVerdict
from capver.engines.verification.symbolic import QualitativeResult, SymbolicEngine, Witness
from capver.errors import UsageError
from capver.io import dataset_file, dsl, run_file, verdicts_file
from capver.io.checkers import QUANTITATIVE_CHECKERS
from capver.io.literal_text import parse_conjunction
from capver.io.properties_text import parse_property, read_properties
from capver.model.capability_model import CompoundModel
from capver.model.dataset import TransitionDataset
from capver.model.properties import (
    Comparison,
    ExistsPath,
    ForallPath,
    Globally,
    ProbabilityBound,
    Property,
    holds,
    probability_text,
    terminating_places,
    to_text,
)
from capver.model.state import Capability, State
from capver.model.vocabulary import Vocabulary

EXIT_VIOLATED = 1
EXIT_UNKNOWN = 3

MODEL_KINDS = {
    "lattice": "on a run, qualitative verdicts about the agent from h∧ and h∨, quantitative values on h∧",
    "and": "every property on h∧ alone (the pessimistic model: observed transitions only)",
    "or": "every property on h∨ alone (the optimistic model)",
    "mle": "the maximum-likelihood model, which is h∧ (section 4.2): the same as 'and'",
    "tilde": "every property on the Occam model h̃ (h_tilde.capm), between h∧ and h∨ and predicting where no "
             "data is",
}
AUTO = "auto"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("target", type=Path, metavar="RUN|MODEL.capm",
                        help="a capver learn run directory (verdicts about the agent) or one model file")
    what = parser.add_mutually_exclusive_group(required=True)
    what.add_argument("--property", action="append", default=[], metavar="TEXT",
                      help="a property, e.g. 'A [ G !(holding(a) & holding(b)) ]' (repeatable)")
    what.add_argument("--properties", type=Path, metavar="FILE.props", help="a file of named properties")
    parser.add_argument("--init", metavar="ATOMS", default="",
                        help="initial state as its true atoms (default: the model's (:init ...), which a run's "
                        "models carry; a model without one needs --init)")
    parser.add_argument("--model-kind", choices=tuple(MODEL_KINDS), default="lattice",
                        help="which model of a run the properties are checked on: "
                        + "; ".join(f"{k}: {v}" for k, v in MODEL_KINDS.items()))
    parser.add_argument("--engine", choices=(AUTO, *QUANTITATIVE_CHECKERS), default=AUTO,
                        help="checker of quantitative properties: storm (Storm, exact rationals), storm-float "
                        "(Storm on doubles, sound, precision 1e-12), explicit (capver's explicit-state engine, exact); "
                        "auto: storm when stormpy is installed, else explicit")
    parser.add_argument("--delta", type=open_unit_interval, default=DEFAULT_DELTA,
                        help="on a run, the error probability δ of every statement about the agent that rests on the "
                        "data's bounds: confident verdicts and the bounds on quantitative values (anytime-valid: they "
                        f"hold wherever the run stopped; default {DEFAULT_DELTA})")
    parser.add_argument("--epsilon", type=open_unit_interval, default=DEFAULT_EPSILON,
                        help="on a run, a verdict that rests on h∨ is confident only when every (state, capability) "
                        "pair of h∨'s frontier shows an unseen effect with probability ≤ ε per execution at "
                        f"confidence 1 − δ; otherwise it is unconfirmed, with the queries that would confirm it "
                        f"(default {DEFAULT_EPSILON})")
    parser.add_argument("--bound-scope", choices=("sound", "observed"), default="sound",
                        help="bounds on the agent's quantitative values: sound (unseen outcomes bounded by the "
                        "missing mass, untried (state, capability) pairs at their worst, so a reachable untried pair "
                        "widens the bound) or observed (the data read as complete: a bound on the agent restricted "
                        "to the observed pairs and outcomes)")
    parser.add_argument("--json", action="store_true",
                        help="print one JSON object per property instead of text (values as numbers, with the exact "
                        "fraction in \"exact\"; witnesses as lists of atoms)")
    parser.add_argument("--save", action="store_true",
                        help=f"on a run: also write the verdicts (the --json records) to RUN/{verdicts_file.NAME}, "
                        "which capver report shows; replaces a file capver wrote there, never another one")
    parser.add_argument("--replay", type=non_negative, default=0, metavar="N",
                        help="on a run: execute each witness / counterexample N times with the agent in its "
                        "simulator and report how often it reached the property's goal (default: 0, no replay)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the replays")


def run(args: argparse.Namespace) -> int:
    target: Path = args.target
    data: TransitionDataset | None = None
    if args.save:
        if not target.is_dir():
            raise UsageError(f"--save: {target} is one model file; --save writes {verdicts_file.NAME} into a run "
                             "directory (capver learn --out)")
        verdicts_file.check_writable(target)
    if target.is_dir():
        first = dsl.read(target / "h_and.capm")
        second = dsl.read(target / "h_or.capm", ctx=first.ctx, ctx_source=f"the first model ({target / 'h_and.capm'})")
        data_path = target / "dataset.jsonl"
        data = dataset_file.load(data_path, vocab=first.vocabulary).dataset if data_path.exists() else None
        models: dict[str, CompoundModel] = {"and": first.model, "or": second.model, "mle": first.model}
        if args.model_kind == "tilde":
            tilde = target / "h_tilde.capm"
            if not tilde.exists():
                raise UsageError(f"--model-kind tilde: {target} has no h_tilde.capm (runs of capver learn write it "
                                 "since the Occam model was added)")
            models["tilde"] = dsl.read(tilde, ctx=first.ctx, ctx_source=f"the first model ({target / 'h_and.capm'})").model
    elif args.model_kind != "lattice":
        raise UsageError(f"--model-kind {args.model_kind}: {target} is one model; the kinds are models of a run "
                         "directory (h_and.capm, h_or.capm)")
    else:
        first, second = dsl.read(target), None
    vocab = first.vocabulary
    if not args.init.strip() and first.init is None:
        # A verdict from an initial state the user never chose (the empty one) looks
        # like a verdict about the agent and is not one.
        raise UsageError(f"{first.filename} has no (:init ...) and no --init was given: give --init ATOMS "
                         "(the initial state's true atoms) or add (:init ...) to the model")
    props = _properties(args, vocab, tuple(first.model))
    init, source = first.initial_state(args.init)
    checker = QUANTITATIVE_CHECKERS[_engine(args.engine)]()
    on_model = {"and": "h∧", "or": "h∨", "mle": "h∧ (MLE)", "tilde": "h̃"}
    engines: dict[int, SymbolicEngine] = {}  # one per model: reachable sets are reused across properties

    def engine(m: CompoundModel) -> SymbolicEngine:
        hit = engines.get(id(m))
        if hit is None:
            hit = engines[id(m)] = SymbolicEngine(m)
        return hit
    codes = []
    records: list[dict[str, object]] = []
    for prop in props:
        start = time.perf_counter()
        witness: Witness | None = None
        if not isinstance(prop.query, ExistsPath | ForallPath):
            kind = "mle" if args.model_kind == "lattice" else args.model_kind
            model = models[kind] if second is not None else first.model
            try:
                # The bound is on the data's MLE model, h∧.
                q = quantitative.check(prop, model, init, checker, data=data if kind in ("and", "mle") else None,
                                       delta=args.delta, observed_only=args.bound_scope == "observed")
            except TypeError as exc:
                raise UsageError(f"{prop.name}: {exc}") from None
            line, record, code = _quantitative_line(prop, q, on_model[kind] if second is not None else "the model",
                                                    vocab)
        elif second is None or args.model_kind != "lattice":
            model = first.model if second is None else models[args.model_kind]
            result = engine(model).check(prop, init)
            on = "the model" if second is None else on_model[args.model_kind]
            line, record, code = _model_line(prop, result, vocab, on)
            witness = result.witness
        else:
            verdict = decide(prop, first.model, second.model, data, init,
                             engines=(engine(first.model), engine(second.model)), delta=args.delta,
                             epsilon=args.epsilon)
            line, record, code = _agent_line(prop, verdict, vocab)
            witness = verdict.witness
        if witness is not None:
            # Structured for every kind of result (_agent_line records the text form).
            record["witness"] = witness.to_json(vocab)
        line = _echo(prop, line)
        if args.replay and second is not None and witness is not None and witness.steps:
            reached, runs = _replay(target, prop, witness, args.replay, args.seed)
            record["replay"] = {"runs": runs, "reached_goal": reached}
            line += f"\n  replayed on the agent: the goal was reached in {reached} of {runs} runs"
        record.update(seconds=round(time.perf_counter() - start, 4), init=vocab.format_state(init),
                      init_from=source)
        print(json.dumps(record, ensure_ascii=False) if args.json else line)
        records.append(record)
        codes.append(code)
    if args.save:
        path = verdicts_file.write(target, records)
        # With --json, stdout stays one JSON object per line.
        print(f"saved {len(records)} verdict{'s' if len(records) != 1 else ''} to {path}",
              file=sys.stderr if args.json else sys.stdout)
    return EXIT_VIOLATED if EXIT_VIOLATED in codes else EXIT_UNKNOWN if EXIT_UNKNOWN in codes else 0


def _engine(name: str) -> str:
    if name == AUTO:
        return "storm" if storm.available() else "explicit"
    if name.startswith("storm") and not storm.available():
        raise UsageError(f"--engine {name}: stormpy is not installed (pip install 'stormpy>=2.0'), "
                         "or use --engine explicit")
    return name


def _properties(args: argparse.Namespace, vocab: Vocabulary, caps: tuple[str, ...]) -> tuple[Property, ...]:
    if args.properties is not None:
        props = read_properties(args.properties, vocab, caps)
    else:
        # Unnamed --property options are p1, p2, ... in the order given.
        props = tuple(
            prop if text.lstrip().startswith('"') else dataclasses.replace(prop, name=f"p{k}")
            for k, text in enumerate(args.property, 1)
            for prop in (parse_property(text, vocab, caps),)
        )
    return props


def _echo(prop: Property, line: str) -> str:
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
_NEGATION = {Comparison.LT: Comparison.GE, Comparison.LE: Comparison.GT, Comparison.GE: Comparison.LT,
             Comparison.GT: Comparison.LE}


def _comparison(bound: ProbabilityBound, q: quantitative.QuantitativeResult) -> tuple[str, str]:
    """Why a ``P<op>p`` verdict is what it is: the value compared and the relation
    between it and p (``Pmin = 0.8 ≥ 0.75``), and why that value — the bound is
    about every scheduler, so the extreme over schedulers decides it."""
    p = probability_text(bound.probability)
    relation = bound.comparison if q.holds else _NEGATION[bound.comparison]
    extreme = "maximum" if bound.comparison in (Comparison.LT, Comparison.LE) else "minimum"
    must = "holds" if q.holds else "must hold"
    return (f"{q.what} = {_value_text(q.value)} {_SYMBOL[relation]} {p}",
            f"P{bound.comparison.value}{p} {must} for every scheduler, so the {extreme} over schedulers is compared")


def _quantitative_line(prop: Property, q: quantitative.QuantitativeResult, on: str,
                       vocab: Vocabulary) -> tuple[str, dict[str, object], int]:
    record: dict[str, object] = {"property": prop.name, "text": to_text(prop), **_value_json(q.value),
                                 "quantity": q.what, "model": on, "engine": q.engine}
    line = f"{prop.name}: {q.what} = {_value_text(q.value)} on {on} (engine {q.engine})"
    bound = prop.query
    if q.holds is not None and isinstance(bound, ProbabilityBound):  # the only query with a verdict
        compared, why = _comparison(bound, q)
        p = bound.probability
        record.update(verdict="holds" if q.holds else "violated", reason=f"{compared} ({why})",
                      threshold={"comparison": bound.comparison.value, "value": float(p), "exact": str(p)})
        line = f"{prop.name}: {'HOLDS' if q.holds else 'VIOLATED'} on {on}: {compared} ({why}; engine {q.engine})"
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
        words = {BoundVerdict.CONFIRMED: "HOLDS for the agent", BoundVerdict.REFUTED: "VIOLATED for the agent",
                 BoundVerdict.UNDECIDED: "UNDECIDED for the agent"}[verdict]
        line += (f"\n  {words} at confidence {1 - b.delta:g}: its {b.quantity} lies in [{b.lower:.4g}, {b.upper:.4g}] "
                 f"and the bound asks {b.quantity} {bound.comparison.value} {asked:g}")
        code = {BoundVerdict.CONFIRMED: 0, BoundVerdict.REFUTED: EXIT_VIOLATED,
                BoundVerdict.UNDECIDED: EXIT_UNKNOWN}[verdict]
    return line, record, code


def _agent_bounds_text(b: AgentBounds, vocab: Vocabulary) -> str:
    upper = "∞" if math.isinf(b.upper) else f"{b.upper:.4g}"
    scope = ("unseen outcomes bounded by the missing mass, untried pairs counted at their worst"
             if b.scope == "sound" else "restricted to the observed pairs and outcomes")
    text = (f"\n  for the agent, with probability ≥ {1 - b.delta:g} (anytime-valid): {b.lower:.4g} ≤ {b.quantity} ≤ "
            f"{upper} ({b.tried:,} tried and {b.untried:,} untried (state, capability) pairs met; {scope}; "
            f"largest ε {b.max_epsilon:.3g})")
    if b.untried_pairs:
        text += "\n  to narrow it, execute (never tried):" + "".join(
            f"\n    {c} from {vocab.format_state(s)}" for s, c in b.untried_pairs)
    return text


def _agent_bounds_json(b: AgentBounds, vocab: Vocabulary) -> dict[str, object]:
    return {
        "quantity": b.quantity, "lower": b.lower, "upper": None if math.isinf(b.upper) else b.upper,
        "delta": b.delta, "scope": b.scope, "tried": b.tried, "untried": b.untried,
        "max_epsilon": b.max_epsilon, "converged": b.converged,
        "untried_pairs": [{"state": [str(a) for a in vocab.atoms_of(s)], "capability": c} for s, c in b.untried_pairs],
    }


def _model_line(prop: Property, r: QualitativeResult, vocab: Vocabulary,
                on: str) -> tuple[str, dict[str, object], int]:
    states = f"{r.reachable} reachable states" if r.reachable is not None else \
        f"decided after exploring {r.explored} states"
    reason = f"{r.verdict} on {on} ({states})"
    label = "witness" if r.holds else "counterexample"
    if r.witness is not None:
        n = len(r.witness)
        reason += f"; {label}: a run of {n} step{'s' if n != 1 else ''}"
    record: dict[str, object] = {"property": prop.name, "text": to_text(prop), "verdict": r.verdict, "reason": reason,
                                 "model": on, "engine": r.engine, "reachable": r.reachable, "explored": r.explored}
    line = f"{prop.name}: {r.verdict.upper()} on {on} ({states}, engine {r.engine})"
    if r.witness is not None:
        line += f"\n  {label}: {r.witness.format_changes(vocab)}"
    return line, record, 0 if r.holds else EXIT_VIOLATED


def _agent_line(prop: Property, v: LatticeVerdict, vocab: Vocabulary) -> tuple[str, dict[str, object], int]:
    record: dict[str, object] = {
        "property": prop.name, "text": to_text(prop), "verdict": v.verdict.value, "reason": v.reason,
        "on_h_and": v.on_and.verdict, "on_h_or": v.on_or.verdict, "engine": "bdd", "assumption": v.assumption,
    }
    record["tier"] = v.tier.value
    line = f"{prop.name}: {_verdict_words(v)} — {v.reason} (h∧: {v.on_and.verdict}, h∨: {v.on_or.verdict})"
    if v.witness is not None:
        record["witness"] = v.witness.format(vocab)
        line += f"\n  run: {v.witness.format_changes(vocab)}"
    if v.confidence is not None:
        record["confidence"] = _confidence_json(v.confidence, vocab)
        line += _confidence_text(v, v.confidence, vocab)
    if v.assumption:
        line += f"\n  assuming {v.assumption}"
    if v.decisive_query is not None:
        s, c = v.decisive_query
        record["decisive_query"] = {"state": vocab.format_state(s), "capability": c}
        line += f"\n  to decide it, execute {c} from {vocab.format_state(s)} (never tried)"
    code = {AgentVerdict.HOLDS: 0, AgentVerdict.VIOLATED: EXIT_VIOLATED, AgentVerdict.UNCONFIRMED: EXIT_UNKNOWN,
            AgentVerdict.UNKNOWN: EXIT_UNKNOWN}
    return line, record, code[v.verdict]


def _verdict_words(v: LatticeVerdict) -> str:
    if v.tier is Tier.OBSERVED:
        return f"{v.verdict.value.upper()} for the agent (observed)"
    if v.tier is Tier.CONFIDENT and v.confidence is not None:
        return f"{v.verdict.value.upper()} for the agent with confidence {1 - v.confidence.delta:g}"
    return f"{v.verdict.value.upper()} for the agent"


def _confidence_text(v: LatticeVerdict, c: Confidence, vocab: Vocabulary) -> str:
    """What the data bound at h∨'s frontier: the guarantee of a confident verdict, or
    why an unconfirmed one is not confident and which queries would make it so."""
    frontier = (f"h∨'s frontier: {c.states:,} states × {c.pairs // max(c.states, 1):,} capabilities = {c.pairs:,} "
                "(state, capability) pairs")
    if v.tier is Tier.CONFIDENT:
        ks = ", ".join(f"k = {k}: {b:.3g}" for k, b in c.violation)
        return (f"\n  guarantee: with probability ≥ {1 - c.delta:g} (whichever queries were chosen and wherever the run "
                f"stopped), each of the {c.pairs:,} (state, capability) pairs of h∨'s frontier shows an effect never observed there with "
                f"probability ≤ ε̄ = {c.epsilon:.3g} per execution; so under any scheduler a run of the agent that "
                f"breaks this verdict within k executions has probability ≤ 1 − (1 − ε̄)^k ({ks})")
    text = (f"\n  {frontier}; {c.untried:,} never tried, {c.thin:,} tried with ε > {c.threshold:g} "
            f"(largest ε {c.epsilon:.3g}) at δ = {c.delta:g}")
    if c.queries:
        shown = len(c.queries)
        text += f"\n  to confirm it, execute ({shown} of {c.untried + c.thin:,}):"
        for q in c.queries:
            where = "never tried" if q.tried == 0 else f"tried {q.tried}×, ε {q.epsilon:.3g}"
            text += f"\n    {q.capability} from {vocab.format_state(q.state)} ({where}): {q.executions} more executions"
    return text


def _confidence_json(c: Confidence, vocab: Vocabulary) -> dict[str, object]:
    return {
        "delta": c.delta, "epsilon_threshold": c.threshold, "epsilon": c.epsilon, "frontier_states": c.states,
        "frontier_pairs": c.pairs, "untried": c.untried, "thin": c.thin,
        "violation": [{"k": k, "bound": b} for k, b in c.violation],
        "queries": [{"state": [str(a) for a in vocab.atoms_of(q.state)], "capability": q.capability,
                     "tried": q.tried, "epsilon": q.epsilon, "executions": q.executions} for q in c.queries],
    }


def _replay(run_dir: Path, prop: Property, witness: Witness, n: int, seed: int) -> tuple[int, int]:
    """Execute the witness's capabilities with the run's agent ``n`` times from the
    witness's first state; count the runs whose symbolic trajectory reaches the goal
    of the property's path (for ``A [ G φ ]``, the violation ¬φ)."""
    import numpy as np

    from capver.engines.execution import execute
    from capver.settings import build_assessment

    manifest = run_file.read(run_dir)
    a = build_assessment(manifest.agent, manifest.setting, np.random.default_rng(manifest.setting.seed))
    st, vocab = a.setting, a.ctx.vocab
    starts = [x for x in st.initial_states if st.alpha(x) == witness.initial]
    if not starts:
        raise UsageError(f"--replay: no initial state of the run's setting is {vocab.format_state(witness.initial)}")
    path = prop.query.path  # type: ignore[union-attr]  # qualitative here
    if isinstance(path, Globally):
        def goal(s: State) -> bool:
            return not holds(path.invariant, s, vocab)
    else:
        def goal(s: State) -> bool:
            return holds(path.goal, s, vocab)
    rng = np.random.default_rng(seed)
    reached = 0
    for _ in range(n):
        x = starts[0]
        hit = goal(st.alpha(x))
        for c in witness.capability_names:
            if hit:
                break
            ex = execute(st.agent, st.sim, st.alpha, _capability(st.capabilities, c, vocab), x, rng, st.budget)
            x = st.sim.get_state()
            hit = any(goal(s) for s in ex.symbolic_trajectory)
        reached += hit
    return reached, n


def _capability(known: tuple[Capability, ...], name: str, vocab: Vocabulary) -> Capability:
    """The capability ``name`` of the setting, or (discovered later, as LAO*'s are)
    the one whose name spells its intent."""
    for c in known:
        if c.name == name:
            return c
    return Capability.for_intent(parse_conjunction(name, vocab, what="capability"))
