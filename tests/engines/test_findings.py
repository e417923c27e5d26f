"""What the learned models reveal (the paper's E2): capver.engines.findings
reads notable capabilities and limitations off h∧ and report.txt says them in words.

A model-backed agent whose hidden model h⋆ has a known limitation (grabbing fails
when not charged), a known side effect (grabbing sometimes also opens the door) and a
capability it never achieves is learned by MCQS and each is found; then the MiniGrid
RL agent is learned and its "opens a door it does not need" superstition is found the
same way, from the learned model, not from anything MiniGrid-specific.
"""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

from capver.api import learn, load_setting
from capver.core.vocabulary import Atom
from capver.engines.findings import NeverAchieved, Reliable, SideEffect, SuccessDrop, find, run_findings
from capver.io import dsl
from capver.io.explain import capability_report, finding_words, read_findings
from capver.settings import model_assessment
from tests.helpers.cli import capver_in_process

HIDDEN = """
(define (capability-model robot)
  (:predicates (charged) (holding) (door-open) (light))
  (:capability grab
    :intent (holding)
    (:rule :when (and (charged) (not (holding)) (not (door-open)))
      :effects (probabilistic 1/2 (and (holding)) 1/2 (and (holding) (door-open))))
    (:rule :when (and (charged) (not (holding)) (door-open))
      :effects (probabilistic 1 (and (holding))))
    (:rule :when (and (not (charged)) (not (holding)))
      :effects (probabilistic 9/10 (and) 1/10 (and (holding)))))
  (:capability charge
    :intent (charged)
    (:rule :when (not (charged)) :effects (probabilistic 1 (and (charged)))))
  (:capability discharge
    :intent (not (charged))
    (:rule :when (charged) :effects (probabilistic 1 (and (not (charged))))))
  (:capability release
    :intent (not (holding))
    (:rule :when (holding) :effects (probabilistic 1 (and (not (holding))))))
  (:capability shut
    :intent (not (door-open))
    (:rule :when (door-open) :effects (probabilistic 1 (and (not (door-open))))))
  (:capability switch-on
    :intent (light)
    (:rule :when (not (light)) :effects (probabilistic 1 (and)))))
"""


@pytest.fixture(scope="module")
def robot() -> tuple[list[object], object]:
    parsed = dsl.parse(HIDDEN)
    init, _ = parsed.initial_state("")
    result = learn(model_assessment(parsed.model, init, "robot"), method="mcqs-s", max_steps=1500, seed=0)
    return find(result.h_and, np.random.default_rng(0)), result


def _of(findings: list[object], kind: type, cap: str) -> list[object]:
    return [f for f in findings if isinstance(f, kind) and f.capability.name == cap]  # type: ignore[attr-defined]


def test_the_known_limitation_is_a_success_drop_named_by_its_literal(robot) -> None:
    findings, result = robot
    (drop,) = _of(findings, SuccessDrop, "grab")
    # h⋆ gives 1/10 when not charged; h∧'s estimate is the observed share.
    assert drop.high == 1 and drop.low < Fraction(1, 2) and drop.low_states > 0 and drop.high_states > 0
    vocab = result.h_and.vocabulary
    # The short condition of the low block is exactly "not charged" over the states tried.
    charged = 1 << vocab.index(Atom("charged"))
    assert list(drop.condition.cover) and all(c.mask == charged and c.value == 0 for c in drop.condition.cover)
    words = finding_words(drop)
    assert words.startswith("grab: succeeds with probability at most ") and "when not charged (" in words
    assert words.endswith(f"it always did when charged, {drop.high_states} tried states)")


def test_the_known_side_effect_is_found_and_nothing_needed_is_called_one(robot) -> None:
    findings, result = robot
    vocab = result.h_and.vocabulary
    sides = [f for f in findings if isinstance(f, SideEffect)]
    assert [(f.capability.name, f.extra.format(vocab)) for f in sides] == [("grab", "{door-open}")]
    (side,) = sides
    # It happens only where the door was shut and the robot charged: that is where h⋆ opens it.
    assert 0 < side.states < side.achieving
    assert all(
        side.condition.holds(s) == (s & vocab.state(["charged"]) != 0 and not s & vocab.state(["door-open"]))
        for s in range(1 << len(vocab))
        if not s & vocab.state(["holding", "light"])
    )
    words = finding_words(side)
    assert words.startswith("grab: also makes door-open true") and "which holding does not ask for" in words


