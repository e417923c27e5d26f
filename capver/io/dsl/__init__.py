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

The package, one part of the language a module:

- :mod:`~capver.io.dsl.syntax`: reserved words, quoted names, s-expressions of atoms,
  literals, effects and covers;
- :mod:`~capver.io.dsl.layout`: lines of at most ``WIDTH`` characters;
- :mod:`~capver.io.dsl.conditions`: a rule condition from its cover or its complement's;
- :mod:`~capver.io.dsl.shared_form`: h∧/h∨ conditions over each capability's tried states;
- :mod:`~capver.io.dsl.writer`: :func:`emit`, :func:`write`;
- :mod:`~capver.io.dsl.lifted`: :func:`emit_lifted`, :func:`write_lifted` (h̃ lifted over objects);
- :mod:`~capver.io.dsl.reader`: :func:`parse`, :func:`read`, :class:`ParsedModel`, on
  :mod:`~capver.io.dsl.declarations` (the vocabulary) and :mod:`~capver.io.dsl.builder`
  (capabilities, rules, formulas).
"""

from __future__ import annotations

from capver.io.dsl.conditions import condition_sexp, condition_text
from capver.io.dsl.lifted import emit_lifted, write_lifted
from capver.io.dsl.reader import ParsedModel, parse, read
from capver.io.dsl.syntax import GRAMMAR, KEYWORDS, MAX_DEPTH, WIDTH, Sexp, default_atoms, flat, quote
from capver.io.dsl.writer import emit, write

__all__ = [
    "GRAMMAR",
    "KEYWORDS",
    "MAX_DEPTH",
    "WIDTH",
    "ParsedModel",
    "Sexp",
    "condition_sexp",
    "condition_text",
    "default_atoms",
    "emit",
    "emit_lifted",
    "flat",
    "parse",
    "quote",
    "read",
    "write",
    "write_lifted",
]
