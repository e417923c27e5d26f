"""Verdicts about the agent under a stated abstraction (engines/verification/pooled.py),
through the verification entry point, the Python API and ``capver verify``.

The truth is a model-backed agent whose behaviour an abstraction describes exactly:
four lights, each switched on (probability 9/10, else nothing happens) only while the
power is on, switched off, and the power toggled.  A light's switch behaves alike at
every state with the same power and the same light, so the projection on those two
atoms is a true abstraction (26 classes), while the frontier of ``A [ G !broken ]``
has 32 states × 9 capabilities = 288 pairs.  The broken truth differs at one state of
a class: there switching light 1 breaks the house with probability 1/2.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import capver
from capver.bench.abstraction import load_truth
from capver.bench.verdicts import truth_file_text
from capver.core.dataset import TransitionDataset
from capver.core.properties import Property
from capver.core.state import State, Transition
from capver.engines.verification import Evidence, Verifier
from capver.engines.verification.agent_verdict import AgentVerdict, Tier
from capver.engines.verification.pooled import pool, pooled_h_or
from capver.engines.verification.symbolic import SymbolicEngine
from capver.errors import UsageError
from capver.io.abstraction_file import abstraction_text, load_abstraction, parse_abstraction_text
from capver.io.properties_text import parse_property
from capver.model.abstraction import Partition, Projection
from capver.model.capability_model import CompoundModel
from capver.settings import model_assessment
from tests.helpers.cli import capver_in_process
from tests.helpers.examples import scaled
from tests.helpers.untraced import untraced, untraced_unless

SAFE = "A [ G !broken ]"
ABSTRACTION = truth_file_text("lights.abs")


def sampled(model: CompoundModel, executions: int, seed: int) -> TransitionDataset:
    """Executions of uniformly random capabilities from uniformly random states where
    the house is not broken (every such state is reachable), as a query strategy that
    spreads its budget would spend them."""
    rng = np.random.default_rng(seed)
    data = TransitionDataset(model.vocabulary, (model[c].capability for c in model))
    caps = sorted(model)
    broken = 1 << model.vocabulary.index(next(a for a in model.vocabulary.atoms if a.predicate == "broken"))
    for _ in range(executions):
        c = caps[int(rng.integers(len(caps)))]
        s = int(rng.integers(1 << len(model.vocabulary))) & ~broken
        dist = model[c].distribution(s)
        outcomes = sorted(dist)
        s2 = outcomes[int(rng.choice(len(outcomes), p=[float(dist[x]) for x in outcomes]))]
        data.add(Transition(s, c, s2))
    return data


def verdict(model: CompoundModel, data: TransitionDataset, init: State, text: str, abstraction: object = None):
    from capver.engines.lattice import build_bounds

    b = build_bounds(model.ctx, data)
    prop: Property = parse_property(text, model.vocabulary, tuple(model), source="p")
    ev = Evidence(b.pessimistic, b.optimistic, data, abstraction=abstraction)  # type: ignore[arg-type]
    with Verifier(ev, (prop,), init, engines=(SymbolicEngine(b.pessimistic), SymbolicEngine(b.optimistic))) as v:
        result = v.check(prop)
    assert result.lattice is not None
    return result


@pytest.fixture(scope="module")
def lights() -> tuple[CompoundModel, State, TransitionDataset]:
    model, init = load_truth("lights")
    return model, init, sampled(model, 12000, seed=0)


def test_a_true_abstraction_decides_what_the_pairs_cannot(
    lights: tuple[CompoundModel, State, TransitionDataset],
) -> None:
    model, init, data = lights
    plain = verdict(model, data, init, SAFE).lattice
    assert plain is not None and plain.tier is Tier.UNCONFIRMED
    assert plain.confidence is not None and plain.confidence.pairs == 32 * 9
    ab = parse_abstraction_text(ABSTRACTION, model.vocabulary, tuple(model), "lights.abs")
    v = verdict(model, data, init, SAFE, ab)
    lv = v.lattice
    assert lv is not None and lv.verdict is AgentVerdict.HOLDS and lv.tier is Tier.CONFIDENT
    assert lv.abstraction is not None and lv.abstraction.used and lv.abstraction.refuted == ()
    assert lv.confidence is not None and lv.confidence.classes and lv.confidence.epsilon <= 0.05
    # The truth never breaks: the statement is true; and it says what it assumes.
    assert SymbolicEngine(model).check(parse_property(SAFE, model.vocabulary, tuple(model)), init).holds
    text = v.to_text()
    assert "NO VIOLATION SEEN" in text and "under the abstraction lights.abs (26 classes)" in text
    assert "not refuted" in text
    record = v.to_record().to_json()
    assert record["abstraction"]["used"] is True and record["abstraction"]["classes"] == 26  # type: ignore[index]
    assert record["confidence"]["counted_in"] == "classes"  # type: ignore[index]


def test_the_classes_are_what_the_data_pool(lights: tuple[CompoundModel, State, TransitionDataset]) -> None:
    model, _, data = lights
    ab = parse_abstraction_text(ABSTRACTION, model.vocabulary, tuple(model), "lights.abs")
    pooled = pool(data, ab, 0.05)
    assert len(pooled.classes) == 26
    assert sum(k.n for k in pooled.classes.values()) == len(data)
    switch_on = [k for k in pooled.classes.values() if k.capability == "switch-l1"]
    # power on, l1 off: the two effects {on(l1)} and {}, in proportion 9 : 1.
    (active,) = [k for k in switch_on if len(k.effects) == 2]
    counts = dict(active.effects)
    assert abs(max(counts.values()) / active.n - 0.9) < 0.05
    assert not pooled.refuted_classes()


def test_h_or_under_the_abstraction_narrows_untried_states_and_widens_tried_ones(
    lights: tuple[CompoundModel, State, TransitionDataset],
) -> None:
    model, _, data = lights
    few = data.first(400)
    ab = parse_abstraction_text(ABSTRACTION, model.vocabulary, tuple(model), "lights.abs")
    from capver.engines.lattice import build_bounds

    h_or = build_bounds(model.ctx, few).optimistic
    narrowed = pooled_h_or(h_or, few, pool(few, ab, 0.05))
    pooled = pool(few, ab, 0.05)
    for c in model:
        for s in range(1 << len(model.vocabulary)):
            k = pooled.class_of(c, s)
            got = set(narrowed[c].distribution(s))
            if k is not None and not pooled.refuted(k):
                assert got == {e.apply(s) for e, _ in k.effects}
            else:
                assert got >= set(h_or[c].distribution(s))


def test_a_class_that_behaves_differently_at_one_state_is_refuted_there() -> None:
    # At the odd state switching l1 fails half the time instead of a tenth: harmless
    # for the property, but not the abstraction's claim.  Measured: with 12,000
    # executions (about 40 at the odd state) the statistic of seed 0 reaches e^2.4 of the
    # e^10.5 it needs; with 30,000 (about 100 there) e^16.8, refuted in each of 4 seeds.
    model, init = load_truth("lights-one-state")
    ab = parse_abstraction_text(ABSTRACTION, model.vocabulary, tuple(model), "lights.abs")
    for seed in range(4):
        with untraced_unless(seed == 0):  # seeds 1–3 repeat seed 0's lines
            lv = verdict(model, sampled(model, 30000, seed=seed), init, SAFE, ab).lattice
        assert lv is not None and lv.abstraction is not None
        assert [c for c, _ in lv.abstraction.refuted] == ["switch-l1"], lv.abstraction.refuted
        (_, states), *_ = lv.abstraction.refuted
        first = model.vocabulary.format_state(states[0])
        assert all(f"on({x})" in first for x in ("l2", "l3", "l4")) and "power" in first
        # The refuted class's pairs fall back to their own bounds: nothing confident rests on it.
        assert lv.tier is not Tier.CONFIDENT or not lv.abstraction.used


def test_a_rare_break_at_one_state_is_refuted_seen_or_within_the_stated_bound() -> None:
    # At one state switching l1 breaks the house with probability 1/100: the
    # abstraction is false there, and so is the property.  Whatever the verdict, the
    # statement must stay true: the break observed (VIOLATED, exact), the class
    # refuted, or a confident claim whose stated bound covers the truth's exact
    # probability of a violation within k executions (explicit engine, rationals).
    from capver.bench.verdicts import HORIZON, violation_probability

    model, init = load_truth("lights-rare-break")
    prop = parse_property(SAFE, model.vocabulary, tuple(model))
    assert not SymbolicEngine(model).check(prop, init).holds
    ab = parse_abstraction_text(ABSTRACTION, model.vocabulary, tuple(model), "lights.abs")
    exact = violation_probability(prop, model, init, HORIZON)
    outcomes = set()
    for seed in range(4):
        with untraced_unless(seed == 0):  # seeds 1–3 repeat seed 0's lines
            lv = verdict(model, sampled(model, 12000, seed=seed), init, SAFE, ab).lattice
        assert lv is not None and lv.abstraction is not None
        if lv.tier is Tier.OBSERVED:
            assert lv.verdict is AgentVerdict.VIOLATED
            outcomes.add("observed")
        elif lv.tier is Tier.CONFIDENT:
            assert lv.confidence is not None
            assert exact <= dict(lv.confidence.violation)[HORIZON]
            outcomes.add("refuted" if lv.abstraction.refuted else "within the bound")
        else:
            outcomes.add(lv.tier.value)
    # Measured on seeds 0–3: the break observed in some datasets, a confident claim
    # within its bound (the 1/100 effect is below ε̄) in the others.
    assert outcomes <= {"observed", "refuted", "within the bound", "unconfirmed", "unknown"}


def test_a_callable_abstraction_reads_atoms_by_name(lights: tuple[CompoundModel, State, TransitionDataset]) -> None:
    model, init, data = lights

    def by_power(c: str, atoms: frozenset[str]) -> object:
        light = c.split("-", 1)[1] if "-" in c else None
        return ("power" in atoms, f"on({light})" in atoms)

    part = Partition("by power", model.vocabulary, by_power)
    lv = verdict(model, data, init, SAFE, part).lattice
    assert lv is not None and lv.abstraction is not None and lv.abstraction.used
    assert lv.tier is Tier.CONFIDENT and lv.verdict is AgentVerdict.HOLDS


def test_an_abstraction_file_mistake_is_located() -> None:
    model, _ = load_truth("lights")
    with pytest.raises(UsageError, match=r"lights\.abs:2:19: 'on\(l9\)' is not an atom"):
        parse_abstraction_text(
            "toggle: power\nswitch-l1: power, on(l9)\n", model.vocabulary, tuple(model), "lights.abs"
        )
    with pytest.raises(UsageError, match=r"lights\.abs:1:1: unknown capability 'jump'"):
        parse_abstraction_text("jump: power\n", model.vocabulary, tuple(model), "lights.abs")
    with pytest.raises(UsageError, match=r"lights\.abs:1:1: expected 'CAPABILITY: atom"):
        parse_abstraction_text("toggle power\n", model.vocabulary, tuple(model), "lights.abs")
    with pytest.raises(UsageError, match="expected 'tilde', 'symmetry', an existing file"):
        load_abstraction("no-such-file.abs", model.vocabulary, model.capabilities, lambda: model)


@settings(max_examples=scaled(20), deadline=None)
@given(masks=st.lists(st.integers(0, 2**12), min_size=9, max_size=9), default=st.none() | st.integers(0, 2**12))
def test_an_abstraction_file_reads_back_as_written(masks: list[int], default: int | None) -> None:
    """For all projections over the lights' capabilities: abstraction_text, read by
    parse_abstraction_text, gives the same atoms per capability (write → parse → equal)."""
    model, _ = load_truth("lights")
    vocab = model.vocabulary
    named = tuple((c, m & vocab.full_mask) for c, m in zip(sorted(model), masks, strict=False))
    ab = Projection("written", named, None if default is None else default & vocab.full_mask, vocab.full_mask)
    back = parse_abstraction_text(abstraction_text(ab, vocab, "a test"), vocab, tuple(model), "x.abs")
    assert back.masks == ab.masks and back.default == ab.default
    assert all(back.mask(c) == ab.mask(c) for c in model)


def test_the_abstraction_of_h_tilde_names_its_condition_atoms() -> None:
    model, _ = load_truth("lights")
    ab = Projection.of_model(model)
    lines = dict(line.split(": ", 1) for line in ab.describe(model.vocabulary))
    # The truth's own conditions: power alone for a switch.  Its *observed* effect also
    # depends on on(l1) (adding an atom that holds shows no effect), so this projection
    # is not a true abstraction of the lights, which the file above corrects.
    assert lines["switch-l1"] == "power" and lines["off-l1"] == "none: one class"


def learned_lights_run(tmp_path: Path) -> Path:
    """``capver learn`` of 600 random steps with the lights truth as the agent."""
    truth_file = tmp_path / "lights.capm"
    truth_file.write_text(truth_file_text("lights.capm"))
    run = tmp_path / "run"
    r = capver_in_process(
        "learn", "--agent", "model", "--model", str(truth_file), "--method", "random", "--max-steps", "600",
        "--out", str(run), "--quiet",
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    return run


def test_capver_verify_abstraction_on_a_learned_run(tmp_path: Path) -> None:
    model, _ = load_truth("lights")
    run = learned_lights_run(tmp_path)
    spec = tmp_path / "lights.abs"
    spec.write_text(ABSTRACTION)
    r = capver_in_process(
        "verify", str(run), "--property", SAFE, "--abstraction", str(spec), "--ignore-environment", "--json"
    )
    record = json.loads(r.stdout.splitlines()[0])
    assert record["abstraction"]["name"] == str(spec)
    assert record["abstraction"]["classes"] >= 9
    r = capver_in_process(
        "verify", str(run), "--property", SAFE, "--abstraction", str(spec), "--ignore-environment", "--save"
    )
    assert r.returncode in (0, 3), r.stderr
    assert capver_in_process("report", str(run)).returncode == 0
    page = (run / "report.html").read_text(encoding="utf-8")
    assert f"the abstraction {spec} (26 classes; not refuted by the data)" in page
    r = capver_in_process("verify", str(run), "--property", SAFE, "--abstraction", "tilde", "--ignore-environment")
    assert "abstraction" in r.stdout, r.stdout + r.stderr
    # h̃'s atoms written out as a file, and that file read back: the same classes.
    tilde_file = tmp_path / "tilde.abs"
    common = ("verify", str(run), "--property", SAFE, "--ignore-environment", "--json")
    r = capver_in_process(*common, "--abstraction", "tilde", "--save-abstraction", str(tilde_file))
    assert r.returncode in (0, 3), r.stderr
    assert f"wrote {tilde_file} (the classes of h̃'s condition atoms" in r.stderr
    by_tilde = json.loads(r.stdout.splitlines()[0])["abstraction"]
    by_file = json.loads(capver_in_process(*common, "--abstraction", str(tilde_file)).stdout.splitlines()[0])
    assert by_file["abstraction"]["classes"] == by_tilde["classes"]
    assert by_file["abstraction"]["name"] == str(tilde_file)
    written = tilde_file.read_text(encoding="utf-8")
    r = capver_in_process(*common, "--abstraction", "tilde", "--save-abstraction", str(tilde_file))
    assert r.returncode == 2 and "exists; capver does not overwrite" in r.stderr
    assert tilde_file.read_text(encoding="utf-8") == written
    r = capver_in_process(*common, "--abstraction", "os.path:basename", "--save-abstraction", str(tmp_path / "f"))
    assert r.returncode == 2 and "only atoms per capability (tilde or a file) have a file form" in r.stderr
    assert not (tmp_path / "f").exists()
    r = capver_in_process("verify", str(run), "--property", SAFE, "--abstraction", "nope:missing")
    assert r.returncode == 2 and "cannot load 'missing' from module 'nope'" in r.stderr
    # The Python API takes the same spellings.
    learned = capver.learn(
        model_assessment(model, load_truth("lights")[1], "lights"), method="random", max_steps=300, seed=1
    )
    v = learned.verify(SAFE, abstraction=str(spec), environment=False)
    assert v.lattice is not None and v.lattice.abstraction is not None
    assert v.lattice.abstraction.name == str(spec)


@pytest.mark.slow
def test_directed_learning_with_the_abstraction_decides_sooner() -> None:
    # learn --properties with an abstraction: the queries go to the classes that keep
    # the property unconfirmed.  Measured (seed 0, MCQS-E): confident after 5,054
    # executions; without the abstraction still unconfirmed after 15,000.
    model, init = load_truth("lights")
    ab = parse_abstraction_text(ABSTRACTION, model.vocabulary, tuple(model), "lights.abs")
    setting = model_assessment(model, init, "lights")
    # Untraced (38 s instead of about 11 s under .ci/run): the tracker's code under an
    # abstraction is measured by the learn --abstraction tilde test below, pooling by the
    # tests above.
    with untraced():
        pooled = capver.learn(setting, method="mcqs-e", max_steps=8000, seed=0, properties=[SAFE], abstraction=ab)
    (st,) = pooled.properties
    assert st.tier == "confident" and st.verdict == "holds"
    assert st.lattice is not None and st.lattice.abstraction is not None and st.lattice.abstraction.used
    assert pooled.progress.steps < 8000  # stopped when decided
    # The verdict is the one capver verify gives on the same data under the same
    # abstraction; per pair the same data leave it unconfirmed.
    again = pooled.verify(SAFE, abstraction=ab)
    assert again.lattice is not None and again.lattice.tier is Tier.CONFIDENT
    per_pair = pooled.verify(SAFE)
    assert per_pair.lattice is not None and per_pair.lattice.tier is Tier.UNCONFIRMED
    with pytest.raises(UsageError, match="abstraction= needs properties="):
        capver.learn(setting, max_steps=10, abstraction=ab)


def test_learn_abstraction_tilde_pools_only_what_comes_after_h_tilde(tmp_path: Path) -> None:
    truth_file = tmp_path / "lights.capm"
    truth_file.write_text(truth_file_text("lights.capm"))
    props = tmp_path / "safe.props"
    props.write_text(f'"safe": {SAFE};\n')
    run = tmp_path / "run"
    common = ("learn", "--agent", "model", "--model", str(truth_file), "--method", "mcqs-e", "--out", str(run))
    r = capver_in_process(*common, "--max-steps", "200", "--properties", str(props), "--abstraction", "tilde")
    assert r.returncode == 2 and "--abstraction tilde: h̃ is the run's own" in r.stderr
    with untraced():  # a plain learn, traced by every learn test; the resume below is this test's
        assert capver_in_process(*common, "--max-steps", "300", "--quiet").returncode == 0
    r = capver_in_process(
        *common, "--resume", "--max-steps", "600", "--properties", str(props), "--abstraction", "tilde", "--quiet"
    )
    assert r.returncode == 0, r.stderr
    # h̃ of the first 300 executions is fixed; only the next 300 are pooled: too few for
    # its classes, which the summary counts (not pairs).
    line = next(x for x in r.stdout.splitlines() if x.strip().startswith("safe:"))
    assert "UNCONFIRMED" in line and "classes on the frontier of h∨ under the abstraction" in line, line


def test_pooling_since_leaves_out_the_executions_that_chose_the_abstraction(
    lights: tuple[CompoundModel, State, TransitionDataset],
) -> None:
    model, _, data = lights
    ab = parse_abstraction_text(ABSTRACTION, model.vocabulary, tuple(model), "lights.abs")
    rest = TransitionDataset(model.vocabulary, data.capabilities)
    for t, count, steps in list(data.additions())[5000:]:
        rest.add(t, count, steps)
    after = pool(data, ab, 0.05, since=5000)
    assert sum(k.n for k in after.classes.values()) == len(data) - 5000
    assert after.classes == pool(rest, ab, 0.05).classes
    # Incremental pooling (the tracker's) gives what pooling from scratch gives.
    from capver.engines.verification.pooled import Pooler

    pooler = Pooler(ab, 0.05, since=100)
    growing = TransitionDataset(model.vocabulary, data.capabilities)
    for i, (t, count, steps) in enumerate(data.additions()):
        growing.add(t, count, steps)
        if i in (50, 99, 100, 2000):
            assert pooler.pool(growing).classes == pool(growing, ab, 0.05, since=100).classes
