"""Exports of learned models handed, as written, to tools capver does not use.

Models are learned in the test (``capver.learn``, LAO* agent, MCQS-E) on First
Responders and Blocksworld, h∧ and h∨.  Every file is written by the exporter and
read by the tool from disk, unchanged.

* Probabilistic readers: plado (PPDDL flavour) and pddlgym (pddlgym flavour) give, on
  every state reachable from the exported initial state, exactly the distributions
  the file states — the written decimals of Pr_h(·|s,c), which equal Pr_h where the
  fraction terminates and are within 10⁻⁶ of it otherwise; pddlgym's "nothing
  happens" remainder is exactly 0.  Loki (``pypddl``) reads all three flavours in its
  strict mode (which refuses undeclared and unused requirements) and parses the
  same probabilities.
* Classical planners: Fast Downward (the build that ``up-fast-downward`` ships, run
  on the files), pyperplan (STRIPS files) and unified-planning's reader (solving with
  Fast Downward through UP) find plans on the determinised files; every plan is
  replayed on the PPDDL file with capver's reader, each step an outcome of positive
  probability, ending in the goal.

The default run has one small case (First Responders h∧, short learn); the others
are marked slow.
"""

from __future__ import annotations

import contextlib
import io
import subprocess
import sys
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import capver
from capver import cli
from capver.core.state import NO_EFFECT, State
from capver.core.vocabulary import Atom, Literal
from capver.engines.classical_planning import goal_holds, solve
from capver.envs.ppddl import GroundAction, PPDDLTask, parse_domain, parse_problem
from capver.io import dsl
from capver.io.ppddl_export.determinised import DeterminizedExport, export_determinized
from capver.io.ppddl_export.names import PDDLNames
from capver.io.ppddl_export.pddlgym_flavour import PDDLGymExport, export_pddlgym
from capver.io.ppddl_export.ppddl import PPDDLExport, export_ppddl
from capver.io.ppddl_export.probabilities import written_probabilities
from capver.model.capability_model import CompoundModel, rule_mixture
from tests.helpers.examples import scaled
from tests.helpers.paths import ROOT
from tests.helpers.plado_reader import PladoReader
from tests.helpers.untraced import untraced

MAX_REACHABLE = 150
MODELS = sorted((ROOT / "models").glob("*.capm"))


# =====================================================================================
# learned models and their exports
# =====================================================================================


@dataclass(frozen=True)
class Learned:
    domain: str
    which: str
    model: CompoundModel
    init: State
    goal: tuple[Literal, ...]


_CACHE: dict[tuple[str, int], Any] = {}


def learned(domain: str, which: str, steps: int) -> Learned:
    key = (domain, steps)
    if key not in _CACHE:
        # Untraced: LAO* with MCQS-E on these two domains is the setting most tests of the
        # suite learn on, traced there (under .ci/run the Blocksworld h∧ case, which
        # learns here first, took 30.6 s against 22.0 s without coverage).
        with untraced():
            setting = capver.load_setting("lao", domain=domain)
            _CACHE[key] = capver.learn(setting, method="mcqs-e", max_steps=steps, seed=0)
    result = _CACHE[key]
    st = result.assessment.setting
    init = st.alpha(st.initial_states[0])
    model = result.model(which)
    return Learned(domain, which, model, init, reachable_goal(result.model("h_and"), init))


def successors(model: CompoundModel, s: State) -> set[State]:
    out: set[State] = set()
    for cm in model.values():
        out |= set(cm.distribution(s))
    return out


def reachable(model: CompoundModel, init: State, limit: int = MAX_REACHABLE) -> list[State]:
    seen, todo = {init: None}, [init]
    while todo and len(seen) < limit:
        s = todo.pop(0)
        for t in sorted(successors(model, s)):
            if t not in seen and len(seen) < limit:
                seen[t] = None
                todo.append(t)
    return list(seen)


def reachable_goal(h_and: CompoundModel, init: State) -> tuple[Literal, ...]:
    """Up to two literals that differ from the initial state in the farthest state
    the observed model h∧ reaches (so that a plan exists in both bounds)."""
    dist = {init: 0}
    todo = [init]
    while todo and len(dist) < 400:
        s = todo.pop(0)
        for t in sorted(successors(h_and, s)):
            if t not in dist:
                dist[t] = dist[s] + 1
                todo.append(t)
    far = max(dist, key=lambda t: (dist[t], -t))
    changed = [i for i in range(len(h_and.vocabulary)) if (far ^ init) >> i & 1][:2]
    assert changed, "the learned model changes nothing from the initial state"
    return tuple(Literal(h_and.vocabulary.atoms[i], bool(far >> i & 1)) for i in changed)


