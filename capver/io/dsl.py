"""The capability-model language: read and write compound models h† as text
(paper, section 2, Definition "capability model": rules ⟨cond(r), {(p_j, η_j)}⟩
with p_j ∈ (0, 1], Σ_j p_j = 1; Pr_h averages the rules that match a state).

A ``.capm`` file is a PDDL-like s-expression (grammar: ``grammars/capmodel.lark``,
shipped as ``capver.grammars``)::

    (define (capability-model toy-blocks)
      (:types block - object)
      (:objects a b - block)
      (:predicates (on ?x - block ?y - block) (clear ?x - block) (handempty))
      (:capability pick-a
        :intent (holding a)
        (:rule
          :when (and (clear a) (handempty))
          :effects (probabilistic
            2/3 (and (holding a) (not (clear a)) (not (handempty)))
            1/3 (and)))))

An ``(:atoms ...)`` section lists the ground atoms, in bit order, when they are
not every type-consistent grounding in declaration order.

A ``(:derived (NAME) FORMULA)`` names a formula that later formulas use as the
0-ary atom ``(NAME)``.  :func:`emit` prints a learned model (h∧, h∨) in this shared
form: its observed states by name, each capability's tried states once,
and each rule as ``(and (tried-C) f)`` (h∧) or ``(or (not (tried-C)) f)`` (h∨) with
f the irredundant cover that tells the rule's block from the capability's other
tried states.  Other conditions (h̃, hand-written models) are printed from their
BDD's irredundant cover, or as the negation of the cover of its complement when
that is shorter.  Probabilities are written as exact fractions, so that
``parse(emit(h), ctx=h.ctx)`` predicts exactly the same Pr_h.  :func:`parse` turns
every problem in the text into :class:`~capver.errors.DSLSyntaxError` or
:class:`~capver.errors.DSLSemanticError` naming file, line, column and what was
expected.
"""

from __future__ import annotations

import json
import re
import textwrap
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

import lark
from pysmt.fnode import FNode

from capver.engines.lifting import LiftedCapability, LiftedOccam
from capver.errors import DSLSemanticError, DSLSyntaxError, VocabularyError
from capver.io.explain import fraction_text, intent_words, plural, rule_summary, rule_words
from capver.languages import caret, describe_syntax_error, grammar_parser, read_source
from capver.languages import token as as_token
from capver.languages import tree as as_tree
from capver.logic.bdd import Cube, isop_of_interval, isop_of_states
from capver.logic.condition import Condition, ConditionKind, LogicContext
from capver.model.capability_model import CapabilityModel, CompoundModel, Rule, SuccessCase, intent_success
from capver.model.state import Capability, Effect, State
from capver.model.vocabulary import ROOT_TYPE, Atom, Literal, Predicate, Vocabulary, is_subtype, type_cycle

GRAMMAR = "capmodel.lark"
WIDTH = 88
MAX_DEPTH = 100
"""Deepest formula nesting accepted; deeper input would exhaust Python's stack in
the recursive formula and BDD builders."""

KEYWORDS = frozenset({"define", "capability-model", "probabilistic", "and", "or", "not", "true", "false"})
_PLAIN_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_\-]*")
# These characters would make two different atoms print alike (``p(a,b)``) or make
# an atom's SMT symbol collide with another's next-state symbol (``p'``).
_FORBIDDEN_IN_NAMES = re.compile(r"[\s(),']")


@dataclass(frozen=True, slots=True)
class ParsedModel:
    """What a model file denotes: its declared name and the compound model."""

    name: str
    model: CompoundModel
    filename: str = "<string>"
    init: State | None = None  # the file's (:init ...) state, when it has one

    @property
    def ctx(self) -> LogicContext:
        return self.model.ctx

    def initial_state(self, text: str = "", *, what: str = "--init") -> tuple[State, str]:
        """The state a command starts from, and where it came from: the atoms ``text``
        lists when it lists any, else the file's ``(:init ...)``, else the empty state."""
        from capver.io.literal_text import parse_state

        if text.strip():
            return parse_state(text, self.vocabulary, what=what), what
        if self.init is not None:
            return self.init, f"the (:init ...) of {self.filename}"
        return 0, f"the empty state ({self.filename} has no (:init ...); give {what})"

    @property
    def vocabulary(self) -> Vocabulary:
        return self.model.vocabulary


# =====================================================================================
# Emitter
# =====================================================================================

Sexp = str | list["Sexp"]
"""A symbolic expression to print: a token, or a parenthesised list."""


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
    if init is not None:
        out += _comment("The initial state (every atom not listed is false).", "  ")
        out += _wrapped_section(":init", [flat(_atom_sexp(a)) for a in vocab.atoms_of(init)], "  ")
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


def quote(name: str) -> str:
    """A name as it appears in a model file: bare if it is a plain identifier that is
    not a keyword, else a JSON string."""
    if _PLAIN_NAME.fullmatch(name) and name not in KEYWORDS:
        return name
    return json.dumps(name, ensure_ascii=False)


def condition_sexp(cond: Condition) -> Sexp:
    """The shortest of two printings of ``cond``: its irredundant cover, or the
    negation of the irredundant cover of its complement."""
    cover, negated = _LiteralTexts.of(cond.ctx.vocab).choose(cond)
    sexp = _cover_sexp(cond.ctx.vocab, cover)
    return ["not", sexp] if negated else sexp


def condition_text(cond: Condition) -> str:
    """``condition_sexp`` on one line."""
    return flat(condition_sexp(cond))


def flat(e: Sexp) -> str:
    if isinstance(e, str):
        return e
    return "(" + " ".join(flat(x) for x in e) + ")"


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


def _comment(text: str, indent: str) -> list[str]:
    # Atom names hold hyphens (fire-unit-at): break lines only at spaces.
    return [f"{indent}; {ln}" for ln in textwrap.wrap(text, WIDTH - len(indent) - 2, break_on_hyphens=False)]


def _param_names(k: int) -> list[str]:
    base = ["?x", "?y", "?z", "?u", "?v", "?w"]
    return base[:k] if k <= len(base) else [f"?x{i + 1}" for i in range(k)]


def _wrapped_section(keyword: str, items: Sequence[str], indent: str) -> list[str]:
    one = f"{indent}({keyword} {' '.join(items)})" if items else f"{indent}({keyword})"
    if len(one) <= WIDTH:
        return [one]
    lines = [f"{indent}({keyword}"]
    inner = indent + "  "
    cur = inner
    for it in items:
        if cur != inner and len(cur) + 1 + len(it) > WIDTH:
            lines.append(cur)
            cur = inner
        cur = cur + it if cur == inner else cur + " " + it
    lines.append(cur + ")")
    return lines


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


