"""IC3/PDR for qualitative safety of one capability model, on z3's Spacer (the
IC3/PDR engine of z3's constrained-Horn-clause solver): proves that no run reaches a
bad state with an inductive invariant, or refutes it with a run.

**Queries.**  Each query this engine answers is one reachability question, "is there a
run s₀ c₁ s₁ … c_n s_n from the initial state with ``hold`` ∧ ¬``goal`` at s₀ … s_{n-1}
and ``goal`` at s_n (n ≤ k for a bound k)?":

* ``A [ G φ ]`` / ``A [ G<=k φ ]`` — hold = true, goal = ¬φ; holds when there is none;
* ``E [ F φ ]`` / ``E [ F<=k φ ]`` — hold = true, goal = φ; holds when there is one;
* ``E [ ψ U φ ]`` / ``E [ ψ U<=k φ ]`` — hold = ψ, goal = φ; holds when there is one.

The other qualitative queries (``E [ G … ]``, ``A [ F … ]``, ``A [ … U … ]``) are not
safety properties (their refutation needs a lasso or a dead end), so :meth:`IC3Engine.check`
raises :class:`TypeError` for them, as for P and R.

**Encoding.**  The transition system is the one of
:mod:`capver.engines.verification.symbolic`: s → s′ when Pr_h(s′ | s, c) > 0 for an
allowed capability c (a property's ``{caps: …}`` restriction is honoured), i.e. the
relation T_c(x, x′) of :func:`capver.engines.verification.relations.transition_formula`.  Runs stop in
dead ends, which a reachability question does not care about.  Over one relation
Inv(x) (Inv(x, n) with a step counter n for a bounded query) the Horn clauses are

    Inv(x)        ⇐ x = s₀                                   (Inv(x, 0) ⇐ x = s₀)
    Inv(x′)       ⇐ Inv(x) ∧ hold(x) ∧ ¬goal(x) ∧ ⋁_c T_c(x, x′)
                                                             (… ∧ n < k, head Inv(x′, n + 1))
    false         ⇐ Inv(x) ∧ goal(x)                          (the query)

(for ``G`` hold ∧ ¬goal is left out of the step: the query already makes every model
of Inv avoid goal).  The clauses are given to ``z3.Fixedpoint`` with
``engine="spacer"`` rather than to ``SolverFor("HORN")``: both run Spacer, but the
Fixedpoint object also hands back the derivation of a reachable goal.  z3's eager and
linear inlining of clauses is switched off: with it z3 returned, on random models, a
model of Inv that admits goal states (its model converter for the inlined clauses),
and derivations whose first facts were inlined away.

**What Spacer returns.**  ``Fixedpoint.query`` answers ``unsat`` when the clauses
have a model, i.e. no run reaches goal; ``get_answer()`` is then that model,
``∀v. Inv(v) = I(v)`` over de Bruijn variables, and I(x) — mapped back to the state
atoms (and n) through the head's arguments, a conjunction of the lemmas Spacer
learnt — is an inductive invariant: x = s₀ ⇒ I(x), I(x) ∧ hold ∧ ¬goal ∧ T(x, x′) ⇒
I(x′), I(x) ⇒ ¬goal.  When z3's preprocessing decides the clauses without Spacer (a
goal no state satisfies) the model is the least one, ∃-quantified over the clauses'
other variables, and z3's ``qe`` tactic removes the quantifiers.  :func:`check_invariant`
re-checks the three implications with plain z3 (no Spacer), and the engine does so
before it returns an invariant (``verify``); the invariant is kept as an SMT-LIB
script (:class:`Invariant`) so that a certificate can carry it
(:func:`capver.io.certificate.add_invariant`).

``sat`` means a run exists; ``get_answer()`` is then a hyper-resolution derivation of
the query whose ground conclusions Inv(s₀), Inv(s₁), … are the run's states, read
here premises first.  Each step is given the first allowed capability c with
T_c(s_i, s_{i+1}) (z3 evaluates the ground formula), and the run is checked against
the query (s₀ the initial state, hold ∧ ¬goal before the last state, goal at it,
within the bound) before it is returned (``witness_source`` "spacer").  Should the
derivation not read as such a run, bounded model checking
(:mod:`capver.engines.verification.bmc`) finds a shortest one instead
(``witness_source`` "bmc"; for the 745 runs of a sample of random models and
queries it was never needed).  Spacer's
run is a run, not necessarily a shortest one: ``shortest=True`` asks BMC for a
shortest one within its length.

**Bounded queries.**  ``A [ G<=k φ ]``, ``E [ F<=k φ ]`` and ``E [ ψ U<=k φ ]`` go
through an integer step counter (above).  They are here for completeness and for the
cross-checks: a bound k makes the question a k-step unrolling, which is what bounded
model checking (:mod:`capver.engines.verification.bmc`) and the BDD engine's onion
rings do directly, without having to find an invariant that also constrains n.

**Measured** (scripts/bench_ic3.py, 2 cores shared with other jobs; the engine built
from the model file included, the file's reading not). Properties that hold on learned
models had one-lemma invariants (an atom no reachable effect sets, or a 2-literal
clause), found in 0.1–1.2 s whatever the model's size, where the BDD engine must first
reach every reachable state: First Responders h∨ (shipped run, 4,608 reachable states)
"never both dying" 0.08 s, BDD 0.09 s; Crafter h∨ after 3,000 steps (76 atoms, 15
capabilities, 275 rules) ``A [ G !has_diamond ]`` 1.1 s, BDD over 9 minutes (stopped);
Blocksworld h∨ below, "never both handempty and handfull" 1.2 s, BDD over 9 minutes
(stopped; its full reachable set took over 11). Runs are Spacer's weak side:
Blocksworld h∨ after 3,000 LAO* steps (30 atoms, 60 capabilities, 551 rules), "never
both held" fails by a 6-step run, Spacer 28 s, BMC first (``bmc_depth`` 10) 2.9 s, BDD
forward 1.2 s; Crafter h∧ after 3,000 steps, ``A [ G !dead ]`` fails by a 14-step run,
Spacer 105 s, BDD 13 s (310 reachable states); Crafter h∨, 1 step, Spacer 0.6 s, BDD
7.4 s (building the condition BDDs). So: IC3 for proofs, BMC or the BDD engine's
forward rings for runs.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import Any

import z3
from pysmt.fnode import FNode
from pysmt.solvers.z3 import Z3Converter
from pysmt.typing import INT

from capver.core.properties import (
    And,
    Const,
    Eventually,
    ExistsPath,
    ForallPath,
    Globally,
    Not,
    Property,
    Query,
    StateFormula,
    Until,
    holds,
)
from capver.core.state import State
from capver.engines.verification.bmc import BoundedModelChecker, formula_smt
from capver.engines.verification.relations import transition_formula
from capver.engines.verification.symbolic import (
    QualitativeResult,
    Witness,
    qualitative_query,
    restriction,
    selected_capabilities,
)
from capver.errors import SolverError
from capver.logic.condition import LogicContext
from capver.model.capability_model import CompoundModel

__all__ = [
    "STEPS",
    "IC3Engine",
    "IC3Result",
    "Invariant",
    "SafetyProblem",
    "Z3Atoms",
    "Z3Relation",
    "check_invariant",
    "check_property_invariant",
    "invariant_conditions",
    "invariant_failures",
    "safety_problem",
]

STEPS = "#steps"
"""The step counter of a bounded query's invariant (an SMT-LIB Int; ``#`` is in no
atom's name)."""


