"""The capability-transition dataset D (section 2, Definition "capability-transition
dataset") and the counts section 4.2 evaluates with.

D is a multiset of ⟨s, c, s′⟩.  Stored as counts N_e(s, c, s′ | D) indexed by
capability, then state, then successor, so that the views the lattice construction
needs are direct lookups: D_c, η_c(s, D), D_SC(s, c), N_e(s, c | D).

Every addition is appended to a change log of (c, s) pairs; consumers such as the
incremental lattice builder keep a cursor into it and rebuild only what changed.

The order of the additions is also kept per pair, as much as the anytime-valid
bounds of :mod:`capver.engines.verification.sampling` need (:class:`PairSample`):
when the pair was first tried, how many distinct outcomes it has shown, how many
executions passed since its last new outcome, and after how many executions each
outcome first appeared.
Persistence (append-only JSON Lines) is in :mod:`capver.io.dataset_file`.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass

from capver.core.state import Capability, Effect, State, Transition
from capver.core.vocabulary import Vocabulary
from capver.errors import DatasetError


@dataclass(frozen=True, slots=True)
class Record:
    """One observed execution: the transition plus what it cost."""

    transition: Transition
    steps: int = 0  # simulator steps the execution took (the paper's cost measure)


@dataclass(frozen=True, slots=True)
class PairSample:
    """How one pair (s, c) was sampled, in the order of the additions.

    ``order``: the pair was the ``order``-th distinct pair ever tried (from 1);
    ``n``: its executions N_e(s, c | D); ``outcomes``: distinct successors seen;
    ``run``: executions since the last one that showed a new successor (the
    executions of the current "epoch", during which the unseen mass is constant)."""

    order: int
    n: int
    outcomes: int
    run: int


class TransitionDataset:
    """A mutable multiset of transitions over one vocabulary."""

    def __init__(self, vocab: Vocabulary, capabilities: Iterable[Capability] = ()) -> None:
        self.vocab = vocab
        self._caps: dict[str, Capability] = {}
        self._n: dict[str, dict[State, dict[State, int]]] = {}
        self._n_sc: dict[str, dict[State, int]] = {}
        self._n_s: dict[State, int] = {}
        self._size = 0
        self._steps = 0
        self._failures: dict[str, int] = {}  # c → failed executions (no transition of D)
        self._failed: list[tuple[Transition, int, str]] = []
        self._log: list[tuple[str, State]] = []
        # Every addition in order: the missing-mass bounds read the order of the outcomes
        # (first_seen, run), so a copy of D must replay it, not only the counts.
        self._additions: list[tuple[Transition, int, int]] = []
        self._order: dict[tuple[State, str], int] = {}  # (s, c) → rank of its first execution
        self._run: dict[tuple[State, str], int] = {}  # (s, c) → executions since its last new outcome
        self._first: dict[tuple[State, str, State], int] = {}  # (s, c, s′) → executions of (s, c) when s′ first came
        for c in capabilities:
            self.declare(c)

    # -- building ---------------------------------------------------------------------
    def declare(self, c: Capability) -> bool:
        """Add a capability to C (no-op if known).  True if it was new."""
        old = self._caps.get(c.name)
        if old is not None:
            if old.intent != c.intent:
                raise DatasetError(f"capability {c.name!r} redeclared with a different intent")
            return False
        self._caps[c.name] = c
        self._n.setdefault(c.name, {})
        self._n_sc.setdefault(c.name, {})
        return True

    def add(self, t: Transition, count: int = 1, steps: int = 0) -> None:
        if count < 1:
            raise DatasetError(f"count must be positive, got {count}")
        full = self.vocab.full_mask
        if t.s & ~full or t.s_next & ~full:
            raise DatasetError(f"transition {t} uses bits outside the vocabulary of {len(self.vocab)} atoms")
        if t.c not in self._caps:
            self.declare(Capability(t.c))
        succ = self._n[t.c].setdefault(t.s, {})
        pair = (t.s, t.c)
        self._order.setdefault(pair, len(self._order) + 1)
        if t.s_next in succ:
            self._run[pair] += count
        else:
            # `count` executions in a row: the first shows the new outcome, the rest repeat it.
            self._first[(t.s, t.c, t.s_next)] = self._n_sc[t.c].get(t.s, 0) + 1
            self._run[pair] = count - 1
        succ[t.s_next] = succ.get(t.s_next, 0) + count
        sc = self._n_sc[t.c]
        sc[t.s] = sc.get(t.s, 0) + count
        self._n_s[t.s] = self._n_s.get(t.s, 0) + count
        self._size += count
        self._steps += steps
        self._log.append((t.c, t.s))
        self._additions.append((t, count, steps))

    def add_failure(self, t: Transition, steps: int = 0, reason: str = "failed") -> None:
        """A failed execution (the agent, the simulator or α raised, or a budget ran
        out), ``t`` from its start to where it stopped.  It is data about failure,
        not about the capability's outcome: its steps count toward the cost, but it
        adds no transition to D, so no pair is "tried" by it and no model, bound or
        verdict rests on it."""
        if t.c not in self._caps:
            self.declare(Capability(t.c))
        self._failed.append((t, steps, reason))
        self._failures[t.c] = self._failures.get(t.c, 0) + 1
        self._steps += steps

    @property
    def failures(self) -> Mapping[str, int]:
        """Failed executions per capability (see :meth:`add_failure`)."""
        return self._failures

    @property
    def failure_count(self) -> int:
        return len(self._failed)

    def failed(self) -> Iterator[tuple[Transition, int, str]]:
        """The failed executions in order: (where it started and stopped, steps, why)."""
        return iter(self._failed)

    def add_record(self, r: Record) -> None:
        self.add(r.transition, steps=r.steps)

    def extend(self, transitions: Iterable[Transition]) -> None:
        for t in transitions:
            self.add(t)

    # -- counts -----------------------------------------------------------------------
    def __len__(self) -> int:
        """|D| counted with multiplicity."""
        return self._size

    @property
    def simulator_steps(self) -> int:
        return self._steps

    def count(self, s: State, c: str, s_next: State) -> int:
        """N_e(s, c, s′ | D)."""
        return self._n.get(c, {}).get(s, {}).get(s_next, 0)

    def count_sc(self, s: State, c: str) -> int:
        """N_e(s, c | D) = |D_SC(s, c)|: executions of c observed from s."""
        return self._n_sc.get(c, {}).get(s, 0)

    def count_s(self, s: State) -> int:
        """N(s; D): observed transitions from s, any capability (initial-state
        sampling weights of the earlier paper, section 3.3)."""
        return self._n_s.get(s, 0)

    def sample(self, s: State, c: str) -> PairSample | None:
        """How (s, c) was sampled (None if it was never tried)."""
        order = self._order.get((s, c))
        if order is None:
            return None
        return PairSample(order, self.count_sc(s, c), len(self.successors(s, c)), self._run[(s, c)])

    @property
    def pairs_tried(self) -> int:
        """How many distinct pairs (s, c) were ever tried (the last rank given)."""
        return len(self._order)

    def first_seen(self, s: State, c: str, s_next: State) -> int:
        """The execution of (s, c), counted from 1, that first showed s′ (0 if none did)."""
        return self._first.get((s, c, s_next), 0)

    def successors(self, s: State, c: str) -> Mapping[State, int]:
        """{s′: N_e(s, c, s′)} for the pair (s, c)."""
        return self._n.get(c, {}).get(s, {})

    def effects(self, s: State, c: str) -> frozenset[Effect]:
        """η_c(s, D): the effects observed when executing c from s."""
        return frozenset(Effect(s2 & ~s, s & ~s2) for s2 in self.successors(s, c))

    def view(self, c: str) -> Mapping[State, Mapping[State, int]]:
        """D_c as {s: {s′: N}}."""
        return self._n.get(c, {})

    def states_of(self, c: str) -> Iterable[State]:
        """States from which c was observed."""
        return self._n.get(c, {}).keys()

    def states(self) -> Iterable[State]:
        """Every state from which some capability was observed."""
        return self._n_s.keys()

    @property
    def capabilities(self) -> tuple[Capability, ...]:
        """The declared capabilities, in declaration order."""
        return tuple(self._caps.values())

    @property
    def capability_table(self) -> Mapping[str, Capability]:
        """The declared capabilities by name."""
        return self._caps

    def unique_count(self) -> int:
        """|T_D|: distinct transitions."""
        return sum(len(succ) for by_s in self._n.values() for succ in by_s.values())

    def unique_transitions(self) -> Iterator[Transition]:
        for c, by_s in self._n.items():
            for s, succ in by_s.items():
                for s2 in succ:
                    yield Transition(s, c, s2)

    def additions(self, start: int = 0) -> Iterator[tuple[Transition, int, int]]:
        """(transition, count, steps) of every :meth:`add` from the ``start``-th on, in
        the order they came: adding them all to an empty dataset gives this one,
        sampling order included."""
        return itertools.islice(self._additions, start, None)

    def first(self, executions: int | None = None) -> TransitionDataset:
        """A new dataset of the additions that make up the first ``executions``
        executions (all: a copy), in the same order."""
        out = TransitionDataset(self.vocab, self.capabilities)
        for t, count, steps in self._additions:
            if executions is not None and len(out) + count > executions:
                break
            out.add(t, count, steps)
        return out

    @property
    def addition_count(self) -> int:
        """How many :meth:`add` calls made the dataset (a cursor for :meth:`additions`)."""
        return len(self._additions)

    def items(self) -> Iterator[tuple[Transition, int]]:
        """(transition, N_e) for every unique transition."""
        for c, by_s in self._n.items():
            for s, succ in by_s.items():
                for s2, n in succ.items():
                    yield Transition(s, c, s2), n

    def __contains__(self, t: object) -> bool:
        return isinstance(t, Transition) and self.count(t.s, t.c, t.s_next) > 0

    # -- change tracking ------------------------------------------------------------
    @property
    def log_position(self) -> int:
        return len(self._log)

    def changes_since(self, position: int) -> list[tuple[str, State]]:
        """(c, s) pairs whose counts changed after ``position`` of the change log."""
        return self._log[position:]
