"""The property language of ``capver verify`` (:mod:`capver.core.properties`,
:mod:`capver.io.properties_text`, ``grammars/properties.lark``): what each form
means, that what is printed reads back equal, that a state formula means what a
truth table says, and that every mistake is located and named."""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from capver import synthetic
from capver.core.properties import (
    And,
    AtomFormula,
    Comparison,
    Const,
    Eventually,
    ExistsPath,
    ForallPath,
    Globally,
    Implies,
    Not,
    Optimum,
    Or,
    PathFormula,
    ProbabilityBound,
    ProbabilityQuery,
    Property,
    Query,
    RewardQuery,
    StateFormula,
    Temporal,
    Until,
    atoms,
    holds,
    probability_text,
    to_text,
)
from capver.core.vocabulary import Atom, Predicate, Vocabulary
from capver.errors import PropertySemanticError, PropertySyntaxError, SourceError, VocabularyError
from capver.io.properties_text import MAX_DEPTH, parse_properties, parse_property, read_properties

VOCAB = synthetic.typed_vocabulary()
CAPS = (
    "pick-up-a",
    "pick-up-b",
    "put-down-a",
    "put-down-b",
    "stack-a-b",
    "stack-b-a",
    "unstack-a-b",
    "unstack-b-a",
    "on(a,b)",
)

# Names that the printer must quote: keywords of the language, spaces, quotes,
# names that are not identifiers.
AWKWARD = Vocabulary.build(
    [
        Predicate("F"),
        Predicate("true"),
        Predicate("x y"),
        Predicate("G", ("t",)),
        Predicate("U", ("t", "t")),
        Predicate("caps"),
        Predicate("1"),
        Predicate("a.b-c"),
        Predicate("é"),
    ],
    objects={"E": "t", "false": "t", "o 1": "t", '"q"': "t"},
    types={"t": "object"},
)
AWKWARD_CAPS = ("F", "caps", "x y", "on(a,b)", "pick-up-a", "1", '"q"', "é", "true")


def A(predicate: str, *args: str) -> AtomFormula:
    return AtomFormula(Atom(predicate, args))


def parse(text: str) -> Property:
    return parse_property(text, VOCAB, CAPS)


# -- the corpus: every form, in several layouts; reused by the tests below -----------------

CORPUS = [
    "E [ F on(a,b) ]",
    "E [ F<=3 (on a b) ]",
    'E [ F<=0 "on"(a, "b") ]',
    "E [ F (handempty) ]",
    "E [ G true ]",
    "E [ clear(a) U<=4 on(a,b) ]",
    "E [ clear(a) U on(a,b) ]",
    "E [ F clear(a) => clear(b) => handempty ]",
    "E [ F (clear(a) => clear(b)) => handempty ]",
    "E [ F (clear(a) & clear(b)) & handempty ]",
    "E [ F clear(a) & (clear(b) & handempty) ]",
    "E [ F !!clear(a) | !(on a b) ]",
    "A [ G !(holding a) ]",
    "A [ G<=10 handempty | holding(a) | holding(b) ]",
    "A [ F handempty ]",
    "A [ clear(a) & clear(b) U false ]",
    "Pmax=? [ F<=10 on(a,b) & on(b,a) ]",
    "Pmin=? [ F handempty ]",
    "Pmax=? [ G !holding(a) ]",
    "Pmin=? [ G<=2 clear(a) => !holding(a) ]",
    "Pmax=? [ ontable(a) U<=7 on(a,b) ]",
    "Pmin=?[F<=2 on(a,b)=>clear(b)]",
    "P>=0.95 [ F handempty ]",
    "P<=1/3 [ G<=5 (holding a) ]",
    "P<0 [ F false ]",
    "P>1 [ F true ]",
    "P>=2/3 [ clear(b) U handempty ]",
    "P<=1e-3 [ F holding(a) & holding(b) ]",
    "Rmin=? [ F on(a,b) ]",
    "Rmax=? [ F handempty & (clear(a) | clear(b)) ]",
    '"safe": A [ G !(holding(a) & holding(b)) ]',
    '"reach a on b": Pmax=? [ F on(a,b) ] {caps: pick-up-a, stack-a-b}',
    'E [ F on(a,b) ] {caps: "on(a,b)"}',
    '"été": E [ F handempty ] {caps: unstack-a-b, unstack-a-b};',
    "E [ F // a comment inside\n  on(a,b)\n]",
]


