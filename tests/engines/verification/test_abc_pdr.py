"""ABC's ``pdr`` as capver's second IC3 engine (:mod:`capver.engines.verification.abc_pdr`)
and its AIGER encoding (:mod:`capver.engines.verification.aiger`):

* the and-inverter graph of a random propositional z3 formula computes the formula
  (a simulator written here, every assignment), and ABC itself reads the binary
  file with the counts the writer put in its header;
* on random models (hypothesis) ABC agrees with the BDD engine and the brute-force
  reference of the engine tests on every unbounded safety query; its invariants
  pass the plain-z3 re-check (and fail it when tampered with), hold in every state
  the runs reach, and its runs replay under the model;
* ``capver verify --engine abc --save`` records ABC's invariants in the certificate
  and ``capver certify`` re-checks them;
* what ABC does not answer, and a missing ABC binary, are clear errors.

ABC comes from Debian's ``yosys`` package, which ``.ci/run`` installs; on a machine
without it the tests that run ABC say so and are skipped.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import time
from pathlib import Path

import numpy as np
import pytest
import z3
from hypothesis import given
from hypothesis import strategies as st

from capver.core.properties import ExistsPath, ForallPath, Property
from capver.engines.verification.abc_pdr import ABC_EXECUTABLE, ABCEngine, abc_available
from capver.engines.verification.aiger import Aig, from_z3
from capver.engines.verification.ic3 import (
    IC3Engine,
    Invariant,
    check_property_invariant,
    safety_problem,
)
from capver.engines.verification.symbolic import SymbolicEngine
from capver.errors import SolverError
from capver.io import certificate, dsl
from capver.io.properties_text import parse_property
from capver.model.capability_model import CompoundModel
from tests.engines.verification.test_ic3 import blocks_run, reached, safety_corpus, tampered  # noqa: F401 - a fixture
from tests.engines.verification.test_qualitative_engines import Reference, check_witness, counter_model, random_case
from tests.helpers.cli import capver_in_process
from tests.helpers.optional_tools import ABC_HINT
from tests.helpers.paths import ROOT

seeds = st.integers(min_value=0, max_value=2**32 - 1)
needs_abc = pytest.mark.skipif(not abc_available(), reason=ABC_HINT)
KINDS = ("partial", "total", "h_and", "h_or")


# =====================================================================================
# The encoding
# =====================================================================================


def simulate(aig: Aig, inputs: list[bool], latches: list[bool], lit: int) -> bool:
    """The value of ``lit`` under the given input and latch values, gate by gate."""
    value = {0: False}
    for i, v in enumerate(inputs):
        value[1 + i] = v
    for i, v in enumerate(latches):
        value[1 + aig.inputs + i] = v
    for k, (r0, r1) in enumerate(aig._gates):
        value[1 + aig.inputs + aig.latches + k] = (value[r0 >> 1] ^ bool(r0 & 1)) and (value[r1 >> 1] ^ bool(r1 & 1))
    return value[lit >> 1] ^ bool(lit & 1)


def random_z3(rng: np.random.Generator, xs: list[z3.BoolRef], depth: int) -> z3.BoolRef:
    if depth == 0 or rng.random() < 0.2:
        pick = int(rng.integers(0, len(xs) + 2))
        return xs[pick] if pick < len(xs) else z3.BoolVal(pick == len(xs))
    a, b, c = (random_z3(rng, xs, depth - 1) for _ in range(3))
    op = int(rng.integers(0, 7))
    return [
        z3.And(a, b, c),
        z3.Or(a, b),
        z3.Not(a),
        z3.Implies(a, b),
        a == b,
        z3.Xor(a, b),
        z3.If(a, b, c),
    ][op]


@given(seed=seeds)
def test_the_graph_of_a_formula_computes_it(seed: int) -> None:
    rng = np.random.default_rng(seed)
    xs = [z3.Bool(f"x{i}") for i in range(4)]
    f = random_z3(rng, xs, 4)
    aig = Aig(inputs=2, latches=2)
    lits = {"x0": aig.input(0), "x1": aig.input(1), "x2": aig.latch(0), "x3": aig.latch(1) ^ 1}
    out = from_z3(aig, f, lits)
    for bits in range(16):
        values = [bool(bits >> i & 1) for i in range(4)]
        expected = z3.is_true(z3.simplify(z3.substitute(f, *[(x, z3.BoolVal(v)) for x, v in zip(xs, values)])))
        # x3 is the negation of latch 1
        assert simulate(aig, values[:2], [values[2], not values[3]], out) == expected


def test_gates_are_hash_consed_and_simplified() -> None:
    aig = Aig(inputs=2, latches=0)
    a, b = aig.input(0), aig.input(1)
    assert aig.and_(a, b) == aig.and_(b, a) and aig.gates == 1
    assert aig.and_(a, a ^ 1) == 0 and aig.and_(a, 1) == a and aig.and_(a, a) == a and aig.gates == 1


@needs_abc
def test_abc_reads_the_binary_file_with_the_header_counts(tmp_path: Path) -> None:
    """ABC (a reader not written here) reads what the writer wrote: its statistics
    name the inputs, latches and gates of the header."""
    aig = Aig(inputs=3, latches=2)
    x = [aig.input(i) for i in range(3)]
    g = aig.ite(x[0], aig.and_(x[1], aig.latch(0)), aig.or_(x[2], aig.latch(1)))
    aig.set_next(0, g)
    aig.set_next(1, aig.iff(x[1], aig.latch(0)) ^ 1)
    aig.add_output(aig.and_(aig.latch(0), aig.latch(1)))
    (tmp_path / "m.aig").write_bytes(aig.write())
    out = subprocess.run(
        [ABC_EXECUTABLE, "-c", "read_aiger m.aig; print_stats"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    stats = re.search(r"i/o =\s*(\d+)/\s*(\d+)\s+lat =\s*(\d+)\s+and =\s*(\d+)", out)
    assert stats is not None, out
    assert tuple(int(x) for x in stats.groups()) == (3, 1, 2, aig.gates)


def test_a_latch_without_a_next_state_is_refused() -> None:
    aig = Aig(inputs=0, latches=1)
    with pytest.raises(ValueError, match="latches without a next state"):
        aig.write()


# =====================================================================================
# Random models
# =====================================================================================


def agree_abc(model: CompoundModel, init: int, props: list[Property]) -> None:
    """ABC, the BDD engine and brute force agree on every unbounded safety query;
    invariants and runs check."""
    abc = ABCEngine(model)
    bdd = SymbolicEngine(model)
    for prop in props:
        problem = safety_problem(prop)
        if problem.bound is not None:
            with pytest.raises(TypeError, match="unbounded"):
                abc.check(prop, init)
            continue
        ref = Reference.explore(model, init, prop.capability_names)
        query = prop.query
        assert isinstance(query, ExistsPath | ForallPath)
        res = abc.check(prop, init)
        assert res.engine == "abc"
        assert res.holds == (init in ref.satisfying(query)) == bdd.check(prop, init).holds, prop.text
        if res.holds != problem.holds_if_unreachable:  # a goal is reachable: a run
            assert res.invariant is None and res.witness is not None and res.witness_source == "abc"
            assert res.witness.replays(model)
            check_witness(ref, prop, res.witness, isinstance(query, ExistsPath))
            continue
        assert res.witness is None and res.invariant is not None, prop.text
        inv = res.invariant
        assert check_property_invariant(model, init, prop, inv), (prop.text, inv.smtlib)
        assert Invariant.parse(inv.smtlib) == inv
        formula = inv.formula(model.ctx)
        assert {str(v) for v in formula.get_free_variables()} <= {str(v) for v in model.ctx.smt.cur}
        assert all(model.ctx.smt.evaluate(formula, s) for s in reached(ref, prop)), prop.text
        tampered(model, init, prop, inv)


@needs_abc
@given(seed=seeds, n_atoms=st.integers(3, 5), kind=st.sampled_from(KINDS))
def test_abc_agrees_with_bdd_and_brute_force(seed: int, n_atoms: int, kind: str) -> None:
    try:
        model, init = random_case(seed, n_atoms, kind)
    except ValueError:
        return  # sample_dataset: the random truth covers none of the sampled states
    agree_abc(model, init, safety_corpus(np.random.default_rng(seed + 1), model))


@needs_abc
@pytest.mark.parametrize("name", ["door_key.capm", "toy_blocks.capm"])
def test_abc_and_spacer_agree_on_model_files(name: str) -> None:
    parsed = dsl.read(ROOT / "models" / name)
    model = parsed.model
    init = parsed.initial_state("")[0]
    props = [p for p in safety_corpus(np.random.default_rng(7), model) if safety_problem(p).bound is None]
    agree_abc(model, init, props)
    abc, ic3 = ABCEngine(model), IC3Engine(model)
    assert [abc.check(p, init).holds for p in props] == [ic3.check(p, init).holds for p in props]


# =====================================================================================
# The command line and the certificate
# =====================================================================================


@needs_abc
def test_verify_engine_abc_saves_invariants_that_certify_rechecks(blocks_run: Path, tmp_path: Path) -> None:  # noqa: F811
    run = tmp_path / "run"
    shutil.copytree(blocks_run, run)
    text = "A [ G !on(a,a) ]"
    res = capver_in_process("verify", str(run), "--engine", "abc", "--property", text, "--save", "--json")
    assert res.returncode == 0, res.stdout + res.stderr
    (record,) = [json.loads(line) for line in res.stdout.splitlines()]
    assert record["engines"] == {"h_and": "abc", "h_or": "abc"}
    assert record["invariant_h_or"]["lemmas"] >= 1  # type: ignore[index]
    assert f"recorded 2 inductive invariants (abc) in {run / certificate.NAME}" in res.stderr
    ok = capver_in_process("certify", str(run))
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert f"{text} on h_or.capm" in ok.stdout and f"{text} on h_and.capm" in ok.stdout
    plain = capver_in_process("verify", str(run), "--engine", "abc", "--property", text, "--ignore-environment")
    assert "proved by an inductive invariant" in plain.stdout and "(abc)" in plain.stdout, plain.stdout


@needs_abc
def test_a_bounded_property_names_the_engines_that_answer_it(blocks_run: Path) -> None:  # noqa: F811
    res = capver_in_process("verify", str(blocks_run), "--engine", "abc", "--property", "A [ G<=3 !on(a,a) ]")
    assert res.returncode == 2 and "--engine auto or bdd" in res.stderr, res.stdout + res.stderr


def test_a_missing_abc_is_a_clear_error() -> None:
    parsed = dsl.read(ROOT / "models" / "door_key.capm")
    prop = parse_property("A [ G !door-open ]", parsed.model.vocabulary, list(parsed.model))
    engine = ABCEngine(parsed.model, executable="no-such-abc-binary")
    with pytest.raises(SolverError, match="not installed: apt-get install yosys"):
        engine.check(prop, parsed.initial_state("")[0])


@needs_abc
def test_a_check_past_its_timeout_says_so(tmp_path: Path) -> None:
    """A 20-bit counter reaches all ones after 2^20 steps: PDR needs as many frames, so
    it runs out of a one-second limit, which the error names."""
    (tmp_path / "counter.capm").write_text(counter_model(20), encoding="utf-8")
    parsed = dsl.read(tmp_path / "counter.capm")
    goal = " & ".join(f"b{i}" for i in range(20))
    prop = parse_property(f"E [ F {goal} ]", parsed.model.vocabulary, list(parsed.model))
    with pytest.raises(SolverError, match=r"ABC's pdr ran out of 1 s \(at frame \d+\)"):
        ABCEngine(parsed.model, timeout=1).check(prop, parsed.initial_state("")[0])


def _abc_processes_in_group(pgid: int) -> list[int]:
    """The pids of ABC processes whose process group is ``pgid`` (from /proc)."""
    out = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmd = (entry / "cmdline").read_bytes().split(b"\0")[0]
        except OSError:  # the process ended meanwhile
            continue
        fields = stat[stat.rindex(")") + 2 :].split()
        if int(fields[2]) == pgid and Path(cmd.decode()).name == ABC_EXECUTABLE:
            out.append(int(entry.name))
    return out


@needs_abc
def test_a_worker_stopped_by_its_timeout_takes_abc_with_it(tmp_path: Path) -> None:
    """capver verify's worker runs ABC in a process group of its own; when --timeout
    stops the worker, ABC (which has no limit of its own there) is killed too rather
    than left running as an orphan."""
    import threading

    from capver.engines.verification.qualitative import CheckTimeout, Portfolio

    (tmp_path / "counter.capm").write_text(counter_model(20), encoding="utf-8")
    parsed = dsl.read(tmp_path / "counter.capm")
    goal = " & ".join(f"b{i}" for i in range(20))
    prop = parse_property(f"E [ F {goal} ]", parsed.model.vocabulary, list(parsed.model))
    seen: list[int] = []
    outcome: list[BaseException] = []
    with Portfolio({"m": parsed.model}, [prop], engine="abc", timeout=4) as portfolio:

        def check() -> None:
            try:
                portfolio.check("m", 0, parsed.initial_state("")[0])
            except CheckTimeout as exc:
                outcome.append(exc)

        thread = threading.Thread(target=check)
        thread.start()
        for _ in range(300):  # ABC starts once the worker has built the circuit
            workers = list(portfolio._workers.values())
            if workers:
                seen = _abc_processes_in_group(workers[0].process.pid)
                if seen:
                    break
            time.sleep(0.01)
        thread.join()
    assert seen, "ABC never ran in the worker's process group"
    assert len(outcome) == 1 and "--timeout 4 s" in str(outcome[0])
    for _ in range(100):
        if not any(Path(f"/proc/{pid}").exists() for pid in seen):
            break
        time.sleep(0.05)
    assert not any(Path(f"/proc/{pid}").exists() for pid in seen), "ABC outlived its worker"