def default_atoms(vocab: Vocabulary) -> tuple[Atom, ...]:
    """The atom order :meth:`Vocabulary.build` chooses when no atoms are given."""
    return tuple(a for p in vocab.predicates for a in vocab.groundings(p))


def _signature(p: Predicate) -> str:
    """``(on ?x - block ?y - block)``; parameters of the root type are left untyped."""
    parts = [quote(p.name)]
    for var, t in zip(_param_names(p.arity), p.param_types, strict=True):
        parts += [var] if t == ROOT_TYPE else [var, "-", quote(t)]
    return "(" + " ".join(parts) + ")"


def _atom_sexp(a: Atom) -> Sexp:
    return [quote(a.predicate), *(quote(x) for x in a.args)]


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


def _literal_sexp(lit: Literal) -> Sexp:
    return _atom_sexp(lit.atom) if lit.positive else ["not", _atom_sexp(lit.atom)]


def _conjunction_sexp(lits: Sequence[Literal]) -> Sexp:
    if len(lits) == 1:
        return _literal_sexp(lits[0])
    return ["and", *(_literal_sexp(x) for x in lits)]


def _effect_literals(vocab: Vocabulary, eta: Effect) -> list[Literal]:
    lits = []
    for i, a in enumerate(vocab.atoms):
        bit = 1 << i
        if eta.add & bit:
            lits.append(Literal(a, True))
        elif eta.delete & bit:
            lits.append(Literal(a, False))
    return lits


def _cube_literals(vocab: Vocabulary, c: Cube) -> list[Literal]:
    return [Literal(a, bool(c.value >> i & 1)) for i, a in enumerate(vocab.atoms) if c.mask >> i & 1]


def _cover_sexp(vocab: Vocabulary, cover: Sequence[Cube]) -> Sexp:
    if not cover:
        return "false"
    if len(cover) == 1 and cover[0].mask == 0:
        return "true"
    cubes = [_conjunction_sexp(_cube_literals(vocab, c)) for c in cover]
    return cubes[0] if len(cubes) == 1 else ["or", *cubes]


class _LiteralTexts:
    """The printed literals of one vocabulary, and condition printing from them.

    A learned model has hundreds of rules whose covers hold thousands of literals; the
    generic route (an s-expression per literal, flattened again at every level of
    ``_layout``) spent more time than the covers themselves.  Here every literal is
    printed once per vocabulary, a cover's length is added up from its literals'
    lengths to choose between the two printings, and each line is joined once.  The
    text is the same as ``_layout(condition_sexp(cond), col)`` would give."""

    _cache: tuple[Vocabulary, _LiteralTexts] | None = None

    def __init__(self, vocab: Vocabulary) -> None:
        self.vocab = vocab
        self.pos = [flat(_atom_sexp(a)) for a in vocab.atoms]
        self.neg = [f"(not {t})" for t in self.pos]

    @classmethod
    def of(cls, vocab: Vocabulary) -> _LiteralTexts:
        # One vocabulary is printed many times in a row (every rule of a model).
        cached = cls._cache
        if cached is None or cached[0] is not vocab:
            cls._cache = cached = (vocab, cls(vocab))
        return cached[1]

    def literals(self, c: Cube) -> list[str]:
        out = []
        m, i = c.mask, 0
        while m:
            if m & 1:
                out.append(self.pos[i] if c.value >> i & 1 else self.neg[i])
            m >>= 1
            i += 1
        return out

    def cube_length(self, c: Cube) -> int:
        """len(flat(_conjunction_sexp(...))) of the cube."""
        total = k = 0
        m, i = c.mask, 0
        pos, neg = self.pos, self.neg
        while m:
            if m & 1:
                total += len(pos[i] if c.value >> i & 1 else neg[i])
                k += 1
            m >>= 1
            i += 1
        # "(and " + literals joined by spaces + ")", or the lone literal.
        return total if k == 1 else total + k + 5

    def cover_length(self, cover: Sequence[Cube], stop: int | None = None) -> int:
        """len(flat(_cover_sexp(cover))); once the sum passes ``stop`` the partial sum
        is returned (the caller only needs to know it is longer)."""
        if not cover:
            return len("false")
        if len(cover) == 1:
            return len("true") if cover[0].mask == 0 else self.cube_length(cover[0])
        total = len("(or ") + len(cover) - 1 + len(")")
        for c in cover:
            total += self.cube_length(c)
            if stop is not None and total > stop:
                break
        return total

    def choose(self, cond: Condition) -> tuple[Sequence[Cube], bool]:
        """The cover to print and whether it is printed negated: the negated cover of
        the complement when its text is strictly shorter, as ``condition_sexp`` says."""
        direct = cond.cover
        direct_len = self.cover_length(direct)
        if cond.kind is ConditionKind.OPTIMISTIC and self._negation_is_longer(cond.excluded, direct_len):
            # The complement's cover cannot win, so it is not computed.
            return direct, False
        # "(not " + cover + ")"
        negated_len = len("(not )") + self.cover_length(cond.complement_cover, stop=direct_len)
        return (cond.complement_cover, True) if negated_len < direct_len else (direct, False)

    def _negation_is_longer(self, excluded: frozenset[int], direct_len: int) -> bool:
        """Whether the negated printing of an optimistic condition is surely at least
        ``direct_len`` long.  Its complement is the finite set of excluded states, and an
        excluded state with no excluded neighbour (one atom flipped) can only be covered
        by its own minterm, so the minterms of such states are all in the text."""
        n = len(self.pos)
        if n < 2:
            return False
        bits = [1 << i for i in range(n)]
        # A minterm prints every atom: "(and " + n literals + ")".
        base = sum(len(x) for x in self.neg) + n + 5
        extra = [len(p) - len(q) for p, q in zip(self.pos, self.neg, strict=True)]
        total = len("(not )")
        for s in excluded:
            if any(s ^ b in excluded for b in bits):
                continue
            total += base
            m = s
            while m:
                low = m & -m
                total += extra[low.bit_length() - 1]
                m ^= low
            if total >= direct_len:
                return True
        return False

    # -- layout: the rules of ``_layout`` on literal texts --------------------------------
    def lines(self, cover: Sequence[Cube], negated: bool, col: int) -> list[str]:
        if negated:
            length = len("(not )") + self.cover_length(cover)
            if col + length <= WIDTH:
                return ["(not " + self._cover_text(cover) + ")"]
            inner = self._cover_lines(cover, col + 5)
            if len(inner) == 1:
                return ["(not " + inner[0] + ")"]
            return ["(not " + inner[0], *inner[1:-1], inner[-1] + ")"]
        return self._cover_lines(cover, col)

    def _cover_text(self, cover: Sequence[Cube]) -> str:
        if not cover:
            return "false"
        if len(cover) == 1:
            return "true" if cover[0].mask == 0 else self._cube_text(cover[0])
        return "(or " + " ".join(self._cube_text(c) for c in cover) + ")"

    def _cube_text(self, c: Cube) -> str:
        lits = self.literals(c)
        return lits[0] if len(lits) == 1 else "(and " + " ".join(lits) + ")"

    def _cover_lines(self, cover: Sequence[Cube], col: int) -> list[str]:
        if not cover or (len(cover) == 1 and cover[0].mask == 0):
            return [self._cover_text(cover)]
        if len(cover) == 1:
            return self._cube_lines(cover[0], col)
        if col + self.cover_length(cover, stop=WIDTH) <= WIDTH:
            return [self._cover_text(cover)]
        pad = " " * (col + 2)
        lines = ["(or"]
        for c in cover:
            sub = self._cube_lines(c, col + 2)
            lines.append(pad + sub[0])
            lines += sub[1:]
        lines[-1] += ")"
        return lines

    def _cube_lines(self, c: Cube, col: int) -> list[str]:
        lits = self.literals(c)
        if len(lits) == 1:
            return self._literal_lines(c, lits[0], col)
        if col + sum(map(len, lits)) + len(lits) + 5 <= WIDTH:
            return ["(and " + " ".join(lits) + ")"]
        if all(col + 5 + len(x) <= WIDTH for x in lits):
            return _filled_and(lits, col)
        pad = " " * (col + 2)
        lines = ["(and"]
        for lit in _cube_literals(self.vocab, c):
            sub = _layout(_literal_sexp(lit), col + 2)
            lines += [pad + sub[0], *sub[1:]]
        lines[-1] += ")"
        return lines

    def _literal_lines(self, c: Cube, text: str, col: int) -> list[str]:
        if col + len(text) <= WIDTH:
            return [text]
        # A literal wider than the page (very long names): the generic layout.
        return _layout(_literal_sexp(_cube_literals(self.vocab, c)[0]), col)


