"""Cross-check of capver's PPDDL simulator against pddlgym 0.0.7 on the bundled domains.

For states reached by seeded random walks, pddlgym's set of valid action literals must
equal the action literals of our applicable ground actions, and for every applicable
action pddlgym's successor distribution (``get_successor_states(..., return_probs=True)``,
the function behind ``PDDLEnv.get_all_possible_transitions``) must equal our exact
``outcomes`` up to float rounding.  pddlgym draws from the global ``np.random`` even
when it enumerates outcomes, so the global state is seeded here and restored after.
"""

from __future__ import annotations

import contextlib
import io
import warnings
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from capver.core.vocabulary import Atom
from capver.envs.ppddl import BUNDLED, PPDDLTask, load_task


@pytest.fixture(scope="module")
def pgcore():
    # gym 0.26 prints an "unmaintained" banner and numpy deprecation warnings on import.
    with (
        warnings.catch_warnings(),
        contextlib.redirect_stdout(io.StringIO()),
        contextlib.redirect_stderr(io.StringIO()),
    ):
        warnings.simplefilter("ignore")
        import pddlgym.core
    return pddlgym.core


@contextlib.contextmanager
def seeded_global_numpy(seed: int) -> Iterator[None]:
    saved = np.random.get_state()
    np.random.seed(seed)
    try:
        yield
    finally:
        np.random.set_state(saved)


@contextlib.contextmanager
def quiet() -> Iterator[None]:
    with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
        warnings.simplefilter("ignore")
        yield


@pytest.fixture(scope="module")
def envs(pgcore, tmp_path_factory):
    """One pddlgym PDDLEnv per bundled domain, over copies of our files laid out as
    pddlgym expects (domain file + a folder of problem files)."""
    made = {}

    def get(domain: str):
        if domain not in made:
            entry = BUNDLED[domain]
            root = tmp_path_factory.mktemp(domain)
            (root / "domain.pddl").write_text(entry.domain_path().read_text(encoding="utf-8"))
            (root / "problems").mkdir()
            for p in entry.problems:
                (root / "problems" / f"{p}.pddl").write_text(entry.problem_path(p).read_text(encoding="utf-8"))
            with quiet():
                made[domain] = pgcore.PDDLEnv(
                    str(root / "domain.pddl"),
                    str(root / "problems"),
                    raise_error_on_invalid_action=True,
                    dynamic_action_space=True,
                )
        return made[domain]

    return get


def reset_to(env, problem: str):
    names = [Path(p.problem_fname).stem for p in env.problems]
    env.fix_problem_index(names.index(problem))
    with quiet():
        env.reset()
    return env


class Converter:
    """Between our bitsets / ground actions and pddlgym states / action literals."""

    def __init__(self, task: PPDDLTask, env) -> None:
        self.task = task
        self.env = env
        self.objects = {o.name: o for o in env._problem.objects}
        self.preds = env.domain.predicates

    def to_ours(self, state) -> int:
        return self.task.vocabulary.state(
            Atom(lit.predicate.name, tuple(v.name for v in lit.variables)) for lit in state.literals
        )

    def literal(self, atom: Atom):
        return self.preds[atom.predicate](*[self.objects[x] for x in atom.args])

    def to_theirs(self, s: int):
        lits = frozenset(self.literal(a) for a in self.task.vocabulary.atoms_of(s))
        return self.env.get_state().with_literals(lits)


def walk_states(task: PPDDLTask, seeds: range, steps: int) -> list[int]:
    out: dict[int, None] = {}
    for seed in seeds:
        rng = np.random.default_rng(seed)
        s = task.initial_state
        for _ in range(steps):
            out[s] = None
            acts = task.applicable(s)
            if not acts:
                s = task.initial_state
                continue
            s = task.sample(s, acts[int(rng.integers(len(acts)))], rng)
    return list(out)


def test_pddlgym_parses_every_bundled_domain(envs):
    """Every bundled domain is in pddlgym's reach, so none is exempt from the
    cross-check; pddlgym reads the same action predicates from the comment."""
    for domain, entry in BUNDLED.items():
        env = envs(domain)
        task = load_task(domain)
        assert set(env.domain.actions) == set(task.domain.action_predicates)
        assert sorted(Path(p.problem_fname).stem for p in env.problems) == sorted(entry.problems)


@pytest.mark.parametrize("domain", list(BUNDLED))
def test_initial_states_agree_on_every_problem(envs, domain):
    env = envs(domain)
    for problem in BUNDLED[domain].problems:
        task = load_task(domain, problem)
        reset_to(env, problem)
        assert Converter(task, env).to_ours(env.get_state()) == task.initial_state


CROSS_CHECKED = [
    ("blocks", "problem1"),
    ("blocks", "test_problem4"),
    ("tireworld", "problem1"),
    ("tireworld", "problem2"),
    ("explodingblocks", "problem1"),
    ("explodingblocks", "problem3"),
    ("first_responders", "problem1"),
    ("first_responders", "test_problem3"),
    ("probabilistic_elevators", "problem1"),
    ("probabilistic_elevators", "test_problem4"),
]


@pytest.mark.parametrize("domain,problem", CROSS_CHECKED)
def test_transitions_agree_with_pddlgym(pgcore, envs, domain, problem):
    task = load_task(domain, problem)
    env = reset_to(envs(domain), problem)
    conv = Converter(task, env)
    states = walk_states(task, range(2), 15)
    compared = 0
    with seeded_global_numpy(0):
        for s in states:
            theirs_state = conv.to_theirs(s)
            assert conv.to_ours(theirs_state) == s
            acts = task.applicable(s)
            ours_valid = {task.action_literal(a) for a in acts}
            with quiet():
                theirs_valid = env.action_space.all_ground_literals(theirs_state)
            assert ours_valid == {
                Atom(lit.predicate.name, tuple(v.name for v in lit.variables)) for lit in theirs_valid
            }
            for a in acts:
                successors = pgcore.get_successor_states(
                    theirs_state,
                    conv.literal(task.action_literal(a)),
                    env.domain,
                    raise_error_on_invalid_action=True,
                    inference_mode=env._inference_mode,
                    return_probs=True,
                )
                theirs: dict[int, float] = {}
                for st, p in successors.items():
                    t = conv.to_ours(st)
                    theirs[t] = theirs.get(t, 0.0) + float(p)
                ours = {t: p for p, t in task.outcomes(s, a)}
                assert set(ours) == set(theirs), (str(a), s)
                for t, p in ours.items():
                    assert abs(float(p) - theirs[t]) < 1e-9, (str(a), s, t)
                compared += 1
    # The walks reach more than the initial state and exercise some actions.
    assert len(states) > 1 and compared > len(states) // 2