@pytest.mark.parametrize("text", CORPUS)
def test_the_corpus_reads_back_from_its_printing(text: str) -> None:
    prop = parse(text)
    printed = to_text(prop)
    again = parse(printed)
    assert again == prop
    assert to_text(again) == printed  # printing is a fixpoint
    assert again.text == printed and prop.text == text.rstrip(";")  # the property as written


def test_the_corpus_as_one_props_file() -> None:
    text = ";\n".join(CORPUS).rstrip(";")  # the last ';' may be left out
    props = parse_properties(text, VOCAB, CAPS, filename="corpus.props")
    assert [p.query for p in props] == [parse(t).query for t in CORPUS]
    assert [p.name for p in props][:3] == ["p1", "p2", "p3"]
    assert props[30].name == "safe" and props[31].name == "reach a on b"
    lines = [1 + text[: text.index(t.rstrip(";"))].count("\n") for t in CORPUS]
    assert [p.line for p in props] == lines


def test_what_the_forms_denote() -> None:
    on_ab = A("on", "a", "b")
    assert parse('"safe": A [ G !(holding a) ]') == Property("safe", ForallPath(Globally(Not(A("holding", "a")))))
    assert parse("E [ F<=3 (on a b) ]").query == ExistsPath(Eventually(on_ab, 3))
    assert parse("E [ clear(a) U<=4 on(a,b) ]").query == ExistsPath(Until(A("clear", "a"), on_ab, 4))
    assert parse("E [ clear(a) U on(a,b) ]").query == ExistsPath(Until(A("clear", "a"), on_ab))
    assert parse("Pmax=? [ F<=10 on(a,b) ]").query == ProbabilityQuery(Optimum.MAX, Eventually(on_ab, 10))
    assert parse("Pmin=? [ G handempty ]").query == ProbabilityQuery(Optimum.MIN, Globally(A("handempty")))
    assert parse("P>=0.95 [ F on(a,b) ]").query == ProbabilityBound(Comparison.GE, Fraction(19, 20), Eventually(on_ab))
    assert parse("P<1/3 [ F on(a,b) ]").query == ProbabilityBound(Comparison.LT, Fraction(1, 3), Eventually(on_ab))
    assert parse("P<=1 [ F on(a,b) ]").query == ProbabilityBound(Comparison.LE, Fraction(1), Eventually(on_ab))
    assert parse("P>0 [ F on(a,b) ]").query == ProbabilityBound(Comparison.GT, Fraction(0), Eventually(on_ab))
    assert parse("Rmin=? [ F on(a,b) ]").query == RewardQuery(Optimum.MIN, on_ab)
    assert parse("Rmax=? [ F true ]").query == RewardQuery(Optimum.MAX, Const(True))
    restricted = parse('E [ F on(a,b) ] {caps: pick-up-a, "stack-a-b", "on(a,b)"}')
    assert restricted.capability_names == frozenset({"pick-up-a", "stack-a-b", "on(a,b)"})
    assert parse("E [ F on(a,b) ]").capability_names is None
    assert parse("E [ F on(a,b) ]").name == "p1"


