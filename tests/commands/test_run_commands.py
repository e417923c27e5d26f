"""The commands that read ``capver learn`` runs: ``capver eval`` (section 4.2's
evaluation, E3 reachability accuracy) and ``capver plot`` (Fig. 4's curves); the run
manifest that ties a run directory to its setting."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from capver.agents.model_backed import ModelBackedAgent
from capver.cli import main
from capver.core.state import Effect
from capver.engines.evaluation import reachability_accuracy
from capver.engines.execution import ExecutionBudget
from capver.engines.learning import Setting
from capver.logic.condition import LogicContext
from capver.model.capability_model import CapabilityModel, CompoundModel, Rule
from capver.synthetic import propositional_vocabulary, random_model
from tests.helpers.examples import scaled


def _learn(out: Path, *extra: str) -> dict[str, str]:
    argv = ["learn", "--eval-sequences", "30", "--out", str(out), "--quiet", *extra]
    assert main(argv) == 0
    with open(out / "curve.csv") as f:
        return list(csv.DictReader(f))[-1]


def test_eval_reproduces_the_learn_scores_and_e3_is_exact_on_a_deterministic_agent(tmp_path: Path, capsys) -> None:
    out = tmp_path / "blocks"
    last = _learn(out, "--agent", "lao", "--domain", "blocks", "--method", "mcqs-s", "--max-steps", "120")
    assert main(["eval", str(out), "--reachability", "20", "--executions", "3"]) == 0
    scores = json.loads((out / "evaluation.json").read_text())
    assert scores["agreement"] == pytest.approx(float(last["agreement"]), abs=1e-6)
    assert scores["coverage_agreement"] == pytest.approx(float(last["coverage_agreement"]), abs=1e-6)
    assert "exact_vd" not in scores  # the LAO* agent's true model is unknown
    # Blocksworld and LAO* are deterministic and h∧ predicts only observed outcomes:
    # every execution of a predicted-executable sequence ends where h∧ said it could.
    e3 = scores["reachability"]
    assert (e3["sequences"], e3["executions"], e3["accuracy"]) == (20, 60, 1.0)
    assert "E3 reachability accuracy" in capsys.readouterr().out


def test_eval_reports_exact_vd_when_the_truth_is_known(tmp_path: Path) -> None:
    out = tmp_path / "primitive"
    last = _learn(
        out, "--agent", "primitive", "--domain", "first_responders", "--method", "random", "--max-steps", "40"
    )
    assert main(["eval", str(out), "--reachability", "0"]) == 0
    scores = json.loads((out / "evaluation.json").read_text())
    assert 0.0 < scores["exact_vd"] <= 1.0
    assert scores["exact_vd"] == pytest.approx(float(last["exact_vd"]), abs=1e-6)
    assert "reachability" not in scores


def test_eval_rejects_a_directory_that_is_not_a_run(tmp_path: Path, capsys) -> None:
    assert main(["eval", str(tmp_path)]) == 2
    assert "run.json: missing" in capsys.readouterr().err
    (tmp_path / "run.json").write_text('{"format": 1,\n "agent": }')
    assert main(["eval", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "run.json:2:" in err and "expected the JSON manifest" in err


def test_resume_refuses_another_setting_and_keeps_the_data(tmp_path: Path, capsys) -> None:
    out = tmp_path / "run"
    _learn(out, "--agent", "lao", "--domain", "blocks", "--method", "random", "--max-steps", "30")
    before = (out / "dataset.jsonl").read_bytes()
    argv = [
        "learn",
        "--agent",
        "lao",
        "--domain",
        "tireworld",
        "--out",
        str(out),
        "--resume",
        "--quiet",
        "--max-steps",
        "60",
    ]
    assert main(argv) == 2
    err = capsys.readouterr().err
    # The refusal names the one option that differs, with both values.
    assert "--resume" in err and "--domain: the run has 'blocks', given 'tireworld'" in err
    assert "--seed" not in err and "--problem" not in err
    assert (out / "dataset.jsonl").read_bytes() == before


def test_plot_draws_one_line_per_method_and_refuses_mixed_settings(tmp_path: Path, capsys) -> None:
    runs = []
    for method in ("mcqs-s", "random"):
        runs.append(tmp_path / method)
        _learn(runs[-1], "--agent", "lao", "--domain", "blocks", "--method", method, "--max-steps", "20")
    png = tmp_path / "fig.png"
    assert main(["plot", *map(str, runs), "--metric", "agreement", "--out", str(png)]) == 0
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "(2 runs, 2 methods)" in capsys.readouterr().out
    assert main(["plot", *map(str, runs), "--metric", "exact_vd", "--out", str(tmp_path / "vd.png")]) == 2
    assert "--metric exact_vd: no run recorded it" in capsys.readouterr().err
    other = tmp_path / "tireworld"
    _learn(other, "--agent", "lao", "--domain", "tireworld", "--method", "random", "--max-steps", "10")
    assert main(["plot", str(runs[0]), str(other), "--out", str(tmp_path / "mixed.png")]) == 2
    assert "plot runs of one setting together" in capsys.readouterr().err


def _model_world(seed: int) -> tuple[CompoundModel, Setting]:
    rng = np.random.default_rng(seed)
    ctx = LogicContext(propositional_vocabulary(4))
    truth = random_model(ctx, rng, n_capabilities=3, max_rules=2, max_effects=2, total=True)
    agent = ModelBackedAgent(truth)
    setting = Setting(
        agent,
        agent.simulator(0),
        agent.representation(),
        tuple(truth.capabilities),
        tuple(range(16)),
        ExecutionBudget(max_steps=2, theta=None),
        symbolic_states=True,
    )
    return agent.true_model, setting


def _wrong(truth: CompoundModel) -> CompoundModel:
    """Every rule of the truth with its effects replaced by "turn atom 0 on"."""
    return CompoundModel(
        truth.ctx,
        [
            CapabilityModel(m.capability, tuple(Rule.make(r.condition, [(1, Effect(1, 0))]) for r in m.rules))
            for m in truth.values()
        ],
    )


@settings(max_examples=scaled(15), deadline=None)
@given(st.integers(0, 2**16))
def test_e3_accuracy_is_one_for_the_true_model(seed: int) -> None:
    truth, setting = _model_world(seed)
    exact = reachability_accuracy(truth, setting, np.random.default_rng(seed), n_sequences=10, length=3, executions=10)
    assert (exact.sequences, exact.executions, exact.accuracy, exact.std) == (10, 100, 1.0, 0.0)


@pytest.mark.parametrize("seed", range(4))
def test_e3_accuracy_drops_for_a_wrong_model(seed: int) -> None:
    truth, setting = _model_world(seed)
    worse = reachability_accuracy(
        _wrong(truth), setting, np.random.default_rng(seed), n_sequences=10, length=3, executions=10
    )
    assert worse.sequences == 10
    assert worse.accuracy < 0.9
