"""One entry point of verification (capver.engines.verification.evidence): the four
callers — ``capver verify``, ``LearnResult.verify``, the property tracker of ``learn
--properties`` and ``capver bench verdicts`` — give the same verdict, tier and agent
bounds for every property of a corpus of runs; ``verdicts.json`` round-trips through
the one record type; the models of a run have one list of names."""

from __future__ import annotations

import html
import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import capver
from capver.bench.verdicts import verifier_for
from capver.engines.directed import PropertyTracker, Targets
from capver.engines.verification import Evidence, Outcome, Verdict, VerdictRecord, verify
from capver.errors import RunFileError, UnsupportedQueryError, UsageError
from capver.io import run_dir, verdicts_file
from capver.io.properties_text import parse_property
from capver.model.kinds import ModelKind
from tests.helpers.cli import capver_in_process

PROPERTIES = (
    "E [ F on(a,b) ]",
    "A [ G !(holding(a) & holding(b)) ]",
    "E [ G handempty(robot) ]",
    "A [ F on(a,b) ]",
    "E [ handempty(robot) U on(a,b) ]",
    "A [ G<=3 !holding(c) ]",
    "P<0.5 [ handempty(robot) U on(a,b) ]",
    "P>=0.2 [ F<=4 holding(a) ]",
    "Pmax=? [ F<=3 on(a,b) ]",
    "Pmin=? [ G !holding(d) ]",
)
# (seed, steps, Θ): short and long runs, one step per execution and many.
RUNS = ((0, 40, 1), (2, 80, 1), (1, 120, None))
DELTA, EPSILON = 0.05, 0.1


def _key(v: Verdict) -> tuple[object, ...]:
    """What all callers must agree on: a qualitative verdict's outcome and tier, a
    quantitative one's agent bounds and the agent's verdict on a ``P<op>p`` bound."""
    if v.lattice is not None:
        return ("agent", v.outcome.value, v.tier)
    q = v.quantity
    assert q is not None and q.agent is not None
    answer = q.agent_verdict.value if q.agent_verdict is not None else None
    return ("bounds", round(q.agent.lower, 9), round(q.agent.upper, 9), answer)


def _record_key(record: dict[str, object]) -> tuple[object, ...]:
    if "tier" in record:
        return ("agent", record["verdict"], record["tier"])
    agent = record["agent"]
    assert isinstance(agent, dict)
    upper = agent["upper"] if agent["upper"] is not None else float("inf")
    return ("bounds", round(float(agent["lower"]), 9), round(float(upper), 9), record.get("agent_verdict"))


def _learned(seed: int, steps: int, theta: int | None, directory: Path) -> tuple[capver.LearnResult, Path]:
    setting = capver.load_setting("lao", domain="blocks", theta=theta, seed=seed)
    result = capver.learn(setting, max_steps=steps, seed=seed)
    return result, result.save(directory / "run").path


@pytest.fixture(scope="module", params=RUNS, ids=lambda r: f"seed{r[0]}-{r[1]}steps-theta{r[2] or 'inf'}")
def corpus_run(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> tuple[capver.LearnResult, Path]:
    seed, steps, theta = request.param
    return _learned(seed, steps, theta, tmp_path_factory.mktemp("corpus"))


@pytest.fixture(scope="module")
def one_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[capver.LearnResult, Path]:
    return _learned(*RUNS[0], tmp_path_factory.mktemp("one"))


@pytest.mark.parametrize("environment", [True, False], ids=["with-environment", "without"])
def test_the_four_callers_agree(corpus_run: tuple[capver.LearnResult, Path], environment: bool) -> None:
    result, path = corpus_run
    vocab = result.h_and.vocabulary
    caps = tuple(result.h_and)
    props = [parse_property(f'"q{k}": {text}', vocab, caps) for k, text in enumerate(PROPERTIES)]
    st_ = result.assessment.setting
    init = st_.alpha(st_.initial_states[0])
    world = result._world() if environment else None

    api = {
        p.name: _key(result.verify(t, delta=DELTA, epsilon=EPSILON, environment=environment))
        for p, t in zip(props, PROPERTIES, strict=True)
    }

    argv = ["verify", str(path), "--json", "--delta", str(DELTA), "--epsilon", str(EPSILON)]
    argv += [] if environment else ["--ignore-environment"]
    for text in PROPERTIES:
        argv += ["--property", text]
    cli_run = capver_in_process(*argv)
    assert cli_run.returncode in (0, 1, 3), cli_run.stderr
    records = [json.loads(line) for line in cli_run.stdout.splitlines()]
    cli = {p.name: _record_key(r) for p, r in zip(props, records, strict=True)}

    tracker = PropertyTracker(props, init, Targets(DELTA, EPSILON), world=world)
    tracker.update(result.h_and, result.h_or, result.data, 0, 0)
    tracked = {}
    for p in props:
        checked = tracker.status[p.name].checked
        assert checked is not None
        tracked[p.name] = _key(checked)

    assert api == cli, (api, cli)
    assert api == tracked, (api, tracked)
    if not environment:
        # The benchmark's truths are models, not environments: it decides without one.
        bench = verifier_for(result.h_and, result.h_or, result.data, props, init, DELTA, EPSILON)
        assert api == {p.name: _key(bench.check(p)) for p in props}
    # Not vacuous: the corpus has verdicts of several tiers and both kinds of bound.
    kinds = {k[0] for k in api.values()}
    assert kinds == {"agent", "bounds"}


def test_the_corpus_meets_several_tiers(one_run: tuple[capver.LearnResult, Path]) -> None:
    result, _ = one_run
    tiers = {result.verify(t).tier for t in PROPERTIES[:6]}
    assert len(tiers - {None}) >= 1


def test_saved_verdicts_round_trip_through_the_record_type(
    one_run: tuple[capver.LearnResult, Path], tmp_path: Path
) -> None:
    _, path = one_run
    argv = ["verify", str(path), "--json", "--save"]
    for text in PROPERTIES:
        argv += ["--property", text]
    done = capver_in_process(*argv)
    assert done.returncode in (0, 1, 3), done.stderr
    printed = [VerdictRecord.from_json(json.loads(line), "stdout") for line in done.stdout.splitlines()]
    file = path / verdicts_file.NAME
    saved = verdicts_file.records(json.loads(file.read_text(encoding="utf-8")), str(file))
    assert saved == tuple(printed)
    assert [r.to_json() for r in saved] == [json.loads(line) for line in done.stdout.splitlines()]
    # capver report reads the same records back: each verdict's outcome and the agent's
    # bounds of every quantitative property are on the page.
    page = tmp_path / "page.html"
    assert capver_in_process("report", str(path), "--out", str(page)).returncode == 0
    shown = html.unescape(page.read_text(encoding="utf-8"))
    for r in saved:
        bounds = r.get("agent")
        if isinstance(bounds, dict):
            assert f"≤ {bounds['quantity']} ≤" in shown, r.name
        if r.verdict is not None:
            assert r.verdict in shown
    (path / verdicts_file.NAME).unlink()


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=3),
    max_leaves=8,
)


