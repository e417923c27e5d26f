"""IC3/PDR for qualitative safety of one capability model on ABC's ``pdr`` (the
Berkeley logic synthesis and verification system, as Debian's ``yosys`` package
ships it: ``yosys-abc``), the hardware model checkers' IC3 beside z3's Spacer
(:mod:`capver.engines.verification.ic3`).  It answers the same unbounded
reachability questions (:func:`~capver.engines.verification.ic3.safety_problem`:
``A [ G φ ]``, ``E [ F φ ]``, ``E [ ψ U φ ]``) with the same results: an inductive
invariant, re-checked by plain z3 and recordable in a certificate, or a run.

**Encoding** (:mod:`capver.engines.verification.aiger`).  The transition system of
:mod:`capver.engines.verification.symbolic` (s → s′ when Pr_h(s′ | s, c) > 0 for an
allowed capability c) is a relation T(x, x′); a circuit computes functions.  So the
successor is chosen by the environment of the circuit: one input per atom proposes
x′, and a latch ``ok`` records that every proposal so far was a step
hold(x) ∧ ¬goal(x) ∧ T(x, x′):

    x  ← in                      ok ← ok ∧ hold(x) ∧ ¬goal(x) ∧ T(x, in)
    bad = ok ∧ goal(x)

A bad state is reachable in the circuit iff a run of the model reaches goal through
hold ∧ ¬goal states.  AIGER latches start at 0 and ABC writes its invariant only
for an all-0 initial state, so latch i holds x_i ⊕ s₀_i and the last latch ¬ok.

**What ABC returns.**  ``Property proved``: ``pdr -d`` writes the invariant as the
cubes it blocked over the latches (a PLA file); the invariant is their negated
conjunction with ok = 1 and x_i = latch_i ⊕ s₀_i substituted, which is inductive for
the model's relation (the circuit's invariant restricted to ok = 1 keeps initiation,
consecution and safety).  ``asserted in frame k``: the counterexample's inputs of
frames 0 … k−1 are the run's states s₁ … s_k.  Both are checked against the model
before they are returned, as Spacer's are.

Bounded queries (``G<=k``, ``F<=k``, ``U<=k``) are left to the other engines: a
k-step unrolling is bounded model checking's ground.

**Measured** (``capver bench verify --scale --engines ic3,abc``, docs/bench/ic3-vs-abc:
the learned models of five settings after 300 and 3,000 steps, 96 unbounded safety checks,
the same verdicts).  Proofs: Spacer faster on 51 of 52 (median 0.17 s against 0.46 s;
ABC's fixed cost is the circuit's construction and its process).  Runs: ABC much faster
where Spacer is slow (a 12-step Crafter counterexample 2.6 s against 62 s), but its runs
are long (63 steps where Spacer's has 6).  Peak memory about half of Spacer's.  So
``auto`` races Spacer (docs/qualitative_engines.md says why) and ABC is ``--engine abc``.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import z3

from capver.core.properties import And, Not, Property, Query, StateFormula
from capver.core.state import State
from capver.engines.verification.aiger import Aig, from_z3
from capver.engines.verification.ic3 import IC3Result, Invariant, Z3Relation, safety_problem
from capver.engines.verification.symbolic import Witness, restriction
from capver.errors import SolverError
from capver.model.capability_model import CompoundModel

__all__ = ["ABC_EXECUTABLE", "ABCEngine", "abc_available", "encode"]

ABC_EXECUTABLE = "yosys-abc"
"""The ABC binary of Debian's ``yosys`` package (``apt-get install yosys``)."""

_PROVED = "Property proved"
_ASSERTED = re.compile(r"was asserted in frame (\d+)")
_TIMED_OUT = re.compile(r"Reached timeout \(\d+ seconds\) in frame (\d+)")


def abc_available(executable: str = ABC_EXECUTABLE) -> bool:
    """Whether the ABC binary is on the PATH."""
    return shutil.which(executable) is not None


