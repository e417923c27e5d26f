"""PPDDL environments (section 2 / section 4.2 of the paper): a parser for
pddlgym-format domain and problem files, a grounded exact simulator and the
registry of bundled domains.

>>> task = load_task("blocks", "problem1")
>>> sim = PPDDLSimulator(task, seed=0)
>>> s = sim.reset()
"""

from capver.envs.ppddl.domains import BUNDLED, BundledDomain, bundled, load_task
from capver.envs.ppddl.parser import (
    parse_domain,
    parse_domain_file,
    parse_problem,
    parse_problem_file,
)
from capver.envs.ppddl.simulator import (
    AtomsRepresentation,
    GConj,
    GDisj,
    GEffect,
    GroundAction,
    GroundFormula,
    PPDDLSimulator,
    PPDDLTask,
    parse_task,
)

__all__ = [
    "BUNDLED",
    "AtomsRepresentation",
    "BundledDomain",
    "GConj",
    "GDisj",
    "GEffect",
    "GroundAction",
    "GroundFormula",
    "PPDDLSimulator",
    "PPDDLTask",
    "bundled",
    "load_task",
    "parse_domain",
    "parse_domain_file",
    "parse_problem",
    "parse_problem_file",
    "parse_task",
]
