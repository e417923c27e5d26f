"""The IC3 engine (:mod:`capver.engines.verification.ic3`, z3's Spacer) against the
BDD engine and the brute-force reference of tests/engines/verification/test_qualitative_engines.py, its
invariants against plain z3 (:func:`check_invariant`) and against the definition of
an inductive invariant evaluated state by state, and the invariants a certificate
carries through ``capver certify``.

For all random models (hypothesis: random truths, partial and total, and the h∧ / h∨
learned from data sampled from them) and every safety query of a corpus (``A [ G φ ]``,
``E [ F φ ]``, ``E [ ψ U φ ]``, bounded and not, with and without a capability
restriction): the IC3 verdict is the BDD engine's and the reference's, every
invariant passes :func:`check_invariant`, holds in every reachable state and is
refused once tampered with, and every run replays on the model and satisfies (E F,
E U) or violates (A G) the path formula.  ``capver verify --engine ic3 --save`` puts
its proofs of ``A [ G φ ]`` into the run's certificate, which ``capver certify``
re-checks (and refuses once an invariant is tampered with).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
import z3
from hypothesis import given
from hypothesis import strategies as st

from capver.core.properties import Const, ExistsPath, ForallPath, Property, formula_text, holds, name_text
from capver.core.state import State
from capver.engines.verification.ic3 import (
    STEPS,
    IC3Engine,
    IC3Result,
    Invariant,
    check_invariant,
    check_property_invariant,
    invariant_failures,
    safety_problem,
)
from capver.engines.verification.symbolic import SymbolicEngine
from capver.io import certificate, dsl
from capver.io.properties_text import parse_property
from capver.model.capability_model import CompoundModel
from tests.engines.verification.test_qualitative_engines import (
    KINDS,
    Reference,
    check_witness,
    random_case,
    random_formula,
    seeds,
)
from tests.helpers.cli import capver_in_process
from tests.helpers.paths import ROOT

MODELS = ROOT / "models"


def safety_corpus(rng: np.random.Generator, model: CompoundModel) -> list[Property]:
    """Every query IC3 answers, bounded and not, over random formulas; two restricted
    to some capabilities."""
    vocab, caps = model.vocabulary, list(model)
    texts = []
    for _ in range(2):
        a, b = (formula_text(random_formula(rng, vocab)) for _ in range(2))
        k = int(rng.integers(0, 5))
        texts += [
            f"A [ G {a} ]",
            f"A [ G<={k} {a} ]",
            f"E [ F {a} ]",
            f"E [ F<={k} {a} ]",
            f"E [ ({a}) U ({b}) ]",
            f"E [ ({a}) U<={k} ({b}) ]",
        ]
    if len(caps) > 1:
        some = sorted(set(rng.choice(caps, size=max(1, len(caps) // 2), replace=False).tolist()))
        a = formula_text(random_formula(rng, vocab))
        restriction = "{caps: " + ", ".join(name_text(c) for c in some) + "}"
        texts += [f"E [ F {a} ] {restriction}", f"A [ G {a} ] {restriction}"]
    return [parse_property(t, vocab, caps) for t in texts]


def inductive(ref: Reference, prop: Property, states: set[State]) -> bool:
    """The definition, state by state: init ∈ X, X ⊆ safe, and the successors of X's
    hold ∧ safe states (by the allowed capabilities) are in X (unbounded queries)."""
    p = safety_problem(prop)
    vocab = ref.model.vocabulary
    caps = list(ref.model) if p.capabilities is None else sorted(p.capabilities)
    if ref.init not in states or any(holds(p.goal, s, vocab) for s in states):
        return False
    for s in states:
        if holds(p.hold, s, vocab):
            for c in caps:
                if any(t not in states for t in ref.model[c].distribution(s)):
                    return False
    return True


def reached(ref: Reference, prop: Property) -> set[State]:
    """The states runs from init reach through hold ∧ ¬goal states (the goal states
    included)."""
    p = safety_problem(prop)
    vocab = ref.model.vocabulary
    seen, todo = {ref.init}, [ref.init]
    while todo:
        s = todo.pop()
        if holds(p.hold, s, vocab) and not holds(p.goal, s, vocab):
            for _, t in ref.succ[s]:
                if t not in seen:
                    seen.add(t)
                    todo.append(t)
    return seen


def states_formula(n_atoms: int, states: set[State]) -> Invariant:
    """The invariant "x is one of ``states``" over atoms p0 … p{n-1}."""
    xs = [z3.Bool(f"p{i}") for i in range(n_atoms)]
    cubes = [z3.And([x if s >> i & 1 else z3.Not(x) for i, x in enumerate(xs)]) for s in sorted(states)]
    return Invariant.of(z3.Or(cubes) if cubes else z3.BoolVal(False))


def agree(model: CompoundModel, init: State, props: list[Property], bmc_depth: int = 0) -> list[IC3Result]:
    """IC3, BDD and brute force agree on every property; invariants and runs check."""
    ic3 = IC3Engine(model, bmc_depth=bmc_depth)
    bdd = SymbolicEngine(model)
    out = []
    for prop in props:
        ref = Reference.explore(model, init, prop.capability_names)
        query = prop.query
        assert isinstance(query, ExistsPath | ForallPath)
        res = ic3.check(prop, init)
        out.append(res)
        assert res.engine == "ic3"
        assert res.holds == (init in ref.satisfying(query)) == bdd.check(prop, init, counts=True).holds, prop.text
        problem = safety_problem(prop)
        reachable_goal = res.holds != problem.holds_if_unreachable
        if reachable_goal:
            assert res.invariant is None and res.witness is not None, prop.text
            assert res.witness_source in ("spacer", "bmc")
            assert res.witness.replays(model)
            check_witness(ref, prop, res.witness, isinstance(query, ExistsPath))
            continue
        assert res.witness is None and res.invariant is not None, prop.text
        inv = res.invariant
        assert check_property_invariant(model, init, prop, inv), (prop.text, inv.smtlib)
        assert check_invariant(
            model, init, problem.safe, inv, hold=problem.hold, capabilities=problem.capabilities, bound=problem.bound
        )
        assert Invariant.parse(inv.smtlib) == inv
        assert inv.nodes >= 1 and inv.literals >= inv.lemmas >= (0 if inv.smtlib.strip() == "(assert true)" else 1)
        formula = inv.formula(model.ctx)
        if problem.bound is None:
            # Over the atoms only, and true in every state a run through hold ∧ ¬goal
            # states reaches.
            assert {str(v) for v in formula.get_free_variables()} <= {str(v) for v in model.ctx.smt.cur}
            assert all(model.ctx.smt.evaluate(formula, s) for s in reached(ref, prop)), prop.text
        tampered(model, init, prop, inv)
    return out


def tampered(model: CompoundModel, init: State, prop: Property, inv: Invariant) -> None:
    """Edits that must break an invariant: excluding the initial state (initiation)
    and admitting a goal state (safety, when one exists)."""
    p = safety_problem(prop)
    cur = [z3.Bool(str(a)) for a in model.vocabulary.atoms]
    minterm = z3.And([x if init >> i & 1 else z3.Not(x) for i, x in enumerate(cur)])
    without_init = Invariant.of(z3.And(inv.expr(), z3.Not(minterm)))
    assert "initiation" in invariant_failures(
        model, init, p.safe, without_init, hold=p.hold, capabilities=p.capabilities, bound=p.bound
    )
    bad = model.ctx.smt.find_model(model.ctx.smt.mgr.And(_smt(model, p.goal)))
    if bad is not None:
        g = model.ctx.smt.state_of(bad)
        goal_state = z3.And([x if g >> i & 1 else z3.Not(x) for i, x in enumerate(cur)])
        with_bad = Invariant.of(z3.Or(inv.expr(), goal_state))
        assert not check_property_invariant(model, init, prop, with_bad)


def _smt(model: CompoundModel, f: object) -> object:
    from capver.engines.verification.bmc import formula_smt

    return formula_smt(model.ctx, f)  # type: ignore[arg-type]


# =====================================================================================
# Random models
# =====================================================================================


@given(seed=seeds, n_atoms=st.integers(3, 5), kind=st.sampled_from(KINDS))
def test_ic3_agrees_with_bdd_and_brute_force(seed: int, n_atoms: int, kind: str) -> None:
    try:
        model, init = random_case(seed, n_atoms, kind)
    except ValueError:
        return  # sample_dataset: the random truth covers none of the sampled states
    agree(model, init, safety_corpus(np.random.default_rng(seed + 1), model))


@given(seed=seeds, n_atoms=st.integers(2, 4), kind=st.sampled_from(KINDS), data=st.data())
def test_check_invariant_is_the_definition(seed: int, n_atoms: int, kind: str, data: st.DataObject) -> None:
    """For every set X of states written as a formula, check_invariant accepts X
    exactly when X is an inductive invariant proving the property (brute force)."""
    try:
        model, init = random_case(seed, n_atoms, kind)
    except ValueError:
        return
    rng = np.random.default_rng(seed + 2)
    vocab, caps = model.vocabulary, list(model)
    a, b = (formula_text(random_formula(rng, vocab)) for _ in range(2))
    texts = [f"A [ G {a} ]", f"E [ ({a}) U ({b}) ]"]
    if len(caps) > 1:
        texts.append(f"A [ G {a} ] {{caps: {name_text(caps[0])}}}")
    everything = list(range(1 << n_atoms))
    for text in texts:
        prop = parse_property(text, vocab, caps)
        ref = Reference.explore(model, init, prop.capability_names)
        chosen = data.draw(st.sets(st.sampled_from(everything)))
        # Also the least candidate, the reachable states, which is inductive exactly
        # when the goal is unreachable.
        for states in (set(chosen), set(ref.succ) if isinstance(prop.query, ForallPath) else set(chosen) | {init}):
            inv = states_formula(n_atoms, states)
            assert check_property_invariant(model, init, prop, inv) == inductive(ref, prop, states), (text, states)


def test_tampered_invariants_fail() -> None:
    """toy_blocks, "never both held": false fails initiation, true safety, and
    ¬holding(a) consecution (the arm picks a up)."""
    parsed = dsl.read(MODELS / "toy_blocks.capm")
    model, init = parsed.model, parsed.initial_state()[0]
    prop = parse_property("A [ G !(holding(a) & holding(b)) ]", model.vocabulary, list(model))
    res = IC3Engine(model).check(prop, init)
    assert res.holds and res.invariant is not None
    assert check_property_invariant(model, init, prop, res.invariant)
    p = safety_problem(prop)

    def fails(text: str) -> list[str]:
        inv = Invariant(text, 0, 0, 0)  # as a tampered certificate would give it
        return invariant_failures(model, init, p.safe, inv, hold=p.hold, capabilities=p.capabilities)

    assert fails("(assert false)") == ["initiation"]
    assert fails("(assert true)") == ["safety"]
    assert fails("(declare-fun |holding(a)| () Bool)(assert (not |holding(a)|))") == ["consecution"]
    assert fails("(declare-fun |holding(z)| () Bool)(assert (not |holding(z)|))")[0].startswith("the symbol")
    assert fails("(assert (= 1 1)) (assert true)")[0].startswith("expected one assertion")
    assert fails("(assert")[0].startswith("not an SMT-LIB script")


def test_invariant_sizes() -> None:
    """Nodes count the DAG (shared sub-terms once), literals the tree."""
    a, b, c, n = z3.Bool("a"), z3.Bool("b"), z3.Bool("c"), z3.Int(STEPS)
    shared = z3.Or(a, z3.Not(b))
    inv = Invariant.of(z3.And(shared, z3.Or(shared, c), n <= 3))
    # and, the two ors, a, not b, b, c, n <= 3, n, 3
    assert (inv.nodes, inv.lemmas, inv.literals) == (10, 3, 6)
    assert Invariant.of(z3.BoolVal(True)) == Invariant("(assert true)\n", 1, 0, 0)  # no lemma, no literal


def test_bounded_queries_count_steps() -> None:
    """A [ G<=k ¬on(a,b) ] on toy_blocks: on(a,b) needs two executions, so it holds
    for k = 1 (an invariant over the step counter) and fails for k = 2."""
    parsed = dsl.read(MODELS / "toy_blocks.capm")
    model, init = parsed.model, parsed.initial_state()[0]
    vocab, caps = model.vocabulary, list(model)
    one = parse_property("A [ G<=1 !on(a,b) ]", vocab, caps)
    res = IC3Engine(model).check(one, init)
    assert res.holds and res.invariant is not None and f"|{STEPS}|" in res.invariant.smtlib
    assert check_property_invariant(model, init, one, res.invariant)
    # The same invariant read without the bound (the counter a free constant) does not
    # prove the unbounded property, which fails.
    unbounded = parse_property("A [ G !on(a,b) ]", vocab, caps)
    assert not check_property_invariant(model, init, unbounded, res.invariant)
    two = IC3Engine(model).check(parse_property("A [ G<=2 !on(a,b) ]", vocab, caps), init)
    assert not two.holds and two.witness is not None and len(two.witness) == 2 and two.witness.replays(model)
    assert not IC3Engine(model).check(unbounded, init).holds


@pytest.mark.parametrize(
    ("name", "init"),
    [
        ("toy_blocks.capm", "ontable(a) ontable(b) clear(a) clear(b) handempty"),
        ("door_key.capm", "key-in(nw) agent-in(nw)"),
        ("door_key.capm", "key-in(se) agent-in(nw)"),
    ],
)
def test_ic3_on_model_files(name: str, init: str) -> None:
    model = dsl.read(MODELS / name).model
    s0 = model.vocabulary.state(init.split())
    props = safety_corpus(np.random.default_rng(5), model)
    agree(model, s0, props)
    # BMC first for runs of up to 2 steps, Spacer for the rest: the same verdicts.
    sources = {r.witness_source for r in agree(model, s0, props, bmc_depth=2)}
    assert "bmc" in sources


def test_shortest_runs() -> None:
    """``shortest=True``: the run has the BDD engine's (shortest) length."""
    parsed = dsl.read(MODELS / "toy_blocks.capm")
    model, init = parsed.model, parsed.initial_state()[0]
    for text in ["E [ F on(a,b) ]", "A [ G !on(b,a) ]", "E [ !holding(b) U on(a,b) ]", "E [ F holding(a) ]"]:
        prop = parse_property(text, model.vocabulary, list(model))
        bdd = SymbolicEngine(model).check(prop, init)
        res = IC3Engine(model).check(prop, init, shortest=True)
        assert res.holds == bdd.holds
        if bdd.witness is not None:
            assert res.witness is not None and len(res.witness) == len(bdd.witness) and res.witness.replays(model)


