"""A ReAct-style LLM agent for the quadrant DoorKey MiniGrid world (the
paper's GPT ReAct agent), talking to any OpenAI-compatible chat-completions endpoint.

At every step the agent renders the simulator's state as text (a character map of
the grid plus plain facts: the room it is in, what it faces, what it carries, where
the key and the doors are), states the requested intent, and asks the endpoint
(``POST {base_url}/chat/completions``) for ``Thought: ... Action: <name>``.  The
action names are MiniGrid's primitive actions (``left``, ``right``, ``forward``,
``pickup``, ``drop``, ``toggle``) plus ``done`` (the agent's termination β: it
believes the intent holds, or gives up).

The parts a person running an assessment against a paid, flaky endpoint needs:

* :class:`ChatClient` - standard-library HTTP (``urllib``) with a per-call timeout,
  bounded retries with exponential backoff on 429/5xx, timeouts and refused
  connections (``Retry-After`` is honoured up to the backoff cap), an on-disk response
  cache keyed by a hash of (messages, model, seed, temperature) so that re-runs and
  ``capver learn --resume`` do not pay twice, and token accounting from the
  responses' ``usage`` (:class:`LLMUsage`, paid and cached tokens kept apart).
* A reply without a parseable action, or with an action that is not available, is
  the agent's fault: :meth:`LLMAgent.act` raises :class:`LLMReplyError`, which the
  executor records as a failed execution (``Execution.failure``) and the run goes
  on.  An endpoint that still fails after the retries raises
  :class:`LLMEndpointError`, recorded the same way.

Configuration comes from constructor arguments or the environment
(:meth:`LLMConfig.from_environ`): ``CAPVER_LLM_BASE_URL``, ``CAPVER_LLM_MODEL``,
``CAPVER_LLM_API_KEY``, ``CAPVER_LLM_TEMPERATURE``, ``CAPVER_LLM_TIMEOUT``,
``CAPVER_LLM_RETRIES`` and ``CAPVER_LLM_CACHE`` (a directory; ``none`` turns the
cache off; default ``$XDG_CACHE_HOME/capver/llm``).
"""

from __future__ import annotations

import hashlib
import http.client
import json
import os
import re
import threading
import time
import urllib.error
import urllib.request
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from minigrid.core.actions import Actions

from capver.agents.base import Stop
from capver.core.state import Capability
from capver.core.vocabulary import Literal
from capver.envs.base import Action, Simulator
from capver.envs.minigrid_env import DOORS, MiniGridState, grid_size, room_of, world_view
from capver.errors import CapverError

# -- errors -------------------------------------------------------------------------------------


class LLMConfigError(CapverError, ValueError):
    """Missing or malformed endpoint configuration (the message names the variable)."""


class LLMEndpointError(CapverError, OSError):
    """The endpoint did not give a usable answer: a non-retryable HTTP status, a body
    that is not a chat completion, or retries exhausted."""


class LLMReplyError(CapverError, ValueError):
    """The model's reply names no action, or one that is not available; raised from
    :meth:`LLMAgent.act` so the execution is recorded as failed."""


# -- configuration and accounting -------------------------------------------------------------------

RETRYABLE_STATUS = frozenset({408, 429, 500, 502, 503, 504})