def written_distribution(model: CompoundModel, c: str, s: State) -> dict[State, Fraction]:
    """The distribution the files state for capability c at s: the written decimals
    of its region's Pr_h, summed per successor (empty where c has no prediction)."""
    b = model.ctx.bdd
    for u, rules in model[c].regions():
        if b.evaluate(u, s):
            dist = sorted(rule_mixture(rules).items())
            if len(dist) == 1:
                return {dist[0][0].apply(s): Fraction(1)}
            out: dict[State, Fraction] = {}
            for w in written_probabilities([p for _, p in dist]):
                s2 = dist[w.index][0].apply(s)
                out[s2] = out.get(s2, Fraction(0)) + Fraction(w.text)
            return out
    return {}


def changes_possible(model: CompoundModel, c: str, s: State) -> bool:
    """Whether s lies in a region of c whose outcomes are not all the empty effect
    (the pddlgym flavour has actions only there)."""
    b = model.ctx.bdd
    return any(b.evaluate(u, s) and rule_mixture(rules) != {NO_EFFECT: 1} for u, rules in model[c].regions())


def assert_close_to_pr_h(model: CompoundModel, c: str, s: State, written: dict[State, Fraction]) -> None:
    exact = model[c].distribution(s)
    assert set(written) == set(exact)
    for s2, p in exact.items():
        assert abs(written[s2] - p) <= Fraction(len(exact), 10**6)


class Names:
    """PDDL atoms of a tool ↔ model states."""

    def __init__(self, model: CompoundModel, names: PDDLNames | PDDLGymExport) -> None:
        self.vocab = model.vocabulary
        self.pddl = [names.atom(a) for a in self.vocab.atoms]
        self.index = {a: i for i, a in enumerate(self.pddl)}

    def state(self, atoms: Iterator[Atom]) -> State:
        s = 0
        for a in atoms:
            s |= 1 << self.index[a]  # an atom outside the model would be a KeyError
        return s


@contextlib.contextmanager
def quiet() -> Iterator[None]:
    with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
        warnings.simplefilter("ignore")
        yield


# =====================================================================================
# probabilistic readers
# =====================================================================================


def check_plado(case: Learned, export: PPDDLExport, directory: Path, limit: int = MAX_REACHABLE) -> int:
    """plado reads the PPDDL flavour (``export``, of ``case``) as written; its successor
    distributions are the written ones on every reachable state.  Returns the pairs
    compared."""
    model, vocab = case.model, case.model.vocabulary
    files = export.write(directory)
    with untraced():  # plado's own code, which --cov=capver never measures
        reader = PladoReader(*files, export.names, vocab)
    compared = 0
    for x in reachable(model, case.init, limit):
        assert x & reader.static == case.init & reader.static  # what no action changes stays as in the problem
        with untraced():
            applicable = reader.distributions(x)
        want = {export.names.actions[c] for c, cm in model.items() if cm.distribution(x) and c not in export.stats.idle}
        assert set(applicable) == want, vocab.format_state(x)
        for name, got in applicable.items():
            c = reader.capability_of[name]
            assert got == written_distribution(model, c, x), (name, vocab.format_state(x))
            assert_close_to_pr_h(model, c, x, got)
            compared += 1
    return compared


def _apply_pddlgym(outcome: Any, atoms: set[Atom]) -> set[Atom]:
    from pddlgym.structs import LiteralConjunction, NoChange

    if outcome == NoChange():  # pddlgym's own test for it
        return set(atoms)
    lits = outcome.literals if isinstance(outcome, LiteralConjunction) else [outcome]
    new = set(atoms)
    for lit in lits:  # deletions first, then additions, as pddlgym applies them
        if lit.is_anti:
            new.discard(_pg_atom(lit.inverted_anti))
    for lit in lits:
        if not lit.is_anti:
            new.add(_pg_atom(lit))
    return new


def _pg_atom(lit: Any) -> Atom:
    return Atom(lit.predicate.name, tuple(str(v).split(":")[0] for v in lit.variables))