def test_queries_ic3_does_not_answer() -> None:
    model = dsl.read(MODELS / "door_key.capm").model
    vocab, caps = model.vocabulary, list(model)
    for text in ["E [ G door-open ]", "A [ F door-open ]", "A [ door-open U agent-in(se) ]", "Pmax=? [ F door-open ]"]:
        with pytest.raises(TypeError):
            IC3Engine(model).check(parse_property(text, vocab, caps), 0)
    res = IC3Engine(model).check(parse_property("E [ F true ]", vocab, caps), 0)
    assert res.holds and res.witness is not None and len(res.witness) == 0
    assert IC3Engine(model).check(parse_property("A [ G true ]", vocab, caps), 0).invariant is not None
    assert safety_problem(parse_property("E [ F door-open ]", vocab, caps)).hold == Const(True)


# =====================================================================================
# Learned models
# =====================================================================================


def test_learned_first_responders_h_or() -> None:
    """The shipped LAO* run's h∨ (4,608 reachable states): "never both victims dying"
    holds, with an invariant z3 re-checks; "never both healthy" fails with a run."""
    parsed = dsl.read(MODELS / "learned" / "first_responders_lao" / "h_or.capm")
    model, init = parsed.model, parsed.initial_state()[0]
    vocab, caps = model.vocabulary, list(model)
    safe = parse_property("A [ G !(victim-dying(z1) & victim-dying(z2)) ]", vocab, caps)
    engine = IC3Engine(model)
    res = engine.check(safe, init)
    assert res.holds and res.invariant is not None
    assert check_property_invariant(model, init, safe, res.invariant)
    reach = SymbolicEngine(model)
    assert reach.check(safe, init, counts=True).holds
    states = reach.reachable(init)
    formula = res.invariant.formula(model.ctx)
    assert reach.bdd.conj(states, reach.bdd.neg(model.ctx.bdd_of_formula(formula))) == reach.bdd.false
    unsafe = parse_property("A [ G !(victim-healthy(z1) & victim-healthy(z2)) ]", vocab, caps)
    bad = engine.check(unsafe, init)
    assert not bad.holds and bad.witness is not None and bad.witness.replays(model)
    assert holds(unsafe.query.path.invariant, bad.witness.states[-1], vocab) is False  # type: ignore[union-attr]


