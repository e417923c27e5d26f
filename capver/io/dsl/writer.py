"""The writer of the capability-model language: a compound model h† (paper, section 2,
Definition "capability model") as ``.capm`` text, with a header that says how to read
it, the vocabulary, an optional ``(:init ...)`` and one ``(:capability ...)`` block per
capability; learned lattice models in the shared form (:mod:`capver.io.dsl.shared_form`).
Probabilities are exact fractions, so that reading the text back predicts exactly the
same Pr_h."""

from __future__ import annotations

import textwrap
from collections.abc import Iterable
from pathlib import Path

from capver.core.state import State
from capver.core.vocabulary import ROOT_TYPE, Vocabulary
from capver.errors import VocabularyError
from capver.io.dsl.conditions import _condition_lines
from capver.io.dsl.layout import _comment, _layout, _wrapped_section
from capver.io.dsl.shared_form import _SharedForm
from capver.io.dsl.syntax import (
    _FORBIDDEN_IN_NAMES,
    WIDTH,
    Sexp,
    _atom_sexp,
    _conjunction_sexp,
    _effect_literals,
    _signature,
    default_atoms,
    flat,
    quote,
)
from capver.io.explain import fraction_text, intent_words, plural, rule_summary, rule_words
from capver.logic.condition import ConditionKind, LogicContext
from capver.model.capability_model import CapabilityModel, CompoundModel, Rule


def emit(model: CompoundModel, *, name: str = "model", init: State | None = None, shared: bool = True) -> str:
    """The text of ``model`` in the capability-model language, with ``init`` as its
    ``(:init ...)`` state when given.

    With ``shared`` (the default) the lattice conditions of a learned model are
    printed in the shared form (each capability's tried states once, as a derived
    formula, and every rule by how it differs from them; see ``_SharedForm``);
    ``shared=False`` prints every condition on its own, from its cover or its
    complement's, in the older per-rule form (kept for ``capver bench modelfiles``)."""
    vocab = model.vocabulary
    _check_printable(vocab)
    form = _SharedForm(model) if shared and model else None
    out: list[str] = [*_header(name)]
    if form is not None:
        out += form.summary_lines(model)
    out += ["", f"(define (capability-model {quote(name)})"]
    out += _vocabulary_lines(vocab)
    out += _init_lines(vocab, init)
    if form is not None:
        out += form.state_lines()
    for cm in model.values():
        out.append("")
        if form is not None:
            out += form.tried_lines(cm)
        out += _capability_lines(model.ctx, cm, form)
    out[-1] += ")"
    return "\n".join(out) + "\n"


def write(
    model: CompoundModel, path: str | Path, *, name: str | None = None, init: State | None = None, shared: bool = True
) -> None:
    """Write ``model`` to ``path``; the model is named after the file unless ``name``
    is given."""
    p = Path(path)
    p.write_text(emit(model, name=p.stem if name is None else name, init=init, shared=shared), encoding="utf-8")


def _init_lines(vocab: Vocabulary, init: State | None) -> list[str]:
    """The ``(:init ...)`` section of ``init`` (none when it is None)."""
    if init is None:
        return []
    lines = _comment("The initial state (every atom not listed is false).", "  ")
    return lines + _wrapped_section(":init", [flat(_atom_sexp(a)) for a in vocab.atoms_of(init)], "  ")


def _check_printable(vocab: Vocabulary) -> None:
    named = [("type", t) for t in vocab.types] + [("object", o) for o in vocab.objects]
    named += [("predicate", p) for p in vocab.predicates]
    for what, n in named:
        if not n or _FORBIDDEN_IN_NAMES.search(n):
            raise VocabularyError(
                f"{what} name {n!r} cannot be written to a model file: expected a non-empty name "
                "without whitespace, parentheses, commas or quotes"
            )


def _header(name: str) -> list[str]:
    text = (
        "How to read this file: each (:capability NAME ...) block says what the agent does when "
        "it is asked to achieve the capability's :intent. In a given state, every (:rule ...) "
        "whose :when condition holds in that state applies. A rule's :effects list the possible "
        "outcomes with their probabilities: atoms written plainly become true, atoms under (not "
        "...) become false, everything else stays as it was, and (and) means nothing changes. "
        "When several rules apply, the agent's outcome is drawn from the average of their "
        "distributions; when no rule applies, the model makes no prediction."
    )
    lines = [f"; Capability model {quote(name)}, written by capver.", ";"]
    return lines + ["; " + ln for ln in textwrap.wrap(text, WIDTH - 2)]