@dataclass(frozen=True, slots=True)
class LLMConfig:
    """Where and how to ask: endpoint, model, sampling and robustness settings."""

    base_url: str
    model: str
    api_key: str | None = None
    temperature: float = 0.0
    seed: int = 0
    timeout: float = 30.0  # seconds per HTTP attempt (socket timeout)
    max_retries: int = 4  # attempts after the first
    backoff: float = 0.5  # seconds before the first retry; doubles each time
    max_backoff: float = 8.0
    cache_dir: Path | None = None
    history: int = 4  # previous thought/action pairs shown in the prompt

    def __post_init__(self) -> None:
        if not self.base_url.startswith(("http://", "https://")):
            raise LLMConfigError(f"base_url {self.base_url!r}: expected an http:// or https:// URL")
        if not self.model:
            raise LLMConfigError("model: expected a model name, got an empty string")
        if self.timeout <= 0 or self.max_retries < 0 or self.backoff < 0 or self.history < 0:
            raise LLMConfigError(
                f"expected timeout > 0, max_retries >= 0, backoff >= 0, history >= 0; got timeout={self.timeout}, "
                f"max_retries={self.max_retries}, backoff={self.backoff}, history={self.history}"
            )

    @staticmethod
    def from_environ(environ: Mapping[str, str] | None = None, **overrides: Any) -> LLMConfig:
        """The configuration from ``CAPVER_LLM_*`` variables (module docstring);
        ``overrides`` (fields of this class) win over the environment."""
        env = os.environ if environ is None else environ
        values: dict[str, Any] = {}
        for name, var, conv in (
            ("base_url", "CAPVER_LLM_BASE_URL", str),
            ("model", "CAPVER_LLM_MODEL", str),
            ("api_key", "CAPVER_LLM_API_KEY", str),
            ("temperature", "CAPVER_LLM_TEMPERATURE", float),
            ("timeout", "CAPVER_LLM_TIMEOUT", float),
            ("max_retries", "CAPVER_LLM_RETRIES", int),
        ):
            raw = env.get(var)
            if raw is None or raw == "":
                continue
            try:
                values[name] = conv(raw)
            except ValueError:
                raise LLMConfigError(f"{var}={raw!r}: expected a {conv.__name__}") from None
        cache = env.get("CAPVER_LLM_CACHE")
        if cache is None or cache == "":
            xdg = env.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
            values["cache_dir"] = Path(xdg) / "capver" / "llm"
        elif cache.lower() != "none":
            values["cache_dir"] = Path(cache)
        values.update(overrides)
        for name, var in (("base_url", "CAPVER_LLM_BASE_URL"), ("model", "CAPVER_LLM_MODEL")):
            if not values.get(name):
                raise LLMConfigError(f"{var} is not set; expected the endpoint's {name.replace('_', ' ')}")
        return LLMConfig(**values)


@dataclass(frozen=True, slots=True)
class LLMUsage:
    """Counters of one client since it was made (a snapshot)."""

    calls: int = 0  # completions asked for
    cache_hits: int = 0  # answered from the on-disk cache
    http_requests: int = 0  # attempts sent, retries included
    retries: int = 0
    timeouts: int = 0
    prompt_tokens: int = 0  # paid: from the usage of responses fetched over HTTP
    completion_tokens: int = 0
    cached_prompt_tokens: int = 0  # not paid again: usage recorded with cached responses
    cached_completion_tokens: int = 0

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    @property
    def hit_rate(self) -> float:
        return self.cache_hits / self.calls if self.calls else 0.0

    def describe(self) -> str:
        return (
            f"{self.calls} LLM calls ({self.cache_hits} cached, {self.retries} retries), "
            f"{self.prompt_tokens} prompt + {self.completion_tokens} completion tokens paid"
        )


@dataclass(frozen=True, slots=True)
class ChatReply:
    content: str
    prompt_tokens: int
    completion_tokens: int
    cached: bool


# -- the HTTP client ------------------------------------------------------------------------------


Message = Mapping[str, str]


