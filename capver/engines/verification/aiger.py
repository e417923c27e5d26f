"""And-inverter graphs and the binary AIGER format (Biere, "The AIGER And-Inverter
Graph (AIG) Format", version 20071012): the encoding in which a hardware model
checker such as ABC's ``pdr`` (:mod:`capver.engines.verification.abc_pdr`) reads the
transition system of a capability model.

A literal is ``2·v`` for variable v and ``2·v + 1`` for its negation; 0 is false and 1
is true.  Variables 1…I are the inputs, I+1…I+L the latches, and the and-gates
follow in the order they are made, so that every gate's inputs are smaller than
the gate (what the binary format requires).  Gates are hash-consed: asking twice
for the same conjunction gives the same literal, as pysmt's formula manager does
for formulas.

:func:`from_z3` translates a Boolean z3 term (the transition formulas of
:mod:`capver.engines.verification.relations`, converted by pysmt) into the graph,
given a literal for each of its constants.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import z3

from capver.errors import SolverError

__all__ = ["FALSE", "TRUE", "Aig", "from_z3"]

FALSE = 0
TRUE = 1


def _varint(x: int) -> bytes:
    """The format's unsigned LEB128 encoding of a gate's deltas."""
    out = bytearray()
    while x >= 0x80:
        out.append((x & 0x7F) | 0x80)
        x >>= 7
    out.append(x)
    return bytes(out)


class Aig:
    """A sequential and-inverter graph with ``inputs`` inputs and ``latches``
    latches, all reset to 0 (the AIGER default).  Set each latch's next-state
    literal with :meth:`set_next` and add the bad-state outputs with
    :meth:`add_output`, then :meth:`write`."""

    def __init__(self, inputs: int, latches: int) -> None:
        self.inputs = inputs
        self.latches = latches
        self._gates: list[tuple[int, int]] = []
        self._hashed: dict[tuple[int, int], int] = {}
        self._next: list[int | None] = [None] * latches
        self.outputs: list[int] = []

    def input(self, i: int) -> int:
        """The literal of input i (0-based)."""
        if not 0 <= i < self.inputs:
            raise IndexError(f"input {i} of {self.inputs}")
        return 2 * (1 + i)

    def latch(self, i: int) -> int:
        """The literal of latch i's current value (0-based)."""
        if not 0 <= i < self.latches:
            raise IndexError(f"latch {i} of {self.latches}")
        return 2 * (1 + self.inputs + i)

    @property
    def gates(self) -> int:
        return len(self._gates)

    def and_(self, a: int, b: int) -> int:
        if a == FALSE or b == FALSE or a == b ^ 1:
            return FALSE
        if a in (TRUE, b):
            return b
        if b == TRUE:
            return a
        key = (a, b) if a > b else (b, a)
        lit = self._hashed.get(key)
        if lit is None:
            lit = 2 * (1 + self.inputs + self.latches + len(self._gates))
            self._gates.append(key)
            self._hashed[key] = lit
        return lit

    def or_(self, a: int, b: int) -> int:
        return self.and_(a ^ 1, b ^ 1) ^ 1

    def all(self, lits: list[int]) -> int:
        out = TRUE
        for lit in lits:
            out = self.and_(out, lit)
        return out

    def any(self, lits: list[int]) -> int:
        return self.all([lit ^ 1 for lit in lits]) ^ 1

    def iff(self, a: int, b: int) -> int:
        return self.or_(self.and_(a, b), self.and_(a ^ 1, b ^ 1))

    def ite(self, c: int, a: int, b: int) -> int:
        return self.or_(self.and_(c, a), self.and_(c ^ 1, b))

    def set_next(self, i: int, lit: int) -> None:
        self.latch(i)  # the index check
        self._next[i] = lit

    def add_output(self, lit: int) -> None:
        self.outputs.append(lit)

    def write(self) -> bytes:
        """The binary AIGER text (``aig M I L O A``); :class:`ValueError` when a
        latch has no next-state literal."""
        missing = [i for i, n in enumerate(self._next) if n is None]
        if missing:
            raise ValueError(f"latches without a next state: {missing}")
        m = self.inputs + self.latches + len(self._gates)
        head = f"aig {m} {self.inputs} {self.latches} {len(self.outputs)} {len(self._gates)}\n"
        lines = [str(n) for n in self._next] + [str(o) for o in self.outputs]
        body = bytearray(head.encode("ascii"))
        body += "".join(f"{x}\n" for x in lines).encode("ascii")
        base = 2 * (1 + self.inputs + self.latches)
        for k, (r0, r1) in enumerate(self._gates):
            lhs = base + 2 * k
            body += _varint(lhs - r0) + _varint(r0 - r1)
        return bytes(body)


def from_z3(aig: Aig, term: Any, literal: Mapping[str, int]) -> int:
    """The literal of the Boolean z3 ``term`` in ``aig``, its constants given by
    name in ``literal``; :class:`SolverError` for an operator outside propositional
    logic or a constant without a literal.  Iterative (post-order), since the
    transition formulas of a large learned model nest deeply."""
    done: dict[int, int] = {}
    stack: list[tuple[Any, bool]] = [(term, False)]
    while stack:
        e, expanded = stack.pop()
        key = e.get_id()
        if key in done:
            continue
        if z3.is_true(e):
            done[key] = TRUE
            continue
        if z3.is_false(e):
            done[key] = FALSE
            continue
        if z3.is_const(e) and e.decl().kind() == z3.Z3_OP_UNINTERPRETED:
            name = str(e)
            if name not in literal or not z3.is_bool(e):
                raise SolverError(f"no AIG literal for {name}")
            done[key] = literal[name]
            continue
        if not expanded:
            stack.append((e, True))
            stack.extend((c, False) for c in e.children())
            continue
        args = [done[c.get_id()] for c in e.children()]
        done[key] = _gate(aig, e, args)
    return done[term.get_id()]


def _gate(aig: Aig, e: Any, args: list[int]) -> int:
    if z3.is_and(e):
        return aig.all(args)
    if z3.is_or(e):
        return aig.any(args)
    if z3.is_not(e):
        return args[0] ^ 1
    if z3.is_implies(e):
        return aig.or_(args[0] ^ 1, args[1])
    if z3.is_eq(e) and z3.is_bool(e.arg(0)) and len(args) == 2:
        return aig.iff(args[0], args[1])
    if z3.is_app_of(e, z3.Z3_OP_XOR):
        return aig.iff(args[0], args[1]) ^ 1
    if z3.is_app_of(e, z3.Z3_OP_ITE) and z3.is_bool(e):
        return aig.ite(args[0], args[1], args[2])
    if z3.is_distinct(e) and len(args) == 2:
        return aig.iff(args[0], args[1]) ^ 1
    raise SolverError(f"not a propositional operator: {e.decl()} in an AIG encoding")
