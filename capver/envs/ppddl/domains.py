"""Registry of the PDDL domains bundled with capver (package data under
``capver/data/domains/``): the PDDLGym environments of the paper's section 4.2
(Blocksworld, Tireworld, Exploding Blocks, First Responders, Probabilistic
Elevators).  Provenance and licence: ``capver/data/domains/README.md``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from importlib.resources.abc import Traversable
from types import MappingProxyType

from capver.envs.ppddl.parser import parse_domain, parse_problem
from capver.envs.ppddl.simulator import PPDDLTask
from capver.errors import NotBundledError

DATA_PACKAGE = "capver.data"


@dataclass(frozen=True, slots=True)
class BundledDomain:
    """A bundled domain: its folder name, a title, the problem file stems it ships
    (training ``problem*`` first, then ``test_problem*``) and where it comes from."""

    name: str
    title: str
    problems: tuple[str, ...]
    source: str
    domain_file: str = "domain.pddl"

    def directory(self) -> Traversable:
        return resources.files(DATA_PACKAGE) / "domains" / self.name

    def domain_path(self) -> Traversable:
        return self.directory() / self.domain_file

    def resolve_problem(self, problem: str | int) -> str:
        """The file stem of ``problem``: an int n means ``problem<n>``; a string
        may carry the ``.pddl`` suffix."""
        stem = f"problem{problem}" if isinstance(problem, int) else problem.removesuffix(".pddl")
        if stem not in self.problems:
            raise NotBundledError(
                f"domain {self.name!r} has no problem {problem!r}; expected one of {list(self.problems)}"
            )
        return stem

    def problem_path(self, problem: str | int) -> Traversable:
        return self.directory() / f"{self.resolve_problem(problem)}.pddl"


_PDDLGYM = "pddlgym (tomsilver/pddlgym, pddlgym/pddl/), MIT licence"
_QACE = "pddlgym 0.0.5 copy in AAIR-lab/QACE (dependencies/pddlgym-0.0.5/pddlgym/pddl/), MIT licence"

BUNDLED: Mapping[str, BundledDomain] = MappingProxyType(
    {
        "blocks": BundledDomain(
            "blocks",
            "Blocksworld (4 operators, deterministic); problem1/test_problem2 have 4 "
            "blocks, problem3/problem5/test_problem4 have 5",
            (
                "problem1",
                "problem3",
                "problem5",
                "problem7",
                "problem9",
                "test_problem2",
                "test_problem4",
                "test_problem10",
            ),
            _PDDLGYM,
        ),
        "tireworld": BundledDomain(
            "tireworld",
            "Triangle Tireworld (probabilistic flat tyres)",
            (
                "problem1",
                "problem2",
                "problem3",
                "problem4",
                "problem5",
                "problem6",
                "test_problem7",
                "test_problem8",
                "test_problem10",
            ),
            _PDDLGYM,
        ),
        "explodingblocks": BundledDomain(
            "explodingblocks",
            "Exploding Blocksworld (probabilistic)",
            (
                "problem1",
                "problem3",
                "problem5",
                "problem7",
                "problem9",
                "test_problem2",
                "test_problem4",
                "test_problem10",
            ),
            _PDDLGYM,
        ),
        "first_responders": BundledDomain(
            "first_responders",
            "First Responders (IPPC 2008, probabilistic)",
            ("problem1", "test_problem1", "test_problem2", "test_problem3", "test_problem4"),
            _QACE,
        ),
        "probabilistic_elevators": BundledDomain(
            "probabilistic_elevators",
            "Probabilistic Elevators (IPPC, probabilistic)",
            (
                "problem1",
                "test_problem1",
                "test_problem2",
                "test_problem3",
                "test_problem4",
                "test_problem5",
            ),
            _QACE,
        ),
    }
)


def bundled(domain_name: str) -> BundledDomain:
    try:
        return BUNDLED[domain_name]
    except KeyError:
        raise NotBundledError(f"no bundled domain {domain_name!r}; expected one of {sorted(BUNDLED)}") from None


def load_task(domain_name: str, problem: str | int = "problem1") -> PPDDLTask:
    """Parse and ground a bundled domain and one of its problems, e.g.
    ``load_task("first_responders")`` or ``load_task("blocks", 3)``."""
    entry = bundled(domain_name)
    dom_file = entry.domain_path()
    prob_file = entry.problem_path(problem)
    domain = parse_domain(dom_file.read_text(encoding="utf-8"), f"{entry.name}/{entry.domain_file}")
    prob = parse_problem(prob_file.read_text(encoding="utf-8"), domain, f"{entry.name}/{prob_file.name}")
    return PPDDLTask(domain, prob)