# =====================================================================================
# The question and its answer
# =====================================================================================


@dataclass(frozen=True, slots=True)
class SafetyProblem:
    """Is some state where ``goal`` holds reachable from the initial state through
    states where ``hold`` holds and ``goal`` does not, within ``bound`` steps (None:
    any number), with only ``capabilities`` (None: all)?  ``holds_if_unreachable``:
    the query holds when the answer is no (A G), else when it is yes (E F, E U)."""

    hold: StateFormula
    goal: StateFormula
    bound: int | None
    capabilities: frozenset[str] | None
    holds_if_unreachable: bool

    @property
    def safe(self) -> StateFormula:
        """φ of the invariant's safety condition Inv ⇒ φ: ¬goal."""
        return Not(self.goal)


def safety_problem(item: Property | Query) -> SafetyProblem:
    """The reachability question of ``A [ G φ ]``, ``E [ F φ ]`` or ``E [ ψ U φ ]``
    (bounded or not); :class:`TypeError` for any other query."""
    query, caps = qualitative_query(item)
    path = query.path
    if isinstance(query, ForallPath) and isinstance(path, Globally):
        return SafetyProblem(Const(True), Not(path.invariant), path.bound, caps, True)
    if isinstance(query, ExistsPath) and isinstance(path, Eventually):
        return SafetyProblem(Const(True), path.goal, path.bound, caps, False)
    if isinstance(query, ExistsPath) and isinstance(path, Until):
        return SafetyProblem(path.hold, path.goal, path.bound, caps, False)
    raise TypeError(f"not a safety query (A [ G φ ], E [ F φ ], E [ ψ U φ ]): {query!r}")


