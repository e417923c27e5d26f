"""The words of a verdict about the agent match what is proved (capver.engines.verification.verdict):
HOLDS and VIOLATED only for exact verdicts; a confident one is a bound on the chance of
a violation, worded as what was seen, in the text and in the JSON record alike."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from capver import synthetic
from capver.core.dataset import TransitionDataset
from capver.core.state import Transition
from capver.engines.evaluation import reachable_states
from capver.engines.lattice import build_bounds
from capver.engines.verification import Evidence, Verifier
from capver.engines.verification.agent_verdict import Tier
from capver.engines.verification.symbolic import SymbolicEngine
from capver.io.properties_text import parse_property
from capver.logic.condition import LogicContext

WORDS = {"holds": "NO VIOLATION SEEN", "violated": "NOT SEEN TO HOLD"}


def _instances(seed: int) -> list[tuple[str, str, dict[str, object], str]]:
    """(tier, verdict, record, text) of every verdict on a random truth, sampled
    generously so that confident verdicts arise."""
    rng = np.random.default_rng(seed)
    ctx = LogicContext(synthetic.propositional_vocabulary(3))
    truth = synthetic.random_model(ctx, rng, n_capabilities=2, max_rules=2, max_effects=2, total=True)
    init = int(rng.integers(8))
    data = TransitionDataset(truth.vocabulary, truth.capabilities)
    for s in sorted(reachable_states(truth, [init])):
        for c in truth:
            for _ in range(120):
                s2 = synthetic.sample_successor(truth[c], s, rng)
                assert s2 is not None
                data.add(Transition(s, c, s2))
    b = build_bounds(ctx, data)
    h_and, h_or = b.pessimistic, b.optimistic
    texts = [t for i in range(3) for t in (f"A [ G !p{i} ]", f"E [ F p{i} ]", f"A [ G<=3 (p{i} | !p{(i + 1) % 3}) ]")]
    props = [parse_property(text, ctx.vocab, tuple(truth)) for text in texts]
    evidence = Evidence(h_and, h_or, data, delta=0.05, epsilon=0.2)
    verifier = Verifier(evidence, props, init, engines=(SymbolicEngine(h_and), SymbolicEngine(h_or)))
    out = []
    for prop in props:
        checked = verifier.check(prop)
        v = checked.lattice
        assert v is not None
        out.append((v.tier.value, v.verdict.value, checked.to_json(), checked.to_text()))
    return out


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_only_exact_verdicts_say_holds_or_violated(seed: int) -> None:
    for tier, verdict, record, line in _instances(seed):
        first = line.splitlines()[0]
        if tier == Tier.CONFIDENT.value:
            assert "HOLDS" not in first and "VIOLATED" not in first, first
            assert WORDS[verdict] in first and "with confidence 0.95" in first and "per execution" in first
            assert record["verdict"] == WORDS[verdict].lower().replace(" ", "-")
            assert record["tier"] == "confident"
        elif tier == Tier.OBSERVED.value:
            assert f"{verdict.upper()} for the agent (observed)" in first
            assert record["verdict"] == verdict


def test_the_sweep_meets_confident_verdicts() -> None:
    """Not vacuous: the construction above gives confident verdicts of both kinds."""
    seen = {(tier, verdict) for seed in range(12) for tier, verdict, _, _ in _instances(seed)}
    assert ("confident", "holds") in seen and ("confident", "violated") in seen, seen


def test_the_learn_summary_words_tiers_alike() -> None:
    from capver.learn_run import tier_text

    assert tier_text("holds", "confident") == "NO VIOLATION SEEN (confident)"
    assert tier_text("violated", "confident") == "NOT SEEN TO HOLD (confident)"
    assert tier_text("holds", "observed") == "HOLDS (observed)"