def check_pddlgym(
    case: Learned, export: PDDLGymExport, directory: Path, limit: int = MAX_REACHABLE, states: int | None = None
) -> int:
    """pddlgym loads the pddlgym flavour (``export``, of ``case``) as written (PDDLEnv, dynamic action space);
    from the exported initial state, on every state reachable in its own parsed
    effects, its valid actions are the exported actions of the capabilities with a
    changing prediction there, and each operator's parsed outcome distribution is the
    written one, with a "nothing happens" remainder of exactly 0.  Stepping the env
    lands in the support of Pr_h.  ``states``: at most this many states checked (pddlgym
    tests every ground action against every operator, quadratic in the actions)."""
    from pddlgym.core import PDDLEnv
    from pddlgym.structs import LiteralConjunction, ProbabilisticEffect

    model, vocab = case.model, case.model.vocabulary
    dpath, _ = export.write(directory)
    with quiet(), untraced():  # pddlgym's own code, which --cov=capver never measures
        env = PDDLEnv(
            str(dpath), str(directory / "problems"), dynamic_action_space=True, raise_error_on_invalid_action=True
        )
        env.fix_problem_index(0)
        env.reset()
    names = Names(model, export)
    start = env.get_state()
    assert names.state(_pg_atom(lit) for lit in start.literals) == case.init
    changing = {c for c in model if c not in export.stats.idle}
    seen = {case.init}
    todo = [start]
    compared = 0
    rng = np.random.default_rng(0)
    checked = 0
    while todo and len(seen) < limit and (states is None or checked < states):
        state = todo.pop(0)
        checked += 1
        atoms = {_pg_atom(lit) for lit in state.literals}
        s = names.state(iter(atoms))
        with quiet(), untraced():
            valid = env.action_space.all_ground_literals(state)
        by_cap: dict[str, list[str]] = {}
        for lit in valid:
            by_cap.setdefault(export.actions[lit.predicate.name].capability, []).append(lit.predicate.name)
        want = {c for c in changing if changes_possible(model, c, s)}
        assert set(by_cap) == want, vocab.format_state(s)
        for c, acts in sorted(by_cap.items()):
            expected = written_distribution(model, c, s)
            for name in acts:
                effects = env.domain.operators[name].effects
                parts = effects.literals if isinstance(effects, LiteralConjunction) else [effects]
                prob = [e for e in parts if isinstance(e, ProbabilisticEffect)]
                got: dict[State, float] = {}
                if prob:
                    (pe,) = prob
                    assert pe.probabilities[-1] == 0.0  # the no-change remainder pddlgym appends
                    for outcome, p in zip(pe.literals[:-1], pe.probabilities[:-1], strict=True):
                        s2 = names.state(iter(_apply_pddlgym(outcome, atoms)))
                        got[s2] = got.get(s2, 0.0) + p
                else:
                    got[names.state(iter(_apply_pddlgym(effects, atoms)))] = 1.0
                assert set(got) == set(expected), (name, vocab.format_state(s))
                for s2, p in got.items():
                    assert p == pytest.approx(float(expected[s2]), abs=1e-15), (name, vocab.format_state(s))
                compared += 1
            for s2 in expected:
                if s2 not in seen:
                    seen.add(s2)
                    todo.append(
                        state.with_literals(
                            frozenset(
                                env.domain.predicates[a.predicate](*[_pg_object(env, o) for o in a.args])
                                for a in (names.pddl[i] for i in range(len(vocab)) if s2 >> i & 1)
                            )
                        )
                    )
        if valid and compared < 400:  # one real step of the environment
            action = sorted(valid, key=str)[int(rng.integers(len(valid)))]
            with quiet(), untraced():
                env.set_state(state)
                obs = env.step(action)[0]
            s2 = names.state(_pg_atom(lit) for lit in obs.literals)
            c = export.actions[action.predicate.name].capability
            assert model.prob(s, c, s2) > 0
    return compared


def _pg_object(env: Any, name: str) -> Any:
    return next(o for o in env._problem.objects if o.name == name)


