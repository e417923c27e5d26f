"""capver verify: verdicts about a model file, and about an agent from a learned run
(h∧ and h∨ together), with exit statuses as model checkers use them."""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

import pytest

from capver.engines.verification import storm
from capver.engines.verification.agent_verdict import AgentVerdict, Tier, decide
from capver.engines.verification.symbolic import SymbolicEngine
from capver.io import dataset_file, dsl
from capver.io.properties_text import parse_property
from tests.helpers.cli import capver, capver_in_process
from tests.helpers.optional_tools import STORMPY_HINT
from tests.helpers.paths import ROOT

REPO = ROOT
TOY = REPO / "models" / "toy_blocks.capm"
INIT = "ontable(a) ontable(b) clear(a) clear(b) handempty"


@pytest.fixture(scope="module")
def toy_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The toy model's model-backed agent (its truth is TOY), learned briefly."""
    out = tmp_path_factory.mktemp("verify") / "run"
    res = capver_in_process(
        "learn",
        "--agent",
        "model",
        "--model",
        str(TOY),
        "--init",
        INIT,
        "--method",
        "mcqs-s",
        "--max-steps",
        "12",
        "--eval-sequences",
        "5",
        "--out",
        str(out),
        "--quiet",
    )
    assert res.returncode == 0, res.stderr
    return out


def test_a_model_file_holds_or_fails_with_a_run_that_replays() -> None:
    res = capver_in_process("verify", str(TOY), "--property", "E [ F on(a,b) ]", "--json")
    assert res.returncode == 0, res.stderr
    record = json.loads(res.stdout)
    assert record["verdict"] == "holds"
    assert [s["capability"] for s in record["witness"]["steps"]] == ["pick-up-a", "stack-a-on-b"]
    res = capver_in_process("verify", str(TOY), "--property", "A [ G !holding(a) ]")
    assert res.returncode == 1 and "FAILS on the model" in res.stdout and "counterexample" in res.stdout


@pytest.mark.skipif(not storm.available(), reason=STORMPY_HINT)
def test_quantitative_properties_agree_with_storm_and_bounds_follow_prism() -> None:
    from capver.engines.verification.prism import storm_expected_executions, storm_reach

    model = dsl.read(TOY)
    init = model.init
    assert init is not None
    res = capver_in_process(
        "verify",
        str(TOY),
        "--property",
        "Pmin=? [ F<=3 on(a,b) ]",
        "--property",
        "Rmin=? [ F on(a,b) ]",
        "--property",
        "P>=0.5 [ F<=3 on(a,b) ]",
        "--property",
        "P<=1 [ F on(a,b) ]",
        "--json",
    )
    records = [json.loads(line) for line in res.stdout.splitlines()]
    assert [r["quantity"] for r in records] == ["Pmin", "Rmin", "Pmin", "Pmax"]
    on_ab = model.ctx.bdd.var(model.vocabulary.index("on(a,b)"))
    # Storm (exact) on the PRISM export gives the same numbers as capver's explicit engine
    assert Fraction(records[0]["exact"]) == storm_reach(model.model, init, on_ab, bound=3, maximise=False)
    assert Fraction(records[1]["exact"]) == storm_expected_executions(model.model, init, on_ab)
    # P>=p holds iff Pmin >= p; P<=1 always holds
    assert records[2]["verdict"] == ("holds" if Fraction(records[0]["exact"]) >= Fraction(1, 2) else "violated")
    assert records[3]["verdict"] == "holds"
    assert res.returncode == (1 if records[2]["verdict"] == "violated" else 0)


PROPERTIES = [
    "E [ F on(a,b) ]",
    "E [ F on(b,a) ]",
    "E [ F on(a,b) & holding(b) ]",
    "E [ !holding(b) U<=2 on(a,b) ]",
    "A [ G !(holding(a) & holding(b)) ]",
    "A [ G !holding(a) ]",
    "A [ G<=1 ontable(b) ]",
    "E [ F<=1 holding(b) ]",
]


