"""Printing a rule condition cond(r) of a capability model (paper, section 2) in the
capability-model language: the shorter of its irredundant cover and the negated
cover of its complement, as an s-expression or laid out in lines
(:class:`_LiteralTexts` prints each literal of a vocabulary once)."""

from __future__ import annotations

from collections.abc import Sequence

from capver.core.vocabulary import Vocabulary
from capver.io.dsl.layout import _filled_and, _layout
from capver.io.dsl.syntax import WIDTH, Sexp, _atom_sexp, _cover_sexp, _cube_literals, _literal_sexp, flat
from capver.logic.bdd import Cube
from capver.logic.condition import Condition, ConditionKind


def condition_sexp(cond: Condition) -> Sexp:
    """The shortest of two printings of ``cond``: its irredundant cover, or the
    negation of the irredundant cover of its complement."""
    cover, negated = _LiteralTexts.of(cond.ctx.vocab).choose(cond)
    sexp = _cover_sexp(cond.ctx.vocab, cover)
    return ["not", sexp] if negated else sexp


def condition_text(cond: Condition) -> str:
    """``condition_sexp`` on one line."""
    return flat(condition_sexp(cond))


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