def test_binding_strength_and_grouping() -> None:
    a, b, c, d, e = (A("clear", "a"), A("clear", "b"), A("handempty"), A("holding", "a"), A("holding", "b"))
    goal = parse("E [ F clear(a) | clear(b) & !handempty => holding(a) => holding(b) ]").query
    assert goal == ExistsPath(Eventually(Implies(Or((a, And((b, Not(c))))), Implies(d, e))))
    assert parse("E [ F (clear(a) => clear(b)) => handempty ]").query == ExistsPath(
        Eventually(Implies(Implies(a, b), c))
    )
    assert parse("E [ F clear(a) & clear(b) & handempty ]").query == ExistsPath(Eventually(And((a, b, c))))
    assert parse("E [ F (clear(a) & clear(b)) & handempty ]").query == ExistsPath(Eventually(And((And((a, b)), c))))
    # `U` binds loosest of all: its operands are whole state formulas.
    assert parse("E [ clear(a) => clear(b) U handempty | holding(a) ]").query == ExistsPath(
        Until(Implies(a, b), Or((c, d)))
    )


def test_every_spelling_of_an_atom_is_the_same_atom() -> None:
    spellings = ["on(a,b)", "on( a , b )", "(on a b)", '"on"(a, "b")', '("on" "a" b)', "((on a b))"]
    assert {parse(f"E [ F {s} ]").query for s in spellings} == {ExistsPath(Eventually(A("on", "a", "b")))}
    nullary = ["handempty", "(handempty)", "handempty()", '"handempty"']
    assert {parse(f"E [ F {s} ]").query for s in nullary} == {ExistsPath(Eventually(A("handempty")))}


def test_keywords_are_words_only_where_they_may_stand() -> None:
    atom = AtomFormula(Atom("U", ("E", "false")))
    assert parse_property("E [ F U(E, false) ]", AWKWARD, ()).query == ExistsPath(Eventually(atom))
    assert parse_property("E [ F F ]", AWKWARD, ()).query == ExistsPath(Eventually(AtomFormula(Atom("F"))))
    assert parse_property('E [ "F" U caps ]', AWKWARD, ()).query == ExistsPath(
        Until(AtomFormula(Atom("F")), AtomFormula(Atom("caps")))
    )
    assert parse_property('E [ F "true" ] {caps: caps}', AWKWARD, ["caps"]).capability_names == frozenset({"caps"})
    assert parse_property("E [ F true ]", AWKWARD, ()).query == ExistsPath(Eventually(Const(True)))


def test_the_printer_quotes_what_must_be_quoted() -> None:
    prop = Property(
        'a "b"\n',
        ExistsPath(Until(AtomFormula(Atom("G", ("o 1",))), AtomFormula(Atom("true")), 2)),
        frozenset({"x y", "F"}),
    )
    assert to_text(prop) == '"a \\"b\\"\\n": E [ "G"("o 1") U<=2 "true" ] {caps: "F", "x y"}'
    assert parse_property(to_text(prop), AWKWARD, AWKWARD_CAPS) == prop


def test_probabilities_are_printed_exactly() -> None:
    assert [
        probability_text(Fraction(n, d)) for n, d in [(0, 1), (1, 1), (1, 2), (19, 20), (1, 3), (3, 40), (1, 1024)]
    ] == ["0", "1", "0.5", "0.95", "1/3", "0.075", "0.0009765625"]


# -- random properties read back from their printing --------------------------------------


def state_formulas(vocab: Vocabulary) -> st.SearchStrategy[StateFormula]:
    leaves = st.builds(Const, st.booleans()) | st.builds(AtomFormula, st.sampled_from(vocab.atoms))

    def extend(children: st.SearchStrategy[StateFormula]) -> st.SearchStrategy[StateFormula]:
        operands = st.lists(children, min_size=2, max_size=3).map(tuple)
        return (
            st.builds(Not, children)
            | st.builds(And, operands)
            | st.builds(Or, operands)
            | st.builds(Implies, children, children)
        )

    return st.recursive(leaves, extend, max_leaves=10)


def path_formulas(formulas: st.SearchStrategy[StateFormula]) -> st.SearchStrategy[PathFormula]:
    bounds = st.none() | st.integers(0, 10**6)
    return (
        st.builds(Eventually, formulas, bounds)
        | st.builds(Globally, formulas, bounds)
        | st.builds(Until, formulas, formulas, bounds)
    )