@dataclass(frozen=True, slots=True)
class Invariant:
    """An inductive invariant I over the state atoms (and, for a bounded query, the
    step counter :data:`STEPS`), as an SMT-LIB 2 script: one ``declare-fun`` per
    symbol it mentions and one ``assert`` of I.  ``nodes``: distinct sub-terms of I
    (its DAG); ``lemmas``: its top-level conjuncts; ``literals``: the occurrences of
    atoms and counter comparisons in I written as a tree.  The invariant ``true``
    (a goal no state satisfies) has no lemma and no literal."""

    smtlib: str
    nodes: int
    lemmas: int
    literals: int

    @staticmethod
    def of(formula: Any) -> Invariant:
        """The invariant of a z3 formula."""
        solver = z3.Solver()
        solver.add(formula)
        return Invariant.parse(solver.sexpr())

    @staticmethod
    def parse(text: str) -> Invariant:
        """The invariant of an SMT-LIB script (e.g. from a certificate), kept as it is,
        its sizes counted on the formula z3 reads from it (so that the sizes of a
        script read back are the ones written: z3 prints -1 as (- 1), two terms);
        :class:`ValueError` when it is not one formula."""
        formula = _parse(text)
        nodes, literals = _size(formula)
        lemmas = 0 if z3.is_true(formula) else formula.num_args() if z3.is_and(formula) else 1
        return Invariant(text, nodes, lemmas, literals)

    def expr(self) -> Any:
        """I as a z3 formula (over z3 constants named as the atoms: the names
        ``ctx.smt.cur`` has, so they are the constants the transition formulas use)."""
        return _parse(self.smtlib)

    def formula(self, ctx: LogicContext) -> FNode:
        """I as a pysmt formula of ``ctx`` (over ``ctx.smt.cur``, and a pysmt Int
        symbol :data:`STEPS` for a bounded query's invariant)."""
        f = self.expr()
        if any(str(v) == STEPS for v in _constants(f)):
            ctx.smt.mgr.Symbol(STEPS, INT)  # declared, so that the converter finds it
        return Z3Converter(ctx.smt.env, z3.main_ctx()).back(f)


@dataclass(frozen=True, slots=True)
class IC3Result(QualitativeResult):
    """A :class:`QualitativeResult` of the IC3 engine (``engine`` = "ic3"), with the
    inductive invariant that proves the goal unreachable when it is (a holding
    ``A [ G … ]``, a failing ``E [ F … ]`` / ``E [ … U … ]``), else None.
    ``witness_source`` says where the run came from: "spacer" (read off Spacer's
    derivation) or "bmc" (bounded model checking, see the module docstring)."""

    invariant: Invariant | None = None
    witness_source: str | None = None


def _parse(text: str) -> Any:
    try:
        assertions = z3.parse_smt2_string(text)
    except z3.Z3Exception as e:
        raise ValueError(f"not an SMT-LIB script: {e}") from None
    if len(assertions) != 1:
        raise ValueError(f"expected one assertion (the invariant), got {len(assertions)}")
    return assertions[0]


def _size(formula: Any) -> tuple[int, int]:
    """(distinct sub-terms, literal occurrences of the formula written as a tree),
    iteratively: Spacer's invariants can be deep conjunctions."""
    literals: dict[int, int] = {}
    stack: list[tuple[Any, bool]] = [(formula, False)]
    while stack:
        e, expanded = stack.pop()
        key = e.get_id()
        if key in literals:
            continue
        if not _compound(e):
            literals[key] = 0 if z3.is_true(e) or z3.is_false(e) else 1
        elif expanded:  # every child was popped, so counted, before this entry
            literals[key] = sum(literals[c.get_id()] for c in e.children())
        else:
            stack.append((e, True))
            stack.extend((c, False) for c in e.children())
    nodes: set[int] = set()
    todo = [formula]
    while todo:
        e = todo.pop()
        if e.get_id() not in nodes:
            nodes.add(e.get_id())
            todo.extend(e.children())
    return len(nodes), literals[formula.get_id()]