def _condition_lines(cond: Condition, col: int) -> list[str]:
    """``_layout(condition_sexp(cond), col)``, without building the s-expression."""
    texts = _LiteralTexts.of(cond.ctx.vocab)
    cover, negated = texts.choose(cond)
    return texts.lines(cover, negated, col)


def _filled_and(items: Sequence[str], col: int, head: str = "and") -> list[str]:
    """``(and ...)`` (or ``(head ...)``) at column ``col`` with its items filled into
    lines like a paragraph (every item fits on a line of its own)."""
    lead = len(head) + 2
    pad = " " * (col + lead)
    lines = []
    cur, end = f"({head} " + items[0], col + lead + len(items[0])
    for item in items[1:]:
        if end + 1 + len(item) > WIDTH:
            lines.append(cur)
            cur, end = pad + item, col + lead + len(item)
        else:
            cur, end = cur + " " + item, end + 1 + len(item)
    return [*lines, cur + ")"]


def _layout(e: Sexp, col: int, *, fill_or: bool = False) -> list[str]:
    """Lines printing ``e`` when its first character sits at column ``col``: on one line
    if it fits; else ``(not X)`` keeps X on its first line, the literals of an ``and``
    (with ``fill_or``, also the plain items of an ``or``: lists of named states) are
    filled into lines like a paragraph, and other lists put one argument per line."""
    one = flat(e)
    if isinstance(e, str) or col + len(one) <= WIDTH or len(e) < 2:
        return [one]
    head = flat(e[0])
    if head == "not" and len(e) == 2:
        lines = _layout(e[1], col + 5, fill_or=fill_or)
        return ["(not " + lines[0], *lines[1:-1], lines[-1] + ")"] if len(lines) > 1 else ["(not " + lines[0] + ")"]
    if head == "and" and all(col + 5 + len(flat(x)) <= WIDTH for x in e[1:]):
        return _filled_and([flat(x) for x in e[1:]], col)
    if fill_or and head == "or" and all(isinstance(x, str) and col + 4 + len(x) <= WIDTH for x in e[1:]):
        return _filled_and([flat(x) for x in e[1:]], col, "or")
    pad = " " * (col + 2)
    lines = ["(" + head]
    for x in e[1:]:
        sub = _layout(x, col + 2, fill_or=fill_or)
        lines += [pad + sub[0], *sub[1:]]
    lines[-1] += ")"
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


# -- the shared form of lattice models ---------------------------------------------------------
#
# Every rule of a learned capability has a condition over the same set of tried states
# U = Φ_c: h∧'s pcond(S) = S and h∨'s ocond(S) = ¬(U ∖ S).  Printed one by one, each
# h∨ condition repeats U's states in its cover, which made a 30-atom Blocksworld h∨
# several megabytes and most of a run's writing time (the covers of complements of
# state sets).  Here U is printed once per capability, as a derived formula
# ``(:derived (tried-NAME) ...)``, and every rule says how its block differs from the
# other tried states by the ISOP cover f of the interval [S, ¬(U ∖ S)]:
#
#     pcond(S) = (and (tried-NAME) f)        ocond(S) = (or (not (tried-NAME)) f)
#
# both exact (S ⊆ f ⊆ S ∪ ¬U).  The tried sets of different capabilities are mostly the
# same few reachable states, so a tried set is written as the list of its states by name
# ``(sK)`` (each defined once, true atoms first) when that is shorter than its cover.


@dataclass(frozen=True, slots=True)
class _SharedRules:
    """How the rules of one capability are printed in the shared form: the text of its
    tried set (a ``(tried-NAME)`` reference, or the set itself when one rule uses it),
    and each rule's f."""

    tried: frozenset[int]
    reference: Sexp
    definition: str | None  # the derived formula's name when the set is named
    body: Sexp
    fs: tuple[tuple[Cube, ...], ...]
    optimistic: bool