def _grouped(pairs: Iterable[tuple[str, str]]) -> list[str]:
    """``a b - block c - object`` from (name, type) pairs, grouped by type in order of
    first appearance."""
    groups: dict[str, list[str]] = {}
    for n, t in pairs:
        groups.setdefault(t, []).append(quote(n))
    items: list[str] = []
    for t, names in groups.items():
        items += [*names, "-", quote(t)]
    return items


def _vocabulary_lines(vocab: Vocabulary) -> list[str]:
    ind = "  "
    lines: list[str] = []
    declared = [(t, p) for t, p in vocab.types.items() if t != ROOT_TYPE]
    if declared:
        lines += _wrapped_section(":types", _grouped((t, p or ROOT_TYPE) for t, p in declared), ind)
    if vocab.objects:
        lines += _wrapped_section(":objects", _grouped(vocab.objects.items()), ind)
    decls = [_signature(p) for p in vocab.predicates.values()]
    one = f"{ind}(:predicates {' '.join(decls)})" if decls else f"{ind}(:predicates)"
    if len(one) <= WIDTH:
        lines.append(one)
    else:
        lines += [f"{ind}(:predicates"] + [f"{ind}  {d}" for d in decls]
        lines[-1] += ")"
    if vocab.atoms != default_atoms(vocab):
        lines += _wrapped_section(":atoms", [flat(_atom_sexp(a)) for a in vocab.atoms], ind)
    return lines


def _capability_lines(ctx: LogicContext, cm: CapabilityModel, form: _SharedForm | None = None) -> list[str]:
    ind, ind2 = "  ", "    "
    cap = cm.capability
    plan = None if form is None else form.caps.get(cap.name)
    goal = f"asked to achieve {intent_words(cap.intent)}" if cap.intent else "no intent given"
    rules = plural(len(cm.rules), "rule") if cm.rules else "no rules, so the model makes no prediction for it"
    lines = _comment(f"Capability {quote(cap.name)}: {goal}; {rules}.", ind)
    lines.append(f"{ind}(:capability {quote(cap.name)}")
    intent = _conjunction_sexp(cap.intent)
    lines.append(f"{ind2}:intent {flat(intent)}")
    for k, r in enumerate(cm.rules, 1):
        lines += _comment(f"Rule {k}: {rule_summary(ctx, cap, r)}.", ind2)
        said = rule_words(cap, r) if r.condition.kind is ConditionKind.FORMULA else None
        if said is not None:  # a short condition (e.g. h̃'s) read as a sentence
            lines += _comment(f"In words: {said}.", ind2)
        when = None if plan is None or form is None else form.condition(plan, k - 1)
        lines += _rule_lines(ctx, r, ind2, when)
    lines[-1] += ")"
    return lines


def _rule_lines(ctx: LogicContext, r: Rule, indent: str, when: Sexp | None = None) -> list[str]:
    """The rule's text; its condition is ``when`` (the shared form's) when given."""
    inner = indent + "  "
    lines = [f"{indent}(:rule"]
    prefix = f"{inner}:when "
    cond = _condition_lines(r.condition, len(prefix)) if when is None else _layout(when, len(prefix), fill_or=True)
    lines += [prefix + cond[0], *cond[1:]]
    vocab = ctx.vocab
    # Lines are (code, comment) so closing parentheses can be appended to the code.
    body: list[list[str]] = []
    if len(r.effects) == 1:
        prefix = f"{inner}:effects "
        eff = _layout(_conjunction_sexp(_effect_literals(vocab, r.effects[0][1])), len(prefix))
        body.append([prefix + eff[0], ""])
        body += [[x, ""] for x in eff[1:]]
    else:
        body.append([f"{inner}:effects (probabilistic", ""])
        pad = inner + "  "
        for p, eta in r.effects:
            lead = f"{pad}{fraction_text(p)} "
            lits = _effect_literals(vocab, eta)
            eff = _layout(_conjunction_sexp(lits), len(lead))
            body.append([lead + eff[0], "" if lits else "nothing changes"])
            body += [[x, ""] for x in eff[1:]]
        body[-1][0] += ")"
    body[-1][0] += ")"
    lines += [code + (f"  ; {c}" if c else "") for code, c in body]
    return lines