def check_loki(domain: Path, problem: Path, expected_actions: set[str]) -> list[float]:
    """Loki (pypddl) parses the files in strict mode; returns every probability it read."""
    import pypddl.formalism as f

    options = f.ParserOptions()
    options.strict = True
    parser = f.Parser(domain, options)
    parser.parse_task(problem)
    actions = parser.domain().get_actions()
    assert {a.get_name() for a in actions} == expected_actions
    probabilities: list[float] = []

    def walk(e: Any) -> None:
        v = e.get_variant()
        if isinstance(v, f.EffectAnd):
            for x in v.get_effects():
                walk(x)
        elif isinstance(v, f.EffectWhen):
            walk(v.get_effect())
        elif isinstance(v, f.EffectProbabilistic):
            alts = v.get_alternatives()
            assert sum(Fraction(repr(a.get_probability())) for a in alts) == pytest.approx(1, abs=1e-12)
            for a in alts:
                probabilities.append(a.get_probability())
                walk(a.get_effect())

    for a in actions:
        eff = a.get_effect()
        if eff is not None:
            walk(eff)
    return probabilities


# =====================================================================================
# classical planners, and replaying their plans on the PPDDL
# =====================================================================================


def fast_downward(domain: Path, problem: Path, workdir: Path, timeout: float = 120) -> list[str] | None:
    """Fast Downward (A* with LM-cut) on the files as written; the plan's action names."""
    import up_fast_downward

    driver = Path(up_fast_downward.__file__).parent / "downward" / "fast-downward.py"
    plan = workdir / "fd-plan.txt"
    res = subprocess.run(
        [
            sys.executable,
            str(driver),
            "--plan-file",
            str(plan),
            str(domain),
            str(problem),
            "--search",
            "astar(lmcut())",
        ],
        cwd=workdir,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    if res.returncode == 12:  # search exhausted: no plan
        return None
    assert res.returncode == 0, res.stdout[-2000:] + res.stderr[-2000:]
    return [line.strip("() \n").split()[0] for line in plan.read_text().splitlines() if not line.startswith(";")]


def unified_planning(domain: Path, problem: Path) -> list[str] | None:
    """unified-planning's PDDL reader on the files as written, solved by Fast Downward
    through UP (up-fast-downward)."""
    with untraced():  # unified-planning's own code, which --cov=capver never measures
        from unified_planning.io import PDDLReader
        from unified_planning.shortcuts import OneshotPlanner, get_environment

        get_environment().credits_stream = None
        task = PDDLReader().parse_problem(str(domain), str(problem))
        with OneshotPlanner(name="fast-downward") as planner:
            result = planner.solve(task)
    if result.plan is None:
        return None
    return [a.action.name for a in result.plan.actions]


def read_ppddl(ppddl_dir: Path) -> PPDDLTask:
    """The PPDDL files in ``ppddl_dir`` as written, read by capver's reader (once per
    case: every plan of the case is replayed on the same files)."""
    domain = parse_domain((ppddl_dir / "domain.pddl").read_text(), "domain.pddl")
    return PPDDLTask(domain, parse_problem((ppddl_dir / "problem.pddl").read_text(), domain, "problem.pddl"))


def replay_on_ppddl(case: Learned, det: DeterminizedExport, task: PPDDLTask, plan: list[str]) -> None:
    """Each step of ``plan`` is an outcome of positive probability of the step's
    capability in the PPDDL files as written (``task``, from :func:`read_ppddl`), and
    the last state satisfies the goal."""
    names = det.names
    bits = [task.vocabulary.index(names.atom(a)) for a in case.model.vocabulary.atoms]
    t = task.initial_state
    s = case.init
    for step in plan:
        da = det.actions[step]
        s2 = da.effect.apply(s)
        t2 = sum(1 << bits[i] for i in range(len(bits)) if s2 >> i & 1)
        outcomes = {succ: p for p, succ in task.outcomes(t, GroundAction(names.actions[da.capability]))}
        assert outcomes.get(t2, 0) > 0, (step, case.model.vocabulary.format_state(s))
        s, t = s2, t2
    assert goal_holds(case.model.vocabulary, case.goal, s)


# =====================================================================================
# the cases
# =====================================================================================


def run_all_tools(
    case: Learned,
    tmp: Path,
    limit: int = MAX_REACHABLE,
    plado: bool = True,
    up: bool = True,
    gym_states: int | None = None,
) -> dict[str, object]:
    """Every tool on the files of ``case``; returns what each did, for the table in docs/results.md."""
    # Each flavour is exported once and every tool reads the same files: the exporter is
    # deterministic, so exporting again per tool only repeated the work.
    report: dict[str, object] = {}
    pp = export_ppddl(case.model, init=case.init, goal=case.goal, name=case.which)
    ppdir = tmp / "ppddl"
    pp.write(ppdir)
    acts = {pp.names.actions[c] for c, cm in case.model.items() if cm.rules and c not in pp.stats.idle}
    probs = check_loki(ppdir / "domain.pddl", ppdir / "problem.pddl", acts)
    assert all(p > 0 for p in probs)
    report["loki ppddl"] = len(probs)
    if plado:
        report["plado"] = check_plado(case, pp, tmp / "plado", limit)
    gym_dir = tmp / "gym"
    gym = export_pddlgym(case.model, init=case.init, goal=case.goal, name=case.which)
    report["pddlgym"] = check_pddlgym(case, gym, gym_dir, limit, gym_states)
    check_loki(gym_dir / "domain.pddl", gym_dir / "problems" / "problem.pddl", set(gym.actions))
    task = read_ppddl(ppdir)

    adl = export_determinized(case.model, init=case.init, goal=case.goal, name=case.which, strips=False)
    adl_files = adl.write(tmp / "adl")
    check_loki(*adl_files, set(adl.actions))
    fd_plan = fast_downward(*adl_files, tmp / "adl")
    assert fd_plan is not None
    replay_on_ppddl(case, adl, task, fd_plan)
    report["fast downward"] = len(fd_plan)
    if up:
        up_plan = unified_planning(*adl_files)
        assert up_plan is not None
        replay_on_ppddl(case, adl, task, up_plan)
        report["unified-planning"] = len(up_plan)

    strips = export_determinized(case.model, init=case.init, goal=case.goal, name=case.which)
    strips_files = strips.write(tmp / "strips")
    # pyperplan's search, untraced: capver's solve around it is measured by tests/io/test_export.py.
    # Breadth-first (solve's default: complete, a shortest plan) rather than greedy
    # best-first with h_FF: pyperplan reads and grounds the same files either way, and
    # on Blocksworld h∨'s 10,002 STRIPS actions h_FF took 21.5 s of 624 evaluations to
    # find the 3-step plan that breadth-first finds in 0.7 s (the same plan lengths on
    # all four cases, measured).
    with untraced():
        pp_plan = solve(*strips_files)
    assert pp_plan is not None
    replay_on_ppddl(case, strips, task, pp_plan)
    report["pyperplan"] = len(pp_plan)
    fd_strips = fast_downward(*strips_files, tmp / "strips")
    assert fd_strips is not None
    replay_on_ppddl(case, strips, task, fd_strips)
    return report


def test_first_responders_h_and_every_tool(tmp_path: Path) -> None:
    report = run_all_tools(learned("first_responders", "h_and", 60), tmp_path)
    assert report["plado"] and report["pddlgym"]


@pytest.mark.slow
@pytest.mark.parametrize(
    ("domain", "which"),
    [("first_responders", "h_or"), ("blocks", "h_and"), ("blocks", "h_or")],
)
def test_learned_models_every_tool(domain: str, which: str, tmp_path: Path) -> None:
    # Fewer states than the default case, since CI runs the slow tests too.  plado
    # reads the Blocksworld files as well, but takes about 4 minutes on them (237 s
    # for 25 states of h∧, measured), so its distributions are compared on First
    # Responders only; Loki and pddlgym cover Blocksworld.
    # pddlgym tests every ground action against every operator in each state: its check
    # of the initial state of Blocksworld h∨ (2,682 actions; limit=3 ends the walk
    # there) took 47 s of a profiled run's 85 s, each state of First Responders h∨ a few
    # seconds.  So it checks one state of Blocksworld h∨ and three (of the walk's seven
    # before) of First Responders h∨ (the default case checks up to 150 states of
    # h∧), and unified-planning's reader, whose parser took 5 s of the First Responders
    # h∨ case, reads the h∧ models (First Responders in the default case), to keep the
    # slow tests within CI's time.
    big = (domain, which) == ("blocks", "h_or")
    report = run_all_tools(
        learned(domain, which, 300),
        tmp_path,
        limit=3 if big else 25,
        plado=domain != "blocks",
        up=which == "h_and",
        gym_states={"h_or": 1 if big else 3}.get(which),
    )
    assert report["pddlgym"] and (domain == "blocks" or report["plado"])


# =====================================================================================
# the command line: a run directory, and bad input
# =====================================================================================


def capver_cli(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = cli.main(argv)
    return rc, out.getvalue(), err.getvalue()


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("run") / "fr"
    rc, _, err = capver_cli(
        [
            "learn",
            "--agent",
            "lao",
            "--domain",
            "first_responders",
            "--method",
            "mcqs-e",
            "--max-steps",
            "60",
            "--out",
            str(d),
        ]
    )
    assert rc == 0, err
    return d


def test_run_directory_export_is_solved_by_fast_downward_and_loaded_by_pddlgym(run_dir: Path, tmp_path: Path) -> None:
    parsed = dsl.read(run_dir / "h_and.capm")
    goal = " ".join(("" if x.positive else "~") + str(x.atom) for x in reachable_goal(parsed.model, parsed.init or 0))
    out = tmp_path / "pddl"
    rc, text, err = capver_cli(["export", str(run_dir), "--out", str(out), "--goal", goal, "--determinize"])
    assert rc == 0, err
    assert (run_dir / "h_tilde.capm").is_file()  # capver learn writes the Occam model too
    for which in ("h_and", "h_or", "h_tilde"):
        assert f"wrote {out / which / 'domain_det.pddl'}" in text
        problem = (out / which / "problem.pddl").read_text()
        assert "(:init\n" in problem and "(:goal (and (" in problem  # the setting's state, the named goal
        plan = fast_downward(out / which / "domain_det.pddl", out / which / "problem_det.pddl", tmp_path)
        assert plan is not None
    assert "bytes, " in text and " actions)" in text
    gym_out = tmp_path / "gym"
    rc, _, err = capver_cli(
        ["export", str(run_dir / "h_or.capm"), "--out", str(gym_out), "--goal", goal, "--flavor", "pddlgym"]
    )
    assert rc == 0, err
    from pddlgym.core import PDDLEnv

    with quiet():
        env = PDDLEnv(str(gym_out / "domain.pddl"), str(gym_out / "problems"), dynamic_action_space=True)
        obs, _ = env.reset()
    assert obs.literals
    # a second export into the same folder overwrites only capver's own files
    rc, _, err = capver_cli(
        ["export", str(run_dir / "h_or.capm"), "--out", str(gym_out), "--goal", goal, "--flavor", "pddlgym"]
    )
    assert rc == 0, err


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["--goal", "on(a,b)"], "--goal 'on(a,b)'"),
        (["--goal", "have-water(f1)", "--flavor", "strips"], "--flavor 'strips': unknown flavour"),
        ([], "a planning problem needs a goal; add --goal LITERALS"),
    ],
)
def test_bad_input_is_one_line(run_dir: Path, tmp_path: Path, argv: list[str], needle: str) -> None:
    rc, _, err = capver_cli(["export", str(run_dir / "h_and.capm"), "--out", str(tmp_path / "o"), *argv])
    assert rc == 2 and needle in err and "Traceback" not in err