class _SharedForm:
    """The shared printing of a model's lattice conditions; capabilities whose rules
    are not all lattice conditions of one kind over one tried set keep the per-rule
    printing."""

    def __init__(self, model: CompoundModel) -> None:
        vocab = model.vocabulary
        self.texts = _LiteralTexts.of(vocab)
        self.n = len(vocab)
        self.taken = set(KEYWORDS) | set(vocab.predicates)
        self.state_prefix = self._state_prefix()
        self.state_names: dict[int, str] = {}
        self.caps: dict[str, _SharedRules] = {}
        for name, cm in model.items():
            plan = self._plan(cm)
            if plan is not None:
                self.caps[name] = plan

    def _state_prefix(self) -> str:
        prefix = "s"
        while any(re.fullmatch(re.escape(prefix) + r"[0-9]+", t) for t in self.taken):
            prefix += "s"
        return prefix

    def _fresh(self, base: str) -> str:
        name, k = base, 1
        while name in self.taken:
            k += 1
            name = f"{base}-{k}"
        self.taken.add(name)
        return name

    def _state_name(self, s: State) -> str:
        name = self.state_names.get(s)
        if name is None:
            name = self.state_names[s] = self._fresh(f"{self.state_prefix}{len(self.state_names) + 1}")
        return name

    def _plan(self, cm: CapabilityModel) -> _SharedRules | None:
        conds = [r.condition for r in cm.rules]
        kinds = {c.kind for c in conds}
        if len(kinds) != 1 or ConditionKind.FORMULA in kinds:
            return None
        optimistic = ConditionKind.OPTIMISTIC in kinds
        if optimistic:
            universes = {c.universe for c in conds}
            if len(universes) != 1:
                return None
            (tried,) = universes
        else:
            tried = frozenset().union(*(c.states for c in conds))
        fs: list[tuple[Cube, ...]] = []
        uses = 0
        for c in conds:
            others = tried - c.states
            f = tuple(isop_of_interval(self.n, c.states, others)) if others else (Cube(0, 0),)
            fs.append(f)
            everywhere = len(f) == 1 and f[0].mask == 0
            # pcond needs U unless f is false; ocond needs it unless f is true.
            uses += (not everywhere) if optimistic else bool(f)
        # Computed only when used: it may name states, and every named state is defined.
        body = self._set_sexp(tried) if uses else "false"
        definition = None
        reference = body
        if uses > 1:
            slug = _SLUG.sub("-", cm.capability.name.replace("~", "not-")).strip("-")
            definition = self._fresh(f"tried-{slug or 'capability'}")
            reference = f"({quote(definition)})"
        return _SharedRules(tried, reference, definition, body, tuple(fs), optimistic)

    def _set_sexp(self, states: frozenset[int]) -> Sexp:
        """The shorter text of a set of states: its ISOP cover, or its states by name."""
        if len(states) > 1 and _isolated(states, self.n):
            # No two states are neighbours, so the cover is their minterms: names win.
            return ["or", *(f"({self._state_name(s)})" for s in sorted(states))]
        cover = isop_of_states(self.n, states)
        if len(cover) > 1:
            names = len(self.state_names) + len(states)  # an upper bound on every index
            by_name = len("(or )") + len(states) * (len(self.state_prefix) + len(str(names)) + 3)
            if by_name < self.texts.cover_length(cover, stop=by_name):
                return ["or", *(f"({self._state_name(s)})" for s in sorted(states))]
        return self._cover_sexp(cover)

    def _cover_sexp(self, cover: Sequence[Cube]) -> Sexp:
        if not cover:
            return "false"
        if len(cover) == 1 and cover[0].mask == 0:
            return "true"
        cubes = [self._cube_sexp(c) for c in cover]
        return cubes[0] if len(cubes) == 1 else ["or", *cubes]

    def _cube_sexp(self, c: Cube) -> Sexp:
        lits = self.texts.literals(c)
        return lits[0] if len(lits) == 1 else ["and", *lits]

    def condition(self, plan: _SharedRules, k: int) -> Sexp:
        """Rule k's condition: (and U f) for h∧, (or (not U) f) for h∨."""
        f = plan.fs[k]
        if not f:
            return ["not", plan.reference] if plan.optimistic else "false"
        if len(f) == 1 and f[0].mask == 0:
            return "true" if plan.optimistic else plan.reference
        if plan.optimistic:
            return ["or", ["not", plan.reference], *(self._cube_sexp(c) for c in f)]
        parts = self.texts.literals(f[0]) if len(f) == 1 else [self._cover_sexp(f)]
        return ["and", plan.reference, *parts]

    def summary_lines(self, model: CompoundModel) -> list[str]:
        """Comments for the top of the file: how to read named formulas, and one line
        per capability (its rules, tried states and how often its rules achieve the
        intent), so that the file can be skimmed before its conditions are read."""
        lines = [";"]
        if self.state_names or any(p.definition for p in self.caps.values()):
            lines += _comment(
                "(:derived (NAME) F) names the condition F, and (NAME) in a later condition stands for it: "
                f"({self.state_prefix}K) is one observed state, (tried-C) the states where capability C was tried.",
                "",
            )
            lines.append(";")
        n_rules = sum(len(m.rules) for m in model.values())
        caps = "capability" if len(model) == 1 else "capabilities"
        lines += _comment(
            f"Summary: {len(model)} {caps}, {plural(n_rules, 'rule')}"
            + (f", {plural(len(self.state_names), 'named observed state')}" if self.state_names else "")
            + ". Per capability: its rules, the states where it was tried, and how many of its rules "
            "always, sometimes and never achieve its intent.",
            "",
        )
        names = [quote(cm.capability.name) for cm in model.values()]
        width = max(len("capability"), *map(len, names))
        lines.append(f";   {'capability':<{width}}  rules  tried  always  sometimes  never")
        for name, cm in zip(names, model.values(), strict=True):
            plan = self.caps.get(cm.capability.name)
            tried = "—" if plan is None else str(len(plan.tried))
            tally = _success_tally(cm)
            counts = "      —          —      —" if tally is None else "{:>6}  {:>9}  {:>5}".format(*tally)
            lines.append(f";   {name:<{width}}  {len(cm.rules):>5}  {tried:>5}  {counts}")
        return lines

    def state_lines(self) -> list[str]:
        """The definitions of the states named in tried sets, true atoms first."""
        if not self.state_names:
            return []
        ind = "  "
        lines = [""]
        lines += _comment(
            f"The {plural(len(self.state_names), 'observed state')} that the sets of tried states below "
            f"list by name: ({self.state_prefix}K) holds in exactly that state, its true atoms listed first.",
            ind,
        )
        pos, neg = self.texts.pos, self.texts.neg
        for s, name in self.state_names.items():
            lits = [pos[i] for i in range(self.n) if s >> i & 1] + [neg[i] for i in range(self.n) if not s >> i & 1]
            lines += _derived_lines(name, lits[0] if len(lits) == 1 else ["and", *lits], ind)
        return lines

    def tried_lines(self, cm: CapabilityModel) -> list[str]:
        """The definition of the capability's tried set, when it has one."""
        plan = self.caps.get(cm.capability.name)
        if plan is None or plan.definition is None:
            return []
        ind = "  "
        how = (
            "a rule below applies in every state outside this set, and in the states of it that the rest of "
            "its condition picks out"
            if plan.optimistic
            else "a rule below applies in the states of this set that the rest of its condition picks out"
        )
        lines = _comment(
            f"({plan.definition}): the {plural(len(plan.tried), 'state')} where capability "
            f"{quote(cm.capability.name)} was tried; {how}.",
            ind,
        )
        return lines + _derived_lines(plan.definition, plan.body, ind)