# =====================================================================================
# Certificates
# =====================================================================================

PROPERTY = "A [ G !(holding(a) & holding(b)) ]"


@pytest.fixture(scope="module")
def blocks_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("ic3") / "run"
    res = capver_in_process(
        "learn",
        "--agent",
        "lao",
        "--domain",
        "blocks",
        "--method",
        "mcqs-e",
        "--max-steps",
        "60",
        "--out",
        str(out),
        "--quiet",
    )
    assert res.returncode == 0, res.stderr
    # The pessimistic model: the arm holds one block at a time in every observed run.
    parsed = dsl.read(out / "h_and.capm")
    prop = parse_property(PROPERTY, parsed.vocabulary, list(parsed.model))
    result = IC3Engine(parsed.model).check(prop, parsed.initial_state()[0])
    assert result.holds and result.invariant is not None
    claim = certificate.add_invariant(out, PROPERTY, "h_and.capm", result.invariant)
    assert claim.sha256 == certificate.sha256(out / "h_and.capm")
    return out


def _copy(run: Path, tmp_path: Path) -> Path:
    shutil.copytree(run, tmp_path / "run")
    return tmp_path / "run"


def test_certify_rechecks_a_recorded_invariant(blocks_run: Path) -> None:
    cert = certificate.read(blocks_run)
    assert [c.property_text for c in cert.invariants] == [PROPERTY]
    assert cert.invariants[0].model == "h_and.capm" and cert.invariants[0].lemmas >= 1
    res = capver_in_process("certify", str(blocks_run))
    assert res.returncode == 0, res.stdout + res.stderr
    assert f"{PROPERTY} on h_and.capm" in res.stdout and "re-checked" in res.stdout