@pytest.mark.parametrize("text", PROPERTIES)
def test_agent_verdicts_that_need_no_assumption_are_true_of_the_agent(toy_run: Path, text: str) -> None:
    """'Witnessed on h∧' and 'violated on h∧' rest on observed transitions only, so
    they must agree with the true model; an unknown verdict names an untried pair."""
    first = dsl.read(toy_run / "h_and.capm")
    h_or = dsl.read(toy_run / "h_or.capm", ctx=first.ctx).model
    truth = dsl.read(TOY, ctx=first.ctx).model
    data = dataset_file.load(toy_run / "dataset.jsonl", vocab=first.vocabulary).dataset
    init = first.init
    assert init is not None
    prop = parse_property(text, first.vocabulary, tuple(first.model))
    v = decide(prop, first.model, h_or, data, init)
    on_truth = SymbolicEngine(truth).check(prop, init).holds
    if v.tier is Tier.OBSERVED and v.verdict is AgentVerdict.HOLDS:
        assert on_truth and v.witness is not None and v.witness.replays(first.model)
    if v.tier is Tier.OBSERVED and v.verdict is AgentVerdict.VIOLATED:
        assert not on_truth
    if v.decisive_query is not None:
        s, c = v.decisive_query
        assert v.verdict is AgentVerdict.UNKNOWN and data.count_sc(s, c) == 0


def test_the_run_command_reports_every_verdict_with_its_exit_status(toy_run: Path, tmp_path: Path) -> None:
    props = tmp_path / "toy.props"
    props.write_text(
        '// what the toy arm can do\n"stack": E [ F on(a,b) ];\n"never both": A [ G !(holding(a) & holding(b)) ];\n',
        encoding="utf-8",
    )
    # In a process of its own: the exit status a shell sees (the other tests call main()).
    res = capver("verify", str(toy_run), "--properties", str(props), "--json")
    assert res.returncode in (0, 3), res.stderr
    records = [json.loads(line) for line in res.stdout.splitlines()]
    assert [r["property"] for r in records] == ["stack", "never both"]
    assert all(r["verdict"] in ("holds", "violated", "unconfirmed", "unknown") for r in records)
    assert records[0]["init"] == "{ontable(a), ontable(b), clear(a), clear(b), handempty}"


def test_export_format_prism_is_read_by_storm_as_written(tmp_path: Path) -> None:
    stormpy = pytest.importorskip("stormpy", reason=STORMPY_HINT)
    from capver.engines.verification import explicit

    res = capver_in_process("export", str(TOY), "--out", str(tmp_path / "p"), "--format", "prism")
    assert res.returncode == 0, res.stderr
    path = tmp_path / "p" / "model.prism"
    program = stormpy.parse_prism_program(str(path))
    props = stormpy.parse_properties('Pmax=? [ F "on_a_b" ]; Pmin=? [ F<=3 "on_a_b" ]', program)
    built = stormpy.build_model(program, props)
    init = built.initial_states[0]
    storm_values = [stormpy.model_checking(built, p, only_initial_states=True).get_value(init) for p in props]
    parsed = dsl.read(TOY)
    assert parsed.init is not None
    bit = 1 << parsed.vocabulary.index("on(a,b)")
    ours = [
        explicit.pmax_reach(parsed.model, parsed.init, lambda s: bool(s & bit)),
        explicit.pmin_reach(parsed.model, parsed.init, lambda s: bool(s & bit), 3),
    ]
    assert [float(v) for v in ours] == pytest.approx(storm_values, abs=1e-9)
    # a second export into the same place refuses to overwrite the file
    again = capver_in_process("export", str(TOY), "--out", str(tmp_path / "p"), "--format", "prism")
    assert again.returncode == 2 and "exists" in again.stderr


def test_replay_executes_the_witness_with_the_agent(toy_run: Path) -> None:
    res = capver_in_process("verify", str(toy_run), "--property", "E [ F on(a,b) ]", "--replay", "60", "--json")
    assert res.returncode == 0, res.stderr
    record = json.loads(res.stdout)
    assert record["verdict"] == "holds" and record["replay"]["runs"] == 60
    # The toy arm picks a up with probability 3/4 and stacks it on b with 3/4 or less,
    # so the two-step witness reaches on(a,b) often but not always.
    assert 10 < record["replay"]["reached_goal"] < 60


@pytest.mark.slow
def test_replay_of_a_deterministic_agent_always_reaches_the_goal(tmp_path: Path) -> None:
    out = tmp_path / "run"
    assert (
        capver_in_process(
            "learn",
            "--agent",
            "lao",
            "--domain",
            "blocks",
            "--max-steps",
            "60",
            "--eval-sequences",
            "5",
            "--out",
            str(out),
            "--quiet",
        ).returncode
        == 0
    )
    res = capver_in_process("verify", str(out), "--property", "E [ F on(a,b) ]", "--replay", "10", "--json")
    record = json.loads(res.stdout)
    assert record["verdict"] == "holds" and record["replay"] == {"runs": 10, "reached_goal": 10}


