"""What ``report.txt`` and the end-of-learn summary say, checked against the models
they describe (capver.io.explain, capver.engines.findings.capability_statuses,
capver.commands.learn's summary).

* every capability's label is what the data show (observed to achieve its intent /
  tried without / tried only where it held / never tried), and "impossible on h∨"
  is checked by enumerating every state of h∨; the headline's counts are the labels'
  counts and the "never achieved" findings' count;
* no sentence repeats the intent as its own condition, success drops read "never
  succeeds when … (it always did when …)", and a condition is printed whole or with
  the number of literals left out and the file and rule that hold it;
* a rule comment's state count says it counts atom combinations and is that count;
* the summary leads with coverage agreement, says what each metric measures, and its
  writing time is the sum of the output phases' lines.
"""

from __future__ import annotations

import re
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

from capver.commands.progress import ProgressReport
from capver.core.dataset import TransitionDataset
from capver.core.state import Capability, Effect, Transition
from capver.core.vocabulary import Atom, Literal, Predicate, Vocabulary
from capver.engines.findings import Achievement, NeverAchieved, SuccessDrop, capability_statuses, find
from capver.engines.lattice import build_bounds
from capver.engines.lifting import run_lifted_model
from capver.io import dsl, explain
from capver.io.explain import capability_report, cover_prefix, cover_words, finding_words, rule_summary, tilde_blocks
from capver.logic.bdd import Cube, isop_of_interval
from capver.logic.condition import Condition, LogicContext, formula_condition
from capver.model.capability_model import Rule
from tests.helpers.cli import capver_in_process
from tests.helpers.corpus import all_states, brute_distribution, sampled_worlds
from tests.helpers.examples import scaled

# -- labels and counts ----------------------------------------------------------------------


def _brute_status(data: TransitionDataset, h_or, cap: Capability, n: int) -> tuple[Achievement, bool]:  # type: ignore[no-untyped-def]
    """The status from the raw data and h∨'s distributions over all 2^n states."""
    vocab = data.vocab
    tried = list(data.states_of(cap.name))
    holds = [cap.achieved(vocab, s) for s in tried]
    if not tried:
        kind = Achievement.UNTRIED
    elif all(holds):
        kind = Achievement.ONLY_WHERE_HELD
    elif any(
        not cap.achieved(vocab, s) and any(cap.achieved(vocab, s2) for s2 in data.successors(s, cap.name))
        for s in tried
    ):
        kind = Achievement.ACHIEVED
    else:
        kind = Achievement.NOT_ACHIEVED
    possible = cap.name in h_or and any(
        not cap.achieved(vocab, s)
        and any(p > 0 and cap.achieved(vocab, s2) for s2, p in brute_distribution(h_or[cap.name], s).items())
        for s in all_states(n)
    )
    return kind, possible


@settings(max_examples=scaled(60), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sampled_worlds(max_atoms=4, max_transitions=30))
def test_labels_are_what_the_data_and_every_state_of_h_or_show(wd) -> None:  # type: ignore[no-untyped-def]
    world, data = wd
    bounds = build_bounds(world.ctx, data)
    statuses = capability_statuses(bounds.pessimistic, bounds.optimistic)
    for name, st in statuses.items():
        kind, possible = _brute_status(data, bounds.optimistic, st.capability, world.n)
        assert st.achievement is kind, name
        if kind is Achievement.ACHIEVED:
            assert possible  # h∧ ⪯ h∨: what was observed h∨ allows
        if kind in (Achievement.NOT_ACHIEVED, Achievement.ONLY_WHERE_HELD):
            assert st.possible_on_h_or == possible, name


def _labels(text: str) -> dict[str, str]:
    return {
        m.group(1): m.group(2)
        for m in re.finditer(r"^\* (\S+): intent .*? — (.*?)(?:; tried in .*)?$", text, re.MULTILINE)
    }