def _compound(e: Any) -> bool:
    """A Boolean connective (its children are counted), not a literal."""
    return bool(
        z3.is_and(e)
        or z3.is_or(e)
        or z3.is_not(e)
        or z3.is_implies(e)
        or (z3.is_eq(e) and z3.is_bool(e.arg(0)))
        or z3.is_app_of(e, z3.Z3_OP_ITE)
        or z3.is_app_of(e, z3.Z3_OP_XOR)
    )


# =====================================================================================
# The re-check without Spacer
# =====================================================================================


def check_invariant(
    model: CompoundModel,
    init: State,
    phi: StateFormula,
    invariant: Invariant,
    *,
    hold: StateFormula | None = None,
    capabilities: Iterable[str] | None = None,
    bound: int | None = None,
) -> bool:
    """Whether ``invariant`` proves that every state reachable from ``init`` (through
    ``hold`` ∧ φ states, within ``bound`` steps, by ``capabilities``) satisfies φ —
    three validity checks by plain z3, no Spacer:

    * initiation: x = init ⇒ I(x)                      (bounded: I(x, 0))
    * consecution: I(x) ∧ hold(x) ∧ φ(x) ∧ T(x, x′) ⇒ I(x′)   (bounded: n < k, I(x′, n + 1))
    * safety: I(x) ⇒ φ(x)

    with T = ⋁_c T_c over the allowed capabilities.  False also when the script is
    not one formula or mentions a symbol that is neither an atom of the model nor
    the counter."""
    return not invariant_failures(model, init, phi, invariant, hold=hold, capabilities=capabilities, bound=bound)


def invariant_failures(
    model: CompoundModel,
    init: State,
    phi: StateFormula,
    invariant: Invariant,
    *,
    hold: StateFormula | None = None,
    capabilities: Iterable[str] | None = None,
    bound: int | None = None,
) -> list[str]:
    """The conditions of :func:`check_invariant` that fail ("initiation",
    "consecution", "safety", or why the script is not an invariant over the
    model's atoms); empty when the invariant proves φ."""
    try:
        inv = invariant.expr()
    except ValueError as e:
        return [str(e)]
    if not z3.is_bool(inv):
        return ["the assertion is not a Boolean formula"]
    rel = Z3Relation(model, capabilities)
    atoms = {str(v) for v in rel.atoms.cur}
    steps = z3.Int(STEPS)
    for v in _constants(inv):
        if not (str(v) in atoms and z3.is_bool(v)) and not v.eq(steps):
            return [f"the symbol {v} is not an atom of the model"]
    return invariant_conditions(rel.atoms, rel.union, init, phi, hold, bound, inv)


def invariant_conditions(
    checker: Z3Atoms,
    trans: Any,
    init: State,
    phi: StateFormula,
    hold: StateFormula | None,
    bound: int | None,
    inv: Any,
) -> list[str]:
    """The failing conditions among initiation, consecution and safety of ``inv``."""
    steps = z3.Int(STEPS)
    x0 = z3.And([v if init >> i & 1 else z3.Not(v) for i, v in enumerate(checker.cur)])
    good = checker.convert(formula_smt(checker.ctx, phi))
    keep = good if hold is None else z3.And(good, checker.convert(formula_smt(checker.ctx, hold)))
    primed = list(zip(checker.cur, checker.nxt, strict=True))
    if bound is None:
        start = inv
        step = z3.Implies(z3.And(inv, keep, trans), z3.substitute(inv, *primed))
    else:
        start = z3.substitute(inv, (steps, z3.IntVal(0)))
        step = z3.Implies(z3.And(inv, keep, steps < bound, trans), z3.substitute(inv, *primed, (steps, steps + 1)))
    conditions = {"initiation": z3.Implies(x0, start), "consecution": step, "safety": z3.Implies(inv, good)}
    return [name for name, f in conditions.items() if not _valid(f)]


