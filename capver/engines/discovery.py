"""Capability discovery (section 3, opening paragraphs).

The agent — or, before any capability is known, the simulator itself — performs
random walks; every atom p(o₁,…,o_k) that an observed effect adds or deletes
becomes an intent (an addition: the positive literal; a deletion: the negative
one), and, because other type-consistent groundings of p are assumed achievable
too, so does every grounding p(o′₁,…,o′_k) of p with the same type signature.
Capabilities are named by their intents (:meth:`Capability.for_intent`).

The same generalisation runs incrementally on transitions observed later
(:meth:`CapabilitySet.observe`), which is how MCQS grows C from D.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

import numpy as np

from capver.core.state import Capability, Effect, Transition
from capver.core.vocabulary import Literal, Vocabulary
from capver.envs.base import Representation, Simulator


class CapabilitySet:
    """The discovered capabilities C, one single-literal intent each.

    Iteration order is canonical — predicate declaration order, additions before
    deletions, atoms in bit order — so it does not depend on the order in which
    effects were observed.
    """

    def __init__(self, vocab: Vocabulary) -> None:
        self.vocab = vocab
        self._seen: set[tuple[str, bool]] = set()
        self._caps: dict[str, Capability] = {}
        self._pred_rank = {name: i for i, name in enumerate(vocab.predicates)}

    # -- growing ------------------------------------------------------------------------
    def observe(self, t: Transition) -> list[Capability]:
        """Generalise the effect of ``t``; returns the capabilities that are new."""
        return self.observe_effect(t.effect)

    def observe_effect(self, eta: Effect) -> list[Capability]:
        new: list[Capability] = []
        for mask, positive in ((eta.add, True), (eta.delete, False)):
            for atom in self.vocab.atoms_of(mask):
                new.extend(self._add_predicate(atom.predicate, positive))
        return sorted(new, key=self._key)

    def observe_all(self, transitions: Iterable[Transition]) -> list[Capability]:
        new: list[Capability] = []
        for t in transitions:
            new.extend(self.observe(t))
        return sorted(new, key=self._key)

    def _add_predicate(self, predicate: str, positive: bool) -> list[Capability]:
        if (predicate, positive) in self._seen:
            return []
        self._seen.add((predicate, positive))
        new = []
        for atom in self.vocab.groundings(predicate):
            # A vocabulary may keep only some groundings as atoms (e.g. those a
            # problem can ever make true); an intent must be a state literal.
            if atom not in self.vocab:
                continue
            c = Capability.for_intent((Literal(atom, positive),))
            if c.name not in self._caps:
                self._caps[c.name] = c
                new.append(c)
        return new

    def _key(self, c: Capability) -> tuple[int, bool, int]:
        lit = c.intent[0]
        return (self._pred_rank[lit.atom.predicate], not lit.positive, self.vocab.index(lit.atom))

    # -- reading ------------------------------------------------------------------------
    @property
    def capabilities(self) -> tuple[Capability, ...]:
        return tuple(sorted(self._caps.values(), key=self._key))

    @property
    def predicates(self) -> set[tuple[str, bool]]:
        """The (predicate, polarity) pairs seen changing so far."""
        return set(self._seen)

    def __len__(self) -> int:
        return len(self._caps)

    def __iter__(self) -> Iterator[Capability]:
        return iter(self.capabilities)

    def __contains__(self, c: object) -> bool:
        if isinstance(c, Capability):
            return self._caps.get(c.name) == c
        return c in self._caps

    def __getitem__(self, name: str) -> Capability:
        return self._caps[name]


def random_walks(
    sim: Simulator[Any],
    alpha: Representation[Any],
    rng: np.random.Generator,
    *,
    n_walks: int,
    length: int,
) -> list[Transition]:
    """Random walks from the simulator's initial state: each step takes a uniformly
    random available action.  Returns one :class:`Transition` per step, labelled with
    the action's ``str``; a walk ends early where no action is available."""
    if n_walks < 0 or length < 0:
        raise ValueError(f"n_walks and length must be non-negative, got {n_walks} and {length}")
    out: list[Transition] = []
    for _ in range(n_walks):
        x = sim.reset(int(rng.integers(2**31)))
        s = alpha(x)
        for _ in range(length):
            actions = sim.available_actions()
            if not actions:
                break
            a = actions[int(rng.integers(len(actions)))]
            s_next = alpha(sim.step(a))
            out.append(Transition(s, str(a), s_next))
            s = s_next
    return out


def discover(
    sim: Simulator[Any],
    alpha: Representation[Any],
    rng: np.random.Generator,
    *,
    n_walks: int = 10,
    length: int = 50,
) -> CapabilitySet:
    """Capabilities discovered from random walks (section 3)."""
    caps = CapabilitySet(alpha.vocabulary)
    caps.observe_all(random_walks(sim, alpha, rng, n_walks=n_walks, length=length))
    return caps