def queries(vocab: Vocabulary) -> st.SearchStrategy[Query]:
    formulas = state_formulas(vocab)
    paths = path_formulas(formulas)
    optima = st.sampled_from(Optimum)
    probabilities = st.fractions(0, 1, max_denominator=10**4)
    return (
        st.builds(ExistsPath, paths)
        | st.builds(ForallPath, paths)
        | st.builds(ProbabilityQuery, optima, paths)
        | st.builds(ProbabilityBound, st.sampled_from(Comparison), probabilities, paths)
        | st.builds(RewardQuery, optima, formulas)
    )


@given(st.data())
def test_random_properties_read_back_from_their_printing(data: st.DataObject) -> None:
    vocab, caps = data.draw(st.sampled_from([(VOCAB, CAPS), (AWKWARD, AWKWARD_CAPS)]))
    prop = Property(
        data.draw(st.text(min_size=1, max_size=8)),
        data.draw(queries(vocab)),
        data.draw(st.none() | st.frozensets(st.sampled_from(caps), min_size=1)),
    )
    text = to_text(prop)
    again = parse_property(text, vocab, caps)
    assert again == prop
    assert again.text == text and again.line == 1
    assert atoms(again) <= set(vocab.atoms)


# -- meaning of state formulas --------------------------------------------------------------

STATES = np.arange(1 << len(VOCAB), dtype=np.int64)


def truth_table(formula: StateFormula) -> np.ndarray:
    """Which of all the states of VOCAB satisfy ``formula``, computed on whole
    columns (not state by state, as :func:`holds` does)."""
    match formula:
        case Const(value):
            return np.full(len(STATES), value)
        case AtomFormula(atom):
            return (STATES >> VOCAB.index(atom)) & 1 == 1
        case Not(operand):
            return ~truth_table(operand)
        case And(operands):
            return np.logical_and.reduce([truth_table(f) for f in operands])
        case Or(operands):
            return np.logical_or.reduce([truth_table(f) for f in operands])
        case Implies(premise, conclusion):
            return ~truth_table(premise) | truth_table(conclusion)
    raise AssertionError(formula)


def _holds_everywhere(formula: StateFormula) -> list[bool]:
    return [holds(formula, int(s), VOCAB) for s in STATES]


@given(state_formulas(VOCAB))
def test_holds_agrees_with_the_truth_table_on_every_state(formula: StateFormula) -> None:
    assert _holds_everywhere(formula) == truth_table(formula).tolist()


@pytest.mark.parametrize("text", [t for t in CORPUS if "{" not in t])
def test_holds_on_the_corpus_formulas(text: str) -> None:
    query = parse(text).query
    formulas = (
        [query.target]
        if isinstance(query, RewardQuery)
        else [
            f
            for f in (
                getattr(query.path, "hold", None),
                getattr(query.path, "goal", None),
                getattr(query.path, "invariant", None),
            )
            if f is not None
        ]
    )
    for f in formulas:
        assert _holds_everywhere(f) == truth_table(f).tolist()


def test_holds_by_hand() -> None:
    s = VOCAB.state([Atom("on", ("a", "b")), Atom("clear", ("a",)), Atom("handempty")])
    formula = parse("E [ F on(a,b) & clear(a) & !clear(b) & (holding(a) => false) ]").query
    assert isinstance(formula, ExistsPath) and isinstance(formula.path, Eventually)
    assert holds(formula.path.goal, s, VOCAB)
    assert not holds(formula.path.goal, s | 1 << VOCAB.index(Atom("clear", ("b",))), VOCAB)
    with pytest.raises(VocabularyError, match="not in the vocabulary"):
        holds(A("on", "a", "c"), s, VOCAB)


def test_atoms_of_formulas_paths_queries_and_properties() -> None:
    prop = parse("Pmax=? [ clear(a) & !handempty U<=2 on(a,b) | clear(a) ]")
    expected = {Atom("clear", ("a",)), Atom("handempty"), Atom("on", ("a", "b"))}
    assert atoms(prop) == atoms(prop.query) == expected
    assert prop.path is not None and atoms(prop.path) == expected
    assert atoms(Const(True)) == frozenset()
    assert atoms(parse("Rmin=? [ F handempty ]")) == {Atom("handempty")}
    assert parse("Rmin=? [ F handempty ]").path is None