_SLUG = re.compile(r"[^A-Za-z0-9_\-]+")


def _success_tally(cm: CapabilityModel) -> tuple[int, int, int] | None:
    """How many rules always, sometimes and never achieve the capability's intent
    (None for a capability without an intent)."""
    if not cm.capability.intent:
        return None
    always = sometimes = never = 0
    for r in cm.rules:
        s = intent_success(cm.capability, r)
        if s.case is SuccessCase.RANGE and s.low is not None and s.high is not None:
            if s.low == 1:
                always += 1
            elif s.high == 0:
                never += 1
            else:
                sometimes += 1
    return always, sometimes, never


def _isolated(states: frozenset[int], n: int) -> bool:
    """Whether no two of the states differ in exactly one atom."""
    bits = [1 << i for i in range(n)]
    return not any(s ^ b in states for s in states for b in bits)


def _derived_lines(name: str, body: Sexp, indent: str) -> list[str]:
    """``(:derived (NAME) BODY)``, on one line when it fits, else BODY below."""
    head = f"{indent}(:derived ({quote(name)})"
    one = f"{head} {flat(body)})"
    if len(one) <= WIDTH:
        return [one]
    inner = indent + "  "
    sub = _layout(body, len(inner), fill_or=True)
    return [head, inner + sub[0], *sub[1:-1], sub[-1] + ")"] if len(sub) > 1 else [head, inner + sub[0] + ")"]


# =====================================================================================
# Parser
# =====================================================================================

_TERMINAL_WORDS = {
    "NAME": "a name",
    "STRING": 'a quoted name such as "x-1"',
    "VARIABLE": "a parameter such as ?x",
    "PROBABILITY": "a probability such as 1/3",
    "$END": "the end of the file",
}


def _parser() -> lark.Lark:
    return grammar_parser(GRAMMAR)


def parse(
    text: str,
    *,
    filename: str = "<string>",
    ctx: LogicContext | None = None,
    bdd: str = "cudd",
    ctx_source: str = "the given context",
) -> ParsedModel:
    """The model a text denotes.

    Conditions are built in ``ctx`` (whose vocabulary must then equal the file's; a
    mismatch names ``ctx_source``, e.g. "the first model (a.capm)"), or in a new
    :class:`LogicContext` over the file's vocabulary with BDD backend ``bdd``.
    Raises :class:`DSLSyntaxError` or :class:`DSLSemanticError` for bad input."""
    parser = _parser()
    try:
        tree = parser.parse(text)
    except lark.UnexpectedInput as exc:
        raise _syntax_error(parser, exc, text, filename) from None
    return _Builder(text, filename).model(tree, ctx, bdd, ctx_source)


def read(
    path: str | Path, *, ctx: LogicContext | None = None, bdd: str = "cudd", ctx_source: str = "the given context"
) -> ParsedModel:
    """Parse the model file at ``path``."""
    text = read_source(path, DSLSyntaxError)
    return parse(text, filename=str(path), ctx=ctx, bdd=bdd, ctx_source=ctx_source)


def _syntax_error(parser: lark.Lark, exc: lark.UnexpectedInput, text: str, filename: str) -> DSLSyntaxError:
    p = describe_syntax_error(parser, exc, text, _TERMINAL_WORDS)
    return DSLSyntaxError(p.message, filename=filename, line=p.line, column=p.column, context=p.context)


Where = lark.Token | lark.Tree


def _position(where: Where) -> tuple[int, int]:
    if isinstance(where, lark.Token):
        return where.line or 1, where.column or 1
    return where.meta.line, where.meta.column


def _at(where: Where) -> str:
    line, column = _position(where)
    return f"line {line}, column {column}"


def _clip(text: str, limit: int = 40) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _some(names: Iterable[str], limit: int = 12) -> str:
    items = sorted(names)
    if not items:
        return "(none declared)"
    shown = ", ".join(items[:limit])
    return shown + (f", ... ({len(items)} in all)" if len(items) > limit else "")