def check_property_invariant(model: CompoundModel, init: State, item: Property | Query, invariant: Invariant) -> bool:
    """:func:`check_invariant` for the reachability question of a safety query: the
    invariant proves its goal unreachable."""
    p = safety_problem(item)
    return check_invariant(model, init, p.safe, invariant, hold=p.hold, capabilities=p.capabilities, bound=p.bound)


class Z3Atoms:
    """The model's state symbols as z3 constants: ``cur`` the atoms of a state,
    ``nxt`` those of its successor (the names of ``ctx.smt.cur`` / ``ctx.smt.nxt``)."""

    def __init__(self, ctx: LogicContext) -> None:
        self.ctx = ctx
        self._converter = Z3Converter(ctx.smt.env, z3.main_ctx())
        self.convert: Callable[[FNode], Any] = self._converter.convert
        self.cur = [self.convert(v) for v in ctx.smt.cur]
        self.nxt = [self.convert(v) for v in ctx.smt.nxt]


class Z3Relation:
    """One model's transition relation T = ⋁_c T_c over the allowed ``capabilities``
    (None: all) as z3 terms, built once: what both IC3 engines encode (Spacer's Horn
    clauses here, ABC's circuit in :mod:`capver.engines.verification.abc_pdr`) and
    what checks their answers before they are returned."""

    def __init__(self, model: CompoundModel, capabilities: Iterable[str] | None = None) -> None:
        self.model = model
        self.capability_names = selected_capabilities(model, capabilities)
        self.atoms = Z3Atoms(model.ctx)
        self.by_capability = {
            c: self.atoms.convert(transition_formula(model.ctx, model[c])) for c in self.capability_names
        }
        self.union = z3.Or([self.by_capability[c] for c in self.capability_names])

    def formula(self, f: StateFormula) -> Any:
        """A state formula as a z3 term over ``atoms.cur``."""
        return self.atoms.convert(formula_smt(self.model.ctx, f))

    def no_state_satisfies(self, goal: StateFormula) -> bool:
        """Whether ``goal`` is unsatisfiable: then no search is needed, and a
        fixpoint engine would answer with the reachable set itself (``A [ G true ]``)."""
        return bool(z3.Solver().check(self.formula(goal)) == z3.unsat)

    def checked_invariant(
        self,
        solver: str,
        formula: Any,
        init: State,
        hold: StateFormula,
        goal: StateFormula,
        bound: int | None,
        *,
        verify: bool = True,
    ) -> Invariant:
        """A solver's invariant ``formula`` for the question "does a run through
        hold ∧ ¬goal states reach goal?", re-checked with ``verify`` by plain z3
        (the three conditions of :func:`check_invariant`): a :class:`SolverError`
        naming ``solver`` when one fails."""
        invariant = Invariant.of(formula)
        if verify:
            failed = invariant_conditions(
                self.atoms, self.union, init, Not(goal), None if hold == Const(True) else hold, bound, invariant.expr()
            )
            if failed:
                raise SolverError(f"{solver}'s invariant fails {', '.join(failed)}: {invariant.smtlib}")
        return invariant

    def run_through(
        self, init: State, hold: StateFormula, goal: StateFormula, bound: int | None, states: Sequence[State]
    ) -> Witness | None:
        """The run through ``states`` that answers the reachability question
        (``init`` first, hold ∧ ¬goal before the last state, goal at it, within
        ``bound``), each step given the first allowed capability whose relation
        moves; None when the states are not such a run.  How a solver's answer
        (Spacer's derivation, ABC's counterexample) is checked before it is returned."""
        vocab = self.model.vocabulary
        if not states or states[0] != init or not holds(goal, states[-1], vocab):
            return None
        if bound is not None and len(states) - 1 > bound:
            return None
        if any(not holds(hold, s, vocab) or holds(goal, s, vocab) for s in states[:-1]):
            return None
        steps = []
        for s, t in pairwise(states):
            c = next((c for c in self.capability_names if self._moves(c, s, t)), None)
            if c is None:
                return None
            steps.append((c, t))
        return Witness(init, tuple(steps))

    def _moves(self, c: str, s: State, t: State) -> bool:
        """T_c(s, t): Pr_h(t | s, c) > 0, by z3's simplifier on the ground formula
        (``CapabilityModel.prob`` would first build every condition's BDD, minutes
        on a learned Crafter h∨)."""
        values = [(v, z3.BoolVal(bool(s >> i & 1))) for i, v in enumerate(self.atoms.cur)]
        values += [(v, z3.BoolVal(bool(t >> i & 1))) for i, v in enumerate(self.atoms.nxt)]
        return bool(z3.is_true(z3.simplify(z3.substitute(self.by_capability[c], *values))))


