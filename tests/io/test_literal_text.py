"""The one reader of user-written atoms, literals, states and goals
(:mod:`capver.io.literal_text`): every spelling of a literal means the same, what
is written is read back, and every mistake is located and named."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from capver import synthetic
from capver.core.vocabulary import Atom, Literal
from capver.errors import UsageError
from capver.io.literal_text import parse_atoms, parse_conjunction, parse_dnf, parse_state

VOCAB = synthetic.typed_vocabulary()


def _spellings(atom: Atom) -> list[str]:
    call = f"{atom.predicate}({', '.join(atom.args)})" if atom.args else atom.predicate
    return [str(atom), call, "(" + " ".join((atom.predicate, *atom.args)) + ")"]


def _negations(text: str) -> list[str]:
    return [f"~{text}", f"not {text}", f"(not {text})"]


literals = st.builds(Literal, st.sampled_from(VOCAB.atoms), st.booleans())


@given(
    st.lists(st.lists(literals, min_size=1, max_size=4, unique_by=lambda lit: lit.atom), min_size=1, max_size=3),
    st.data(),
)
def test_every_spelling_reads_back_as_written(dnf: list[list[Literal]], data: st.DataObject) -> None:
    parts = []
    for conj in dnf:
        words = []
        for lit in conj:
            word = data.draw(st.sampled_from(_spellings(lit.atom)))
            words.append(word if lit.positive else data.draw(st.sampled_from(_negations(word))))
        parts.append(data.draw(st.sampled_from([" ", " & ", "&", "  "])).join(words))
    text = " | ".join(parts)
    assert parse_dnf(text, VOCAB) == tuple(tuple(conj) for conj in dnf)


@given(st.sets(st.sampled_from(VOCAB.atoms)))
def test_a_state_is_the_set_of_atoms_it_lists(atoms: set[Atom]) -> None:
    text = " ".join(str(a) for a in sorted(atoms))
    assert parse_state(text, VOCAB) == VOCAB.state(atoms)
    assert set(parse_atoms(text, VOCAB)) == atoms


@given(st.sets(st.sampled_from(VOCAB.atoms)))
def test_a_state_as_capver_prints_it_reads_back(atoms: set[Atom]) -> None:
    state = VOCAB.state(atoms)
    printed = VOCAB.format_state(state)  # {on(a,b), clear(a)}; {} for the empty state
    assert parse_state(printed, VOCAB) == state
    assert parse_state(printed.replace(", ", ","), VOCAB) == state


@pytest.mark.parametrize(
    ("text", "needle"), [("{on(a,b) clear(a)}", "expected ',' or '}'"), ("{on(a,b),}", "column 10")]
)
def test_a_braced_state_with_a_mistake_is_located(text: str, needle: str) -> None:
    with pytest.raises(UsageError, match="--init") as caught:
        parse_state(text, VOCAB)
    assert needle in str(caught.value)


def test_a_name_may_be_quoted_as_in_the_dsl() -> None:
    assert parse_conjunction('"on"(a, "b") ("clear" a)', VOCAB) == (
        Literal(Atom("on", ("a", "b"))),
        Literal(Atom("clear", ("a",))),
    )


@pytest.mark.parametrize(
    ("text", "what", "needle"),
    [
        ("on(a,c)", "--goal", "--goal 'on(a,c)': column 1: on(a,c): unknown object 'c'"),
        ("above(a,b)", "--goal", "unknown predicate 'above'"),
        ("on(a)", "--goal", "predicate 'on' takes 2 argument(s), got 1"),
        ("on(a,b", "--goal", "column 7: unexpected end of the text; expected ')' or ','"),
        ("on(a,b) | ", "--goal", "unexpected end of the text"),
        ("on(a,b) !!", "--goal", "unexpected '!!'"),
        ("clear(a) ~clear(a)", "--goal", "asks for both clear(a) and not clear(a)"),
    ],
)
def test_mistakes_are_located_and_named(text: str, what: str, needle: str) -> None:
    with pytest.raises(UsageError) as info:
        parse_dnf(text, VOCAB, what=what)
    assert needle in str(info.value)
    if "column" in needle or "unexpected" in needle:
        assert str(info.value).splitlines()[-1].strip() == "^"  # a caret under the column


def test_a_state_refuses_negations_and_alternatives() -> None:
    with pytest.raises(UsageError, match="a state lists its true atoms"):
        parse_state("~clear(a)", VOCAB)
    with pytest.raises(UsageError, match=r"'\|' is not allowed here"):
        parse_state("clear(a) | clear(b)", VOCAB)
    assert parse_state("   ", VOCAB) == 0


@given(st.dictionaries(st.sampled_from(VOCAB.atoms), st.booleans(), min_size=1, max_size=5))
def test_the_short_form_of_literals_reads_back(polarity: dict[Atom, bool]) -> None:
    """``~p``, the form capability names and intents use, is one of the reader's spellings."""
    lits = [Literal(atom, positive) for atom, positive in polarity.items()]
    assert list(parse_conjunction(" & ".join(lit.short for lit in lits), VOCAB)) == lits