@settings(max_examples=scaled(40), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sampled_worlds(max_atoms=4, max_transitions=30))
def test_headline_counts_are_the_labels_and_the_never_achieved_findings(wd) -> None:  # type: ignore[no-untyped-def]
    world, data = wd
    bounds = build_bounds(world.ctx, data)
    findings = find(bounds.pessimistic, np.random.default_rng(0))
    text = capability_report(bounds.pessimistic, bounds.optimistic, None, findings)
    labels = _labels(text)
    assert sorted(labels) == sorted(bounds.pessimistic)
    head = text.splitlines()[0]
    assert head.startswith(f"{len(labels)} capabilities assessed: ")
    observed = sum(1 for v in labels.values() if v == explain.LABELS[Achievement.ACHIEVED])
    assert f": {observed} observed to achieve their intent" in head
    never = sorted(k for k, v in labels.items() if v.startswith(explain.LABELS[Achievement.NOT_ACHIEVED]))
    assert sorted(f.capability.name for f in findings if isinstance(f, NeverAchieved)) == never
    if never:
        assert f"{len(never)} tried where their intent did not hold yet" in head
    assert f"Capabilities never achieved: {len(never) if never else 'none found'}" in text
    untried = sum(1 for v in labels.values() if v == explain.LABELS[Achievement.UNTRIED])
    assert (f"{untried} never tried" in head) == (untried > 0)
    # Every capability called impossible on h∨ is named on the second line, and only those.
    impossible = sorted(k for k, v in labels.items() if "impossible on h∨" in v)
    if impossible:
        assert text.splitlines()[1].endswith(": " + ", ".join(impossible) + ".")
    assert "achievable" not in text


# -- the sentences ----------------------------------------------------------------------------

VOCAB = Vocabulary.build([Predicate("charged"), Predicate("holding"), Predicate("door")])
CHARGED = 1 << VOCAB.index(Atom("charged"))
HOLDING = 1 << VOCAB.index(Atom("holding"))
CTX = LogicContext(VOCAB)


def _state(*atoms: str) -> int:
    return VOCAB.state([Atom(a) for a in atoms])


def _data(rows: list[tuple[str, frozenset[str], frozenset[str]]], caps: list[Capability]) -> TransitionDataset:
    data = TransitionDataset(VOCAB, caps)
    for c, s, s2 in rows:
        data.add(Transition(_state(*s), c, _state(*s2)))
    return data


GRAB = Capability("grab", (Literal(Atom("holding"), True),))


def test_a_success_drop_reads_never_succeeds_when_then_where_it_always_did() -> None:
    f = frozenset
    rows = [
        ("grab", f({"charged"}), f({"charged", "holding"})),
        ("grab", f({"charged", "door"}), f({"charged", "door", "holding"})),
        ("grab", f(), f()),
        ("grab", f({"door"}), f({"door"})),
    ]
    h_and = build_bounds(CTX, _data(rows, [GRAB])).pessimistic
    (drop,) = [x for x in find(h_and, np.random.default_rng(0)) if isinstance(x, SuccessDrop)]
    assert finding_words(drop) == (
        "grab: never succeeds when not charged (2 tried states; it always did when charged, 2 tried states)"
    )


def _formula(mask: int, value: int) -> Condition:
    return formula_condition(CTX, CTX.bdd.cube(Cube(mask, value)))


def test_a_partial_drop_gives_its_probabilities() -> None:
    drop = SuccessDrop(GRAB, Fraction(3, 4), 3, Fraction(1, 4), 2, _formula(CHARGED, 0), _formula(CHARGED, CHARGED))
    assert finding_words(drop) == (
        "grab: succeeds with probability at most 1/4 when not charged (2 tried states; "
        "it did with probability at least 3/4 when charged, 3 tried states)"
    )


def test_a_rule_where_the_intent_already_holds_is_never_a_tautology() -> None:
    only = Rule(_formula(HOLDING, HOLDING), ((Fraction(1), Effect()),))
    assert explain.rule_words(GRAB, only) == "applies only where holding already holds: nothing changes"
    more = Rule(
        _formula(HOLDING | CHARGED, HOLDING), ((Fraction(1, 2), Effect()), (Fraction(1, 2), Effect(delete=HOLDING)))
    )
    assert explain.rule_words(GRAB, more) == (
        "applies only where holding already holds and not charged: undoes holding with probability 1/2"
    )


def test_cover_prefix_cuts_at_a_literal_and_counts_what_it_left_out() -> None:
    atoms = [Atom(f"p{i}") for i in range(12)]
    cover = [Cube(0b111111, 0b101010), Cube(0b111111000000, 0b000111000000)]
    whole = cover_words(atoms, cover)
    assert cover_prefix(atoms, cover, len(whole)) == (whole, 12, 12)
    for limit in range(10, len(whole)):
        text, shown, total = cover_prefix(atoms, cover, limit)
        assert total == 12 and shown < 12 and len(text) <= limit
        assert whole.startswith(text)
        # The cut is between literals: what is shown is exactly `shown` literals.
        assert len(re.findall(r"p\d+", text)) == shown


