"""A learned model in plain words (section 4.2's E2: "inspect learned models for
notable capabilities and limitations"): the one place where rules and their success
are put into words, for the DSL's rule comments, ``report.txt`` and the HTML report.
The numbers come from :func:`capver.model.capability_model.intent_success`."""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction

from capver.engines.evaluation import achieving_model
from capver.engines.findings import Finding, NeverAchieved, Reliable, SideEffect, SuccessDrop
from capver.engines.occam import literals
from capver.logic.condition import Condition, ConditionKind, LogicContext
from capver.model.capability_model import CompoundModel, IntentSuccess, Rule, SuccessCase, intent_success
from capver.model.state import Capability
from capver.model.vocabulary import Literal


def plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def fraction_text(p: Fraction) -> str:
    """``2/3``, or ``1`` for a whole number (as the DSL writes probabilities)."""
    return str(p.numerator) if p.denominator == 1 else f"{p.numerator}/{p.denominator}"


def intent_words(intent: Sequence[Literal]) -> str:
    return " and ".join(str(x.atom) if x.positive else f"not {x.atom}" for x in intent)


def success_words(s: IntentSuccess) -> str | None:
    """The success range in words (None when there is nothing to say)."""
    if s.case is SuccessCase.CONTRADICTORY:
        return "can never achieve its contradictory intent"
    if s.case is SuccessCase.ALREADY_HOLDS:
        return "the intent already holds wherever it applies"
    if s.low is None or s.high is None:
        return None
    lo, hi = s.low, s.high
    if lo == hi == 0:
        return "never achieves the intent"
    if lo == hi == 1:
        return "always achieves the intent"
    if lo == hi:
        return f"achieves the intent with probability {fraction_text(lo)}"
    return f"achieves the intent with probability between {fraction_text(lo)} and {fraction_text(hi)}, depending on the state"


def rule_summary(ctx: LogicContext, cap: Capability, r: Rule) -> str:
    """Where a rule applies and how often it achieves the intent, in words."""
    cond = r.condition
    if cond.kind == ConditionKind.PESSIMISTIC:
        n = len(cond.states)
        where = f"learned from {plural(n, 'observed state')}; applies only there" if n else "applies in no state"
    elif cond.kind == ConditionKind.OPTIMISTIC:
        n, k = len(cond.states), len(cond.excluded)
        where = (
            f"learned from {plural(n, 'observed state')}; also assumed to apply in every state "
            f"never tried (it excludes {plural(k, 'other observed state')})"
        )
    else:
        count = ctx.bdd.count(cond.bdd)
        total = 1 << len(ctx.vocab)
        where = "applies in no state" if count == 0 else f"applies in {count} of {total} states"
    success = success_words(intent_success(cap, r))
    return where if success is None else f"{where}; {success}"


WORDS_LIMIT = 240
"""Conditions longer than this in words are summarised by their size instead."""


def condition_words(cond: Condition, limit: int = WORDS_LIMIT) -> str | None:
    """The condition as "a and not b, or c" from its irredundant cover (how the DSL
    prints it); None when that is longer than ``limit`` characters."""
    cover = cond.cover
    if not cover:
        return "in no state"
    if len(cover) == 1 and not cover[0].mask:
        return "in every state"
    atoms = cond.ctx.vocab.atoms
    alternatives = []
    for c in cover:
        lits = [str(a) if (c.value >> i) & 1 else f"not {a}" for i, a in enumerate(atoms) if (c.mask >> i) & 1]
        alternatives.append(" and ".join(lits))
    text = "either " + ", or ".join(alternatives) if len(alternatives) > 1 else alternatives[0]
    return text if len(text) <= limit else None


def _probability_words(p: Fraction) -> str:
    return fraction_text(p) if p.denominator <= 4 else f"{float(p):.2f}"


def rule_words(cap: Capability, r: Rule) -> str | None:
    """When the rule applies and what it does, in one sentence ("achieves
    delivered(v1) with probability 0.93 when have-victim(v1) and ..."); None when its
    condition is too long to read."""
    when = condition_words(r.condition)
    if when is None:
        return None
    when = when if when.startswith("in ") else f"when {when}"
    s = intent_success(cap, r)
    if cap.intent and s.case is SuccessCase.RANGE and s.low is not None and s.high is not None:
        goal = intent_words(cap.intent)
        if s.low == s.high == 0:
            return f"does not achieve {goal} {when}"
        if s.low == s.high:
            how = "always" if s.low == 1 else f"with probability {_probability_words(s.low)}"
            return f"achieves {goal} {how} {when}"
        return (f"achieves {goal} with probability {_probability_words(s.low)} to "
                f"{_probability_words(s.high)} (depending on the state) {when}")
    if cap.intent and s.case is SuccessCase.ALREADY_HOLDS:
        return f"{intent_words(cap.intent)} already holds {when}"
    vocab = r.condition.ctx.vocab
    outcomes = "; ".join(f"{eta.format(vocab)} with probability {_probability_words(p)}" for p, eta in r.effects)
    return f"{when[0].upper()}{when[1:]}: {outcomes}"


def _when(cond: Condition, limit: int = 160) -> str:
    said = condition_words(cond, limit)
    if said is None:
        return f"under a condition of {literals(cond)} literals (no short one found)"
    return said if said.startswith("in ") else f"when {said}"


