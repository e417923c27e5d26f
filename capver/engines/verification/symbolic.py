"""Qualitative model checking of capability models on BDDs: the default engine of
``capver verify`` for ``E [ path ]`` and ``A [ path ]`` (property language:
:mod:`capver.core.properties`).

**The transition system.**  A compound model h† (paper, section 2, Definition
"capability model") induces an MDP: in a state s the choices are the capabilities c
whose matching rules R_s = {r ∈ h_c : s ⊨ cond(r)} are not empty, and c leads to
s′ with probability Pr_h(s′ | s, c).  The qualitative operators read that MDP as a
nondeterministic transition system: s → s′ when Pr_h(s′ | s, c) > 0 for some
enabled c.  "E" quantifies over the scheduler's choice of capabilities *and* over
the outcomes (any outcome of positive probability), "A" over all of them.  Since
every effect of a rule has a positive probability, Pr_h(s′ | s, c) > 0 exactly when
some rule r ∈ R_s has an effect η with s′ = apply(s, η); so the relation of c is

    T_c = ⋃_η  D_{c,η} × apply(·, η),    D_{c,η} = ⋁ { cond(r) : r ∈ h_c, η ∈ effects(r) },

where D_{c,η} is also the union of the BDD regions of ``CapabilityModel.regions()``
whose rule mixture (:func:`~capver.model.capability_model.rule_mixture`) gives η a
positive probability (tests/engines/verification/test_qualitative_engines.py checks that identity); the
region split only matters for the probabilities, which qualitative checking ignores.

**Image and pre-image.**  For an effect η with touched atoms T = η⁺ ∪ η⁻ the
successors of a set X within D are (∃T. X ∧ D) ∧ [η⁺ true, η⁻∖η⁺ false]: the
touched atoms are forgotten, then set as apply(s, η) sets them (η⁺ wins over η⁻, as
in :meth:`~capver.core.state.Effect.apply`).  The predecessors of Y are
D ∧ Y[T := η⁺], the cofactor of Y by the values apply(s, η) gives the touched atoms.
Both need only ``cofactor`` and ``disj`` of :class:`~capver.logic.bdd.BDDBackend`.

**Dead ends.**  A state where no capability is enabled has no successor: a path
that reaches it stops there.  F, G and U are read on such finite maximal paths as
on the infinite path that stutters in the dead end forever (the self-loop Storm and
the explicit engine give deadlocks), which is the same thing for these operators:
``F φ`` — φ holds in some state of the path; ``G φ`` — in every state of the path
(so ``E [ G φ ]`` holds in a dead end where φ holds); ``φ U ψ`` — ψ holds in some
state and φ in all states before it (so ``A [ φ U ψ ]`` fails in a dead end without
ψ).  With a bound k (``F<=k``, ``G<=k``, ``U<=k``) only the states s_0 … s_k count,
i.e. the first k capability executions; a path that stops earlier counts all its
states.

**Fixpoints** (computed within the states reachable from the initial state, since
the verdict at a reachable state depends only on reachable states):

    E [ φ U ψ ]  = μZ. ψ ∨ (φ ∧ EX Z)                       E [ F φ ] = E [ true U φ ]
    A [ φ U ψ ]  = μZ. ψ ∨ (φ ∧ enabled ∧ ¬EX ¬Z)           A [ F φ ] = A [ true U φ ]
    E [ G φ ]    = νZ. φ ∧ (dead ∨ EX Z)                     A [ G φ ] = ¬E [ F ¬φ ]

and the bounded operators iterate the same step k times from Z₀ = ψ (resp. φ).

**Witnesses.**  For a satisfied ``E [ F φ ]`` / ``E [ φ U ψ ]`` (bounded or not),
and as the counterexample of a violated ``A [ G φ ]`` / ``A [ G<=k φ ]``: a shortest
run, found by breadth-first onion rings from the initial state (ring i+1 = the
successors of ring i not seen before, expanded only from states satisfying φ and not
ψ) and picked backwards from a goal state in the first ring that has one.  For a
satisfied ``E [ G φ ]`` (counterexample of ``A [ F ¬φ ]``): a run inside the
fixpoint, which for the unbounded operator is a lasso (its last state repeats an
earlier one, ``Witness.loop``) or ends in a dead end.  For a violated
``A [ φ U ψ ]``: a shortest run through φ ∧ ¬ψ to a state without ψ where φ fails or
that is a dead end, else a run that stays in φ ∧ ¬ψ (k steps, or a lasso).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import TypeVar

from capver.core.properties import (
    And,
    AtomFormula,
    Const,
    Eventually,
    ExistsPath,
    ForallPath,
    Globally,
    Implies,
    Not,
    Or,
    PathFormula,
    Property,
    Query,
    StateFormula,
    Until,
)
from capver.core.state import Effect, State
from capver.core.vocabulary import Vocabulary
from capver.logic.bdd import BDDBackend, Node
from capver.logic.condition import LogicContext
from capver.model.capability_model import CompoundModel

__all__ = [
    "LARGE_NODES",
    "LARGE_RINGS",
    "QualitativeQuery",
    "QualitativeResult",
    "SymbolicEngine",
    "Witness",
    "formula_bdd",
    "qualitative_query",
    "restriction",
    "selected_capabilities",
    "states_of",
]

QualitativeQuery = ExistsPath | ForallPath
"""The queries the qualitative engines answer."""

LARGE_NODES = 5_000
"""BDD nodes of a forward walk's explored set past which the reachable set is large.
Measured (docs/qualitative_engines.md): the explored sets of the models whose whole
reachable set the BDD engine computes in under a second peak at 1,412 nodes (First
Responders h∨, 4,608 states) and 1,516 (Crafter h∧, ring 14); the large ones pass
5,000 early — Blocksworld h∨ 8,092 at ring 6 (then 32,852, 95,253, 204,944: 39 s by
ring 9), Crafter h∨ 15,239 at ring 2 (213,364 at ring 3, 15 s).  ``auto`` starts a
second engine there, and :meth:`SymbolicEngine.frontier_prefix` stops."""
LARGE_RINGS = 200
"""Forward rings past which the reachable set is large whatever its BDD's size: it
takes that many breadth-first steps (a counter)."""


# =====================================================================================
# Results shared by the qualitative engines (symbolic and bmc)
# =====================================================================================


@dataclass(frozen=True, slots=True)
class Witness:
    """A run s₀ c₁ s₁ … c_n s_n of the transition system: ``initial`` = s₀ and
    ``steps`` = ((c₁, s₁), …, (c_n, s_n)).  ``loop`` is set for a lasso: the last
    state equals ``states[loop]`` and the run goes on around that cycle forever."""

    initial: State
    steps: tuple[tuple[str, State], ...] = ()
    loop: int | None = None

    def __len__(self) -> int:
        """The number of capability executions n."""
        return len(self.steps)

    @property
    def states(self) -> tuple[State, ...]:
        return (self.initial, *(s for _, s in self.steps))

    @property
    def capability_names(self) -> tuple[str, ...]:
        return tuple(c for c, _ in self.steps)

    def replays(self, model: CompoundModel) -> bool:
        """Every step has positive probability Pr_h(s_i | s_{i-1}, c_i) under ``model``."""
        s = self.initial
        for c, s2 in self.steps:
            if c not in model or model[c].prob(s, s2) <= 0:
                return False
            s = s2
        return True

    def format(self, vocab: Vocabulary) -> str:
        lines = [f"  {vocab.format_state(self.initial)}"]
        lines += [f"  --{c}--> {vocab.format_state(s)}" for c, s in self.steps]
        if self.loop is not None:
            lines.append(f"  (loops back to state {self.loop})")
        return "\n".join(lines)

    def changes(self) -> tuple[tuple[str, State, State], ...]:
        """Per step, (c_i, added, removed): the atoms s_i has and s_{i-1} lacks, and
        the other way round, as states."""
        out: list[tuple[str, State, State]] = []
        before = self.initial
        for c, after in self.steps:
            out.append((c, after & ~before, before & ~after))
            before = after
        return tuple(out)

    def format_changes(self, vocab: Vocabulary) -> str:
        """The run as a person checks it: the initial state in full, then one
        numbered line per step with the atoms it adds (``+on(a,b)``) and removes
        (``-holding(a)``).  A whole state per step hides the one or two atoms that
        changed among dozens that did not.  The first line has no indent and the
        others four spaces, to sit under a ``  witness: `` label."""
        lines = [vocab.format_state(self.initial)]
        for i, (c, added, removed) in enumerate(self.changes(), 1):
            diff = [f"+{a}" for a in vocab.atoms_of(added)] + [f"-{a}" for a in vocab.atoms_of(removed)]
            lines.append(f"    {i}. {c}: {' '.join(diff) if diff else '(no change)'}")
        if self.loop is not None:
            back = "the initial state" if self.loop == 0 else f"the state after step {self.loop}"
            lines.append(f"    (then back to {back}, around that cycle forever)")
        return "\n".join(lines)

    def to_json(self, vocab: Vocabulary) -> dict[str, object]:
        """The run as JSON: ``initial`` and each step's ``state`` as lists of atoms, each
        step's ``added`` / ``removed`` atoms, and ``loop`` (the index into the states,
        0 = the initial one) or None."""
        return {
            "initial": [str(a) for a in vocab.atoms_of(self.initial)],
            "steps": [
                {
                    "capability": c,
                    "added": [str(a) for a in vocab.atoms_of(added)],
                    "removed": [str(a) for a in vocab.atoms_of(removed)],
                    "state": [str(a) for a in vocab.atoms_of(s)],
                }
                for (c, added, removed), (_, s) in zip(self.changes(), self.steps, strict=True)
            ],
            "loop": self.loop,
        }


@dataclass(frozen=True, slots=True)
class QualitativeResult:
    """The verdict of a qualitative query in an initial state.

    ``witness`` is a run satisfying the path formula for a satisfied ``E [ … ]``, or
    one violating it for a violated ``A [ … ]`` (None where the engine gives none, see
    the module docstring).  The BDD engine also reports how many states are
    reachable and in how many of them the query holds; the BMC engine reports the
    number of steps it searched (``bound``): its verdict is that of the query with
    every path cut after ``bound`` steps, exact for an unbounded operator once
    ``bound`` ≥ the number of reachable states."""

    holds: bool
    witness: Witness | None = None
    reachable: int | None = None
    satisfying: int | None = None
    bound: int | None = None
    engine: str = "bdd"
    explored: int | None = None  # states a forward search visited before it decided

    def __bool__(self) -> bool:
        return self.holds

    @property
    def verdict(self) -> str:
        return "holds" if self.holds else "fails"


def qualitative_query(item: Property | Query) -> tuple[QualitativeQuery, frozenset[str] | None]:
    """The E/A query of a property (or a bare query) and its capability restriction;
    :class:`TypeError` for a quantitative query (P, R), which the qualitative
    engines do not answer."""
    caps = item.capability_names if isinstance(item, Property) else None
    query = item.query if isinstance(item, Property) else item
    if not isinstance(query, ExistsPath | ForallPath):
        raise TypeError(f"not a qualitative query (E [ … ] or A [ … ]): {query!r}")
    return query, caps


E = TypeVar("E")


def restriction(
    engine: E,
    model: CompoundModel,
    current: tuple[str, ...],
    capabilities: Iterable[str] | None,
    cache: dict[frozenset[str], E],
    build: Callable[[CompoundModel, tuple[str, ...]], E],
) -> E:
    """The engine of ``model`` whose scheduler uses only ``capabilities``: ``engine``
    itself (which uses ``current``) when that is the same set, else one built once
    with ``build`` and kept in ``cache`` (the qualitative engines share this)."""
    if capabilities is None:
        return engine
    caps = selected_capabilities(model, capabilities)
    if caps == current:
        return engine
    hit = cache.get(frozenset(caps))
    if hit is None:
        hit = cache[frozenset(caps)] = build(model, caps)
    return hit


def selected_capabilities(model: CompoundModel, capabilities: Iterable[str] | None) -> tuple[str, ...]:
    """The capabilities the scheduler may choose, in the model's order."""
    if capabilities is None:
        return tuple(model)
    wanted = frozenset(capabilities)
    unknown = sorted(wanted - set(model))
    if unknown:
        raise ValueError(f"capabilities not in the model: {', '.join(unknown)}")
    return tuple(c for c in model if c in wanted)