def _valid(f: Any) -> bool:
    solver = z3.Solver()
    solver.add(z3.Not(f))
    res = solver.check()
    if res == z3.unknown:  # pragma: no cover - propositional logic and linear integer arithmetic
        raise SolverError(f"z3 returned unknown: {solver.reason_unknown()}")
    return bool(res == z3.unsat)


def _constants(f: Any) -> list[Any]:
    """The uninterpreted constants of a z3 formula."""
    seen: set[int] = set()
    out = []
    stack = [f]
    while stack:
        e = stack.pop()
        if e.get_id() in seen:
            continue
        seen.add(e.get_id())
        if z3.is_const(e) and e.decl().kind() == z3.Z3_OP_UNINTERPRETED:
            out.append(e)
        elif z3.is_app(e):
            stack.extend(e.children())
    return out


# =====================================================================================
# The engine
# =====================================================================================


class IC3Engine:
    """Safety queries of one compound model by Spacer (see the module docstring);
    ``capabilities`` restricts the scheduler, and a property's own ``{caps: …}``
    restriction is honoured by :meth:`check`.  ``timeout`` (seconds) bounds each
    Spacer query: :class:`SolverError` when it runs out.  With ``verify`` (the
    default) every invariant is re-checked by plain z3 before it is returned
    (:func:`check_invariant`'s three conditions; a :class:`SolverError` if one fails).
    ``bmc_depth`` > 0 first looks for a run of at most that many steps by bounded
    model checking, and asks Spacer only when there is none: Spacer is slow to find
    runs on learned h∨ models (see the module docstring), BMC fast on shallow ones."""

    def __init__(
        self,
        model: CompoundModel,
        capabilities: Iterable[str] | None = None,
        *,
        timeout: float | None = None,
        verify: bool = True,
        bmc_depth: int = 0,
    ) -> None:
        self.model = model
        self.ctx = model.ctx
        # T_c as z3 terms once: every query re-uses them.
        self.relation = Z3Relation(model, capabilities)
        self.capability_names = self.relation.capability_names
        self.timeout = timeout
        self.verify = verify
        self.bmc_depth = bmc_depth
        self._restricted: dict[frozenset[str], IC3Engine] = {}
        self._bmc: BoundedModelChecker | None = None

    def restricted(self, capabilities: Iterable[str] | None) -> IC3Engine:
        """The engine of the same model whose scheduler uses only ``capabilities``."""
        return restriction(
            self,
            self.model,
            self.capability_names,
            capabilities,
            self._restricted,
            lambda m, caps: IC3Engine(m, caps, timeout=self.timeout, verify=self.verify, bmc_depth=self.bmc_depth),
        )

    def check(self, item: Property | Query, init: State, *, shortest: bool = False) -> IC3Result:
        """Whether the safety query holds in ``init``: with the inductive invariant
        when its goal is unreachable, else with the run that reaches it (the witness
        of E F / E U, the counterexample of A G; a shortest one with ``shortest``)."""
        problem = safety_problem(item)
        engine = self.restricted(problem.capabilities)
        run, invariant, source = engine._reach(init, problem.hold, problem.goal, problem.bound, shortest)
        return IC3Result(
            holds=(run is None) == problem.holds_if_unreachable,
            witness=run,
            bound=problem.bound,
            engine="ic3",
            invariant=invariant,
            witness_source=source,
        )

    # -- the Horn clauses -------------------------------------------------------------
    def reach(
        self, init: State, hold: StateFormula, goal: StateFormula, bound: int | None = None, *, shortest: bool = False
    ) -> tuple[Witness | None, Invariant | None]:
        """A run from ``init`` through hold ∧ ¬goal states to a goal state within
        ``bound`` steps and None, or None and the invariant that proves there is none."""
        run, invariant, _ = self._reach(init, hold, goal, bound, shortest)
        return run, invariant

    def _reach(
        self, init: State, hold: StateFormula, goal: StateFormula, bound: int | None, shortest: bool
    ) -> tuple[Witness | None, Invariant | None, str | None]:
        if self.bmc_depth > 0:
            shallow = self._search(init, hold, goal, self.bmc_depth if bound is None else min(bound, self.bmc_depth))
            if shallow is not None:
                return shallow, None, "bmc"
        rel = self.relation
        cur, nxt = rel.atoms.cur, rel.atoms.nxt
        if rel.no_state_satisfies(goal):
            # No state is a goal (A [ G true ], say): nothing to search, and Spacer's
            # answer would be the least model of the clauses, the reachable set
            # itself (_quantifier_free: a 15 GB elimination on a learned Crafter h∨).
            return None, Invariant.of(z3.BoolVal(True)), None
        counted = bound is not None
        sorts = [z3.BoolSort()] * len(cur) + ([z3.IntSort()] if counted else [])
        inv = z3.Function("Inv", *sorts, z3.BoolSort())
        n = z3.Int(STEPS)
        here: list[Any] = [*cur, n] if counted else list(cur)
        there: list[Any] = [*nxt, n + 1] if counted else list(nxt)
        fp = z3.Fixedpoint()
        fp.set(engine="spacer")
        # z3's inlining of clauses before Spacer runs can give back a model of Inv that
        # is not one of the original clauses (found on random models: an "invariant"
        # that admits goal states), and a derivation whose first facts were inlined
        # away; without it both are about the clauses written here.
        fp.set("xform.inline_eager", False)
        fp.set("xform.inline_linear", False)
        if self.timeout is not None:
            fp.set(timeout=max(1, int(self.timeout * 1000)))
        fp.register_relation(inv)
        fp.declare_var(*cur, *nxt, *([n] if counted else []))
        x0 = z3.And([v if init >> i & 1 else z3.Not(v) for i, v in enumerate(cur)])
        fp.rule(inv(*cur, z3.IntVal(0)) if counted else inv(*cur), x0)
        guard: list[Any] = []
        if hold != Const(True):
            guard.append(rel.formula(And((hold, Not(goal)))))
        if counted:
            guard.append(n < bound)
        # One step clause over T = ⋁_c T_c, not one per capability: measured on the
        # learned h∨ of Blocksworld (3,000 LAO* steps) Spacer found the 6-step run of
        # "both held" in 34 s with one clause and none in 600 s with 60 clauses.
        fp.rule(inv(*there), [inv(*here), *guard, rel.union])
        try:
            res = fp.query(z3.And(inv(*here), rel.formula(goal)))
        except z3.Z3Exception as e:  # a timeout cancels the query
            raise SolverError(f"Spacer: {e}") from None
        if res == z3.unsat:
            # A failing re-check would be a z3 bug, as the inlining one above.
            answer = _quantifier_free(_interpretation(fp.get_answer(), inv, here))
            return None, rel.checked_invariant("Spacer", answer, init, hold, goal, bound, verify=self.verify), None
        if res != z3.sat:
            raise SolverError(f"Spacer returned unknown: {fp.reason_unknown()}")
        states = _derived_states(fp.get_answer(), inv, len(cur))
        if states and states[0] != init:
            # z3 inlines the fact Inv(s₀) into the step clauses: the first derived
            # fact is then s₁ (the run is validated below either way).
            states.insert(0, init)
        run = rel.run_through(init, hold, goal, bound, states)
        source = "spacer"
        if run is not None and shortest:
            run, source = self._search(init, hold, goal, len(run)), "bmc"
        elif run is None:
            source = "bmc"
            # Spacer's derivation does not read as a run of the model: BMC finds a
            # shortest run (one exists; it repeats no state, so the number of states
            # bounds its length).
            run = self._search(init, hold, goal, bound if bound is not None else 1 << len(cur))
            if run is None:  # pragma: no cover - Spacer found a run, so BMC does
                raise SolverError("Spacer found a run that bounded model checking does not")
        return run, None, source

    def _search(self, init: State, hold: StateFormula, goal: StateFormula, k: int) -> Witness | None:
        if self._bmc is None:
            self._bmc = BoundedModelChecker(self.model, self.capability_names)
        bmc = self._bmc
        return bmc.search(init, And((hold, Not(goal))), lambda j: bmc.state_formula(goal, j), k)