def test_never_achieved_and_reliable_capabilities(robot) -> None:
    findings, _ = robot
    assert [f.capability.name for f in findings if isinstance(f, NeverAchieved)] == ["switch-on"]
    assert sorted(f.capability.name for f in findings if isinstance(f, Reliable)) == [
        "charge",
        "discharge",
        "release",
        "shut",
    ]
    (never,) = _of(findings, NeverAchieved, "switch-on")
    assert finding_words(never).startswith("switch-on: never achieved light in any of the")


def test_the_report_lists_the_findings_under_their_headings(robot) -> None:
    findings, result = robot
    text = capability_report(result.h_and, result.h_or, result.h_tilde, findings)
    section = text[text.index("What the learned model reveals") : text.index("\n\n*")]
    assert "Capabilities never achieved: 1\n  - switch-on: never achieved light" in section
    assert "Side effects the intent does not ask for: 1\n  - grab: also makes door-open true" in section
    assert "Capabilities that always succeeded: 4" in section


def test_read_findings_gives_back_the_section(robot) -> None:
    findings, result = robot
    text = capability_report(result.h_and, result.h_or, None, findings)
    groups = read_findings(text)
    assert groups is not None and [h for h, _ in groups] == [
        "Capabilities never achieved: 1",
        "Conditions under which success drops: 1",
        "Side effects the intent does not ask for: 1",
        "Capabilities that always succeeded: 4",
    ]
    assert sum(len(items) for _, items in groups) == len(findings)
    assert read_findings(capability_report(result.h_and, result.h_or)) is None


def test_findings_are_read_off_h_and_only(robot) -> None:
    _, result = robot
    with pytest.raises(ValueError, match="pessimistic"):
        find(result.h_or, np.random.default_rng(0))


@pytest.mark.slow
def test_capver_learn_writes_the_findings_into_report_txt(tmp_path: Path) -> None:
    model = tmp_path / "robot.capm"
    model.write_text(HIDDEN)
    r = capver_in_process(
        "learn",
        "--agent",
        "model",
        "--model",
        str(model),
        "--max-steps",
        "1500",
        "--eval-sequences",
        "10",
        "--quiet",
        "--out",
        str(tmp_path / "run"),
    )
    assert r.returncode == 0, r.stderr
    report = (tmp_path / "run" / "report.txt").read_text()
    assert "- grab: succeeds with probability at most" in report and "when not charged" in report
    assert "it always did when charged" in report
    assert "- grab: also makes door-open true" in report
    assert "- switch-on: never achieved light" in report
    # capver report shows the same section on the HTML page.
    r = capver_in_process("report", str(tmp_path / "run"))
    assert r.returncode == 0, r.stderr
    page = (tmp_path / "run" / "report.html").read_text()
    assert "<h2>What the learned model reveals</h2>" in page
    assert "<h3>Capabilities never achieved: 1</h3><ul><li>switch-on: never achieved light" in page


@pytest.mark.slow
def test_minigrid_rl_superstition_is_found_in_its_learned_model() -> None:
    """The RL agent, asked for holding(key), opens doors it does not need (docs/results.md,
    tests/envs/test_minigrid.py measure it on executions); here it must come out of the
    learned model: a side effect of holding(key) that opens a door.  Its quadrant
    limitation (no key from ne/se) must come out as a success drop named by where
    the key is."""
    # The habit shows where one state was seen fetching the key both with and without
    # opening the door; four executions per query (instead of two) see both outcomes
    # more often (docs/findings.md: found for seeds 0-3 this way).
    result = learn(
        load_setting("minigrid-rl", seed=0, layouts=20), method="mcqs-s", max_steps=3000, seed=0, executions=4
    )
    findings = run_findings(result.h_and, 0)
    vocab = result.h_and.vocabulary
    doors = [a for a in vocab.atoms if a.predicate == "open"]
    opened = [
        f for f in _of(findings, SideEffect, "holding(key)") if any(f.extra.add >> vocab.index(d) & 1 for d in doors)
    ]  # type: ignore[attr-defined]
    assert opened, [finding_words(f) for f in findings]  # type: ignore[arg-type]
    assert "holding(key): also makes open(door_" in finding_words(opened[0])  # type: ignore[arg-type]
    (drop,) = _of(findings, SuccessDrop, "holding(key)")
    key_in = {r: vocab.state([Atom("in_room", ("key", r))]) for r in ("nw", "ne", "sw", "se")}
    low = drop.condition  # type: ignore[attr-defined]
    assert drop.low == 0 and low.holds(key_in["ne"]) and low.holds(key_in["se"])  # type: ignore[attr-defined]
    assert not low.holds(key_in["nw"]) and not low.holds(key_in["sw"])