def test_temporal_operators_and_comparisons_are_enums() -> None:
    assert (Eventually.operator, Globally.operator, Until.operator) == (
        Temporal.EVENTUALLY,
        Temporal.GLOBALLY,
        Temporal.UNTIL,
    )
    p = Until(Const(True), Const(False), 3)
    assert p.operator is Temporal.UNTIL
    half = Fraction(1, 2)
    assert [op for op in Comparison if op.compare(half, half)] == [Comparison.LE, Comparison.GE]
    assert Comparison.LT.compare(Fraction(0), half) and Comparison.GT.compare(Fraction(1), half)


def test_the_ast_refuses_what_cannot_be_written() -> None:
    with pytest.raises(ValueError, match="at least two"):
        And((Const(True),))
    with pytest.raises(ValueError, match="at least two"):
        Or(())
    with pytest.raises(ValueError, match="in \\[0, 1\\]"):
        ProbabilityBound(Comparison.LE, Fraction(3, 2), Eventually(Const(True)))
    with pytest.raises(ValueError, match="whole number"):
        Globally(Const(True), -1)
    with pytest.raises(ValueError, match="not empty"):
        Property("", ExistsPath(Eventually(Const(True))))
    with pytest.raises(ValueError, match="at least one capability"):
        Property("x", ExistsPath(Eventually(Const(True))), frozenset())


# -- mistakes -------------------------------------------------------------------------------

PARTIAL = Vocabulary.build(
    VOCAB.predicates.values(),
    objects=dict(VOCAB.objects),
    types=dict(VOCAB.types),
    atoms=[Atom("on", ("a", "b")), Atom("handempty")],
)
UNKNOWN_PREDICATE = "unknown predicate 'above'; expected one of ['clear', 'handempty', 'holding', 'on', 'ontable']"
SOME_CAPS = "on(a,b), pick-up-a, pick-up-b, put-down-a, put-down-b, stack-a-b, stack-a-b-c, stack-b-a"
EXPECT_FORMULA = "expected '!', '(', 'false', 'true', a name or a quoted name such as \"x-1\""
EXPECT_PROPERTY = (
    "expected ';', 'A', 'E', 'P', 'Pmax', 'Pmin', 'R', 'Rmax', 'Rmin', a property name such as"
    ' "safe" or the end of the text'
)
EXPECT_STEPS = "expected a number of capability executions: 0, 1, 2, ..."
EXPECT_P = "expected a probability from 0 to 1 such as 0.95 or 2/3"