class ChatClient:
    """A chat-completions client (module docstring).  Thread-safe: counters are
    updated under a lock and cache files are written atomically, so several
    executions may share one client."""

    def __init__(self, config: LLMConfig, sleep: Callable[[float], None] = time.sleep) -> None:
        # ``sleep`` is how the client waits between retries (tests record the backoff).
        self.config = config
        self._sleep = sleep
        self._lock = threading.Lock()
        self._counts: dict[str, int] = dict.fromkeys(LLMUsage.__dataclass_fields__, 0)

    @property
    def usage(self) -> LLMUsage:
        with self._lock:
            return LLMUsage(**self._counts)

    def _count(self, **inc: int) -> None:
        with self._lock:
            for k, v in inc.items():
                self._counts[k] += v

    def cache_key(self, messages: Sequence[Message]) -> str:
        c = self.config
        body = json.dumps(
            {"messages": [dict(m) for m in messages], "model": c.model, "seed": c.seed, "temperature": c.temperature},
            sort_keys=True,
            ensure_ascii=False,
        )
        return hashlib.sha256(body.encode("utf-8")).hexdigest()

    def complete(self, messages: Sequence[Message]) -> ChatReply:
        """The assistant's reply to ``messages``, from the cache or the endpoint."""
        self._count(calls=1)
        key = self.cache_key(messages)
        cached = self._cache_get(key)
        if cached is not None:
            self._count(
                cache_hits=1,
                cached_prompt_tokens=cached.prompt_tokens,
                cached_completion_tokens=cached.completion_tokens,
            )
            return cached
        body = self._post(messages)
        reply = _parse_completion(body)
        self._count(prompt_tokens=reply.prompt_tokens, completion_tokens=reply.completion_tokens)
        self._cache_put(key, reply)
        return reply

    def _post(self, messages: Sequence[Message]) -> Any:
        c = self.config
        payload = json.dumps(
            {
                "model": c.model,
                "messages": [dict(m) for m in messages],
                "temperature": c.temperature,
                "seed": c.seed,
            }
        ).encode("utf-8")
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if c.api_key:
            headers["Authorization"] = f"Bearer {c.api_key}"
        url = c.base_url.rstrip("/") + "/chat/completions"
        last = ""
        for attempt in range(c.max_retries + 1):
            if attempt:
                self._count(retries=1)
            self._count(http_requests=1)
            wait = min(c.max_backoff, c.backoff * 2.0**attempt)
            request = urllib.request.Request(url, data=payload, headers=headers, method="POST")
            try:
                with urllib.request.urlopen(request, timeout=c.timeout) as response:
                    raw = response.read()
            except urllib.error.HTTPError as exc:
                detail = exc.read()[:200].decode("utf-8", "replace")
                last = f"HTTP {exc.code} {exc.reason}: {detail}"
                if exc.code not in RETRYABLE_STATUS:
                    raise LLMEndpointError(f"{url}: {last}") from None
                wait = min(c.max_backoff, max(wait, _retry_after(exc.headers.get("Retry-After"))))
            except TimeoutError as exc:
                self._count(timeouts=1)
                last = f"no answer within {c.timeout}s ({exc})"
            except urllib.error.URLError as exc:
                if isinstance(exc.reason, TimeoutError):
                    self._count(timeouts=1)
                    last = f"no answer within {c.timeout}s"
                elif isinstance(exc.reason, ConnectionError):
                    last = f"connection failed ({exc.reason})"
                else:
                    raise LLMEndpointError(f"{url}: {exc.reason}") from None
            except (ConnectionError, http.client.HTTPException) as exc:  # dropped mid-response
                last = f"connection failed ({type(exc).__name__}: {exc})"
            else:
                try:
                    return json.loads(raw)
                except (json.JSONDecodeError, UnicodeDecodeError):
                    raise LLMEndpointError(f"{url}: the body is not JSON: {raw[:120]!r}") from None
            if attempt < c.max_retries:
                self._sleep(wait)
        raise LLMEndpointError(f"{url}: gave up after {c.max_retries + 1} attempts; last: {last}")

    # -- cache: one JSON file per key, written atomically (tmp + replace) --
    def _cache_path(self, key: str) -> Path | None:
        d = self.config.cache_dir
        return None if d is None else d / key[:2] / f"{key}.json"

    def _cache_get(self, key: str) -> ChatReply | None:
        path = self._cache_path(key)
        if path is None or not path.exists():
            return None
        try:
            d = json.loads(path.read_text(encoding="utf-8"))
            return ChatReply(str(d["content"]), int(d["prompt_tokens"]), int(d["completion_tokens"]), True)
        except (OSError, ValueError, KeyError, TypeError):
            return None  # a damaged entry is a miss; the fresh answer overwrites it

    def _cache_put(self, key: str, reply: ChatReply) -> None:
        path = self._cache_path(key)
        if path is None:
            return
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.{threading.get_ident()}.tmp")
        body = {
            "content": reply.content,
            "prompt_tokens": reply.prompt_tokens,
            "completion_tokens": reply.completion_tokens,
            "model": self.config.model,
        }
        tmp.write_text(json.dumps(body), encoding="utf-8")
        os.replace(tmp, path)


