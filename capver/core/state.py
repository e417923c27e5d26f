"""Symbolic states, effects and transitions (section 2).

A symbolic state s ⊆ ground atoms is a Python ``int`` used as a bitset over the
vocabulary's atom indices: hashing, equality and set algebra are single machine
operations for up to 64 atoms and stay O(n/64) beyond (the benchmark
``capver bench state`` compares it with numpy bit arrays).

An effect η = ⟨η⁺, η⁻⟩ is a pair of bit masks;
``apply(s, η) = (s \\ η⁻) ∪ η⁺`` and the effect observed in ⟨s, c, s′⟩ is
``η(⟨s,c,s′⟩) = ⟨s′ \\ s, s \\ s′⟩``.
"""

from __future__ import annotations

from dataclasses import dataclass

from capver.core.vocabulary import Literal, State, Vocabulary

# State is re-exported: capver imports it from here, beside Effect and Transition.
__all__ = ["NO_EFFECT", "Capability", "Effect", "State", "Transition", "observed_effect"]


@dataclass(frozen=True, slots=True, order=True)
class Effect:
    """η = ⟨η⁺, η⁻⟩ as bit masks of added and deleted atoms."""

    add: int = 0
    delete: int = 0

    def apply(self, s: State) -> State:
        """apply(s, η) = (s ∖ η⁻) ∪ η⁺: the one definition every model, planner and
        export uses."""
        return (s & ~self.delete) | self.add

    def format(self, vocab: Vocabulary) -> str:
        parts = [str(a) for a in vocab.atoms_of(self.add)]
        parts += [f"not {a}" for a in vocab.atoms_of(self.delete)]
        return "{" + ", ".join(parts) + "}" if parts else "{}"


NO_EFFECT = Effect(0, 0)


def observed_effect(s: State, s_next: State) -> Effect:
    """η(⟨s, c, s′⟩) = ⟨s′ \\ s, s \\ s′⟩."""
    return Effect(s_next & ~s, s & ~s_next)


@dataclass(frozen=True, slots=True, order=True)
class Capability:
    """A capability c = κ(i), identified by its name; ``intent`` is the conjunction
    of ground literals i the agent is asked to achieve."""

    name: str
    intent: tuple[Literal, ...] = ()

    @staticmethod
    def for_intent(intent: tuple[Literal, ...]) -> Capability:
        """The capability whose name spells its intent, e.g. ``on(a,b)&~clear(a)``."""
        name = "&".join(lit.short for lit in intent)
        return Capability(name, tuple(intent))

    def achieved(self, vocab: Vocabulary, s: State) -> bool:
        pos, neg = vocab.literals(self.intent)
        return (s & pos) == pos and not (s & neg)


@dataclass(frozen=True, slots=True, order=True)
class Transition:
    """⟨s, c, s′⟩, with c given by its capability name."""

    s: State
    c: str
    s_next: State

    @property
    def effect(self) -> Effect:
        return observed_effect(self.s, self.s_next)

    def format(self, vocab: Vocabulary) -> str:
        return f"{vocab.format_state(self.s)} --{self.c}--> {self.effect.format(vocab)}"