MISTAKES = [
    # unknown atoms, with the reason
    ("E [ F above(a,b) ]", PropertySemanticError, 1, 7, f"unknown atom above(a,b): {UNKNOWN_PREDICATE}"),
    ("E [ F on(a,c) ]", PropertySemanticError, 1, 7, "unknown atom on(a,c): unknown object 'c'"),
    ("A [ G !(on a) ]", PropertySemanticError, 1, 8, "unknown atom on(a): predicate 'on' takes 2 argument(s), got 1"),
    (
        "E [ handempty U (clear a b) ]",
        PropertySemanticError,
        1,
        17,
        "unknown atom clear(a,b): predicate 'clear' takes 1 argument(s), got 2",
    ),
    (
        "E [ F on(b,a) ]",
        PropertySemanticError,
        1,
        7,
        "unknown atom on(b,a): the vocabulary has only some atoms of 'on', not this one",
    ),
    # unknown capabilities, with some the model has
    (
        "E [ F on(a,b) ] {caps: pick-up-a, pickup-b}",
        PropertySemanticError,
        1,
        35,
        f"unknown capability 'pickup-b'; did you mean 'pick-up-b'? the model has {SOME_CAPS}, ... (10 in all)",
    ),
    (
        'E [ F on(a,b) ] {caps: "fly"}',
        PropertySemanticError,
        1,
        24,
        f"unknown capability 'fly'; the model has {SOME_CAPS}, ... (10 in all)",
    ),
    # probability bounds
    ("P>=1.5 [ F on(a,b) ]", PropertySemanticError, 1, 4, f"probability bound 1.5 is outside [0, 1]; {EXPECT_P}"),
    ("P<=-0.5 [ F on(a,b) ]", PropertySemanticError, 1, 4, f"probability bound -0.5 is outside [0, 1]; {EXPECT_P}"),
    ("P<4/3 [ F on(a,b) ]", PropertySemanticError, 1, 3, f"probability bound 4/3 is outside [0, 1]; {EXPECT_P}"),
    ("P>1/0 [ F on(a,b) ]", PropertySemanticError, 1, 3, f"probability bound 1/0 divides by zero; {EXPECT_P}"),
    (
        "P=? [ F on(a,b) ]",
        PropertySemanticError,
        1,
        1,
        "P=? is not one number: each scheduler has its own; expected Pmax=? or Pmin=?",
    ),
    # step bounds
    ("E [ F<=-1 on(a,b) ]", PropertySemanticError, 1, 8, f"step bound -1 is negative; {EXPECT_STEPS}"),
    ("A [ G<=2.5 on(a,b) ]", PropertySemanticError, 1, 8, f"step bound 2.5 is not a whole number; {EXPECT_STEPS}"),
    (
        "E [ clear(a) U<=1/2 on(a,b) ]",
        PropertySemanticError,
        1,
        17,
        f"step bound 1/2 is not a whole number; {EXPECT_STEPS}",
    ),
    (
        "Pmax=? [ F<=1e3 on(a,b) ]",
        PropertySemanticError,
        1,
        13,
        f"step bound 1e3 is not a whole number; {EXPECT_STEPS}",
    ),
    # reward queries
    (
        "R=? [ F on(a,b) ]",
        PropertySemanticError,
        1,
        1,
        "R=? is not one number: each scheduler has its own; expected Rmax=? or Rmin=?",
    ),
    (
        "Rmin=? [ G on(a,b) ]",
        PropertySemanticError,
        1,
        10,
        "Rmin=? counts capability executions until a state formula holds; expected F φ, got a G formula",
    ),
    (
        "Rmax=? [ handempty U on(a,b) ]",
        PropertySemanticError,
        1,
        10,
        "Rmax=? counts capability executions until a state formula holds; expected F φ, got a U formula",
    ),
    (
        "Rmin=? [ F<=3 on(a,b) ]",
        PropertySemanticError,
        1,
        11,
        (
            "Rmin=? counts capability executions until a state formula holds, however many it takes;"
            " expected F φ without a step bound"
        ),
    ),
    # names
    (
        '"": E [ F on(a,b) ]',
        PropertySemanticError,
        1,
        1,
        'empty property name; expected a name such as "safe", or none',
    ),
    (
        'E [ F "on\\q"(a,b) ]',
        PropertySyntaxError,
        1,
        10,
        'malformed quoted name "on\\q": Invalid \\escape; expected a JSON string',
    ),
    # syntax
    ("", PropertySyntaxError, 1, 1, "expected a property such as 'Pmax=? [ F goal ]', got none"),
    ("  // only a comment\n", PropertySyntaxError, 1, 20, "expected a property such as 'Pmax=? [ F goal ]', got none"),
    (
        "E [ F on(a,b) ]; A [ G true ]",
        PropertySyntaxError,
        1,
        18,
        "expected one property, got a second one (a .props file holds several)",
    ),
    (
        "E [ F on(a,b) ] A [ G true ]",
        PropertySyntaxError,
        1,
        17,
        "unexpected 'A'; expected ';', '{' or the end of the text",
    ),
    ("Pmax=? [ F on(a,b)", PropertySyntaxError, 1, 19, "unexpected end of the text; expected '&', '=>', ']' or '|'"),
    ("E [ F on(a,b) & ]", PropertySyntaxError, 1, 17, f"unexpected ']'; {EXPECT_FORMULA}"),
    ("E [ F on(a,b) U handempty ]", PropertySyntaxError, 1, 15, "unexpected 'U'; expected ']'"),
    ("E [ on(a,b) ]", PropertySyntaxError, 1, 13, "unexpected ']'; expected 'U'"),  # F or G is missing
    (
        "E [ F (holding a & clear(b)) ]",
        PropertySyntaxError,
        1,
        18,
        "unexpected '&'; expected ')', a name or a quoted name such as \"x-1\"",
    ),
    (
        "Pmax=? [ F<3 on(a,b) ]",
        PropertySyntaxError,
        1,
        11,
        "unexpected '<'; expected '!', '(', '<=', 'false', 'true', a name or a quoted name such as \"x-1\"",
    ),
    ("Pmax [ F on(a,b) ]", PropertySyntaxError, 1, 6, "unexpected '['; expected '=?'"),
    ("P>=p [ F on(a,b) ]", PropertySyntaxError, 1, 4, "unexpected 'p' (a name); expected a number"),
    ("safe: E [ F on(a,b) ]", PropertySyntaxError, 1, 1, f"unexpected 'safe' (a name); {EXPECT_PROPERTY}"),
    (
        "E [ F on(a,b) ] {caps: }",
        PropertySyntaxError,
        1,
        24,
        "unexpected '}'; expected a name or a quoted name such as \"x-1\"",
    ),
    (
        "E [ F on(a,b) ] {capabilities: x}",
        PropertySyntaxError,
        1,
        18,
        "unexpected 'capabilities' (a name); expected 'caps'",
    ),
    (
        "E [ F " + "!" * (MAX_DEPTH + 5) + "handempty ]",
        PropertySemanticError,
        1,
        7 + MAX_DEPTH,
        f"formula nested more than {MAX_DEPTH} deep; expected a shallower formula",
    ),
]