def _retry_after(value: str | None) -> float:
    try:
        return max(0.0, float(value)) if value else 0.0
    except ValueError:
        return 0.0  # an HTTP date: fall back to the backoff


def _parse_completion(body: Any) -> ChatReply:
    try:
        content = body["choices"][0]["message"]["content"]
        if not isinstance(content, str):
            raise TypeError("content is not a string")
    except (KeyError, IndexError, TypeError) as exc:
        raise LLMEndpointError(f"not a chat completion ({exc}): {str(body)[:160]}") from None
    usage = body.get("usage") or {}
    return ChatReply(content, int(usage.get("prompt_tokens") or 0), int(usage.get("completion_tokens") or 0), False)


# -- prompts ------------------------------------------------------------------------------------

ACTION_NAMES: Mapping[str, int] = {
    "left": int(Actions.left),
    "right": int(Actions.right),
    "forward": int(Actions.forward),
    "pickup": int(Actions.pickup),
    "drop": int(Actions.drop),
    "toggle": int(Actions.toggle),
}
DONE = "done"
_HEADINGS = ("east", "south", "west", "north")
_ARROWS = ">v<^"
_DIR_VEC = ((1, 0), (0, 1), (-1, 0), (0, -1))

SYSTEM_PROMPT = """You control an agent in a grid world of four rooms (nw, ne, sw, se) separated by walls.
Each wall segment between two rooms has one door: door_n (nw|ne), door_s (sw|se), door_w (nw/sw), door_e (ne/se).
A door is open, closed or locked. A single key opens locked doors; toggling a locked door while carrying the key unlocks and opens it.
Map legend: # wall, . floor, K key, O open door, C closed door, L locked door, > v < ^ you (facing east, south, west, north).
Columns grow to the east, rows to the south.
Actions: left (turn left), right (turn right), forward (move one cell ahead), pickup (pick up the key in front of you),
drop (drop the key on the free cell in front of you), toggle (open or close the door in front of you), done (stop: the intent holds, or you give up).
Answer with exactly two lines:
Thought: <your reasoning>
Action: <one of left, right, forward, pickup, drop, toggle, done>"""


def literal_text(lit: Literal) -> str:
    return ("not " if not lit.positive else "") + str(lit.atom)