def test_a_tampered_invariant_fails_certify(blocks_run: Path, tmp_path: Path) -> None:
    run = _copy(blocks_run, tmp_path)
    body = json.loads((run / certificate.NAME).read_text(encoding="utf-8"))
    body["invariants"][0]["invariant"] = "(assert true)"  # proves nothing
    (run / certificate.NAME).write_text(json.dumps(body), encoding="utf-8")
    res = capver_in_process("certify", str(run))
    assert res.returncode == 1
    assert "CERTIFICATE DOES NOT HOLD" in res.stdout and "the invariant fails" in res.stdout


def test_an_invariant_of_an_edited_model_is_refused(blocks_run: Path, tmp_path: Path) -> None:
    run = _copy(blocks_run, tmp_path)
    with open(run / "h_and.capm", "a", encoding="utf-8") as f:
        f.write("; edited by hand\n")
    res = capver_in_process("certify", str(run))
    assert res.returncode == 2 and "modified after certification" in res.stderr


def test_add_invariant_refuses_what_it_cannot_prove(blocks_run: Path, tmp_path: Path) -> None:
    run = _copy(blocks_run, tmp_path)
    parsed = dsl.read(run / "h_or.capm")
    with pytest.raises(certificate.CertificateError, match="the invariant fails"):
        certificate.add_invariant(run, PROPERTY, "h_or.capm", Invariant.parse("(assert true)"))
    with pytest.raises(certificate.CertificateError, match="not a checkable"):
        certificate.add_invariant(run, "E [ G true ]", "h_or.capm", Invariant.parse("(assert true)"))
    # A second invariant (here on h∨, where "on(a,a)" never holds) is kept beside the
    # first, and re-certifying unchanged models keeps both.
    text = "A [ G !on(a,a) ]"
    prop = parse_property(text, parsed.vocabulary, list(parsed.model))
    res = IC3Engine(parsed.model).check(prop, parsed.initial_state()[0])
    assert res.invariant is not None
    certificate.add_invariant(run, text, "h_or.capm", res.invariant)
    certificate.add_invariant(run, text, "h_or.capm", res.invariant)  # replaces, does not duplicate
    assert [c.property_text for c in certificate.read(run).invariants] == [PROPERTY, text]
    out = capver_in_process("certify", "--write", str(run))
    assert out.returncode == 0, out.stdout + out.stderr
    assert len(certificate.read(run).invariants) == 2 and out.stdout.count("re-checked") == 2


