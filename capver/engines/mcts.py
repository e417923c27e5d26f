"""One Monte Carlo tree search engine (UCT, Kocsis & Szepesvári 2006) shared by
MCQS-E, MCQS-S (section 3.2) and the MCTS planner baselines.

Selection, expansion and policy extraction all pick
``argmax_c UCT(n, c) = Q(n, c) + λ_uct·sqrt(ln N(n) / N(n, c))`` (section 3.2: the
query keeps the exploration bonus "to encourage policies targeting rarely explored
branches"); with ``prior`` given, the pUCT rule
``Q + λ·P(n, c)·sqrt(N(n)) / (1 + N(n, c))`` is used instead (MCTS-U).

Two backups:

* ``"max"`` — MCQS-E's best disagreement along the path,
  Q(n, c) = max(r(T(n, c)), V(T(n, c))), V(n) = max_c Q(n, c); meant for
  deterministic transitions (meta-states of the distinguishing MDP);
* ``"mean"`` — the Monte Carlo average of sampled returns
  Q(n, c) = mean[r + G(child)], i.e. R(s) + Σ_{s′} Pr(s′|s,c) V(s′) estimated from
  the observed successors (MCQS-S, and the planners).

Nodes are keyed by :meth:`SearchProblem.key` of their state, per parent edge, so a
stochastic edge has one child per observed successor.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Generic, Protocol, TypeVar

import numpy as np

S = TypeVar("S")
A = TypeVar("A")


class SearchProblem(Protocol[S, A]):
    """What the engine needs of a (possibly stochastic) MDP."""

    @property
    def deterministic(self) -> bool:
        """A deterministic problem's edge has one child, so the engine descends
        through an existing child without recomputing the transition (the
        distinguishing MDP's meta-state step is the expensive part of MCQS-E).
        Read-only here, so a class constant or a frozen field provides it."""
        ...

    def actions(self, s: S) -> Sequence[A]:
        """Actions available in s (empty: s is terminal)."""
        ...

    def transition(self, s: S, a: A, rng: np.random.Generator) -> tuple[S, float, bool]:
        """Sample (s′, reward of entering s′, s′ is terminal)."""
        ...

    def key(self, s: S) -> Hashable: ...


class Backup(StrEnum):
    """How an edge's value Q is backed up: the best return seen below it (MCQS-E's
    max backup, for deterministic disagreement), or the mean return (MCQS-S and the
    planners, for sampled outcomes)."""

    MAX = "max"
    MEAN = "mean"


@dataclass(frozen=True, slots=True)
class MCTSConfig:
    iterations: int = 200
    horizon: int = 10
    exploration: float = 1.0  # λ_uct
    backup: Backup = Backup.MAX
    rollout: bool = True  # random rollout below a new leaf (else the leaf is worth 0)
    # γ: values from deeper down are worth γ per step.  Queries cost simulator steps,
    # so among equally informative queries MCQS prefers the shorter (γ < 1); γ = 1
    # is the paper's undiscounted backup.
    discount: float = 1.0
    # With the max backup: end the search once every action of the root has been
    # tried and the root's value V reaches this upper bound of all returns — further
    # iterations could only move visit counts, not find a better path.
    value_bound: float | None = None

    def __post_init__(self) -> None:
        try:
            object.__setattr__(self, "backup", Backup(self.backup))  # a plain "max" is accepted too
        except ValueError:
            raise ValueError(f"backup must be 'max' or 'mean', got {self.backup!r}") from None
        if self.iterations < 1 or self.horizon < 1:
            raise ValueError("iterations and horizon must be positive")
        if self.value_bound is not None and self.backup is not Backup.MAX:
            raise ValueError("value_bound needs the max backup (the mean backup keeps no V at the root)")


@dataclass(slots=True)
class Edge(Generic[S, A]):
    visits: int = 0
    total: float = 0.0
    best: float = 0.0
    reward: float = 0.0  # r of entering the child, kept for deterministic problems
    children: dict[Hashable, Node[S, A]] = field(default_factory=dict)

    def q(self, backup: Backup) -> float:
        if self.visits == 0:
            return 0.0
        return self.best if backup is Backup.MAX else self.total / self.visits


@dataclass(slots=True)
class Node(Generic[S, A]):
    state: S
    depth: int
    terminal: bool = False
    visits: int = 0
    value: float = 0.0  # V(n) for the max backup: best value seen below n
    untried: list[A] = field(default_factory=list)
    edges: dict[A, Edge[S, A]] = field(default_factory=dict)
    order: list[A] = field(default_factory=list)
    # (action, edge) in ``order`` once every action is expanded: the UCT argmax of a
    # fully expanded node then runs without a dictionary lookup per action.
    ordered: list[tuple[A, Edge[S, A]]] | None = None


class MCTS(Generic[S, A]):
    """UCT search over a :class:`SearchProblem` from one root state."""

    def __init__(
        self,
        problem: SearchProblem[S, A],
        config: MCTSConfig,
        rng: np.random.Generator,
        prior: Callable[[S, A], float] | None = None,
    ) -> None:
        self.problem = problem
        self.config = config
        self.rng = rng
        self.prior = prior
        self.nodes_created = 0

    def new_node(self, s: S, depth: int, terminal: bool = False) -> Node[S, A]:
        self.nodes_created += 1
        acts: list[A] = [] if terminal or depth >= self.config.horizon else list(self.problem.actions(s))
        # Untried actions are expanded in a random order so that ties between equally
        # unexplored capabilities are not always broken the same way.  Shuffling a copy
        # makes the same swaps from the same draws as indexing by
        # ``rng.permutation(len(acts))`` (numpy shuffles both with one Fisher–Yates
        # loop), at under half the cost: no array, no numpy integers.
        order = list(acts)
        if len(order) > 1:
            self.rng.shuffle(order)
        return Node(s, depth, terminal or not acts, untried=order, order=acts)

    def search(self, root_state: S, root: Node[S, A] | None = None, until_expanded: bool = False) -> Node[S, A]:
        """Run the configured iterations from ``root_state`` (or continue ``root``).
        ``until_expanded``: end once every action of the root has been tried — for a
        caller that already knows one of them is as good as any path can be."""
        root = root if root is not None else self.new_node(root_state, 0)
        bound = self.config.value_bound
        for _ in range(self.config.iterations):
            self._iterate(root)
            if root.terminal or (not root.untried and (until_expanded or (bound is not None and root.value >= bound))):
                break
        return root

    def uct(self, node: Node[S, A], a: A) -> float:
        e = node.edges[a]
        q = e.q(self.config.backup)
        lam = self.config.exploration
        if self.prior is not None:
            return q + lam * self.prior(node.state, a) * math.sqrt(max(node.visits, 1)) / (1 + e.visits)
        if e.visits == 0:
            return math.inf
        return q + lam * math.sqrt(math.log(max(node.visits, 1)) / e.visits)

    def best_action(self, node: Node[S, A], explore: bool = True) -> A | None:
        """argmax UCT (with ``explore``) or argmax Q among the expanded actions; ties go
        to the action listed first by the problem."""
        if not node.edges:
            return None
        return self._argmax(node, explore)

    def _argmax(self, node: Node[S, A], explore: bool) -> A | None:
        # The hot loop of the search: one pass in the problem's action order (so ties
        # resolve to the first action) without building key tuples.
        backup = self.config.backup
        lam = self.config.exploration
        prior = self.prior
        if explore and prior is None:
            log_n = math.log(max(node.visits, 1))
        sqrt_n = math.sqrt(max(node.visits, 1))
        best: A | None = None
        best_v = -math.inf
        edges = node.edges
        # Greedy extraction ignores never-visited edges: their Q of 0 is no estimate and
        # would beat tried actions whenever rewards are negative (pUCT pre-creates them).
        skip_unvisited = not explore and any(e.visits for e in edges.values())
        for a in node.order:
            e = edges.get(a)
            if e is None or (skip_unvisited and e.visits == 0):
                continue
            if e.visits == 0:
                q = 0.0
            else:
                q = e.best if backup is Backup.MAX else e.total / e.visits
            if not explore:
                v = q
            elif prior is not None:
                v = q + lam * prior(node.state, a) * sqrt_n / (1 + e.visits)
            elif e.visits == 0:
                v = math.inf
            else:
                v = q + lam * math.sqrt(log_n / e.visits)
            if v > best_v:
                best, best_v = a, v
        return best

    def _select(self, node: Node[S, A]) -> A:
        if node.untried and self.prior is None:
            return node.untried.pop()
        if self.prior is None:
            return self._uct_expanded(node)
        if node.untried:
            # pUCT scores every action from the start: expand the best-scoring one.
            for b in node.untried:
                node.edges.setdefault(b, Edge())
            node.untried.clear()
        a = self._argmax(node, explore=True)
        assert a is not None
        return a

    def _uct_expanded(self, node: Node[S, A]) -> A:
        """argmax UCT of a node whose actions are all expanded (no prior): the same
        choice as :meth:`_argmax` with ``explore``, ties to the first action listed."""
        ordered = node.ordered
        if ordered is None or len(ordered) != len(node.edges):
            edges = node.edges
            ordered = node.ordered = [(a, edges[a]) for a in node.order if a in edges]
        log_n = math.log(max(node.visits, 1))
        lam = self.config.exploration
        mean = self.config.backup is Backup.MEAN
        sqrt = math.sqrt
        best, best_v = ordered[0][0], -math.inf
        for a, e in ordered:
            n = e.visits
            if n == 0:
                return a  # the first never-visited action scores +inf
            v = (e.total / n if mean else e.best) + lam * sqrt(log_n / n)
            if v > best_v:
                best, best_v = a, v
        return best

    def _iterate(self, root: Node[S, A]) -> None:
        cfg = self.config
        deterministic = self.problem.deterministic
        path: list[tuple[Node[S, A], A, Edge[S, A], float]] = []
        node = root
        while not node.terminal:
            a = self._select(node)
            edge = node.edges.setdefault(a, Edge())
            if deterministic and edge.children:
                child = next(iter(edge.children.values()))
                path.append((node, a, edge, edge.reward))
                node = child
                continue
            s2, r, term = self.problem.transition(node.state, a, self.rng)
            k = self.problem.key(s2)
            known = edge.children.get(k)
            fresh = known is None
            if known is None:
                child = self.new_node(s2, node.depth + 1, term)
                edge.children[k] = child
                edge.reward = r
            else:
                child = known
            path.append((node, a, edge, r))
            node = child
            if fresh:
                break
        tail = self._rollout(node) if cfg.rollout and not node.terminal else 0.0
        below = tail
        node.visits += 1
        if cfg.backup is Backup.MAX:
            node.value = max(node.value, below)
        for parent, _a, edge, r in reversed(path):
            edge.visits += 1
            parent.visits += 1
            below *= cfg.discount
            if cfg.backup is Backup.MAX:
                child_best = max(below, r)
                edge.best = max(edge.best, child_best)
                edge.total += child_best
                parent.value = max(parent.value, edge.best)
                below = parent.value
            else:
                g = r + below
                edge.total += g
                below = g

    def _rollout(self, node: Node[S, A]) -> float:
        s, depth = node.state, node.depth
        acc = 0.0
        weight = 1.0
        while depth < self.config.horizon:
            acts = self.problem.actions(s)
            if not acts:
                break
            a = acts[int(self.rng.integers(len(acts)))]
            s, r, term = self.problem.transition(s, a, self.rng)
            acc = max(acc, weight * r) if self.config.backup is Backup.MAX else acc + weight * r
            weight *= self.config.discount
            depth += 1
            if term:
                break
        return acc

    def principal_path(self, root: Node[S, A], explore: bool = True) -> list[A]:
        """The actions along argmax-UCT children (most visited successor at chance
        nodes), down to the last expanded node."""
        out: list[A] = []
        node = root
        while node.edges:
            a = self.best_action(node, explore)
            if a is None:
                break
            out.append(a)
            edge = node.edges[a]
            if not edge.children:
                break
            node = max(edge.children.values(), key=lambda n: n.visits)
        return out
