"""A learned model in plain words (section 4.2's E2: "inspect learned models for
notable capabilities and limitations"): the one place where rules and their success
are put into words, for the DSL's rule comments, ``report.txt`` and the HTML report.
The numbers come from :func:`capver.model.capability_model.intent_success`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from fractions import Fraction

from capver.core.state import Capability
from capver.core.vocabulary import Atom, Literal
from capver.engines.findings import (
    Achievement,
    CapabilityStatus,
    Finding,
    NeverAchieved,
    Reliable,
    SideEffect,
    SuccessDrop,
    capability_statuses,
)
from capver.engines.occam import literals
from capver.logic.bdd import Cube, isop_of_interval
from capver.logic.condition import Condition, ConditionKind, LogicContext
from capver.model.capability_model import CompoundModel, IntentSuccess, Rule, SuccessCase, intent_success
from capver.model.lifted import LiftedOccam


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
        # Every combination of the atoms counts, reachable or not: a model file has no
        # reachability to count against, so the sentence says which total it means.
        count = ctx.bdd.count(cond.bdd)
        n = len(ctx.vocab)
        where = (
            "applies in no state"
            if count == 0
            else f"applies in {count} of the 2^{n} = {1 << n} combinations of the {n} atoms (reachable or not)"
        )
    success = success_words(intent_success(cap, r))
    return where if success is None else f"{where}; {success}"


WORDS_LIMIT = 240
"""Conditions longer than this in words are summarised by their size instead."""


def _cube_words(atoms: Sequence[Atom], c: Cube) -> list[str]:
    return [str(a) if (c.value >> i) & 1 else f"not {a}" for i, a in enumerate(atoms) if (c.mask >> i) & 1]


def cover_words(atoms: Sequence[Atom], cover: Sequence[Cube]) -> str:
    """A cover as "a and not b, or c" ("in no state" / "in every state" for the
    constants)."""
    if not cover:
        return "in no state"
    if len(cover) == 1 and not cover[0].mask:
        return "in every state"
    alternatives = [" and ".join(_cube_words(atoms, c)) for c in cover]
    return "either " + ", or ".join(alternatives) if len(alternatives) > 1 else alternatives[0]


def cover_prefix(atoms: Sequence[Atom], cover: Sequence[Cube], limit: int) -> tuple[str, int, int]:
    """The words of :func:`cover_words` cut after the last whole literal that fits in
    ``limit`` characters: (text, literals shown, literals in all).  Nothing is cut
    when the whole text fits."""
    whole = cover_words(atoms, cover)
    total = sum(c.mask.bit_count() for c in cover)
    if len(whole) <= limit:
        return whole, total, total
    text, shown = "either " if len(cover) > 1 else "", 0
    for k, c in enumerate(cover):
        for j, lit in enumerate(_cube_words(atoms, c)):
            piece = (", or " if k and not j else " and " if j else "") + lit
            if len(text) + len(piece) > limit:
                return text, shown, total
            text += piece
            shown += 1
    return text, shown, total  # not reached: the whole text did not fit


def condition_words(cond: Condition, limit: int = WORDS_LIMIT) -> str | None:
    """The condition as "a and not b, or c" from its irredundant cover (how the DSL
    prints it); None when that is longer than ``limit`` characters."""
    text = cover_words(cond.ctx.vocab.atoms, cond.cover)
    return text if len(text) <= limit else None


def _without_intent(cap: Capability, cond: Condition) -> list[Cube] | None:
    """The cover of a condition that implies the intent, with the intent's literals
    taken out of every cube (each cube of an irredundant cover of such a condition
    holds them); None when some cube does not."""
    pos, neg = cond.ctx.vocab.literals(cap.intent)
    lits = pos | neg
    out = []
    for c in cond.cover:
        if c.mask & lits != lits or c.value & lits != pos:
            return None
        out.append(Cube(c.mask & ~lits, c.value & ~lits))
    return out


def _probability_words(p: Fraction) -> str:
    return fraction_text(p) if p.denominator <= 4 else f"{float(p):.2f}"


def rule_words(cap: Capability, r: Rule, limit: int = WORDS_LIMIT) -> str | None:
    """When the rule applies and what it does, in one sentence ("achieves
    delivered(v1) with probability 0.93 when have-victim(v1) and ..."); None when its
    condition is longer than ``limit`` characters."""
    s = intent_success(cap, r)
    if cap.intent and s.case is SuccessCase.ALREADY_HOLDS:
        return _already_holds_words(cap, r, limit)
    when = condition_words(r.condition, limit)
    if when is None:
        return None
    when = when if when.startswith("in ") else f"when {when}"
    if cap.intent and s.case is SuccessCase.RANGE and s.low is not None and s.high is not None:
        goal = intent_words(cap.intent)
        if s.low == s.high == 0:
            # "does not achieve X in every state" would read as "not in every state".
            return f"never achieves {goal} {'in any state' if when == 'in every state' else when}"
        if s.low == s.high:
            how = "always" if s.low == 1 else f"with probability {_probability_words(s.low)}"
            return f"achieves {goal} {how} {when}"
        return (
            f"achieves {goal} with probability {_probability_words(s.low)} to "
            f"{_probability_words(s.high)} (depending on the state) {when}"
        )
    vocab = r.condition.ctx.vocab
    outcomes = "; ".join(f"{eta.format(vocab)} with probability {_probability_words(p)}" for p, eta in r.effects)
    return f"{when[0].upper()}{when[1:]}: {outcomes}"


def _already_holds_words(cap: Capability, r: Rule, limit: int) -> str | None:
    """A rule that applies only where the intent already holds: where it applies
    besides the intent (never "X already holds when X"), and whether its outcomes
    keep the intent; None when the rest of the condition is too long to read."""
    goal = intent_words(cap.intent)
    vocab = r.condition.ctx.vocab
    rest = _without_intent(cap, r.condition)
    if rest is None or any(not c.mask for c in rest):
        where = f"where {goal} already holds"
    else:
        extra = cover_words(vocab.atoms, rest)
        if len(extra) > limit:
            return None
        where = f"where {goal} already holds and {extra}"
    pos, neg = vocab.literals(cap.intent)
    undo = sum((p for p, eta in r.effects if pos & eta.delete or neg & eta.add), Fraction(0))
    if all(not (eta.add or eta.delete) for _, eta in r.effects):
        what = "nothing changes"
    elif undo == 0:
        what = f"{goal} stays true"
    else:
        what = f"undoes {goal} with probability {_probability_words(undo)}"
    return f"applies only {where}: {what}"


def _when(cond: Condition) -> str:
    """The whole condition in words (findings are in no model file, so they are never cut)."""
    said = cover_words(cond.ctx.vocab.atoms, cond.cover)
    return said if said.startswith("in ") else f"when {said}"


def finding_words(f: Finding) -> str:
    """One finding of :mod:`capver.engines.findings` as a sentence."""
    cap = f.capability
    goal = intent_words(cap.intent)
    if isinstance(f, NeverAchieved):
        where = "in the one tried state" if f.tried == 1 else f"in any of the {f.tried} tried states"
        return f"{cap.name}: never achieved {goal} {where} where it did not hold yet"
    if isinstance(f, Reliable):
        return f"{cap.name}: always achieved {goal}, in every outcome observed from {plural(f.tried, 'tried state')}"
    if isinstance(f, SuccessDrop):
        low = "never succeeds" if f.low == 0 else f"succeeds with probability at most {_probability_words(f.low)}"
        high = "it always did" if f.high == 1 else f"it did with probability at least {_probability_words(f.high)}"
        return (
            f"{cap.name}: {low} {_when(f.condition)} ({plural(f.low_states, 'tried state')}; "
            f"{high} {_when(f.high_condition)}, {plural(f.high_states, 'tried state')})"
        )
    if isinstance(f, SideEffect):
        vocab = f.condition.ctx.vocab
        parts = [
            f"makes {', '.join(map(str, vocab.atoms_of(bits)))} {value}"
            for bits, value in ((f.extra.add, "true"), (f.extra.delete, "false"))
            if bits
        ]
        what = " and ".join(parts)
        share = f.states / f.achieving if f.achieving else 0.0
        return (
            f"{cap.name}: also {what}, which {goal} does not ask for, in {f.states} of the {f.achieving} "
            f"tried states ({share:.0%}) where it achieved {goal}, {_when(f.condition)}; from states alike in "
            f"everything else that outcome changes, it achieved {goal} without it"
        )
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
    lines = [
        (
            f"{FINDINGS_TITLE} (from h∧'s observations; conditions are h̃-style short ones, a guess "
            "where nothing was tried):"
        )
    ]
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
    for line in lines[start + 1 :]:
        if not line.strip():
            break
        if line.startswith("  - ") and groups:
            groups[-1][1].append(line[4:])
        else:
            groups.append((line.strip(), []))
    return groups


def _words(intent: Sequence[object]) -> str:
    return " and ".join(str(lit) for lit in intent) or "(execute it)"


def tilde_blocks(lifted: LiftedOccam) -> dict[str, str]:
    """Where each capability's h̃ rules are written in ``h_tilde.capm``: the lifted
    capability a grounding stands in (its rules in the same order, each with the
    objects substituted) or its own ground block."""
    where = {
        lc.schema.capability(b).name: f"lifted capability {lc.schema.name}" for lc in lifted.lifted for b in lc.bindings
    }
    return {c: where.get(c, f"capability {c}") for c in lifted.model}


LABELS: dict[Achievement, str] = {
    Achievement.ACHIEVED: "observed to achieve its intent",
    Achievement.NOT_ACHIEVED: "never observed to achieve its intent (tried where it did not hold yet)",
    Achievement.ONLY_WHERE_HELD: "never observed to achieve its intent (tried only where it already held)",
    Achievement.UNTRIED: "never tried (h∧ and h∨ have no rule for it)",
    Achievement.NO_INTENT: "no intent (executed as it is)",
}
"""The label of each :class:`Achievement` in report.txt."""


def status_label(st: CapabilityStatus) -> str:
    """A capability's label: what h∧ observed and, when it never achieved its
    intent, whether h∨ still allows it."""
    label = LABELS[st.achievement]
    if st.achievement in (Achievement.NOT_ACHIEVED, Achievement.ONLY_WHERE_HELD):
        label += (
            "; h∨ allows it in states never tried"
            if st.possible_on_h_or
            else "; impossible on h∨: no outcome observed for it achieves it from any state"
        )
    return label


def headline(statuses: Mapping[str, CapabilityStatus]) -> list[str]:
    """The report's first lines: how many capabilities have each label (the counts
    of the labels below, and of the "never achieved" findings)."""
    by = {a: [st for st in statuses.values() if st.achievement is a] for a in Achievement}
    parts = [f"{len(by[Achievement.ACHIEVED])} observed to achieve their intent"]
    if by[Achievement.NOT_ACHIEVED]:
        parts.append(
            f"{len(by[Achievement.NOT_ACHIEVED])} tried where their intent did not hold yet and never "
            'observed to achieve it (the "Capabilities never achieved" below)'
        )
    if by[Achievement.ONLY_WHERE_HELD]:
        parts.append(f"{len(by[Achievement.ONLY_WHERE_HELD])} tried only where their intent already held")
    if by[Achievement.UNTRIED]:
        parts.append(f"{len(by[Achievement.UNTRIED])} never tried")
    if by[Achievement.NO_INTENT]:
        parts.append(f"{len(by[Achievement.NO_INTENT])} without an intent")
    lines = [f"{len(statuses)} capabilities assessed: {', '.join(parts)}."]
    unachieved = by[Achievement.NOT_ACHIEVED] + by[Achievement.ONLY_WHERE_HELD]
    if unachieved:
        impossible = sorted(st.capability.name for st in unachieved if not st.possible_on_h_or)
        possible = len(unachieved) - len(impossible)
        why = "no outcome observed for it achieves the intent from any state"
        if not impossible:
            said = "every one may achieve it on the optimistic model h∨ in states never tried"
        elif not possible:
            said = f"none can achieve it even on the optimistic model h∨ ({why}): {', '.join(impossible)}"
        else:
            said = (
                f"{possible} may achieve it on the optimistic model h∨ in states never tried; "
                f"{len(impossible)} cannot even on h∨ ({why}): {', '.join(impossible)}"
            )
        lines.append(f"Of the {len(unachieved)} tried but never observed to achieve their intent, {said}.")
    return lines


RULE_WORDS_LIMIT = 480
"""Characters of a rule's condition printed in report.txt (about 20 literals) before
the rest is left to the model file."""


def _h_and_rule_lines(name: str, rules: Sequence[Rule]) -> list[str]:
    """h∧'s rules of one capability as ``h_and.capm`` states them: each applies in the
    tried states of its block, named by the literals that set the block apart from the
    capability's other tried states (the file's shared form, the same ISOP)."""
    lines = []
    tried = frozenset().union(*(r.condition.states for r in rules))
    for k, r in enumerate(rules, 1):
        cond = r.condition
        vocab = cond.ctx.vocab
        others = tried - cond.states
        n = len(cond.states)
        if not others:
            lines.append(f"    rule {k}: in {'its one tried state' if n == 1 else f'all {n} tried states'}")
        else:
            cover = isop_of_interval(len(vocab), cond.states, others)
            text, shown, total = cover_prefix(vocab.atoms, cover, RULE_WORDS_LIMIT)
            line = f"    rule {k}: in {n} of the {len(tried)} tried states, those where {text}"
            if shown < total:
                line += (
                    f" … ({total - shown} of its {total} literals left out here; the whole condition is rule "
                    f"{k} of capability {name} in h_and.capm)"
                )
            lines.append(line)
        for p, eta in r.effects:
            what = eta.format(vocab) if (eta.add or eta.delete) else "nothing changes"
            lines.append(f"      with probability {p} ({float(p):.0%}): {what}")
    return lines


def capability_report(
    h_and: CompoundModel,
    h_or: CompoundModel,
    h_tilde: CompoundModel | None = None,
    findings: Sequence[Finding] | None = None,
    tilde_where: Mapping[str, str] | None = None,
) -> str:
    """Each capability with its status, conditions and outcome probabilities in
    words: when the Occam model h̃ is given, first its short conditions (when the
    capability works), then h∧'s rules (what was observed).  ``findings``
    (:func:`capver.engines.findings.run_findings`) come first, as the notable
    capabilities and limitations.  ``tilde_where`` (:func:`tilde_blocks`) names the
    block of ``h_tilde.capm`` that holds a capability's h̃ rules, for the rules too
    long to put into words."""
    statuses = capability_statuses(h_and, h_or)
    lines = headline(statuses)
    if h_tilde is not None:
        lines.append(
            '"In words" lines come from the Occam model h̃ (h_tilde.capm): the shortest conditions found '
            "that agree with every observation; z3 proves h∧ ⪯ h̃ ⪯ h∨ (certificate.json). Where nothing "
            "was tried they are a guess."
        )
    lines += [
        (
            "Rules are those of the pessimistic model h∧ (only observed behaviour): each applies in some of the states "
            "where its capability was tried, named by the literals that set them apart from its other tried states "
            "(as h_and.capm writes them)."
        ),
        "",
    ]
    if findings is not None:
        lines += [*findings_report(findings), ""]
    for name in sorted(h_and):
        m = h_and[name]
        cap = m.capability
        st = statuses[name]
        tried = "" if not m.rules else f"; tried in {plural(st.tried, 'state')}, {plural(len(m.rules), 'rule')}"
        lines.append(f"* {name}: intent {_words(cap.intent)} — {status_label(st)}{tried}")
        t = h_tilde.get(name) if h_tilde is not None else None
        if t is not None:
            where = (tilde_where or {}).get(name, f"capability {name}")
            for k, r in enumerate(t.rules, 1):
                said = rule_words(cap, r, RULE_WORDS_LIMIT)
                lines.append(
                    f"    in words: {said}"
                    if said is not None
                    else f"    in words: rule {k} of h̃ has no short condition ({literals(r.condition)} literals; "
                    f"the whole condition is rule {k} of {where} in h_tilde.capm)"
                )
        lines += _h_and_rule_lines(name, m.rules)
        o = h_or.get(name)
        if o is not None and o.rules:
            rules = "this rule also applies" if len(o.rules) == 1 else f"these {len(o.rules)} rules also apply"
            lines.append(f"    optimistic bound h∨ assumes {rules} in every untried state")
    return "\n".join(lines) + "\n"