def test_long_rule_conditions_say_what_was_left_out_and_where_it_is(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    vocab = Vocabulary.build([Predicate(f"a{i}") for i in range(8)])
    ctx = LogicContext(vocab)
    cap = Capability("c", (Literal(Atom("a0"), True),))
    rng = np.random.default_rng(3)
    data = TransitionDataset(vocab, [cap])
    for s in map(int, rng.choice(256, size=40, replace=False)):
        data.add(Transition(s, "c", s | 1 if s & 6 == 6 or s & 24 == 8 else s))
    bounds = build_bounds(ctx, data)
    h_and = bounds.pessimistic
    monkeypatch.setattr(explain, "RULE_WORDS_LIMIT", 30)
    text = capability_report(h_and, bounds.optimistic)
    assert "..." not in text
    dsl.write(h_and, tmp_path / "h_and.capm")
    parsed = dsl.parse((tmp_path / "h_and.capm").read_text()).model
    tried = frozenset().union(*(r.condition.states for r in h_and["c"].rules))
    lines = [ln for ln in text.splitlines() if ln.startswith("    rule ")]
    assert len(lines) == len(h_and["c"].rules) >= 2
    cut = 0
    for k, (line, r) in enumerate(zip(lines, h_and["c"].rules, strict=True), 1):
        cover = isop_of_interval(len(vocab), r.condition.states, tried - r.condition.states)
        # "those where f" picks out exactly this rule's states among the tried ones.
        assert {s for s in tried if any(s & c.mask == c.value for c in cover)} == set(r.condition.states)
        m = re.search(
            r" … \((\d+) of its (\d+) literals left out here; the whole condition is rule (\d+) of "
            r"capability (\S+) in h_and\.capm\)$",
            line,
        )
        total = sum(c.mask.bit_count() for c in cover)
        if m is None:
            assert line.endswith(cover_words(vocab.atoms, cover))
            continue
        cut += 1
        shown = len(re.findall(r"a\d+", line.split("those where ", 1)[1].split(" … ")[0]))
        assert int(m.group(2)) == total and int(m.group(1)) == total - shown and shown < total
        assert (int(m.group(3)), m.group(4)) == (k, "c")
        # The file's rule k is this rule: it holds exactly on the rule's states.
        pr = parsed["c"].rules[k - 1]
        assert all(pr.condition.holds(s) == (s in r.condition.states) for s in range(256))
    assert cut  # the limit of 30 characters cut some condition


def test_rule_comments_count_atom_combinations_and_say_so() -> None:
    r = Rule(_formula(CHARGED, CHARGED), ((Fraction(1), Effect(add=HOLDING)),))
    count = sum(1 for s in range(8) if s & CHARGED)
    assert rule_summary(CTX, GRAB, r).startswith(
        f"applies in {count} of the 2^3 = 8 combinations of the 3 atoms (reachable or not)"
    )


@pytest.fixture(scope="module")
def blocks_lifted():  # type: ignore[no-untyped-def]
    from capver.api import learn, load_setting

    result = learn(load_setting("lao", domain="blocks"), method="mcqs-e", max_steps=120, seed=0)
    return result, run_lifted_model(result.h_and, result.data, 0)


def test_tilde_blocks_name_the_block_of_h_tilde_capm_with_the_rules(blocks_lifted, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    _, lifted = blocks_lifted
    where = tilde_blocks(lifted)
    assert sorted(where) == sorted(lifted.model)
    dsl.write_lifted(lifted, tmp_path / "h_tilde.capm")
    text = (tmp_path / "h_tilde.capm").read_text()
    assert any(v.startswith("lifted capability ") for v in where.values())
    for c, block in where.items():
        m = re.fullmatch(r"(lifted )?capability (.+)", block)
        assert m is not None, block
        name = m.group(2)
        head = f"(:lifted-capability {dsl.quote(name)}" if m.group(1) else f"(:capability {dsl.quote(name)}"
        assert head in text, block
        body = text[text.index(head) :].split("\n\n", 1)[0]
        assert body.count("(:rule") == len(lifted.model[c].rules), c


def test_report_of_a_learned_run_has_no_cut_or_tautological_text(blocks_lifted) -> None:  # type: ignore[no-untyped-def]
    result, lifted = blocks_lifted
    text = capability_report(
        result.h_and, result.h_or, lifted.model, find(result.h_and, np.random.default_rng(0)), tilde_blocks(lifted)
    )
    assert "..." not in text and "achievable" not in text and "success drops to" not in text
    for m in re.finditer(r"(\S+) already holds when (.*)", text):
        assert m.group(2) != m.group(1)
    for line in text.splitlines():
        if "no short condition" in line:
            assert re.search(r"the whole condition is rule \d+ of (lifted )?capability \S+ in h_tilde\.capm\)$", line)


# -- the summary ------------------------------------------------------------------------------


def test_phases_keep_the_printed_seconds_and_add_them_up() -> None:
    import io

    out = io.StringIO()
    report = ProgressReport("x", stream=out)
    for what in ("a", "b", "c"):
        with report.phase(what):
            pass
    printed = [float(x) for x in re.findall(r"done in (\d+\.\d) s", out.getvalue())]
    assert [w for w, _ in report.phases] == ["a", "b", "c"] and [s for _, s in report.phases] == printed
    assert report.seconds_since(1) == round(sum(printed[1:]), 1)
    quiet = ProgressReport("x", quiet=True, stream=out)
    with quiet.phase("q"):
        pass
    assert [w for w, _ in quiet.phases] == ["q"]


@pytest.mark.slow
def test_learn_summary_leads_with_coverage_agreement_and_adds_up(tmp_path: Path) -> None:
    run = tmp_path / "run"
    res = capver_in_process(
        "learn",
        "--agent",
        "lao",
        "--domain",
        "blocks",
        "--method",
        "mcqs-e",
        "--max-steps",
        "40",
        "--eval-sequences",
        "5",
        "--eval-every",
        "10",
        "--out",
        str(run),
    )
    assert res.returncode == 0, res.stderr
    lines = res.stdout.splitlines()
    assert lines[0].startswith("lao:blocks/problem1 mcqs-e: step budget 40; ")
    assert lines[1].startswith("  coverage agreement ") and "the share of the agent's behaviour" in lines[1]
    assert lines[2].startswith("  paper agreement 1 − VD_s ") and "only transitions the learner saw" in lines[2]
    m = re.fullmatch(
        r"  time: set-up (\d+\.\d) s, learning (\d+\.\d) s, writing (\d+\.\d) s "
        r"\(the (\d+) output phases above\), total (\d+\.\d) s",
        lines[3],
    )
    assert m is not None, lines[3]
    setup, learning, writing, total = (float(m.group(i)) for i in (1, 2, 3, 5))
    assert round(setup + learning + writing, 1) == total
    done = [float(x) for x in re.findall(r": done in (\d+\.\d) s", res.stderr)]
    phases = int(m.group(4))
    assert phases >= 6 and round(sum(done[-phases:]), 1) == writing
    for what in (
        "plotting curve.png",
        "writing h_and.capm, h_or.capm and h_tilde.capm",
        "reading the findings off h∧",
        "writing report.txt",
        "certifying h∧ ⪯ h̃ ⪯ h∨",
    ):
        assert f"capver learn: {what}" in res.stderr
    nxt = lines[4]
    assert nxt.startswith(f"Wrote {run}/") and f"capver report {run}" in nxt
    prop = re.search(r'capver verify \S+ --property "([^"]+)"', nxt)
    assert prop is not None
    # The suggested property is one the run's agent was seen to reach: it holds, observed.
    v = capver_in_process("verify", str(run), "--property", prop.group(1))
    assert v.returncode == 0 and "HOLDS for the agent (observed)" in v.stdout, v.stdout + v.stderr
    # The HTML page labels capabilities as report.txt does: observed, not "achievable".
    assert capver_in_process("report", str(run)).returncode == 0
    page = (run / "report.html").read_text(encoding="utf-8")
    assert "observed to achieve it" in page and "achievable" not in page


def test_quiet_summary_does_not_point_at_lines_it_did_not_print() -> None:
    from capver.commands.learn import summary_text

    last = {"coverage_agreement": 0.25, "coverage_agreement_tilde": 0.5, "agreement": 0.99, "exact_vd": ""}
    loud = summary_text(last, Path("r"), 0.5, 1.0, 2.0, 7, "E [ F p ]")
    quiet = summary_text(last, Path("r"), 0.5, 1.0, 2.0, 7, "E [ F p ]", quiet=True)
    assert "(the 7 output phases above), total 3.5 s" in loud and "(the 7 output phases), total 3.5 s" in quiet
    assert loud.splitlines()[0] == (
        "  coverage agreement 0.250 (h̃ 0.500): the share of the agent's behaviour in the "
        "evaluation dataset D′ that the model predicts"
    )
    assert "exact VD" not in loud and 'capver verify r --property "E [ F p ]"' in loud
