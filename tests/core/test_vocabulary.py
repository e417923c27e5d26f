"""Tests of the vocabulary V = ⟨P, O⟩ (section 2): typed groundings, the atom ↔ bit
bijection, user errors and JSON round trips."""

from __future__ import annotations

import itertools
import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from capver.core.vocabulary import ROOT_TYPE, Atom, Literal, Predicate, Vocabulary
from capver.errors import CapverError, VocabularyError
from tests.helpers.corpus import TypedSpec, typed_specs, vehicles_vocabulary


def expected_groundings(spec: TypedSpec, pred: Predicate) -> list[Atom]:
    """Every tuple of objects whose types are subtypes of the parameter types, in
    lexicographic order of the argument tuple."""
    objs = sorted(spec.objects)
    out = []
    for args in itertools.product(objs, repeat=pred.arity):
        if all(t in spec.ancestors(spec.objects[o]) for o, t in zip(args, pred.param_types)):
            out.append(Atom(pred.name, args))
    return out


class TestGroundings:
    @given(typed_specs())
    def test_groundings_are_exactly_the_type_consistent_tuples(self, spec: TypedSpec) -> None:
        vocab = spec.build()
        expected_atoms = []
        for pred in spec.predicates:
            expected = expected_groundings(spec, pred)
            assert list(vocab.groundings(pred.name)) == expected
            expected_atoms += expected
        # default atom list: predicate order, then lexicographic argument order
        assert list(vocab.atoms) == expected_atoms
        assert len(vocab) == len(expected_atoms)

    @given(typed_specs())
    def test_objects_of_includes_subtypes(self, spec: TypedSpec) -> None:
        vocab = spec.build()
        for t in [ROOT_TYPE, *spec.types]:
            assert vocab.objects_of(t) == sorted(o for o, ot in spec.objects.items() if t in spec.ancestors(ot))

    def test_hand_written_hierarchy(self) -> None:
        vocab = vehicles_vocabulary()
        assert vocab.objects_of("vehicle") == ["c1", "c2", "t1"]
        assert vocab.objects_of("car") == ["c1", "c2"]
        assert vocab.objects_of("object") == ["c1", "c2", "depot", "home", "t1"]
        assert vocab.is_subtype("car", "vehicle") and vocab.is_subtype("car", "object")
        assert not vocab.is_subtype("vehicle", "car") and not vocab.is_subtype("truck", "car")
        at = [str(a) for a in vocab.groundings("at")]
        assert at == [f"at({v},{loc})" for v in ("c1", "c2", "t1") for loc in ("depot", "home")]
        assert [str(a) for a in vocab.groundings("fast")] == ["fast(c1)", "fast(c2)"]
        assert [str(a) for a in vocab.groundings("loaded")] == ["loaded(t1)"]
        assert [str(a) for a in vocab.groundings("raining")] == ["raining"]
        # 6 at + 2 fast + 1 loaded + 4 road + 1 raining
        assert len(vocab) == 14

    def test_explicit_atom_list_keeps_its_order(self) -> None:
        full = vehicles_vocabulary()
        chosen = [Atom("raining"), Atom("at", ("t1", "home")), Atom("fast", ("c2",))]
        vocab = Vocabulary.build(full.predicates.values(), objects=full.objects, types=full.types, atoms=chosen)
        assert vocab.atoms == tuple(chosen)
        assert [vocab.index(a) for a in chosen] == [0, 1, 2]
        assert Atom("fast", ("c1",)) not in vocab
        with pytest.raises(VocabularyError, match="fast\\(c1\\)"):
            vocab.index("fast(c1)")


class TestAtomBits:
    @given(typed_specs())
    def test_atom_index_bijection(self, spec: TypedSpec) -> None:
        vocab = spec.build()
        assert sorted(vocab.index(a) for a in vocab.atoms) == list(range(len(vocab)))
        for i, a in enumerate(vocab.atoms):
            assert vocab.index(a) == i
            assert vocab.index(str(a)) == i
            assert Atom.parse(str(a)) == a
            assert a in vocab
            assert vocab.state([a]) == 1 << i
        assert vocab.full_mask == (1 << len(vocab)) - 1

    @given(st.data())
    def test_state_atoms_round_trip(self, data: st.DataObject) -> None:
        vocab = vehicles_vocabulary()
        s = data.draw(st.integers(0, vocab.full_mask))
        atoms = vocab.atoms_of(s)
        assert atoms == [vocab.atoms[i] for i in range(len(vocab)) if s >> i & 1]
        assert vocab.state(atoms) == s
        assert vocab.state(str(a) for a in atoms) == s
        assert vocab.format_state(s) == "{" + ", ".join(str(a) for a in atoms) + "}"

    def test_literal_masks(self) -> None:
        vocab = vehicles_vocabulary()
        lits = [Literal(Atom("raining")), Literal(Atom("fast", ("c1",)), False), Literal(Atom("loaded", ("t1",)))]
        pos, neg = vocab.literals(lits)
        assert pos == vocab.state(["raining", "loaded(t1)"])
        assert neg == vocab.state(["fast(c1)"])
        assert str(lits[1]) == "not fast(c1)"