QUANTITATIVE = [
    "Pmax=? [ F on(a,b) ]",
    "Pmin=? [ F<=3 on(a,b) ]",
    "Pmax=? [ G<=2 !holding(a) ]",
    "Rmin=? [ F on(a,b) ]",
    "P<=0.9 [ F<=2 on(a,b) ]",
]


def _records(*argv: str) -> list[dict[str, object]]:
    res = capver_in_process("verify", *argv, "--json")
    assert res.returncode in (0, 1, 3), res.stderr
    return [json.loads(line) for line in res.stdout.splitlines()]


@pytest.mark.skipif(not storm.available(), reason=STORMPY_HINT)
def test_every_quantitative_engine_gives_the_same_numbers(toy_run: Path) -> None:
    """Storm over rationals and capver's explicit engine agree exactly; Storm on
    doubles agrees within 1e-9; on h∨ as on h∧."""
    argv = [a for p in QUANTITATIVE for a in ("--property", p)]
    for kind in ("mle", "or"):
        by_engine = {
            e: _records(str(toy_run), *argv, "--engine", e, "--model-kind", kind)
            for e in ("explicit", "storm", "storm-float")
        }
        for ex, st, fl in zip(*by_engine.values(), strict=True):
            assert (ex["engine"], st["engine"], fl["engine"]) == ("explicit", "storm", "storm-float")
            assert ex.get("infinite") == st.get("infinite") == fl.get("infinite")
            if ex.get("infinite"):
                continue
            assert Fraction(str(ex["exact"])) == Fraction(str(st["exact"])) and "exact" not in fl
            assert float(str(fl["value"])) == pytest.approx(float(Fraction(str(ex["exact"]))), abs=1e-9)
            assert ex.get("verdict") == st.get("verdict") == fl.get("verdict")


def test_model_kind_checks_one_bound_of_the_lattice(toy_run: Path) -> None:
    first = dsl.read(toy_run / "h_and.capm")
    models = {
        "and": first.model,
        "or": dsl.read(toy_run / "h_or.capm", ctx=first.ctx).model,
        "tilde": dsl.read(toy_run / "h_tilde.capm", ctx=first.ctx).model,
    }
    init = first.init
    assert init is not None
    for kind, model in models.items():
        records = _records(str(toy_run), *[a for p in PROPERTIES for a in ("--property", p)], "--model-kind", kind)
        for text, record in zip(PROPERTIES, records, strict=True):
            expected = SymbolicEngine(model).check(parse_property(text, first.vocabulary, tuple(model)), init)
            assert record["model"] == {"and": "h∧", "or": "h∨", "tilde": "h̃"}[kind]
            assert record["verdict"] == expected.verdict
    res = capver_in_process("verify", str(TOY), "--property", "E [ F on(a,b) ]", "--model-kind", "or")
    assert res.returncode == 2 and "--model-kind or" in res.stderr and "run directory" in res.stderr


def test_quantitative_values_come_with_bounds_on_the_agent_that_behave_like_ones(toy_run: Path) -> None:
    """The agent's Pmax and Pmin lie in printed intervals: lower ≤ upper; the sound
    bounds (untried pairs and unseen outcomes at their worst) contain the observed-only
    ones, and a smaller δ never narrows them."""
    prop = ("--property", "Pmax=? [ F<=3 on(a,b) ]")

    def agent(*extra: str, text: tuple[str, ...] = prop) -> tuple[float, float]:
        bound = _records(str(toy_run), *text, "--engine", "explicit", *extra)[0]["agent"]
        assert isinstance(bound, dict)
        return float(bound["lower"]), float(bound["upper"])

    sound, observed = agent(), agent("--bound-scope", "observed")
    assert 0 <= sound[0] <= observed[0] <= observed[1] <= sound[1] <= 1
    tight = agent("--delta", "0.001")
    assert tight[0] <= sound[0] and tight[1] >= sound[1]
    lo, hi = agent(text=("--property", "Pmin=? [ F on(a,b) ]"))
    assert 0 <= lo <= hi <= 1
    for bad in ("0", "1", "1.5", "x"):
        res = capver_in_process("verify", str(toy_run), *prop, "--delta", bad)
        assert res.returncode == 2 and "--delta" in res.stderr and "(0, 1)" in res.stderr