class _Builder:
    """Turns a parse tree into a :class:`ParsedModel`, checking what the grammar
    cannot."""

    def __init__(self, text: str, filename: str) -> None:
        self.text = text
        self.filename = filename
        self.types: dict[str, str] = {}
        self.objects: dict[str, str] = {}
        self.predicates: dict[str, Predicate] = {}
        self.vocab: Vocabulary | None = None
        self.binding: dict[str, str] | None = None  # parameter → object, inside a lifted capability
        # Derived formulas defined so far: name -> (formula, height, where defined).
        self.derived: dict[str, tuple[FNode, int, lark.Token]] = {}
        self.deepest = 0  # the deepest formula level reached, derived formulas expanded

    def error(self, where: Where, message: str) -> DSLSemanticError:
        line, column = _position(where)
        return DSLSemanticError(
            message, filename=self.filename, line=line, column=column, context=caret(self.text, line, column)
        )

    # -- names ----------------------------------------------------------------------------
    def name(self, tok: lark.Token) -> str:
        if tok.type != "STRING":
            return str(tok.value)
        try:
            value = json.loads(tok.value)
        except ValueError as exc:
            raise self.error(tok, f"malformed quoted name ({exc.args[0]}); expected a JSON string") from None
        return str(value)

    def vocab_name(self, tok: lark.Token, what: str) -> str:
        n = self.name(tok)
        if not n or _FORBIDDEN_IN_NAMES.search(n):
            raise self.error(
                tok,
                f"{what} name {n!r} is not allowed; expected a non-empty name without whitespace, "
                "parentheses, commas or quotes",
            )
        return n

    # -- whole file -----------------------------------------------------------------------
    def model(self, tree: lark.Tree, ctx: LogicContext | None, bdd: str, ctx_source: str) -> ParsedModel:
        model_name = self.name(as_token(tree.children[0]))
        sections = {c.data: c for c in tree.children[1:] if isinstance(c, lark.Tree) and c.data not in ("capability", "lifted_capability", "derived")}
        if "types" in sections:
            self.declare_types(sections["types"])
        if "objects" in sections:
            self.declare_objects(sections["objects"])
        self.declare_predicates(sections["predicates"])
        atoms = self.atom_list(sections["atoms"]) if "atoms" in sections else None
        vocab = Vocabulary.build(self.predicates.values(), self.objects, self.types, atoms)
        if ctx is None:
            ctx = LogicContext(vocab, bdd)
        elif ctx.vocab != vocab:
            section, difference = _vocabulary_difference(vocab, ctx.vocab)
            where = sections.get(section, sections["predicates"] if section == "atoms" else tree)
            raise self.error(
                where,
                f"the file's vocabulary differs from that of {ctx_source}: {difference}; "
                f"expected the vocabulary of {ctx_source}",
            )
        self.vocab = ctx.vocab
        models: list[CapabilityModel] = []
        first: dict[str, lark.Token] = {}
        for c in tree.children[1:]:
            if isinstance(c, lark.Tree) and c.data == "capability":
                tok = as_token(c.children[0])
                cname = self.name(tok)
                if not cname:
                    raise self.error(tok, "empty capability name; expected a non-empty name")
                if cname in first:
                    raise self.error(
                        tok,
                        f"duplicate capability {quote(cname)} (first declared at {_at(first[cname])}); "
                        "expected each capability to be declared once",
                    )
                first[cname] = tok
                models.append(self.capability(c, ctx, cname))
            elif isinstance(c, lark.Tree) and c.data == "lifted_capability":
                for gtok, cm in self.lifted_capability(c, ctx):
                    if cm.name in first:
                        raise self.error(
                            gtok,
                            f"this grounding is capability {quote(cm.name)}, already declared at "
                            f"{_at(first[cm.name])}; expected each capability to be declared once",
                        )
                    first[cm.name] = gtok
                    models.append(cm)
            elif isinstance(c, lark.Tree) and c.data == "derived":
                self.define(c, ctx)
        init = None
        if "init" in sections:
            init = 0
            for atom in sections["init"].children:
                init |= 1 << self.index(atom)
        return ParsedModel(model_name, CompoundModel(ctx, models), self.filename, init)

    # -- vocabulary -----------------------------------------------------------------------
    def typed_items(
        self, items: Sequence[lark.Tree], marker: str, what: str
    ) -> list[tuple[lark.Token, lark.Token | None]]:
        """Pair each name of a PDDL typed list with the token of its type (None: the
        root type)."""
        out: list[tuple[lark.Token, lark.Token | None]] = []
        pending: list[lark.Token] = []
        for it in items:
            tok = as_token(it.children[0])
            if it.data == marker:
                if not pending:
                    raise self.error(
                        it, f"'- {self.name(tok)}' gives no {what} a type; expected {what} names before '-'"
                    )
                out += [(p, tok) for p in pending]
                pending = []
            else:
                pending.append(tok)
        return out + [(p, None) for p in pending]

    def known_type(self, tok: lark.Token | None) -> str:
        if tok is None:
            return ROOT_TYPE
        t = self.name(tok)
        if t != ROOT_TYPE and t not in self.types:
            raise self.error(tok, f"unknown type {quote(t)}; expected one of: {_some([ROOT_TYPE, *self.types])}")
        return t

    def declare_types(self, section: lark.Tree) -> None:
        where: dict[str, lark.Token] = {}
        parents: list[tuple[str, lark.Token | None]] = []
        for tok, parent in self.typed_items(section.children, "item_type", "type"):
            t = self.vocab_name(tok, "type")
            if t == ROOT_TYPE:
                raise self.error(tok, f"'{ROOT_TYPE}' is the built-in root type; expected a new type name")
            if t in where:
                raise self.error(
                    tok, f"type {quote(t)} declared twice (first at {_at(where[t])}); expected a new type name"
                )
            where[t] = tok
            self.types[t] = ROOT_TYPE
            parents.append((t, parent))
        for t, parent in parents:
            self.types[t] = self.known_type(parent)
        cyclic = type_cycle(self.types)
        if cyclic is not None:
            raise self.error(where[cyclic], f"type {quote(cyclic)} is its own ancestor; expected an acyclic type hierarchy")

    def declare_objects(self, section: lark.Tree) -> None:
        where: dict[str, lark.Token] = {}
        for tok, t in self.typed_items(section.children, "item_type", "object"):
            o = self.vocab_name(tok, "object")
            if o in where:
                raise self.error(
                    tok, f"object {quote(o)} declared twice (first at {_at(where[o])}); expected a new object name"
                )
            where[o] = tok
            self.objects[o] = self.known_type(t)

    def declare_predicates(self, section: lark.Tree) -> None:
        where: dict[str, lark.Token] = {}
        for decl in map(as_tree, section.children):
            tok = as_token(decl.children[0])
            p = self.vocab_name(tok, "predicate")
            if p in where:
                raise self.error(
                    tok,
                    f"predicate {quote(p)} declared twice (first at {_at(where[p])}); expected a new predicate name",
                )
            where[p] = tok
            variables: dict[str, lark.Token] = {}
            types: list[str] = []
            pending: list[lark.Token] = []
            for it in map(as_tree, decl.children[1:]):
                vtok = as_token(it.children[0])
                if it.data == "param_type":
                    if not pending:
                        raise self.error(
                            it, f"'- {self.name(vtok)}' gives no parameter a type; expected ?parameters before '-'"
                        )
                    types += [self.known_type(vtok)] * len(pending)
                    pending = []
                    continue
                v = str(vtok.value)
                if v in variables:
                    raise self.error(
                        vtok, f"parameter {v} appears twice in {quote(p)}; expected distinct parameter names"
                    )
                variables[v] = vtok
                pending.append(vtok)
            types += [ROOT_TYPE] * len(pending)
            self.predicates[p] = Predicate(p, tuple(types))

    def ground(self, atom: lark.Tree) -> Atom:
        """The atom an ``(p a b)`` tree names, checked against the declarations."""
        ptok, args = as_token(atom.children[0]), [as_token(c) for c in atom.children[1:]]
        p = self.name(ptok)
        pred = self.predicates.get(p)
        if pred is None and p in self.derived:
            what = "takes no arguments" if args else "is a formula, allowed only in a rule's :when or another (:derived ...)"
            raise self.error(ptok, f"derived formula {quote(p)} {what}; expected an atom of a declared predicate")
        if pred is None:
            raise self.error(ptok, f"unknown predicate {quote(p)}; expected one of: {_some(self.predicates)}")
        if len(args) != pred.arity:
            raise self.error(
                ptok,
                f"predicate {quote(p)} takes {plural(pred.arity, 'argument')}, got {len(args)}; "
                f"expected {_signature(pred)}",
            )
        names = []
        for k, (tok, t) in enumerate(zip(args, pred.param_types, strict=True), 1):
            o = self.parameter(tok) if tok.type == "VARIABLE" else self.name(tok)
            ot = self.objects.get(o)
            if ot is None:
                raise self.error(tok, f"unknown object {quote(o)}; expected one of: {_some(self.objects)}")
            if not is_subtype(self.types, ot, t):
                raise self.error(
                    tok,
                    f"object {quote(o)} has type {quote(ot)}; expected an object of type {quote(t)} "
                    f"as argument {k} of {quote(p)}",
                )
            names.append(o)
        return Atom(p, tuple(names))

    def parameter(self, tok: lark.Token) -> str:
        """The object a parameter stands for under the binding being read."""
        v = str(tok.value)
        if self.binding is None:
            raise self.error(tok, f"parameter {v} outside a (:lifted-capability ...); expected an object name")
        if v not in self.binding:
            raise self.error(tok, f"unknown parameter {v}; expected one of: {_some(self.binding)}")
        return self.binding[v]

    def atom_list(self, section: lark.Tree) -> list[Atom]:
        where: dict[Atom, lark.Tree] = {}
        for t in section.children:
            a = self.ground(t)
            if a in where:
                raise self.error(t, f"atom {a} listed twice (first at {_at(where[a])}); expected each atom once")
            where[a] = t
        return list(where)

    def index(self, atom: lark.Tree) -> int:
        a = self.ground(atom)
        assert self.vocab is not None
        if a not in self.vocab:
            raise self.error(atom, f"atom {a} is not among the (:atoms ...) of this model; expected a listed atom")
        return self.vocab.index(a)

    # -- capabilities -----------------------------------------------------------------------
    def capability(self, tree: lark.Tree, ctx: LogicContext, name: str) -> CapabilityModel:
        intent: tuple[Literal, ...] = ()
        rules: list[Rule] = []
        assert self.vocab is not None
        for c in tree.children[1:]:
            if c.data == "intent":
                intent = tuple(
                    Literal(self.vocab.atoms[i], positive) for i, positive, _ in self.literals(c.children[0])
                )
            else:
                rules.append(self.rule(c, ctx))
        return CapabilityModel(Capability(name, intent), tuple(rules))

    def lifted_capability(self, tree: lark.Tree, ctx: LogicContext) -> list[tuple[lark.Token, CapabilityModel]]:
        """The ground capabilities of a ``(:lifted-capability ...)``: per binding, its
        rules with the objects substituted for the parameters (lifting over objects), named by the
        :action pattern (``drive(f1,l1,l2)``) or by the grounded :intent."""
        assert self.vocab is not None
        params: list[tuple[lark.Token, str]] = []
        pending: list[lark.Token] = []
        for it in map(as_tree, as_tree(tree.children[1]).children):
            tok = as_token(it.children[0])
            if it.data == "param_type":
                if not pending:
                    raise self.error(it, f"'- {self.name(tok)}' gives no parameter a type; expected ?parameters before '-'")
                params += [(p, self.known_type(tok)) for p in pending]
                pending = []
            elif any(str(tok.value) == str(p.value) for p, _ in params + [(q, "") for q in pending]):
                raise self.error(tok, f"parameter {tok.value} appears twice; expected distinct parameter names")
            else:
                pending.append(tok)
        params += [(p, ROOT_TYPE) for p in pending]
        head = as_tree(tree.children[2])
        bindings = as_tree(tree.children[3]).children
        out: list[tuple[lark.Token, CapabilityModel]] = []
        for g in map(as_tree, bindings):
            objs = [as_token(x) for x in g.children]
            where: Where = objs[0] if objs else g
            if len(objs) != len(params):
                raise self.error(where, f"a grounding of {plural(len(objs), 'object')}; expected one object for "
                                        f"each of the {plural(len(params), 'parameter')}")
            binding: dict[str, str] = {}
            for (ptok, ptype), otok in zip(params, objs, strict=True):
                o = self.name(otok)
                ot = self.objects.get(o)
                if ot is None:
                    raise self.error(otok, f"unknown object {quote(o)}; expected one of: {_some(self.objects)}")
                if not is_subtype(self.types, ot, ptype):
                    raise self.error(otok, f"object {quote(o)} has type {quote(ot)}; expected an object of type "
                                           f"{quote(ptype)} for {ptok.value}")
                binding[str(ptok.value)] = o
            self.binding = binding
            try:
                if head.data == "action":
                    atom = as_tree(head.children[0])
                    args = [self.parameter(a) if a.type == "VARIABLE" else self.name(a)
                            for a in map(as_token, atom.children[1:])]
                    cap = Capability(str(Atom(self.name(as_token(atom.children[0])), tuple(args))), ())
                    rules = tuple(self.rule(c, ctx) for c in tree.children[4:])
                    out.append((where if isinstance(where, lark.Token) else as_token(tree.children[0]),
                                CapabilityModel(cap, rules)))
                else:
                    intent = tuple(Literal(self.vocab.atoms[i], positive)
                                   for i, positive, _ in self.literals(as_tree(head.children[0])))
                    rules = tuple(self.rule(c, ctx) for c in tree.children[4:])
                    out.append((where if isinstance(where, lark.Token) else as_token(tree.children[0]),
                                CapabilityModel(Capability.for_intent(intent), rules)))
            finally:
                self.binding = None
        return out

    def literals(self, conj: lark.Tree) -> list[tuple[int, bool, lark.Tree]]:
        out = []
        for lit in conj.children:
            out.append((self.index(lit.children[0]), lit.data == "literal", lit))
        return out

    def rule(self, tree: lark.Tree, ctx: LogicContext) -> Rule:
        when = [c for c in tree.children if c.data == "when"]
        formula = self.formula(when[0].children[0], ctx, 1) if when else ctx.smt.mgr.TRUE()
        effects_tree = tree.children[-1]
        if effects_tree.data == "probabilistic":
            outcomes = [
                (self.probability(as_token(o.children[0])), as_tree(o.children[1]))
                for o in map(as_tree, effects_tree.children)
            ]
        else:
            outcomes = [(Fraction(1), as_tree(effects_tree.children[0]))]
        seen: dict[Effect, lark.Tree] = {}
        effects: list[tuple[Fraction, Effect]] = []
        for p, conj in outcomes:
            eta = self.effect(conj)
            if eta in seen:
                raise self.error(
                    conj,
                    f"this effect already appears in the rule at {_at(seen[eta])}; "
                    "expected distinct effects (add up their probabilities instead)",
                )
            seen[eta] = conj
            effects.append((p, eta))
        total = sum((p for p, _ in outcomes), Fraction(0))
        if total != 1:
            raise self.error(effects_tree, f"effect probabilities sum to {fraction_text(total)}; expected them to sum to 1")
        return Rule.make(Condition.formula(ctx, formula), effects)

    def probability(self, tok: lark.Token) -> Fraction:
        try:
            p = Fraction(str(tok.value))
        except (ValueError, ZeroDivisionError) as exc:
            raise self.error(
                tok, f"malformed probability {_clip(tok.value)} ({_clip(str(exc))}); expected a number such as 1/3"
            ) from None
        if not 0 < p <= 1:
            raise self.error(
                tok, f"probability {_clip(tok.value)} is outside (0, 1]; expected a number greater than 0 and at most 1"
            )
        return p

    def effect(self, conj: lark.Tree) -> Effect:
        add = delete = 0
        for i, positive, lit in self.literals(conj):
            bit = 1 << i
            if (delete if positive else add) & bit:
                assert self.vocab is not None
                raise self.error(
                    lit,
                    f"atom {self.vocab.atoms[i]} is both added and deleted by one effect; "
                    "expected at most one of (p ...) and (not (p ...))",
                )
            if positive:
                add |= bit
            else:
                delete |= bit
        return Effect(add, delete)

    def define(self, tree: lark.Tree, ctx: LogicContext) -> None:
        """A ``(:derived (NAME) FORMULA)``: NAME stands for FORMULA from here on."""
        tok = as_token(tree.children[0])
        name = self.vocab_name(tok, "derived formula")
        if name in self.predicates:
            raise self.error(
                tok, f"derived formula {quote(name)} has the name of a predicate; expected a new name"
            )
        if name in self.derived:
            raise self.error(
                tok,
                f"derived formula {quote(name)} defined twice (first at {_at(self.derived[name][2])}); "
                "expected a new name",
            )
        self.deepest = 0
        f = self.formula(tree.children[1], ctx, 1)
        self.derived[name] = (f, self.deepest, tok)

    def reference(self, tree: lark.Tree, depth: int) -> FNode | None:
        """The formula a 0-ary atom names when it is a derived formula, else None."""
        if len(tree.children) != 1 or not self.derived:
            return None
        hit = self.derived.get(self.name(as_token(tree.children[0])))
        if hit is None:
            return None
        f, height, _ = hit
        if depth - 1 + height > MAX_DEPTH:
            raise self.error(
                tree,
                f"formula nested more than {MAX_DEPTH} levels deep once this derived formula is expanded; "
                "expected a flatter formula",
            )
        self.deepest = max(self.deepest, depth - 1 + height)
        return f

    def formula(self, node: lark.Tree | lark.Token, ctx: LogicContext, depth: int) -> FNode:
        mgr = ctx.smt.mgr
        tree = as_tree(node)  # every formula is a rule of the grammar (true/false included)
        if depth > MAX_DEPTH:
            raise self.error(tree, f"formula nested more than {MAX_DEPTH} levels deep; expected a flatter formula")
        self.deepest = max(self.deepest, depth)
        kind = tree.data
        if kind == "atom":
            derived = self.reference(tree, depth)
            if derived is not None:
                return derived
            return ctx.smt.cur[self.index(tree)]
        if kind == "f_true":
            return mgr.TRUE()
        if kind == "f_false":
            return mgr.FALSE()
        args = [self.formula(c, ctx, depth + 1) for c in tree.children]
        if kind == "f_not":
            return mgr.Not(args[0])
        if kind == "f_and":
            return mgr.And(args)
        return mgr.Or(args)