# =====================================================================================
# BDD helpers
# =====================================================================================


def formula_bdd(ctx: LogicContext, formula: StateFormula) -> Node:
    """The set of states where a state formula holds, as a BDD over the atoms."""
    b, vocab = ctx.bdd, ctx.vocab
    match formula:
        case Const(value):
            return b.true if value else b.false
        case AtomFormula(atom):
            return b.var(vocab.index(atom))
        case Not(operand):
            return b.neg(formula_bdd(ctx, operand))
        case And(operands):
            u = b.true
            for f in operands:
                u = b.conj(u, formula_bdd(ctx, f))
            return u
        case Or(operands):
            u = b.false
            for f in operands:
                u = b.disj(u, formula_bdd(ctx, f))
            return u
        case Implies(premise, conclusion):
            return b.disj(b.neg(formula_bdd(ctx, premise)), formula_bdd(ctx, conclusion))
    raise TypeError(f"not a state formula: {formula!r}")


def _bits(mask: int) -> list[int]:
    out = []
    i = 0
    while mask:
        if mask & 1:
            out.append(i)
        mask >>= 1
        i += 1
    return out


def states_of(bdd: BDDBackend, u: Node, limit: int | None = None) -> Iterator[State]:
    """The states of a BDD, one ``pick`` at a time (for small sets: each costs a walk
    over the variables); at most ``limit`` of them."""
    n = 0
    while u != bdd.false and (limit is None or n < limit):
        s = bdd.pick(u)
        assert s is not None
        yield s
        u = bdd.conj(u, bdd.neg(bdd.minterm(s)))
        n += 1


