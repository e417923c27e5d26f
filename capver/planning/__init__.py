"""Planning substrate of the LAO* agent (section 4.2, "the LAO* agent operates on
PDDLGym domains"): a minimal MDP protocol and LAO* (Hansen & Zilberstein 2001)."""

from capver.planning.lao_star import LAOResult, LAOStar, goal_count_heuristic, solve
from capver.planning.mdp import MDP, TableMDP

__all__ = ["MDP", "LAOResult", "LAOStar", "TableMDP", "goal_count_heuristic", "solve"]