@pytest.mark.parametrize(("text", "kind", "line", "column", "message"), MISTAKES)
def test_mistakes_are_located_and_named(
    text: str, kind: type[SourceError], line: int, column: int, message: str
) -> None:
    caps = (*CAPS, "stack-a-b-c")
    vocab = PARTIAL if "on(b,a)" in text else VOCAB
    with pytest.raises(kind) as info:
        parse_property(text, vocab, caps)
    error = info.value
    assert (error.reason, error.line, error.column, error.filename) == (message, line, column, "--property")
    first, *rest = str(error).split("\n")
    assert first == f"--property:{line}:{column}: {message}"
    assert rest[-1].strip() == "^" and len(rest) == 2  # the source line, and a caret under the column
    shown_line = text.split("\n")[line - 1]
    assert rest[0] == shown_line[max(column - 41, 0) : column - 1 + 40]
    assert rest[1].index("^") == min(column - 1, 40)


def test_a_syntax_error_says_what_was_expected() -> None:
    with pytest.raises(PropertySyntaxError) as info:
        parse("Pmax=? [ F on(a,b)")
    assert info.value.expected == ("'&'", "'=>'", "']'", "'|'")


def test_the_errors_are_value_errors() -> None:
    for text in ("E [ F", "E [ F on(a,c) ]"):
        with pytest.raises(ValueError):
            parse(text)


# -- .props files ------------------------------------------------------------------------------

PROPS = """\
// Properties of the toy Blocksworld model.
// Each property ends with ';' (the last one may go without); names are optional.

"safe": A [ G !(holding(a) & holding(b)) ];   // never both blocks in hand
"reach": Pmax=? [ F<=10 on(a,b) ] {caps: pick-up-a, stack-a-b};
Rmin=? [ F handempty ];      // unnamed: called p3

"slow but sure":
    P>=0.9 [ clear(a)
             U<=5 (on a b) ];
;
E [ F "on"(a, b) ]   // the last, without ';'
"""