def finding_words(f: Finding) -> str:
    """One finding of :mod:`capver.engines.findings` as a sentence."""
    cap = f.capability
    goal = intent_words(cap.intent)
    if isinstance(f, NeverAchieved):
        return (f"{cap.name}: never achieved {goal} in any of the {plural(f.tried, 'tried state')} where it did "
                "not hold yet")
    if isinstance(f, Reliable):
        return f"{cap.name}: always achieved {goal}, in every outcome observed from {plural(f.tried, 'tried state')}"
    if isinstance(f, SuccessDrop):
        return (f"{cap.name}: success drops to at most {_probability_words(f.low)} "
                f"({plural(f.low_states, 'tried state')}) from at least {_probability_words(f.high)} "
                f"({plural(f.high_states, 'tried state')}) {_when(f.condition)}")
    if isinstance(f, SideEffect):
        vocab = f.condition.ctx.vocab
        parts = [f"makes {', '.join(map(str, vocab.atoms_of(bits)))} {value}"
                 for bits, value in ((f.extra.add, "true"), (f.extra.delete, "false")) if bits]
        what = " and ".join(parts)
        share = f.states / f.achieving if f.achieving else 0.0
        return (f"{cap.name}: also {what}, which {goal} does not ask for, in {f.states} of the {f.achieving} "
                f"tried states ({share:.0%}) where it achieved {goal}, {_when(f.condition)}; from states alike in "
                f"everything else that outcome changes, it achieved {goal} without it")
    raise TypeError(f"not a finding: {f!r}")


FINDING_HEADINGS: tuple[tuple[type, str], ...] = (
    (NeverAchieved, "Capabilities never achieved"),
    (SuccessDrop, "Conditions under which success drops"),
    (SideEffect, "Side effects the intent does not ask for"),
    (Reliable, "Capabilities that always succeeded"),
)


FINDINGS_TITLE = "What the learned model reveals"


def findings_report(findings: Sequence[Finding]) -> list[str]:
    """The report's "what the models reveal" section (section 4.2's E2)."""
    lines = [(f"{FINDINGS_TITLE} (from h∧'s observations; conditions are h̃-style short ones, a guess "
              "where nothing was tried):")]
    for kind, heading in FINDING_HEADINGS:
        these = [f for f in findings if isinstance(f, kind)]
        lines.append(f"  {heading}: {'none found' if not these else len(these)}")
        lines += [f"  - {finding_words(f)}" for f in these]
    return lines


def read_findings(report_text: str) -> list[tuple[str, list[str]]] | None:
    """The section :func:`findings_report` wrote into ``report.txt``, back as
    (heading line, finding sentences) pairs; None when the report has none (a run
    written before findings existed)."""
    lines = report_text.splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith(FINDINGS_TITLE)), None)
    if start is None:
        return None
    groups: list[tuple[str, list[str]]] = []
    for line in lines[start + 1:]:
        if not line.strip():
            break
        if line.startswith("  - ") and groups:
            groups[-1][1].append(line[4:])
        else:
            groups.append((line.strip(), []))
    return groups


def _words(intent: Sequence[object]) -> str:
    return " and ".join(str(lit) for lit in intent) or "(execute it)"


def capability_report(h_and: CompoundModel, h_or: CompoundModel, h_tilde: CompoundModel | None = None,
                      findings: Sequence[Finding] | None = None) -> str:
    """Each capability with its conditions and outcome probabilities in words: when
    the Occam model h̃ is given, first its short conditions (when the capability
    works), then h∧'s rules (what was observed).  ``findings``
    (:func:`capver.engines.findings.run_findings`) come first, as the notable
    capabilities and limitations."""
    # Imported here: the DSL writer imports this module for its rule comments.
    from capver.io.dsl import condition_text

    vocab = h_and.vocabulary
    achieving = achieving_model(h_and)
    lines = [
        f"{len(h_and)} capabilities assessed, {len(achieving)} observed to achieve their intent.",
    ]
    if h_tilde is not None:
        lines.append("\"In words\" lines come from the Occam model h̃ (h_tilde.capm): the shortest conditions found "
                     "that agree with every observation; z3 proves h∧ ⪯ h̃ ⪯ h∨ (certificate.json). Where nothing "
                     "was tried they are a guess.")
    lines += [
        "Rule conditions are those of the pessimistic model h∧ (only observed behaviour).",
        "",
    ]
    if findings is not None:
        lines += [*findings_report(findings), ""]
    for name in sorted(h_and):
        m = h_and[name]
        cap = m.capability
        n_states = sum(len(r.condition.states) for r in m.rules)
        status = "achievable" if name in achieving else "never observed to achieve its intent"
        lines.append(f"* {name}: intent {_words(cap.intent)} — {status}; tried in {n_states} states, {len(m.rules)} rule(s)")
        t = h_tilde.get(name) if h_tilde is not None else None
        if t is not None:
            for r in t.rules:
                said = rule_words(cap, r)
                lines.append(f"    in words: {said}" if said is not None else
                             f"    in words: no short condition found for one rule ({literals(r.condition)} literals)")
        for i, r in enumerate(m.rules, 1):
            cond = condition_text(r.condition)
            if len(cond) > 160:
                cond = cond[:157] + "..."
            lines.append(f"    rule {i}: when {cond}")
            for p, eta in r.effects:
                what = eta.format(vocab) if (eta.add or eta.delete) else "nothing changes"
                lines.append(f"      with probability {p} ({float(p):.0%}): {what}")
        o = h_or.get(name)
        if o is not None and o.rules:
            lines.append(f"    optimistic bound h∨ assumes these {len(o.rules)} rule(s) also apply in every untried state")
    return "\n".join(lines) + "\n"