@dataclass(frozen=True, slots=True)
class _Move:
    """One effect η of a capability (or of any capability: ``capability`` None) with
    the states D where some matching rule has it."""

    capability: str | None
    effect: Effect
    domain: Node
    touched: tuple[int, ...]  # atoms η sets: η⁺ ∪ η⁻
    values: tuple[bool, ...]  # their value after η: True for η⁺, False for η⁻∖η⁺
    setter: Node  # the cube of those values


# =====================================================================================
# The engine
# =====================================================================================


@dataclass(slots=True)
class _Reach:
    """Breadth-first layers from one initial state: rings[i] = the states first
    reached after i steps; ``states`` their union."""

    rings: list[Node]
    states: Node


class SymbolicEngine:
    """Qualitative model checking of one compound model by BDD fixpoints (see the
    module docstring).  ``capabilities`` restricts the scheduler to some of the
    model's capabilities; a property's own ``{caps: …}`` restriction is honoured by
    :meth:`check`."""

    def __init__(self, model: CompoundModel, capabilities: Iterable[str] | None = None) -> None:
        self.model = model
        self.ctx = model.ctx
        self.bdd = model.ctx.bdd
        self.capability_names = selected_capabilities(model, capabilities)
        b = self.bdd
        # D_{c,η} from the rule conditions: s has the successor apply(s, η) under c
        # exactly when some rule matching s lists η (every listed effect has p > 0).
        self._moves: dict[str, list[_Move]] = {}
        merged: dict[Effect, Node] = {}
        enabled = b.false
        for c in self.capability_names:
            domains: dict[Effect, Node] = {}
            for r in model[c].rules:
                cond = r.condition.bdd
                enabled = b.disj(enabled, cond)
                for _, eta in r.effects:
                    domains[eta] = b.disj(domains.get(eta, b.false), cond)
            self._moves[c] = [self._move(c, eta, d) for eta, d in sorted(domains.items(), key=lambda x: x[0])]
            for eta, d in domains.items():
                merged[eta] = b.disj(merged.get(eta, b.false), d)
        # The union relation T = ⋃_c T_c grouped by effect: one image per distinct
        # effect instead of one per (capability, effect).
        self._all = [self._move(None, eta, d) for eta, d in sorted(merged.items(), key=lambda x: x[0])]
        self.enabled: Node = enabled
        self.dead: Node = b.neg(enabled)
        self._reach: dict[State, _Reach] = {}
        self._restricted: dict[frozenset[str], SymbolicEngine] = {}
        # Called with (ring index, states seen so far) after each forward ring, by this
        # engine and its restrictions (one list): how the qualitative portfolio sees a
        # reachable set growing large (capver.engines.verification.qualitative).
        self.ring_hooks: list[Callable[[int, Node], None]] = []

    def _move(self, c: str | None, eta: Effect, domain: Node) -> _Move:
        touched = tuple(_bits(eta.add | eta.delete))
        values = tuple(bool(eta.add >> i & 1) for i in touched)
        b = self.bdd
        setter = b.true
        for i, v in zip(touched, values, strict=True):
            setter = b.conj(setter, b.var(i) if v else b.neg(b.var(i)))
        return _Move(c, eta, domain, touched, values, setter)

    def restricted(self, capabilities: Iterable[str] | None) -> SymbolicEngine:
        """The engine of the same model whose scheduler uses only ``capabilities``."""
        engine = restriction(self, self.model, self.capability_names, capabilities, self._restricted, SymbolicEngine)
        engine.ring_hooks = self.ring_hooks
        return engine

    # -- one step ----------------------------------------------------------------------
    def _image(self, m: _Move, x: Node) -> Node:
        b = self.bdd
        u = b.conj(x, m.domain)
        if u == b.false:
            return u
        for i in m.touched:
            u = b.disj(b.cofactor(u, i, False), b.cofactor(u, i, True))
        return b.conj(u, m.setter)

    def _preimage(self, m: _Move, y: Node) -> Node:
        b = self.bdd
        for i, v in zip(m.touched, m.values, strict=True):
            y = b.cofactor(y, i, v)
            if y == b.false:
                return y
        return b.conj(y, m.domain)

    def post(self, x: Node, capability: str | None = None) -> Node:
        """The successors of the states x: by ``capability``, or by any of them."""
        moves = self._all if capability is None else self._moves[capability]
        b = self.bdd
        out = b.false
        for m in moves:
            out = b.disj(out, self._image(m, x))
        return out

    def pre(self, y: Node, capability: str | None = None) -> Node:
        """EX y: the states with a successor in y (by ``capability``, or by any)."""
        moves = self._all if capability is None else self._moves[capability]
        b = self.bdd
        out = b.false
        for m in moves:
            out = b.disj(out, self._preimage(m, y))
        return out

    # -- reachability ------------------------------------------------------------------
    def _reachability(self, init: State) -> _Reach:
        if init not in self._reach:
            # Onion rings towards no goal run until no new state appears, and keep the
            # whole reachable set.
            self._onion(init, self.bdd.false, self.bdd.true, None)
        return self._reach[init]

    def reachable(self, init: State | Iterable[State]) -> Node:
        """The states reachable from the initial state(s), as a BDD."""
        b = self.bdd
        if isinstance(init, int):
            return self._reachability(init).states
        out = b.false
        for s in init:
            out = b.disj(out, self._reachability(s).states)
        return out

    def count(self, u: Node) -> int:
        """The number of states in u."""
        return self.bdd.count(u)

    def depth(self, init: State) -> int:
        """The largest number of steps a shortest run from ``init`` needs to reach
        some reachable state (the number of BFS rings minus one)."""
        return len(self._reachability(init).rings) - 1

    # -- fixpoints -----------------------------------------------------------------------
    def until(self, hold: Node, goal: Node, bound: int | None = None, within: Node | None = None) -> Node:
        """E [ hold U<=bound goal ]: least fixpoint, grown backwards from goal by
        frontiers (EX distributes over ∪, so only the new states need a pre-image)."""
        b = self.bdd
        if within is not None:
            hold, goal = b.conj(hold, within), b.conj(goal, within)
        z = goal
        frontier = goal
        steps = 0
        while frontier != b.false and (bound is None or steps < bound):
            frontier = b.conj(b.conj(self.pre(frontier), hold), b.neg(z))
            z = b.disj(z, frontier)
            steps += 1
        return z

    def forall_until(self, hold: Node, goal: Node, bound: int | None = None, within: Node | None = None) -> Node:
        """A [ hold U<=bound goal ]: every path reaches goal (within bound steps)
        through hold states; a dead end outside goal fails."""
        b = self.bdd
        live = b.conj(hold, self.enabled)
        if within is not None:
            live, goal = b.conj(live, within), b.conj(goal, within)
        z = goal
        steps = 0
        while bound is None or steps < bound:
            # ¬EX ¬Z: no successor leaves Z.  ¬Z needs no restriction to `within`:
            # successors of reachable states are reachable.
            nz = b.disj(z, b.conj(live, b.neg(self.pre(b.neg(z)))))
            steps += 1
            if nz == z:
                break
            z = nz
        return z

    def globally_iterates(self, inv: Node, bound: int | None = None, within: Node | None = None) -> list[Node]:
        """E [ G<=j inv ] for j = 0, 1, …: Z₀ = inv, Z_{j+1} = inv ∧ (dead ∨ EX Z_j),
        up to ``bound`` or (unbounded) until the greatest fixpoint is reached, which
        is the last element."""
        b = self.bdd
        if within is not None:
            inv = b.conj(inv, within)
        stop = b.conj(inv, self.dead)
        zs = [inv]
        while bound is None or len(zs) <= bound:
            nz = b.conj(inv, b.disj(stop, self.pre(zs[-1])))
            if nz == zs[-1]:
                break
            zs.append(nz)
        return zs

    def satisfying(self, query: QualitativeQuery, within: Node | None = None) -> Node:
        """The states (among ``within``, default all) where the query holds."""
        return self._solve(query, within)[0]

    def _solve(self, query: QualitativeQuery, within: Node | None) -> tuple[Node, list[Node] | None]:
        """The satisfying set, and for E G / A F the iterates of E [ G … ] (the
        witness of E G and the counterexample of A F walk along them)."""
        b = self.bdd
        path = query.path
        exists = isinstance(query, ExistsPath)
        if isinstance(path, Globally):
            phi = formula_bdd(self.ctx, path.invariant)
            if exists:
                zs = self.globally_iterates(phi, path.bound, within)
                return zs[-1], zs
            # A [ G φ ] = ¬E [ F ¬φ ]
            bad = self.until(b.true, b.neg(phi), path.bound, within)
            return (b.neg(bad) if within is None else b.conj(within, b.neg(bad))), None
        if isinstance(path, Eventually):
            hold, goal = b.true, formula_bdd(self.ctx, path.goal)
        else:
            hold, goal = formula_bdd(self.ctx, path.hold), formula_bdd(self.ctx, path.goal)
        if exists:
            return self.until(hold, goal, path.bound, within), None
        return self.forall_until(hold, goal, path.bound, within), None

    # -- witnesses -----------------------------------------------------------------------
    def _onion(
        self, init: State, goal: Node, hold: Node, bound: int | None, large: Callable[[int, Node], bool] | None = None
    ) -> tuple[list[Node], int | None, Node]:
        """Onion rings from ``init``: ring i+1 = the successors of the hold states of
        ring i not seen before, stopping at the first ring with a goal state (its
        index is returned, None when there is none within ``bound`` steps) — so a goal
        near the start is found without exploring the whole reachable set.  Also the
        union of the rings built.  ``large(i, seen)`` true after ring i also stops
        (then the last ring is not empty and holds no goal state)."""
        b = self.bdd
        if hold == b.true and init in self._reach:
            # Plain reachability already computed: its rings are these rings.
            full = self._reach[init]
            n = next((i for i, r in enumerate(full.rings) if b.conj(r, goal) != b.false), None)
            if n is not None and (bound is None or n <= bound):
                return full.rings, n, full.states
            return full.rings, None, full.states
        rings = [b.minterm(init)]
        seen = rings[0]
        while b.conj(rings[-1], goal) == b.false:
            if bound is not None and len(rings) > bound:
                return rings, None, seen
            ring = b.conj(self.post(b.conj(rings[-1], hold)), b.neg(seen))
            if ring == b.false:
                if hold == b.true:  # the whole reachable set: keep it
                    self._reach[init] = _Reach(rings, seen)
                return rings, None, seen
            rings.append(ring)
            seen = b.disj(seen, ring)
            for hook in self.ring_hooks:
                hook(len(rings) - 1, seen)
            if large is not None and b.conj(ring, goal) == b.false and large(len(rings) - 1, seen):
                return rings, None, seen
        return rings, len(rings) - 1, seen

    def frontier(self, init: State, goal: Node, hold: Node, bound: int | None) -> list[Node]:
        """The states from which one more execution could extend a run from ``init``
        towards ``goal`` through ``hold`` states within ``bound`` steps, when no such
        run exists: the hold ∧ ¬goal states reached within bound − 1 steps, by the
        number of steps that first reaches them (breadth-first rings).  These are the
        states where an effect the model lacks could open a run the model rules out
        (the pairs the agent verdicts' confidence is about)."""
        return self.frontier_prefix(init, goal, hold, bound, limited=False)[0]

    def frontier_prefix(
        self, init: State, goal: Node, hold: Node, bound: int | None, *, limited: bool = True
    ) -> tuple[list[Node], bool]:
        """The first rings of :meth:`frontier`, and whether they are all of them:
        ``limited`` stops after the ring at which the explored set is large
        (:data:`LARGE_NODES`, :data:`LARGE_RINGS`).  A prefix is enough to show that
        some frontier pair is untried, which is all an unconfirmed verdict needs, and
        the whole frontier of a large h∨ is its reachable set (minutes)."""
        b = self.bdd
        stopped = [False]

        def large(ring: int, seen: Node) -> bool:
            stopped[0] = ring >= LARGE_RINGS or b.dag_size(seen) > LARGE_NODES
            return stopped[0]

        rings, _, _ = self._onion(init, goal, hold, bound, large if limited else None)
        keep = b.conj(hold, b.neg(goal))
        if bound is not None and len(rings) > bound:
            # Ring ``bound`` is beyond the frontier, whether or not the walk stopped there.
            rings, stopped[0] = rings[:bound], False
        return [b.conj(ring, keep) for ring in rings], not stopped[0]

    def shortest_run(
        self, init: State, goal: Node, hold: Node | None = None, bound: int | None = None
    ) -> Witness | None:
        """A shortest run from ``init`` to a goal state whose earlier states satisfy
        ``hold`` (default: any), with at most ``bound`` steps; None if there is none.

        Onion rings (:meth:`_onion`): the first ring with a goal state fixes the
        length, and the run is picked backwards, each state a predecessor (by a named
        capability) of the next within the previous ring's expanded states."""
        return self._run_in(init, goal, self.bdd.true if hold is None else hold, bound)[0]

    def _run_in(self, init: State, goal: Node, hold: Node, bound: int | None) -> tuple[Witness | None, Node]:
        b = self.bdd
        rings, n, seen = self._onion(init, goal, hold, bound)
        if n is None:
            return None, seen
        t = b.pick(b.conj(rings[n], goal))
        assert t is not None
        steps: list[tuple[str, State]] = []
        for i in range(n - 1, -1, -1):
            back = b.conj(b.conj(rings[i], hold), b.neg(goal))
            target = b.minterm(t)
            for c in self.capability_names:
                cand = b.conj(self.pre(target, c), back)
                if cand != b.false:
                    s = b.pick(cand)
                    assert s is not None
                    steps.append((c, t))
                    t = s
                    break
            else:  # pragma: no cover - t was reached from ring i
                raise AssertionError("no predecessor in the previous ring")
        assert t == init
        steps.reverse()
        return Witness(init, tuple(steps)), seen

    def _step_into(self, s: State, target: Node) -> tuple[str, State] | None:
        """A capability and successor of s inside target, if any."""
        b = self.bdd
        src = b.minterm(s)
        for c in self.capability_names:
            nxt = b.conj(self.post(src, c), target)
            if nxt != b.false:
                t = b.pick(nxt)
                assert t is not None
                return c, t
        return None

    def globally_run(self, init: State, zs: list[Node], bound: int | None) -> Witness:
        """A run from ``init`` (which must be in zs[-1]) that stays in the invariant.
        Bounded: zs[j] = E [ G<=j φ ] (the list may stop early at the fixpoint), and
        the run has ``bound`` steps or ends in a dead end.  Unbounded: zs[-1] is the
        fixpoint, and the run ends in a dead end or closes a loop."""
        b = self.bdd
        steps: list[tuple[str, State]] = []
        s = init
        if bound is not None:
            for remaining in range(bound, 0, -1):
                if b.evaluate(self.dead, s):
                    break
                step = self._step_into(s, zs[min(remaining - 1, len(zs) - 1)])
                assert step is not None
                steps.append(step)
                s = step[1]
            return Witness(init, tuple(steps))
        z = zs[-1]
        index = {init: 0}
        while not b.evaluate(self.dead, s):
            step = self._step_into(s, z)
            assert step is not None
            steps.append(step)
            s = step[1]
            if s in index:
                return Witness(init, tuple(steps), loop=index[s])
            index[s] = len(steps)
        return Witness(init, tuple(steps))

    def _until_counterexample(self, init: State, path: Until, reach: Node) -> Witness:
        """A run violating φ U<=k ψ: it avoids ψ and either reaches a state where φ
        fails or that is a dead end (a finite run, shortest), or, failing that, stays
        in φ ∧ ¬ψ for k steps (bounded) or forever (unbounded: a lasso)."""
        b = self.bdd
        hold, goal = formula_bdd(self.ctx, path.hold), formula_bdd(self.ctx, path.goal)
        stay = b.conj(hold, b.neg(goal))
        stuck = b.conj(b.neg(goal), b.disj(b.neg(hold), self.dead))
        run = self.shortest_run(init, stuck, stay, path.bound)
        if run is not None:
            return run
        zs = self.globally_iterates(stay, path.bound, reach)
        assert b.evaluate(zs[-1], init)
        return self.globally_run(init, zs, path.bound)

    # -- the query --------------------------------------------------------------------------
    def check(self, item: Property | Query, init: State, *, counts: bool = False) -> QualitativeResult:
        """Whether the qualitative property holds in the initial state ``init``, with
        a witness (E) or counterexample (A) where the module docstring promises one.

        ``E [ φ U ψ ]``, ``E [ F ψ ]`` and ``A [ G φ ]`` (= ¬E [ F ¬φ ]), bounded or
        not, are decided by the forward onion rings alone, which stop at the first
        ring with a goal state: on an optimistic model whose reachable set is huge
        (an h∨ whose rules apply almost everywhere) a near goal is found in
        milliseconds.  Their result then counts only the ``explored`` states; with
        ``counts`` the full fixpoint is computed, as for the other operators, and the
        result has the numbers of reachable and satisfying states."""
        query, caps = qualitative_query(item)
        engine = self.restricted(caps)
        if not counts:
            fast = engine._forward(query, init)
            if fast is not None:
                return fast
        return engine._check(query, init)

    def _forward(self, query: QualitativeQuery, init: State) -> QualitativeResult | None:
        b = self.bdd
        path = query.path
        if isinstance(query, ExistsPath) and isinstance(path, Eventually):
            hold, goal = b.true, formula_bdd(self.ctx, path.goal)
        elif isinstance(query, ExistsPath) and isinstance(path, Until):
            hold, goal = formula_bdd(self.ctx, path.hold), formula_bdd(self.ctx, path.goal)
        elif isinstance(query, ForallPath) and isinstance(path, Globally):
            hold, goal = b.true, b.neg(formula_bdd(self.ctx, path.invariant))
        else:
            return None
        if goal == b.false:
            # No state is a goal (A [ G true ], say): the walk would visit every
            # reachable state to find none.
            return QualitativeResult(holds=isinstance(query, ForallPath), witness=None, explored=0, engine="bdd")
        run, seen = self._run_in(init, goal, hold, path.bound)
        found = run is not None
        holds = found if isinstance(query, ExistsPath) else not found
        whole = not found and hold == b.true and path.bound is None
        return QualitativeResult(
            holds=holds,
            witness=run,
            reachable=self.count(seen) if whole else None,
            explored=self.count(seen),
            engine="bdd",
        )

    def _check(self, query: QualitativeQuery, init: State) -> QualitativeResult:
        b = self.bdd
        reach = self._reachability(init).states
        sat, zs = self._solve(query, reach)
        holds = b.evaluate(sat, init)
        path: PathFormula = query.path
        witness: Witness | None = None
        if isinstance(query, ExistsPath) and holds:
            if isinstance(path, Globally):
                assert zs is not None
                witness = self.globally_run(init, zs, path.bound)
            elif isinstance(path, Eventually):
                witness = self.shortest_run(init, formula_bdd(self.ctx, path.goal), None, path.bound)
            else:
                hold, goal = formula_bdd(self.ctx, path.hold), formula_bdd(self.ctx, path.goal)
                witness = self.shortest_run(init, goal, hold, path.bound)
        elif isinstance(query, ForallPath) and not holds:
            if isinstance(path, Globally):
                # A [ G φ ] fails exactly when E [ F ¬φ ] holds: its shortest run.
                witness = self.shortest_run(init, b.neg(formula_bdd(self.ctx, path.invariant)), None, path.bound)
            elif isinstance(path, Eventually):
                # A [ F φ ] fails exactly when E [ G ¬φ ] holds: a run that never sees φ.
                zs = self.globally_iterates(b.neg(formula_bdd(self.ctx, path.goal)), path.bound, reach)
                witness = self.globally_run(init, zs, path.bound)
            else:
                witness = self._until_counterexample(init, path, reach)
        return QualitativeResult(
            holds=holds,
            witness=witness,
            reachable=self.count(reach),
            satisfying=self.count(sat),
            engine="bdd",
        )

    # -- runs that never stop (the agent's reading; agent_verdict) --------------------------
    def lasting_iterates(self, inv: Node, bound: int | None = None, within: Node | None = None) -> list[Node]:
        """The states with a run of j executions inside ``inv``, for j = 0, 1, …:
        Z₀ = inv, Z_{j+1} = inv ∧ EX Z_j, up to ``bound`` or (unbounded) until the
        greatest fixpoint νZ. inv ∧ EX Z — the states with an infinite run inside inv,
        a lasso since the system is finite — which is the last element.

        Unlike :meth:`globally_iterates` no run may stop in a dead end: an agent
        never stops (every capability can be executed anywhere), and a dead end of a
        learned h∧ only says that nothing was observed there, so a run that ends in
        one is no evidence of a run of the agent."""
        b = self.bdd
        if within is not None:
            inv = b.conj(inv, within)
        zs = [inv]
        while bound is None or len(zs) <= bound:
            nz = b.conj(inv, self.pre(zs[-1]))
            if nz == zs[-1]:
                break
            zs.append(nz)
        return zs

    def lasting_run(self, init: State, stay: Node, escape: Node, bound: int | None = None) -> Witness | None:
        """A run from ``init`` that needs no dead end and either reaches ``escape``
        through ``stay`` ∧ ¬escape states within ``bound`` executions (a shortest
        one), or else stays in ``stay`` for ``bound`` executions (unbounded: forever,
        a lasso); None when there is none.

        With escape = ∅ it is the witness of ``E [ G<=k φ ]`` (stay = φ) on runs that
        never stop, and the counterexample of ``A [ F<=k φ ]`` (stay = ¬φ); with stay
        = φ ∧ ¬ψ and escape = ¬φ ∧ ¬ψ the counterexample of ``A [ φ U<=k ψ ]``."""
        b = self.bdd
        if escape != b.false:
            run = self.shortest_run(init, escape, stay, bound)
            if run is not None:
                return run
        zs = self.lasting_iterates(stay, bound, self._reachability(init).states)
        if not b.evaluate(zs[-1], init):
            return None
        # No state of zs[j], j ≥ 1, is a dead end, so the walk never stops early.
        return self.globally_run(init, zs, bound)