def render_state(x: MiniGridState) -> str:
    """The grid as a character map plus plain facts (what the prompt shows)."""
    lay = x.layout
    size = grid_size(lay.room_size)
    rows = [["#"] * size for _ in range(size)]
    for yy in range(size):
        for xx in range(size):
            if room_of((xx, yy), lay.room_size) is not None:
                rows[yy][xx] = "."
    for i, (dx, dy) in enumerate(lay.door_cells):
        rows[dy][dx] = x.door_state(i)[0].upper()
    if x.key_pos is not None:
        rows[x.key_pos[1]][x.key_pos[0]] = "K"
    ax, ay = x.agent_pos
    rows[ay][ax] = _ARROWS[x.agent_dir]
    front = (ax + _DIR_VEC[x.agent_dir][0], ay + _DIR_VEC[x.agent_dir][1])
    ahead = "a wall"
    if front == x.key_pos:
        ahead = "the key"
    elif front in lay.door_cells:
        i = lay.door_cells.index(front)
        ahead = f"{DOORS[i]} ({x.door_state(i)})"
    elif room_of(front, lay.room_size) is not None:
        ahead = "free floor"
    room = room_of(x.agent_pos, lay.room_size)
    key = "you carry it" if x.key_pos is None else f"in room {room_of(x.key_pos, lay.room_size)} at {x.key_pos}"
    doors = "; ".join(f"{d} at {c}: {x.door_state(i)}" for i, (d, c) in enumerate(zip(DOORS, lay.door_cells)))
    facts = [
        f"You are at {x.agent_pos} "
        + (f"in room {room}" if room else "in a doorway")
        + f", facing {_HEADINGS[x.agent_dir]}.",
        f"In front of you: {ahead}.",
        f"Key: {key}.",
        f"Doors: {doors}.",
    ]
    return "Map:\n" + "\n".join("".join(r) for r in rows) + "\n" + "\n".join(facts)


_ACTION_RE = re.compile(r"^\s*\**action\**\s*:\s*\**\s*([a-z_]+)", re.IGNORECASE | re.MULTILINE)


def parse_action(reply: str) -> str:
    """The action name of ``Thought: ... Action: <name>`` (the last ``Action:`` line,
    lower-cased); raises :class:`LLMReplyError` when there is none."""
    found = _ACTION_RE.findall(reply)
    if not found:
        raise LLMReplyError(f"malformed reply, no 'Action: <name>' line: {reply[:120]!r}")
    return str(found[-1]).lower()


# -- the agent ----------------------------------------------------------------------------------------


class LLMAgent:
    """ReAct agent over a chat endpoint (module docstring).  One endpoint call per
    primitive action; the prompt carries the intent, the current state and the last
    ``config.history`` thought/action pairs of this execution."""

    name = "minigrid-llm"

    def __init__(self, config: LLMConfig | None = None, client: ChatClient | None = None) -> None:
        self.config = config if config is not None else LLMConfig.from_environ()
        self.client = client if client is not None else ChatClient(self.config)
        self._intent = ""
        self._history: deque[tuple[str, str]] = deque(maxlen=max(1, self.config.history))

    @property
    def usage(self) -> LLMUsage:
        return self.client.usage

    def begin(self, capability: Capability, sim: Simulator[Any], rng: np.random.Generator) -> None:
        self._intent = " and ".join(literal_text(lit) for lit in capability.intent)
        self._history.clear()

    def prompt(self, x: MiniGridState) -> list[dict[str, str]]:
        lines = [f"Intent: make this true: {self._intent}.", render_state(x)]
        if self._history and self.config.history:
            lines.append("Your previous steps (oldest first):")
            lines += [f"- Thought: {t} Action: {a}" for t, a in self._history]
        lines.append("What next?")
        return [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": "\n".join(lines)}]

    def act(self, sim: Simulator[Any], rng: np.random.Generator) -> Action | Stop:
        if not self._intent:
            return Stop("begin() was not called")
        x = world_view(sim.get_state())
        reply = self.client.complete(self.prompt(x)).content
        name = parse_action(reply)
        thought = _thought(reply)
        if name == DONE:
            return Stop("done")
        action = ACTION_NAMES.get(name)
        if action is None or action not in sim.available_actions():
            raise LLMReplyError(f"illegal action {name!r}; expected one of {', '.join([*ACTION_NAMES, DONE])}")
        self._history.append((thought, name))
        return action


def _thought(reply: str) -> str:
    m = re.search(r"thought\s*:\s*(.*?)(?:\n\s*\**action|\Z)", reply, re.IGNORECASE | re.DOTALL)
    return " ".join(m.group(1).split())[:300] if m else ""