def encode(relation: Z3Relation, init: State, hold: StateFormula, goal: StateFormula) -> tuple[Aig, int]:
    """The circuit of the module docstring for the question "does a run from
    ``init`` through hold ∧ ¬goal states by ``relation`` reach goal?", and the
    number of atoms n: inputs 0…n−1 propose the successor, latches 0…n−1 hold
    x ⊕ s₀, latch n holds ¬ok, output 0 is bad."""
    atoms = relation.atoms
    n = len(atoms.cur)
    aig = Aig(inputs=n, latches=n + 1)
    literal: dict[str, int] = {}
    for i, (c, x) in enumerate(zip(atoms.cur, atoms.nxt, strict=True)):
        flip = init >> i & 1
        literal[str(c)] = aig.latch(i) ^ flip
        literal[str(x)] = aig.input(i)
        aig.set_next(i, aig.input(i) ^ flip)
    ok = aig.latch(n) ^ 1
    bad = from_z3(aig, relation.formula(goal), literal)
    keep = from_z3(aig, relation.formula(And((hold, Not(goal)))), literal)
    step = aig.and_(keep, from_z3(aig, relation.union, literal))
    aig.set_next(n, aig.and_(ok, step) ^ 1)
    aig.add_output(aig.and_(ok, bad))
    return aig, n