# =====================================================================================
# Lifted capabilities: the Occam model h̃ lifted over objects (capver.engines.lifting)
# =====================================================================================


def emit_lifted(occ: LiftedOccam, *, name: str = "model", init: State | None = None) -> str:
    """The text of a lifted h̃: one ``(:lifted-capability ...)`` block per schema with
    the bindings its rules stand for, and the other capabilities (those without a
    schema and the groundings that kept their ground rules) as ground blocks.
    ``parse`` reads it back as ``occ.model``: each binding's rules are the lifted
    ones with the objects substituted, which is how :mod:`capver.engines.lifting`
    grounds them."""
    model = occ.model
    vocab = model.vocabulary
    _check_printable(vocab)
    out: list[str] = [*_header(name), "", f"(define (capability-model {quote(name)})"]
    out += _vocabulary_lines(vocab)
    if init is not None:
        out += _comment("The initial state (every atom not listed is false).", "  ")
        out += _wrapped_section(":init", [flat(_atom_sexp(a)) for a in vocab.atoms_of(init)], "  ")
    for lc in occ.lifted:
        out.append("")
        out += _lifted_lines(lc)
    lifted = occ.lifted_names
    for cm in model.values():
        if cm.name not in lifted:
            out.append("")
            if cm.name in occ.projected:
                out += _comment(f"Lifted rules restricted to this capability's data, ground rules elsewhere: "
                                f"{occ.kept_ground[cm.name]}.", "  ")
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
        "conditions over the parameters and the objects no grounding takes.", ind)
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


