"""Evaluating learned models (section 2's VD and section 4.2's methodology).

* :func:`collect_eval_dataset` — the independent dataset D′: the agent executes
  sequences of 10–30 uniformly random capabilities from initial states.
* :func:`achieving_model` — "we remove conditional-effect rules that fail to
  achieve their intent and discard capabilities never observed as achievable".
* :func:`vd_sampled` — VD_s(h, h⋆) = (1/c_T) Σ_{t∈T_D′} N_e(t|D_h)·|N_e(t|D′)/N_e(s,c|D′) − Pr_h(s′|s,c)|
  with c_T = Σ_{t∈T_D′} N_e(t|D_h) — exactly as printed: transitions of D′ are
  weighted by how often the learner observed them.  Model agreement is 1 − VD_s;
  with c_T = 0 (the learner saw none of D′) agreement is defined as 0.
* :func:`exact_vd` — VD(h, h⋆) = Σ_{(s,c,s′)∈D⋆} |Pr_h − Pr_h⋆| / |D⋆|, D⋆ the
  transitions h⋆ induces from the given (reachable) states.
* :func:`reachability_accuracy` — experiment E3: sample predicted-reachable
  capability sequences, execute each many times, report the fraction of executions
  whose outcome the model predicted possible.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from capver.core.dataset import TransitionDataset
from capver.core.state import Capability, State, Transition
from capver.engines.execution import execute
from capver.engines.learning import Setting
from capver.logic.bdd import Cube
from capver.logic.condition import ConditionKind
from capver.model.capability_model import CapabilityModel, CompoundModel, Rule


def collect_eval_dataset(
    setting: Setting,
    capabilities: Sequence[Capability],
    n_sequences: int,
    rng: np.random.Generator,
    length: tuple[int, int] = (10, 30),
) -> TransitionDataset:
    """D′: ``n_sequences`` runs of L ~ U{length} uniformly random capabilities, each
    from an initial state drawn uniformly from ``setting.initial_states``."""
    data = TransitionDataset(setting.alpha.vocabulary, capabilities)
    caps = list(capabilities)
    for _ in range(n_sequences):
        x = setting.initial_states[int(rng.integers(len(setting.initial_states)))]
        for _ in range(int(rng.integers(length[0], length[1] + 1))):
            c = caps[int(rng.integers(len(caps)))]
            ex = execute(setting.agent, setting.sim, setting.alpha, c, x, rng, setting.budget)
            if ex.failed:  # no evidence, as in D (see Learner)
                data.add_failure(ex.transition, steps=ex.steps, reason=ex.failure or "failed")
            else:
                data.add(ex.transition, steps=ex.steps)
            x = setting.sim.get_state()
    return data


def _achieves(rule: Rule, cap: Capability, model: CompoundModel) -> bool:
    """Some state satisfying cond(r) reaches the intent under some effect of r."""
    if not cap.intent:
        return True
    pos, neg = model.vocabulary.literals(cap.intent)
    ctx = model.ctx
    for _, eta in rule.effects:
        if pos & eta.delete or neg & eta.add:
            continue
        need_true = pos & ~eta.add
        need_false = neg & ~eta.delete
        if rule.condition.kind is ConditionKind.PESSIMISTIC:
            if any((s & need_true) == need_true and not (s & need_false) for s in rule.condition.states):
                return True
            continue
        cube = ctx.bdd.cube(Cube(need_true | need_false, need_true))
        if ctx.bdd.conj(rule.condition.bdd, cube) != ctx.bdd.false:
            return True
    return False


def achieving_model(model: CompoundModel) -> CompoundModel:
    """The model with rules that never achieve their intent removed and capabilities
    left without rules discarded (section 4.2)."""
    kept = []
    for m in model.values():
        rules = tuple(r for r in m.rules if _achieves(r, m.capability, model))
        if rules:
            kept.append(CapabilityModel(m.capability, rules))
    return CompoundModel(model.ctx, kept)


def vd_sampled(
    h: CompoundModel, d_h: TransitionDataset, d_eval: TransitionDataset, covered_only: bool = False
) -> float:
    """VD_s(h, h⋆) of section 4.2 (1.0 when c_T = 0).

    With ``covered_only`` the sum runs over the transitions of D′ whose (s, c) the
    model covers — how section 4.2 "focuses on achievable intents" after removing
    the rules that never achieve theirs."""
    c_t = 0
    acc = 0.0
    for t, n_eval in d_eval.items():
        w = d_h.count(t.s, t.c, t.s_next)
        if not w:
            continue
        if covered_only and (t.c not in h or not h[t.c].covers(t.s)):
            continue
        c_t += w
        emp = n_eval / d_eval.count_sc(t.s, t.c)
        acc += w * abs(emp - float(h.prob(t.s, t.c, t.s_next)))
    return acc / c_t if c_t else 1.0


def vd_eval_weighted(h: CompoundModel, d_eval: TransitionDataset, covered_only: bool = False) -> float:
    """VD over D′ weighted by D′'s own counts:
    (1/|D′|) Σ_{t∈T_D′} N_e(t|D′)·|N_e(t|D′)/N_e(s,c|D′) − Pr_h(s′|s,c)|.

    Section 4.2's printed VD_s weights by the *learner's* counts, so transitions the
    learner never saw do not count and the score saturates as soon as what was seen
    is estimated well.  This variant charges every transition of D′, so it also
    measures how much of the agent's behaviour the model covers: the learning curve
    rises from 0 as MCQS explores.  With ``covered_only`` only (s, c) pairs the model
    covers count (as for :func:`model_agreement`)."""
    total = 0
    acc = 0.0
    for t, n_eval in d_eval.items():
        if covered_only and (t.c not in h or not h[t.c].covers(t.s)):
            continue
        total += n_eval
        emp = n_eval / d_eval.count_sc(t.s, t.c)
        acc += n_eval * abs(emp - float(h.prob(t.s, t.c, t.s_next)))
    return acc / total if total else 1.0


def coverage_agreement(h_and: CompoundModel, d_eval: TransitionDataset) -> float:
    """1 − :func:`vd_eval_weighted` of h∧ over all of D′."""
    return 1.0 - vd_eval_weighted(h_and, d_eval)


def model_agreement(h_and: CompoundModel, d_h: TransitionDataset, d_eval: TransitionDataset) -> float:
    """1 − VD_s on the pessimistic model restricted to achieving rules, summed over
    the (s, c) pairs those rules cover."""
    return 1.0 - vd_sampled(achieving_model(h_and), d_h, d_eval, covered_only=True)


def checkpoint_scores(
    h: CompoundModel,
    d_h: TransitionDataset,
    d_eval: TransitionDataset,
    truth: CompoundModel | None = None,
    reachable: Iterable[State] | None = None,
) -> dict[str, float]:
    """The scores of a learning checkpoint: ``agreement`` (1 − VD_s), ``coverage_agreement``
    and, when the truth and its reachable states are known, ``exact_vd``."""
    scores = {"agreement": model_agreement(h, d_h, d_eval), "coverage_agreement": coverage_agreement(h, d_eval)}
    if truth is not None and reachable is not None:
        scores["exact_vd"] = exact_vd(h, truth, reachable)
    return scores


def tilde_scores(
    h_tilde: CompoundModel,
    d_eval: TransitionDataset,
    truth: CompoundModel | None = None,
    reachable: Iterable[State] | None = None,
) -> dict[str, float]:
    """The Occam model h̃'s scores beside :func:`checkpoint_scores`'s:
    ``coverage_agreement_tilde`` and, with the truth, ``exact_vd_tilde`` — the same
    functions on h̃ (model agreement stays h∧'s: VD_s weights by the learner's own
    counts, where h̃ equals h∧)."""
    scores = {"coverage_agreement_tilde": coverage_agreement(h_tilde, d_eval)}
    if truth is not None and reachable is not None:
        scores["exact_vd_tilde"] = exact_vd(h_tilde, truth, reachable)
    return scores


def reachable_states(truth: CompoundModel, initial: Iterable[State], limit: int = 1_000_000) -> set[State]:
    """States reachable from ``initial`` under any capability sequence of h⋆."""
    seen = set(initial)
    frontier = list(seen)
    while frontier:
        s = frontier.pop()
        for m in truth.values():
            for s2 in m.distribution(s):
                if s2 not in seen:
                    seen.add(s2)
                    frontier.append(s2)
                    if len(seen) > limit:
                        raise ValueError(f"more than {limit} reachable states")
    return seen


def exact_vd(h: CompoundModel, truth: CompoundModel, states: Iterable[State]) -> float:
    """VD(h, h⋆) over D⋆ = {(s, c, s′): s ∈ states, Pr_h⋆(s′|s,c) > 0}."""
    total = 0.0
    n = 0
    for s in states:
        for c, m in truth.items():
            for s2, p in m.distribution(s).items():
                total += abs(float(p) - float(h.prob(s, c, s2)))
                n += 1
    return total / n if n else 0.0


def mean_abs_error(h: CompoundModel, truth: CompoundModel, transitions: Iterable[Transition]) -> float:
    """Mean |P_true − P_model| over the given transitions (the QACE comparison)."""
    errs = [abs(float(truth.prob(t.s, t.c, t.s_next)) - float(h.prob(t.s, t.c, t.s_next))) for t in transitions]
    return float(np.mean(errs)) if errs else 0.0


@dataclass(frozen=True, slots=True)
class ReachabilityResult:
    sequences: int
    executions: int
    accuracy: float  # mean over sequences of the fraction of predicted outcomes
    std: float


def reachability_accuracy(
    h: CompoundModel,
    setting: Setting,
    rng: np.random.Generator,
    n_sequences: int = 100,
    length: int = 5,
    executions: int = 100,
) -> ReachabilityResult:
    """E3 (section 4.2): sample ``n_sequences`` capability sequences the model predicts
    executable (each step has a matching rule at a predicted state, chosen by forward
    sampling from an initial state), execute each ``executions`` times with the agent
    and score the fraction of runs whose final state the model predicts possible."""
    alpha = setting.alpha
    scores: list[float] = []
    total = 0
    attempts = 0
    while len(scores) < n_sequences and attempts < 50 * n_sequences:
        attempts += 1
        x0 = setting.initial_states[int(rng.integers(len(setting.initial_states)))]
        s = alpha(x0)
        seq = _predicted_sequence(h, s, length, rng)
        if seq is None:
            continue
        dist: dict[State, float] = {s: 1.0}
        for c in seq:
            dist = _propagate(h, dist, c)
        hits = 0
        for _ in range(executions):
            x = x0
            for c in seq:
                execute(setting.agent, setting.sim, alpha, h[c].capability, x, rng, setting.budget)
                x = setting.sim.get_state()
            hits += int(dist.get(alpha(x), 0.0) > 0.0)
            total += 1
        scores.append(hits / executions)
    arr = np.array(scores) if scores else np.array([0.0])
    return ReachabilityResult(len(scores), total, float(arr.mean()), float(arr.std()))


def _predicted_sequence(h: CompoundModel, s: State, length: int, rng: np.random.Generator) -> list[str] | None:
    seq = []
    for _ in range(length):
        valid = [c for c, m in h.items() if m.covers(s)]
        if not valid:
            return None
        c = valid[int(rng.integers(len(valid)))]
        dist = h[c].float_distribution(s)
        xs = [x for x, _ in dist]
        ps = np.array([p for _, p in dist])
        s = xs[int(rng.choice(len(xs), p=ps / ps.sum()))]
        seq.append(c)
    return seq


def _propagate(h: CompoundModel, dist: dict[State, float], c: str) -> dict[State, float]:
    out: dict[State, float] = {}
    for s, p in dist.items():
        for s2, q in h[c].float_distribution(s):
            out[s2] = out.get(s2, 0.0) + p * q
    return out