def _interpretation(answer: Any, inv: Any, args: Sequence[Any]) -> Any:
    """I(args) from Spacer's model of the clauses, ``∀v. Inv(v) = I(v)`` (a
    conjunction of such when the model interprets more relations)."""
    todo = [answer]
    while todo:
        f = todo.pop()
        if z3.is_quantifier(f):
            todo.append(f.body())
            continue
        if z3.is_and(f):
            todo.extend(f.children())
            continue
        if z3.is_eq(f) and z3.is_app(f.arg(0)) and f.arg(0).decl().eq(inv):
            head, body = f.arg(0), f.arg(1)
        elif z3.is_app(f) and f.decl().eq(inv):  # Inv everywhere true
            head, body = f, z3.BoolVal(True)
        elif z3.is_not(f) and z3.is_app(f.arg(0)) and f.arg(0).decl().eq(inv):  # Inv empty
            head, body = f.arg(0), z3.BoolVal(False)
        else:
            continue
        # The head's arguments are the bound variables, Var(i) in de Bruijn order:
        # map each index to the symbol at its argument position.
        values: list[Any] = [None] * head.num_args()
        for pos in range(head.num_args()):
            a = head.arg(pos)
            if not z3.is_var(a):
                raise SolverError(f"unexpected Spacer answer: {f}")
            values[z3.get_var_index(a)] = args[pos]
        return z3.substitute_vars(body, *values)
    raise SolverError(f"no interpretation of Inv in Spacer's answer: {answer}")