class TestErrors:
    def test_unknown_predicate(self) -> None:
        vocab = vehicles_vocabulary()
        with pytest.raises(VocabularyError, match="unknown predicate 'drives'"):
            vocab.check_atom(Atom("drives", ("c1",)))
        with pytest.raises(VocabularyError, match="drives"):
            list(vocab.groundings("drives"))

    def test_unknown_object(self) -> None:
        vocab = vehicles_vocabulary()
        with pytest.raises(VocabularyError, match="unknown object 'bus'"):
            vocab.check_atom(Atom("at", ("bus", "home")))
        with pytest.raises(VocabularyError, match="at\\(bus,home\\)"):
            vocab.index("at(bus,home)")

    def test_wrong_arity(self) -> None:
        vocab = vehicles_vocabulary()
        with pytest.raises(VocabularyError, match="takes 2 argument\\(s\\), got 1"):
            vocab.check_atom(Atom("at", ("c1",)))
        with pytest.raises(VocabularyError, match="takes 0 argument\\(s\\), got 1"):
            vocab.check_atom(Atom("raining", ("home",)))

    def test_wrong_type(self) -> None:
        vocab = vehicles_vocabulary()
        with pytest.raises(VocabularyError, match="'t1' has type 'truck', expected 'car'"):
            vocab.check_atom(Atom("fast", ("t1",)))
        with pytest.raises(VocabularyError, match="expected 'vehicle'"):
            vocab.check_atom(Atom("at", ("home", "home")))
        # the same atom list given explicitly is checked too
        with pytest.raises(VocabularyError, match="expected 'car'"):
            Vocabulary.build(
                vocab.predicates.values(), objects=vocab.objects, types=vocab.types, atoms=[Atom("fast", ("t1",))]
            )

    def test_well_typed_atoms_pass(self) -> None:
        vocab = vehicles_vocabulary()
        for a in vocab.atoms:
            vocab.check_atom(a)  # must not raise
        assert vocab.index(Atom("at", ("t1", "depot"))) == vocab.atoms.index(Atom("at", ("t1", "depot")))

    @pytest.mark.parametrize(
        ("kwargs", "message"),
        [
            ({"predicates": [Predicate("p"), Predicate("p")]}, "duplicate predicate 'p'"),
            ({"predicates": [Predicate("p", ("ghost",))]}, "undeclared type 'ghost'"),
            ({"predicates": [], "objects": {"a": "ghost"}}, "undeclared type 'ghost'"),
            ({"predicates": [], "types": {"a": "b", "b": "a"}}, "cycle"),
            ({"predicates": [], "types": {"a": "missing"}}, "unknown parent type 'missing'"),
            ({"predicates": [Predicate("p")], "atoms": [Atom("p"), Atom("p")]}, "duplicate atom p"),
        ],
    )
    def test_bad_vocabularies(self, kwargs: dict, message: str) -> None:
        with pytest.raises(VocabularyError, match=message):
            Vocabulary.build(**kwargs)

    def test_unknown_type_query(self) -> None:
        with pytest.raises(VocabularyError, match="unknown type 'ghost'"):
            vehicles_vocabulary().objects_of("ghost")

    @pytest.mark.parametrize("text", ["", "p(a,b", "p(a,,b)", "(a)"])
    def test_malformed_atom_text(self, text: str) -> None:
        with pytest.raises(VocabularyError):
            Atom.parse(text)

    def test_errors_are_capver_and_value_errors(self) -> None:
        with pytest.raises(CapverError):
            vehicles_vocabulary().index("nope")
        with pytest.raises(ValueError):
            vehicles_vocabulary().index("nope")

    def test_atom_parse_forms(self) -> None:
        assert Atom.parse("p") == Atom("p", ())
        assert Atom.parse("p()") == Atom("p", ())
        assert Atom.parse(" on( a , b ) ") == Atom("on", ("a", "b"))


class TestJson:
    @given(typed_specs())
    def test_round_trip(self, spec: TypedSpec) -> None:
        vocab = spec.build()
        text = json.dumps(vocab.to_json())
        back = Vocabulary.from_json(json.loads(text))
        assert back == vocab
        assert back.atoms == vocab.atoms
        assert [back.index(a) for a in vocab.atoms] == list(range(len(vocab)))
        assert dict(back.types) == dict(vocab.types)
        assert dict(back.objects) == dict(vocab.objects)
        assert dict(back.predicates) == dict(vocab.predicates)

    def test_round_trip_keeps_explicit_atom_subset(self) -> None:
        full = vehicles_vocabulary()
        sub = Vocabulary.build(
            full.predicates.values(), objects=full.objects, types=full.types, atoms=list(reversed(full.atoms[:5]))
        )
        back = Vocabulary.from_json(json.loads(json.dumps(sub.to_json())))
        assert back.atoms == tuple(reversed(full.atoms[:5]))
        assert back == sub

    @pytest.mark.parametrize(
        "record",
        [
            {"types": {}, "objects": {}, "predicates": {}},  # no atoms
            {"types": {}, "objects": {}, "atoms": []},  # no predicates
            {"types": {}, "objects": {}, "predicates": {"p": []}, "atoms": ["q"]},  # unknown predicate
            {"types": {}, "objects": {}, "predicates": 3, "atoms": []},  # wrong shape
        ],
    )
    def test_malformed_records(self, record: dict) -> None:
        with pytest.raises(VocabularyError):
            Vocabulary.from_json(record)