def _vocabulary_difference(mine: Vocabulary, theirs: Vocabulary) -> tuple[str, str]:
    """The section where two vocabularies first differ, and how."""
    if dict(mine.types) != dict(theirs.types):
        return "types", f"types {_describe_map(mine.types)} instead of {_describe_map(theirs.types)}"
    if dict(mine.objects) != dict(theirs.objects):
        return "objects", f"objects {_describe_map(mine.objects)} instead of {_describe_map(theirs.objects)}"
    if dict(mine.predicates) != dict(theirs.predicates):
        a = {p.name: p.param_types for p in mine.predicates.values()}
        b = {p.name: p.param_types for p in theirs.predicates.values()}
        return "predicates", f"predicates {_describe_map(a)} instead of {_describe_map(b)}"
    for k, (x, y) in enumerate(zip(mine.atoms, theirs.atoms, strict=False)):
        if x != y:
            return "atoms", f"atom {k} is {x} instead of {y}"
    return "atoms", f"{len(mine.atoms)} atoms instead of {len(theirs.atoms)}"


def _describe_map(m: object) -> str:
    text = str(dict(m))  # type: ignore[call-overload]
    return text if len(text) <= 200 else text[:200] + "...}"


__all__ = [
    "ParsedModel",
    "condition_sexp",
    "condition_text",
    "default_atoms",
    "emit",
    "emit_lifted",
    "parse",
    "quote",
    "read",
    "write",
    "write_lifted",
]