def test_a_props_file_with_comments_and_several_properties(tmp_path: Path) -> None:
    path = tmp_path / "blocks.props"
    path.write_text(PROPS, encoding="utf-8")
    props = read_properties(path, VOCAB, CAPS)
    on_ab = A("on", "a", "b")
    assert props == (
        Property("safe", ForallPath(Globally(Not(And((A("holding", "a"), A("holding", "b"))))))),
        Property("reach", ProbabilityQuery(Optimum.MAX, Eventually(on_ab, 10)), frozenset({"pick-up-a", "stack-a-b"})),
        Property("p3", RewardQuery(Optimum.MIN, A("handempty"))),
        Property("slow but sure", ProbabilityBound(Comparison.GE, Fraction(9, 10), Until(A("clear", "a"), on_ab, 5))),
        Property("p5", ExistsPath(Eventually(on_ab))),
    )
    assert [p.line for p in props] == [4, 5, 6, 8, 12]
    assert props[3].text == '"slow but sure":\n    P>=0.9 [ clear(a)\n             U<=5 (on a b) ]'
    assert props[1].text == '"reach": Pmax=? [ F<=10 on(a,b) ] {caps: pick-up-a, stack-a-b}'
    # printed one per line, the file reads back equal
    printed = "".join(to_text(p) + ";\n" for p in props)
    assert parse_properties(printed, VOCAB, CAPS, filename="printed.props") == props


def test_a_file_of_comments_holds_no_properties() -> None:
    assert parse_properties("// nothing yet\n\n;;\n", VOCAB, CAPS, filename="empty.props") == ()


@pytest.mark.parametrize(
    ("text", "line", "column", "message"),
    [
        (
            '"a": E [ F on(a,b) ];\n"b": E [ F handempty ];\n"a": A [ G true ];\n',
            3,
            1,
            'duplicate property name "a": the property on line 1 has it; expected a new name',
        ),
        (
            'E [ F on(a,b) ];\n  "p1": A [ G true ];\n',
            2,
            3,
            'duplicate property name "p1": the unnamed property on line 1 is called so; expected a new name',
        ),
        (
            '"p2": E [ F on(a,b) ];\n\nA [ G true ];\n',
            3,
            1,
            'unnamed property 2 is called "p2", but the property on line 1 has that name; expected a name for one of them',
        ),
        (
            '"a": E [ F on(a,b) ]\n"b": A [ G true ];\n',
            2,
            1,
            """unexpected '"b"' (a property name such as "safe"); expected ';', '{' or the end of the file""",
        ),
        (
            '"a": E [ F on(a,b) ];\n"b": A [ G\n',
            2,
            11,
            "unexpected end of the file; expected '!', '(', '<=', 'false', 'true', a name or a quoted name such as \"x-1\"",
        ),
        (
            '"a": E [ F on(a,b) ];\n"b": A [ G true ] {caps: stack-a-b,\n  pickup-a};',
            3,
            3,
            (
                "unknown capability 'pickup-a'; did you mean 'pick-up-a'? the model has on(a,b), pick-up-a, pick-up-b,"
                " put-down-a, put-down-b, stack-a-b, stack-b-a, unstack-a-b, ... (9 in all)"
            ),
        ),
    ],
)
def test_mistakes_in_a_props_file(text: str, line: int, column: int, message: str) -> None:
    with pytest.raises(SourceError) as info:
        parse_properties(text, VOCAB, CAPS, filename="my.props")
    assert str(info.value).split("\n")[0] == f"my.props:{line}:{column}: {message}"


def test_a_props_file_that_is_not_utf8(tmp_path: Path) -> None:
    path = tmp_path / "bad.props"
    path.write_bytes(b'"a": E [ F on(a,b) ];\n"caf\xe9": A [ G true ];\n')
    with pytest.raises(PropertySyntaxError) as info:
        read_properties(path, VOCAB, CAPS)
    assert (info.value.line, info.value.column) == (2, 5)
    assert "byte 0xe9 is not valid UTF-8" in str(info.value)