@settings(max_examples=50, deadline=None)
@given(
    st.text(),
    st.text(),
    st.none() | st.sampled_from([o.value for o in Outcome]),
    st.dictionaries(st.text().filter(lambda k: k not in ("property", "text", "verdict")), _JSON, max_size=5),
)
def test_a_record_reads_back_as_written(name: str, text: str, verdict: str | None, fields: dict[str, object]) -> None:
    record = VerdictRecord(name, text, verdict, fields)
    assert VerdictRecord.from_json(record.to_json(), "test") == record
    assert VerdictRecord.from_json(json.loads(json.dumps(record.to_json())), "test") == record


@pytest.mark.parametrize(
    "bad",
    [[], {"text": "x"}, {"property": "p", "text": 3}, {"property": "p", "text": "t", "verdict": 1}],
)
def test_a_malformed_record_is_refused_in_one_line(bad: object) -> None:
    with pytest.raises(RunFileError, match=r"^somewhere: ") as caught:
        VerdictRecord.from_json(bad, "somewhere")
    assert "\n" not in str(caught.value)


def test_every_spelling_of_a_model_names_one_kind(one_run: tuple[capver.LearnResult, Path]) -> None:
    result, path = one_run
    run = run_dir.Run.open(path)
    for kind in ModelKind:
        spellings = (kind.value, kind.python, kind.symbol, kind.dsl, kind.file)
        assert {ModelKind.parse(s) for s in spellings} == {kind}
        assert (path / kind.file).is_file()
        for s in spellings:
            assert result.model(s) is result.model(kind.python)
            assert run.model(s) is run.model(kind)
        assert f"(capability-model {kind.dsl}" in (path / kind.file).read_text(encoding="utf-8")
    with pytest.raises(UsageError, match="expected one of h_and, h_or, h_tilde"):
        result.model("h_best")


def test_the_entry_point_is_the_package_face() -> None:
    import capver.engines.verification as face

    for name in ("verify", "Evidence", "Verdict", "Verifier", "verify_all", "VerdictRecord", "Outcome"):
        assert name in face.__all__
        assert getattr(face, name) is not None
    assert capver.Verdict is Verdict


def test_an_engine_that_does_not_answer_is_its_own_error(one_run: tuple[capver.LearnResult, Path]) -> None:
    result, path = one_run
    vocab = result.h_and.vocabulary
    prop = parse_property("E [ G handempty(robot) ]", vocab, tuple(result.h_and))
    init = result.assessment.setting.alpha(result.assessment.setting.initial_states[0])
    with pytest.raises(UnsupportedQueryError, match="ic3 does not answer"):
        verify(Evidence(result.h_and, result.h_or, result.data), prop, init, engine="ic3")
    done = capver_in_process("verify", str(path), "--property", "E [ G handempty(robot) ]", "--engine", "ic3")
    assert done.returncode == 2 and "does not answer" in done.stderr and "Traceback" not in done.stderr
