"""The lifted form of the capability-model language: the Occam model h̃ lifted over
objects (:mod:`capver.model.lifted`) written with one ``(:lifted-capability ...)``
block per schema and the groundings its rules stand for; the reader grounds such a
block back into ground capabilities (paper, section 2's capability model, one per
grounding)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from capver.core.state import Capability, State
from capver.core.vocabulary import Literal
from capver.io.dsl.layout import _comment, _wrapped_section
from capver.io.dsl.syntax import _atom_sexp, _conjunction_sexp, flat, quote
from capver.io.dsl.writer import (
    _capability_lines,
    _check_printable,
    _header,
    _init_lines,
    _rule_lines,
    _vocabulary_lines,
)
from capver.io.explain import plural, rule_summary, rule_words
from capver.model.lifted import LiftedCapability, LiftedOccam


def emit_lifted(occ: LiftedOccam, *, name: str = "model", init: State | None = None) -> str:
    """The text of a lifted h̃: one ``(:lifted-capability ...)`` block per schema with
    the bindings its rules stand for, and the other capabilities (those without a
    schema and the groundings that kept their ground rules) as ground blocks.
    ``parse`` reads it back as ``occ.model``: each binding's rules are the lifted
    ones with the objects substituted, which is how
    :func:`capver.model.lifted.ground_capability` grounds them."""
    model = occ.model
    vocab = model.vocabulary
    _check_printable(vocab)
    out: list[str] = [*_header(name), "", f"(define (capability-model {quote(name)})"]
    out += _vocabulary_lines(vocab)
    out += _init_lines(vocab, init)
    for lc in occ.lifted:
        out.append("")
        out += _lifted_lines(lc)
    lifted = occ.lifted_names
    for cm in model.values():
        if cm.name not in lifted:
            out.append("")
            if cm.name in occ.projected:
                out += _comment(
                    f"Lifted rules restricted to this capability's data, ground rules elsewhere: "
                    f"{occ.kept_ground[cm.name]}.",
                    "  ",
                )
            elif cm.name in occ.kept_ground:
                out += _comment(f"Keeps its ground rules: {occ.kept_ground[cm.name]}.", "  ")
            out += _capability_lines(model.ctx, cm, None)
    out[-1] += ")"
    return "\n".join(out) + "\n"


def write_lifted(occ: LiftedOccam, path: str | Path, *, name: str | None = None, init: State | None = None) -> None:
    """Write a lifted h̃ to ``path`` (see :func:`emit_lifted`)."""
    p = Path(path)
    p.write_text(emit_lifted(occ, name=p.stem if name is None else name, init=init), encoding="utf-8")


def _lifted_lines(lc: LiftedCapability) -> list[str]:
    ind, ind2 = "  ", "    "
    schema = lc.schema
    variables = schema.variables
    cap = Capability(schema.name, tuple(Literal(a, pos) for a, pos in schema.intent))
    lines = _comment(
        f"Lifted capability {schema.name}: {plural(len(lc.rules), 'rule')} for "
        f"{plural(len(lc.bindings), 'grounding')}, learned from the pooled observations of every grounding; "
        "conditions over the parameters and the objects no grounding takes.",
        ind,
    )
    lines.append(f"{ind}(:lifted-capability {quote(schema.name)}")
    params: list[str] = []
    for v, t in schema.params:
        params += [v, "-", quote(t)]
    lines.append(f"{ind2}:parameters ({' '.join(params)})")
    if schema.action is not None:
        lines.append(f"{ind2}:action {flat(_atom_sexp(schema.action))}")
    else:
        lines.append(f"{ind2}:intent {flat(_conjunction_sexp(cap.intent))}")
    groundings = _wrapped_section("", ["(" + " ".join(quote(o) for o in b) + ")" for b in lc.bindings], ind2 + " " * 12)
    groundings[0] = f"{ind2}:groundings ({groundings[0].strip()[1:].strip()}"
    lines += groundings
    for k, r in enumerate(lc.rules, 1):
        lines += _comment(f"Rule {k}: {rule_summary(lc.ctx, cap, r)}.", ind2)
        said = rule_words(cap, r)
        if said is not None:
            lines += _comment(f"In words: {said}.", ind2)
        lines += _rule_lines(lc.ctx, r, ind2)
    lines[-1] += ")"
    # The lifted vocabulary names its parameters as objects; in the file they are
    # variables, written bare.
    return [_unquote_variables(ln, variables) for ln in lines]


def _unquote_variables(line: str, variables: Sequence[str]) -> str:
    for v in variables:
        line = line.replace(json.dumps(v), v)
    return line