def test_foreign_files_are_never_overwritten(run_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "o"
    out.mkdir()
    (out / "domain.pddl").write_text("mine")
    argv = ["export", str(run_dir / "h_and.capm"), "--out", str(out), "--goal", "have-water(f1)"]
    rc, _, err = capver_cli(argv)
    assert rc == 2 and "holds files capver export did not write (domain.pddl)" in err
    assert err.count("\n") == 1 and (out / "domain.pddl").read_text() == "mine"
    rc, _, err = capver_cli([*argv, "--force"])
    assert rc == 0 and (out / "domain.pddl").read_text() != "mine"


def test_empty_problem_only_when_asked(run_dir: Path, tmp_path: Path) -> None:
    rc, out, err = capver_cli(["export", str(run_dir / "h_and.capm"), "--out", str(tmp_path / "o"), "--empty-problem"])
    assert rc == 0, err
    assert "(:goal (and))" in (tmp_path / "o" / "problem.pddl").read_text()
    assert "goal: none (--empty-problem)" in out


# =====================================================================================
# probabilities, requirements, names and sizes
# =====================================================================================


@settings(max_examples=scaled(200), deadline=None)
@given(st.lists(st.integers(1, 40), min_size=2, max_size=7), st.integers(1, 3))
def test_written_decimals_sum_to_one_and_stay_close(weights: list[int], scale: int) -> None:
    total = sum(weights) * scale
    probs = [Fraction(w * scale, total) for w in weights]
    written = written_probabilities(probs)
    assert sorted(w.index for w in written) == list(range(len(probs)))
    assert sum(Fraction(w.text) for w in written) == 1  # no tool invents a remainder
    running = 0.0
    for w in written:
        running += float(w.text)
    assert running <= 1.0  # pddlgym asserts this, adding left to right
    for w in written:
        assert w.exact == probs[w.index] and Fraction(w.text) > 0
        assert w.is_exact == (Fraction(w.text) == w.exact)
        assert abs(Fraction(w.text) - w.exact) <= Fraction(len(probs), 10**6)
        assert "/" not in w.text and "e" not in w.text


def test_pddlgym_float_sum_is_exactly_one_for_thirds() -> None:
    written = written_probabilities([Fraction(1, 3)] * 3)
    assert sorted(w.text for w in written) == ["0.333333", "0.333333", "0.333334"]
    assert sum(float(w.text) for w in written) == 1.0


@pytest.mark.parametrize("path", MODELS, ids=lambda p: p.stem)
def test_loki_strict_reads_every_flavour_of_the_shipped_models(path: Path, tmp_path: Path) -> None:
    """Loki's strict mode refuses a requirement that is used but not declared, and one
    that is declared but not used: every flavour declares exactly what it uses."""
    parsed = dsl.read(path)
    vocab = parsed.vocabulary
    goal = (Literal(vocab.atoms[0]), Literal(vocab.atoms[-1], False))
    init = parsed.init or 0
    pp = export_ppddl(parsed.model, init=init, goal=goal, name=parsed.name)
    acts = {pp.names.actions[c] for c, cm in parsed.model.items() if cm.rules and c not in pp.stats.idle}
    check_loki(*pp.write(tmp_path / "pp"), acts)
    kept = export_ppddl(parsed.model, init=init, goal=goal, name=parsed.name, keep_idle=True)
    check_loki(*kept.write(tmp_path / "kept"), {kept.names.actions[c] for c, cm in parsed.model.items() if cm.rules})
    gym = export_pddlgym(parsed.model, init=init, goal=goal, name=parsed.name)
    check_loki(*gym.write(tmp_path / "gym"), set(gym.actions))
    for strips in (True, False):
        det = export_determinized(parsed.model, init=init, goal=goal, name=parsed.name, strips=strips)
        check_loki(*det.write(tmp_path / f"det{strips}"), set(det.actions))


@pytest.mark.slow
def test_tireworld_h_or_determinised_size_and_names(tmp_path: Path) -> None:
    """The exporter's size target: the determinised Tireworld h∨ is at most 5× its PPDDL file; no name
    doubles a not- prefix."""
    result = capver.learn(capver.load_setting("lao", domain="tireworld"), method="mcqs-e", max_steps=300, seed=0)
    st_ = result.assessment.setting
    init = st_.alpha(st_.initial_states[0])
    model = result.model("h_or")
    goal = reachable_goal(result.model("h_and"), init)
    # The three exports (1.2 MB to 2.2 MB of PDDL) and capver's reading of the PPDDL file
    # run untraced: under .ci/run the tracer made them 20 s + 20 s + 9 s instead of
    # 9 s + 7 s + 4 s, and every line they run is measured by this file's other cases
    # and tests/io/test_export.py (checked with coverage's data of both).  The learning
    # above stays traced: it runs lines the rest of tests/io does not.
    with untraced():
        pp = export_ppddl(model, init=init, goal=goal, name="h_or")
        det = export_determinized(model, init=init, goal=goal, name="h_or", strips=False)
        gym = export_pddlgym(model, init=init, goal=goal, name="h_or")
    ratio = len(det.domain.encode()) / len(pp.domain.encode())
    assert ratio <= 5, ratio
    for text in (pp.domain, det.domain, gym.domain):
        assert "not-not" not in text
    assert "achieve-flattire" in pp.domain  # the capability ~not-flattire
    plan = fast_downward(*det.write(tmp_path), tmp_path, timeout=300)
    assert plan is not None
    pp.write(tmp_path / "pp")
    with untraced():
        task = read_ppddl(tmp_path / "pp")
    replay_on_ppddl(Learned("tireworld", "h_or", model, init, goal), det, task, plan)