def _quantifier_free(f: Any) -> Any:
    """f without quantifiers.  When z3's preprocessing alone decides the clauses (a
    goal no state satisfies, say) it answers with the relation's least model built
    from the clauses it inlined, ∃-quantified over their other variables: eliminated
    here (Booleans and a linear counter), so that the invariant is over the atoms."""
    if not _has_quantifier(f):
        return f
    goal = z3.Goal()
    goal.add(f)
    out = z3.Then("qe", "simplify")(goal)
    g = z3.And([z3.And(list(sub)) for sub in out]) if len(out) != 1 else z3.And(list(out[0]))
    if _has_quantifier(g):  # pragma: no cover - qe is complete for these theories
        raise SolverError(f"could not eliminate the quantifiers of Spacer's answer: {f}")
    return z3.simplify(g)


def _has_quantifier(f: Any) -> bool:
    seen: set[int] = set()
    stack = [f]
    while stack:
        e = stack.pop()
        if e.get_id() in seen:
            continue
        seen.add(e.get_id())
        if z3.is_quantifier(e):
            return True
        if z3.is_app(e):
            stack.extend(e.children())
    return False


def _derived_states(proof: Any, inv: Any, n_atoms: int) -> list[State]:
    """The ground facts Inv(s) a Spacer derivation concludes, in the order they are
    derived (premises first), as states: iteratively, since the derivation of a
    run of n steps nests n deep."""
    out: list[State] = []
    seen: set[int] = set()
    stack: list[tuple[Any, bool]] = [(proof, False)]
    while stack:
        p, expanded = stack.pop()
        if expanded:
            fact = p.arg(p.num_args() - 1)
            if z3.is_app(fact) and fact.decl().eq(inv):
                s = 0
                for i in range(n_atoms):
                    if z3.is_true(fact.arg(i)):
                        s |= 1 << i
                out.append(s)
            continue
        if p.get_id() in seen or not z3.is_app(p):
            continue
        seen.add(p.get_id())
        if z3.is_app_of(p, z3.Z3_OP_PR_HYPER_RESOLVE):
            stack.append((p, True))
        # Premises (every argument but a hyper-resolution's conclusion) are proofs.
        children = p.children()[:-1] if z3.is_app_of(p, z3.Z3_OP_PR_HYPER_RESOLVE) else p.children()
        stack.extend((c, False) for c in reversed(children) if _is_proof(c))
    return out


def _is_proof(e: Any) -> bool:
    return bool(z3.is_app(e) and e.sort().kind() == z3.Z3_UNKNOWN_SORT)
