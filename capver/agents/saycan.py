"""A SayCan-style LLM agent on the tabletop (the paper's SayCan study), over
any OpenAI-compatible chat endpoint through :class:`capver.agents.llm.ChatClient`
(the same timeouts, retries, on-disk cache and token accounting as the ReAct agent).

SayCan picks each next skill by multiplying two numbers per candidate skill: how
useful the language model says the skill is for the instruction ("say"), and how
likely the robot can carry it out in the current state ("can", the affordance).  The
original reads the LLM's log-probabilities; chat endpoints rarely return them, so
this agent uses the log-prob-free variant: it shows the instruction, the scene, the
steps taken so far and the list of candidate skill texts (every ``pick``/``place``
skill there is, plus ``done``) and asks for one JSON object mapping each skill to a
score in [0, 1].  :func:`parse_scores` reads it; skills the reply leaves out score 0.

The affordance (:func:`affordance`) is 0 for a skill the robot cannot attempt
(:func:`capver.envs.tabletop.feasible`: no pick while holding, no place into a full
bowl, ...) and otherwise the skill's success probability at the current reach - a
value function, as SayCan's.  So an infeasible skill is never executed, whatever the
LLM says.  The agent executes the skill of highest product (the first in the
candidate order on a tie); ``done`` (affordance 1) ends the execution.  When every
product is 0 the agent stops ("no feasible skill scored").  A reply with no JSON
object of scores is the agent's fault: :class:`~capver.agents.llm.LLMReplyError`,
recorded by the executor as a failed execution, as for the ReAct agent.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from capver.agents.base import Stop
from capver.agents.llm import ChatClient, LLMConfig, LLMReplyError, LLMUsage
from capver.core.state import Capability
from capver.core.vocabulary import Atom, Literal
from capver.envs.base import Action, Simulator
from capver.envs.tabletop import (
    GRIPPER,
    TABLE,
    Scene,
    Skill,
    TabletopConfig,
    TabletopState,
    all_skills,
    feasible,
    success_probability,
)

DONE = "done"

SYSTEM_PROMPT = """You plan for a robot arm on a tabletop with coloured blocks and bowls.
The robot has two skills: pick(<block>) grasps a block, place(<block>, <target>) puts the held block on the table, into a bowl or onto another block.
Given the instruction, the scene and the steps taken so far, score every candidate skill from 0 (useless now) to 1 (the right next step); "done" means the instruction is complete.
Answer with one JSON object mapping each candidate to its score, for example {"pick(red_block)": 0.9, "done": 0.05}."""


def instruction_words(cap: Capability) -> str:
    """The instruction a person would give for ``cap``'s intent."""

    def words(obj: str) -> str:
        return obj.replace("_", " ")

    if len(cap.intent) == 1 and cap.intent[0].positive:
        a = cap.intent[0].atom
        if a.predicate == "in":
            return f"put the {words(a.args[0])} in the {words(a.args[1])}"
        if a.predicate == "on":
            return f"stack the {words(a.args[0])} on the {words(a.args[1])}"
    return "make this true: " + " and ".join(str(lit) for lit in cap.intent)


def instructions(config: TabletopConfig) -> tuple[Capability, ...]:
    """The capabilities assessed: put_in(block, bowl) and stack(block, block)."""
    caps = [Capability(f"put_in({b},{w})", (Literal(Atom("in", (b, w))),)) for b in config.blocks for w in config.bowls]
    caps += [
        Capability(f"stack({a},{b})", (Literal(Atom("on", (a, b))),))
        for a in config.blocks
        for b in config.blocks
        if a != b
    ]
    return tuple(caps)


def render_scene(config: TabletopConfig, x: TabletopState) -> str:
    """The scene as the prompt shows it: where each block rests, what the gripper holds."""
    sc = Scene(config, x)
    lines = []
    for b in config.blocks:
        s = sc.support(b)
        where = (
            "on the table"
            if s == TABLE
            else "in the gripper"
            if s == GRIPPER
            else f"in {s}"
            if s in config.bowls
            else f"on {s}"
        )
        lines.append(f"- {b}: {where}")
    for w in config.bowls:
        inside = sc.in_bowl(w)
        lines.append(f"- {w}: {'holds ' + ', '.join(inside) if inside else 'empty'}")
    held = sc.held()
    lines.append(f"- gripper: {'holding ' + held if held else 'empty'}")
    return "\n".join(lines)


