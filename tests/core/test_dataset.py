"""Tests of the capability-transition dataset D (section 2) and its counts:
N_e(s, c, s′), N_e(s, c) = |D_SC(s, c)|, η_c(s, D), D_c and the change log."""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import given
from hypothesis import strategies as st

from capver import synthetic
from capver.core.dataset import Record, TransitionDataset
from capver.core.state import Capability, Effect, Transition
from capver.core.vocabulary import Atom, Literal
from capver.errors import DatasetError

N_ATOMS = 4
CAPS = ("a", "b", "c")

additions = st.lists(
    st.tuples(
        st.integers(0, (1 << N_ATOMS) - 1),  # s
        st.sampled_from(CAPS),
        st.integers(0, (1 << N_ATOMS) - 1),  # s'
        st.integers(1, 3),  # count
        st.integers(0, 50),  # steps
    ),
    max_size=40,
)


def build(adds: list[tuple[int, str, int, int, int]]) -> TransitionDataset:
    data = TransitionDataset(synthetic.propositional_vocabulary(N_ATOMS))
    for s, c, s2, n, steps in adds:
        data.add(Transition(s, c, s2), count=n, steps=steps)
    return data


class TestCounts:
    @given(additions)
    def test_counts_match_a_multiset(self, adds: list) -> None:
        data = build(adds)
        multiset: Counter[tuple[int, str, int]] = Counter()
        for s, c, s2, n, _ in adds:
            multiset[(s, c, s2)] += n
        assert len(data) == sum(multiset.values())
        assert data.simulator_steps == sum(a[4] for a in adds)
        for s in range(1 << N_ATOMS):
            assert data.count_s(s) == sum(n for (x, _, _), n in multiset.items() if x == s)
            for c in CAPS:
                n_sc = sum(n for (x, y, _), n in multiset.items() if (x, y) == (s, c))
                assert data.count_sc(s, c) == n_sc
                expected_succ = {s2: n for (x, y, s2), n in multiset.items() if (x, y) == (s, c)}
                assert dict(data.successors(s, c)) == expected_succ
                for s2 in range(1 << N_ATOMS):
                    assert data.count(s, c, s2) == multiset[(s, c, s2)]
                    assert (Transition(s, c, s2) in data) == (multiset[(s, c, s2)] > 0)

    @given(additions)
    def test_effect_sets(self, adds: list) -> None:
        data = build(adds)
        for s in range(1 << N_ATOMS):
            for c in CAPS:
                expected = {Effect(s2 & ~x, x & ~s2) for (x, y, s2, _, _) in adds if (x, y) == (s, c)}
                assert data.effects(s, c) == frozenset(expected)

    @given(additions)
    def test_views(self, adds: list) -> None:
        data = build(adds)
        seen = {(s, c, s2) for s, c, s2, _, _ in adds}
        assert {(t.s, t.c, t.s_next) for t in data.unique_transitions()} == seen
        assert len(list(data.unique_transitions())) == data.unique_count() == len(seen)
        assert sum(n for _, n in data.items()) == len(data)
        assert set(data.states()) == {s for s, _, _ in seen}
        assert set(data.capability_table) == {c for _, c, _ in seen}
        for c in CAPS:
            assert set(data.states_of(c)) == {s for s, y, _ in seen if y == c}
            view = data.view(c)
            assert {(s, s2) for s, succ in view.items() for s2 in succ} == {(s, s2) for s, y, s2 in seen if y == c}
        assert data.view("never") == {}
        assert data.count_sc(0, "never") == 0
        assert data.effects(0, "never") == frozenset()

    @given(additions, st.data())
    def test_change_log(self, adds: list, pick: st.DataObject) -> None:
        data = TransitionDataset(synthetic.propositional_vocabulary(N_ATOMS))
        positions = [data.log_position]
        for s, c, s2, n, steps in adds:
            data.add(Transition(s, c, s2), count=n, steps=steps)
            positions.append(data.log_position)
        # one entry per add() call, whatever its count
        assert positions == list(range(len(adds) + 1))
        k = pick.draw(st.integers(0, len(adds)))
        assert data.changes_since(k) == [(c, s) for s, c, _, _, _ in adds[k:]]
        assert data.changes_since(len(adds)) == []

    @given(additions, st.integers(0, 130))
    def test_first_executions_are_the_additions_that_fit(self, adds: list, n: int) -> None:
        data = build(adds)
        fit, total = [], 0
        for a in adds:
            if total + a[3] > n:
                break
            fit.append(a)
            total += a[3]
        first = data.first(n)
        assert list(first.additions()) == list(build(fit).additions()) and len(first) == total <= n
        copy = data.first()
        assert list(copy.additions()) == list(data.additions()) and copy is not data
        assert data.addition_count == len(adds)


class TestBuilding:
    def test_declare(self) -> None:
        intent = (Literal(Atom("p0")),)
        data = TransitionDataset(synthetic.propositional_vocabulary(2), [Capability("k", intent)])
        assert data.declare(Capability("k", intent)) is False
        assert data.declare(Capability("j")) is True
        assert set(data.capability_table) == {"k", "j"}
        assert data.capability_table["k"].intent == intent
        with pytest.raises(DatasetError, match="'k' redeclared"):
            data.declare(Capability("k", ()))

    def test_undeclared_capability_is_declared_on_add(self) -> None:
        data = TransitionDataset(synthetic.propositional_vocabulary(2))
        data.add(Transition(1, "new", 3))
        assert "new" in data.capability_table and data.capability_table["new"].intent == ()

    def test_add_record(self) -> None:
        data = TransitionDataset(synthetic.propositional_vocabulary(2))
        data.add_record(Record(Transition(0, "c", 2), steps=7))
        data.add_record(Record(Transition(0, "c", 2), steps=5))
        assert data.count(0, "c", 2) == 2 and data.simulator_steps == 12

    def test_extend(self) -> None:
        data = TransitionDataset(synthetic.propositional_vocabulary(2))
        data.extend([Transition(0, "c", 1), Transition(0, "c", 1), Transition(3, "d", 0)])
        assert (len(data), data.count(0, "c", 1), data.count(3, "d", 0), data.log_position) == (3, 2, 1, 3)

    @pytest.mark.parametrize("count", [0, -1])
    def test_non_positive_count(self, count: int) -> None:
        data = TransitionDataset(synthetic.propositional_vocabulary(2))
        with pytest.raises(DatasetError, match="count must be positive"):
            data.add(Transition(0, "c", 1), count=count)
        assert len(data) == 0 and data.log_position == 0

    @pytest.mark.parametrize("t", [Transition(4, "c", 0), Transition(0, "c", 8)])
    def test_bits_outside_vocabulary(self, t: Transition) -> None:
        data = TransitionDataset(synthetic.propositional_vocabulary(2))
        with pytest.raises(DatasetError, match="outside the vocabulary of 2 atoms"):
            data.add(t)
        assert len(data) == 0 and data.log_position == 0

    def test_rejected_add_leaves_no_trace(self) -> None:
        data = TransitionDataset(synthetic.propositional_vocabulary(2))
        with pytest.raises(DatasetError):
            data.add(Transition(4, "c", 0))
        assert "c" not in data.capability_table

    def test_contains_only_transitions(self) -> None:
        data = TransitionDataset(synthetic.propositional_vocabulary(2))
        data.add(Transition(0, "c", 1))
        assert (0, "c", 1) not in data
        assert Transition(0, "c", 1) in data
