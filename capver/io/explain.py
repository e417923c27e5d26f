"""Plain-words report of a learned model (section 4.2's E2: "inspect learned models
for notable capabilities and limitations"), written to ``report.txt``."""

from __future__ import annotations

from collections.abc import Sequence

from capver.engines.evaluation import achieving_model
from capver.io.dsl import condition_text
from capver.model.capability_model import CompoundModel


def _words(intent: Sequence[object]) -> str:
    return " and ".join(str(lit) for lit in intent) or "(execute it)"


def capability_report(h_and: CompoundModel, h_or: CompoundModel) -> str:
    """Each capability with its conditions and outcome probabilities in words."""
    vocab = h_and.vocabulary
    achieving = achieving_model(h_and)
    lines = [
        f"{len(h_and)} capabilities assessed, {len(achieving)} observed to achieve their intent.",
        "Conditions are those of the pessimistic model h∧ (only observed behaviour).",
        "",
    ]
    for name in sorted(h_and):
        m = h_and[name]
        cap = m.capability
        n_states = sum(len(r.condition.states) for r in m.rules)
        status = "achievable" if name in achieving else "never observed to achieve its intent"
        lines.append(f"* {name}: intent {_words(cap.intent)} — {status}; tried in {n_states} states, {len(m.rules)} rule(s)")
        for i, r in enumerate(m.rules, 1):
            cond = condition_text(r.condition)
            if len(cond) > 160:
                cond = cond[:157] + "..."
            lines.append(f"    rule {i}: when {cond}")
            for p, eta in r.effects:
                what = eta.format(vocab) if (eta.add or eta.delete) else "nothing changes"
                lines.append(f"      with probability {p} ({float(p):.0%}): {what}")
        o = h_or.get(name)
        if o is not None and o.rules:
            lines.append(f"    optimistic bound h∨ assumes these {len(o.rules)} rule(s) also apply in every untried state")
    return "\n".join(lines) + "\n"
