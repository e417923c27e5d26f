"""The soundness statement of the agent verdicts (verification), checked over many random true models: on a
model-backed agent with a known truth h⋆, every "witnessed on h∧" verdict and every
"violated on h∧" verdict is true of h⋆, and every "safe on h∨" / "impossible on h∨"
verdict is true of h⋆ whenever effect completeness — the assumption the verdict states —
holds on the states the truth can reach (every successor h⋆ gives an enabled capability
there, h∨ gives too; checked by enumeration)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from capver import synthetic
from capver.api import learn
from capver.engines.evaluation import reachable_states
from capver.engines.verification.agent_verdict import AgentVerdict, Tier, decide
from capver.engines.verification.symbolic import SymbolicEngine
from capver.io.properties_text import parse_property
from capver.logic.condition import LogicContext
from capver.settings import model_assessment


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(2, 200))
def test_agent_verdicts_are_true_of_the_truth(seed: int, steps: int) -> None:
    rng = np.random.default_rng(seed)
    ctx = LogicContext(synthetic.propositional_vocabulary(4))
    truth = synthetic.random_model(ctx, rng, n_capabilities=3, max_rules=2, max_effects=2, total=True)
    init = int(rng.integers(16))
    result = learn(model_assessment(truth, init, "random truth"), method="mcqs-s", max_steps=steps,
                   seed=int(rng.integers(2**31)))
    complete = all(
        set(truth[c].distribution(s)) <= (set(result.h_or[c].distribution(s)) if c in result.h_or else set())
        for s in reachable_states(truth, [init]) for c in truth
    )
    caps = tuple(truth)
    for i in range(4):
        for text in (f"E [ F p{i} ]", f"A [ G !p{i} ]", f"E [ !p{(i + 1) % 4} U<=3 p{i} ]"):
            prop = parse_property(text, ctx.vocab, caps)
            v = decide(prop, result.h_and, result.h_or, result.data, init)
            on_truth = SymbolicEngine(truth).check(prop, init).holds
            if v.verdict in (AgentVerdict.UNKNOWN, AgentVerdict.UNCONFIRMED):
                continue
            if v.tier is Tier.OBSERVED or complete:
                assert (v.verdict is AgentVerdict.HOLDS) == on_truth, (text, v.reason, complete)