def test_verify_saves_ic3_invariants_that_certify_rechecks(blocks_run: Path, tmp_path: Path) -> None:
    """``capver verify RUN --engine ic3 --save``: the output names ic3 and the
    invariant's size, the certificate gains one claim per model IC3 proved the
    property on, and ``capver certify`` re-checks them from the command line."""
    run = _copy(blocks_run, tmp_path)
    text = "A [ G !on(a,a) ]"  # no capability stacks a block on itself: holds on h∧ and h∨
    res = capver_in_process("verify", str(run), "--engine", "ic3", "--property", text, "--save", "--json")
    # Holds on h∨ (unconfirmed from the data alone), and for every agent by the environment.
    assert res.returncode == 0, res.stdout + res.stderr
    (record,) = [json.loads(line) for line in res.stdout.splitlines()]
    assert record["engines"] == {"h_and": "ic3", "h_or": "ic3"} and record["engine"] == "ic3"
    assert record["invariant_h_or"]["lemmas"] == 1  # type: ignore[index]
    assert f"recorded 2 inductive invariants (ic3) in {run / certificate.NAME}" in res.stderr
    claims = {(c.property_text, c.model) for c in certificate.read(run).invariants}
    assert {(text, "h_and.capm"), (text, "h_or.capm")} <= claims
    ok = capver_in_process("certify", str(run))
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert f"{text} on h_or.capm" in ok.stdout and f"{text} on h_and.capm" in ok.stdout
    assert ok.stdout.count("re-checked") == len(claims) + 1  # the certificate's line and one per invariant
    # An invariant weakened to "true" proves nothing: certify fails.
    body = json.loads((run / certificate.NAME).read_text(encoding="utf-8"))
    for claim in body["invariants"]:
        if claim["property_text"] == text and claim["model"] == "h_or.capm":
            claim["invariant"] = "(assert true)"
    (run / certificate.NAME).write_text(json.dumps(body), encoding="utf-8")
    bad = capver_in_process("certify", str(run))
    assert bad.returncode == 1 and "the invariant fails safety" in bad.stdout, bad.stdout


def test_a_goal_no_state_satisfies_is_answered_without_a_search() -> None:
    """A [ G φ ] with φ valid (and E F of an unsatisfiable goal): no engine walks the
    reachable set — Spacer would answer with its least model, the reachable set as a
    formula (15 GB to eliminate on a learned Crafter h∨) — and IC3's invariant is
    true, which the certificate check accepts."""
    model = dsl.read(MODELS / "door_key.capm").model
    vocab, caps = model.vocabulary, list(model)
    for text, expected in (
        ("A [ G !(door-open & !door-open) ]", True),
        ("E [ F door-open & !door-open ]", False),
        ("A [ G<=4 true ]", True),
    ):
        prop = parse_property(text, vocab, caps)
        res = IC3Engine(model).check(prop, 0)
        assert res.holds is expected and res.witness is None
        assert res.invariant is not None and res.invariant.smtlib.strip() == "(assert true)"
        assert (res.invariant.lemmas, res.invariant.literals) == (0, 0)
        assert check_property_invariant(model, 0, prop, res.invariant)
        bdd = SymbolicEngine(model).check(prop, 0)
        assert bdd.holds is expected and bdd.explored == 0