_JSON_RE = re.compile(r"\{.*\}", re.DOTALL)


def parse_scores(reply: str, candidates: Sequence[str]) -> dict[str, float]:
    """Each candidate's score from the reply's JSON object (0 when left out);
    raises :class:`LLMReplyError` for a reply with no JSON object of numbers or one
    that scores none of the candidates."""
    m = _JSON_RE.search(reply)
    if m is None:
        raise LLMReplyError(f"malformed reply, no JSON object of skill scores: {reply[:120]!r}")
    try:
        raw = json.loads(m.group(0))
    except json.JSONDecodeError as exc:
        raise LLMReplyError(f"malformed reply, the skill scores are not JSON ({exc.msg}): {reply[:120]!r}") from None
    if isinstance(raw, dict) and isinstance(raw.get("scores"), dict):
        raw = raw["scores"]  # {"scores": {...}} is a common way to nest it
    if not isinstance(raw, dict):
        raise LLMReplyError(f"malformed reply, expected a JSON object of skill scores: {reply[:120]!r}")
    # Skill texts are compared without spaces and case: "place(a,b)" is "place(a, b)".
    wanted = {_canonical(c): c for c in candidates}
    scores = dict.fromkeys(candidates, 0.0)
    known = 0
    for key, value in raw.items():
        c = wanted.get(_canonical(str(key)))
        if c is None:
            continue
        if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
            raise LLMReplyError(f"malformed reply, the score of {key!r} is {value!r}; expected a number in [0, 1]")
        scores[c] = float(value)
        known += 1
    if not known:
        raise LLMReplyError(f"malformed reply, it scores none of the candidate skills: {reply[:120]!r}")
    return scores


def _canonical(text: str) -> str:
    return "".join(text.split()).lower()


def affordance(config: TabletopConfig, x: TabletopState, skill: Skill) -> float:
    """SayCan's "can": 0 for a skill the robot cannot attempt, else its success
    probability in ``x``."""
    return success_probability(config, x, skill) if feasible(config, x, skill) else 0.0


def choose(scores: Mapping[str, float], affordances: Mapping[str, float]) -> str | None:
    """The candidate of highest LLM score × affordance (first on a tie), or None when
    every product is 0."""
    best, best_value = None, 0.0
    for c, say in scores.items():
        value = say * affordances.get(c, 0.0)
        if value > best_value:
            best, best_value = c, value
    return best


class SayCanAgent:
    """SayCan over a chat endpoint (module docstring): one endpoint call per skill."""

    name = "tabletop-llm"

    def __init__(
        self, tabletop: TabletopConfig, config: LLMConfig | None = None, client: ChatClient | None = None
    ) -> None:
        self.tabletop = tabletop
        self.config = config if config is not None else LLMConfig.from_environ()
        self.client = client if client is not None else ChatClient(self.config)
        self._skills = {str(k): k for k in all_skills(tabletop)}
        self._candidates = [*self._skills, DONE]
        self._instruction = ""
        self._steps: list[str] = []

    @property
    def usage(self) -> LLMUsage:
        return self.client.usage

    def begin(self, capability: Capability, sim: Simulator[Any], rng: np.random.Generator) -> None:
        self._instruction = f"{instruction_words(capability)} ({capability.name})"
        self._steps = []

    def prompt(self, x: TabletopState) -> list[dict[str, str]]:
        lines = [
            f"Instruction: {self._instruction}",
            "Scene:",
            render_scene(self.tabletop, x),
            "Steps so far: " + ("; ".join(self._steps) if self._steps else "none"),
            "Candidate skills:",
            *self._candidates,
        ]
        return [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": "\n".join(lines)}]

    def affordances(self, x: TabletopState) -> dict[str, float]:
        out = {text: affordance(self.tabletop, x, k) for text, k in self._skills.items()}
        out[DONE] = 1.0
        return out

    def act(self, sim: Simulator[Any], rng: np.random.Generator) -> Action | Stop:
        if not self._instruction:
            return Stop("begin() was not called")
        x = sim.get_state()
        scores = parse_scores(self.client.complete(self.prompt(x)).content, self._candidates)
        pick = choose(scores, self.affordances(x))
        if pick is None:
            return Stop("no feasible skill scored")
        if pick == DONE:
            return Stop("done")
        self._steps.append(pick)
        return self._skills[pick]