class ABCEngine:
    """Unbounded safety queries of one compound model by ABC's ``pdr`` (see the
    module docstring); ``capabilities`` restricts the scheduler, a property's own
    ``{caps: …}`` restriction is honoured by :meth:`check`.  ``timeout`` (seconds)
    bounds each call of ABC: :class:`SolverError` when it runs out, as when ABC is
    not installed.  With ``verify`` (the default) every invariant is re-checked by
    plain z3 before it is returned."""

    def __init__(
        self,
        model: CompoundModel,
        capabilities: Iterable[str] | None = None,
        *,
        timeout: float | None = None,
        verify: bool = True,
        executable: str = ABC_EXECUTABLE,
    ) -> None:
        self.model = model
        self.relation = Z3Relation(model, capabilities)
        self.capability_names = self.relation.capability_names
        self.timeout = timeout
        self.verify = verify
        self.executable = executable
        self._restricted: dict[frozenset[str], ABCEngine] = {}

    def restricted(self, capabilities: Iterable[str] | None) -> ABCEngine:
        """The engine of the same model whose scheduler uses only ``capabilities``."""
        return restriction(
            self,
            self.model,
            self.capability_names,
            capabilities,
            self._restricted,
            lambda m, caps: ABCEngine(m, caps, timeout=self.timeout, verify=self.verify, executable=self.executable),
        )

    def check(self, item: Property | Query, init: State) -> IC3Result:
        """Whether the unbounded safety query holds in ``init``: with the inductive
        invariant when its goal is unreachable, else with the run that reaches it.
        :class:`TypeError` for a bounded or a non-safety query."""
        problem = safety_problem(item)
        if problem.bound is not None:
            raise TypeError("ABC's pdr answers unbounded safety queries; a bounded one is for bmc, bdd or ic3")
        engine = self.restricted(problem.capabilities)
        run, invariant = engine.reach(init, problem.hold, problem.goal)
        return IC3Result(
            holds=(run is None) == problem.holds_if_unreachable,
            witness=run,
            bound=None,
            engine="abc",
            invariant=invariant,
            witness_source=None if run is None else "abc",
        )

    def reach(self, init: State, hold: StateFormula, goal: StateFormula) -> tuple[Witness | None, Invariant | None]:
        """A run from ``init`` through hold ∧ ¬goal states to a goal state and None,
        or None and the invariant that proves there is none."""
        rel = self.relation
        if rel.no_state_satisfies(goal):
            return None, Invariant.of(z3.BoolVal(True))  # nothing to search
        aig, n = encode(rel, init, hold, goal)
        cubes, frames = self._run_abc(aig)
        if cubes is not None:
            formula = self._invariant(cubes, init, n)
            return None, rel.checked_invariant("ABC", formula, init, hold, goal, None, verify=self.verify)
        assert frames is not None
        states = [init, *(_bits(v) for v in frames)]
        run = rel.run_through(init, hold, goal, None, states)
        if run is None:
            raise SolverError(f"ABC's counterexample is not a run of the model: states {states}")
        return run, None

    def _run_abc(self, aig: Aig) -> tuple[list[str] | None, list[str] | None]:
        """Either the blocked cubes of its invariant (proved) or the
        input vectors of the frames before the bad one (a counterexample)."""
        if not abc_available(self.executable):
            raise SolverError(f"ABC ({self.executable}) is not installed: apt-get install yosys, or use --engine ic3")
        with tempfile.TemporaryDirectory(prefix="capver-abc-") as tmp:
            d = Path(tmp)
            (d / "model.aig").write_bytes(aig.write())
            limit = f" -T {max(1, round(self.timeout))}" if self.timeout is not None else ""
            script = f"read_aiger model.aig; pdr -d -I inv.pla{limit}; write_cex -a cex.txt"
            try:
                done = subprocess.run(
                    [self.executable, "-c", script],
                    cwd=d,
                    capture_output=True,
                    text=True,
                    timeout=None if self.timeout is None else self.timeout + 10,
                    check=False,
                )
            except subprocess.TimeoutExpired:
                raise SolverError(f"ABC's pdr ran out of {self.timeout} s") from None
            out = done.stdout
            if _PROVED in out:
                return _cubes((d / "inv.pla").read_text(encoding="ascii")), None
            m = _ASSERTED.search(out)
            if m is None:
                ran_out = _TIMED_OUT.search(out)
                if ran_out is not None:
                    raise SolverError(f"ABC's pdr ran out of {self.timeout:g} s (at frame {ran_out.group(1)})")
                said = [ln for ln in out.splitlines() if "UNDECIDED" in ln or "rror" in ln]
                why = said[0] if said else (done.stderr.strip() or out.strip()[-200:])
                raise SolverError(f"ABC's pdr did not decide: {why.strip()}")
            frame = int(m.group(1))
            lines = _cex_lines((d / "cex.txt").read_text(encoding="ascii"))
            # Line 0: the latches' initial values; then one input vector per frame.
            return None, lines[1 : 1 + frame]

    def _invariant(self, cubes: list[str], init: State, n: int) -> Any:
        """∧ ¬cube over the atoms, with ok = 1 and x_i = latch_i ⊕ s₀_i."""
        clauses = []
        for cube in cubes:
            lits = []
            dead = False
            for i, ch in enumerate(cube):
                if ch == "-":
                    continue
                if i == n:  # the latch ¬ok: 0 under ok = 1
                    if ch == "1":
                        dead = True
                    continue
                x = self.relation.atoms.cur[i]
                value = (ch == "1") != bool(init >> i & 1)
                lits.append(x if value else z3.Not(x))
            if not dead:
                clauses.append(z3.Not(z3.And(lits)) if lits else z3.BoolVal(False))
        return z3.And(clauses) if clauses else z3.BoolVal(True)


def _cubes(pla: str) -> list[str]:
    """The cubes of ABC's invariant file, one character per latch in latch order."""
    order: list[int] | None = None
    cubes = []
    for raw in pla.splitlines():
        line = raw.strip()
        if line.startswith(".ilb"):
            order = [int(name.removeprefix("lo")) for name in line.split()[1:]]
        elif line and not line.startswith((".", "#")):
            cube = line.split()[0]
            if order is None:
                cubes.append(cube)
            else:
                full = ["-"] * (max(order) + 1)
                for k, ch in zip(order, cube, strict=True):
                    full[k] = ch
                cubes.append("".join(full))
    return cubes


def _cex_lines(text: str) -> list[str]:
    return [ln.split("#", 1)[0].strip() for ln in text.splitlines() if ln.split("#", 1)[0].strip()]


def _bits(vector: str) -> State:
    """The state whose atom i is character i of an input vector."""
    s = 0
    for i, ch in enumerate(vector):
        if ch == "1":
            s |= 1 << i
    return s
