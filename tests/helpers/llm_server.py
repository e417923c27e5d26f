"""A tiny OpenAI-compatible chat-completions server for the LLM agents' tests.

It runs as a separate process (``python tests/helpers/llm_server.py``; it prints
``PORT <n>`` once it listens) and speaks the real protocol over HTTP:
``POST /chat/completions`` answers ``Thought: ... Action: <name>`` from a scripted,
deterministic MiniGrid policy that reads the state back out of the prompt (the map
and the facts :func:`capver.agents.llm.render_state` writes) and plans by
breadth-first search over poses.  ``usage`` counts whitespace-separated words.
A prompt with a ``Candidate skills:`` list (the SayCan tabletop agent,
capver.agents.saycan) is answered instead by :func:`tabletop_scores`: a JSON object of
skill scores from a scripted tabletop planner.

Test hooks (JSON over HTTP, so the tests drive the process the way a client would):

* ``POST /control`` with ``{"faults": [...], "latency": s, "hang_seconds": s,
  "reset": true}`` - each chat request consumes the next fault of the list:
  ``"429"``, ``"500"`` (an error status), ``"hang"`` (sleep ``hang_seconds`` before
  answering), ``"malformed"`` (a reply with no action line), ``"illegal"`` (an
  action that does not exist), ``"ok"`` (answer normally); an empty list answers
  normally.  ``latency`` is added to every chat request.
* ``GET /stats`` - counts of chat requests and of each fault served.
* ``GET /in_flight`` - ``{"max": n}``, the most chat requests served at once since the
  last reset (a count, so that a test of overlap need not time anything).

:class:`LocalChatServer` starts and stops the process for the tests; every wait
there has a timeout so that a broken server cannot hang the suite.
"""

from __future__ import annotations

import contextlib
import json
import re
import select
import subprocess
import sys
import threading
import time
import urllib.request
from collections import deque
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self

Cell = tuple[int, int]
Pose = tuple[int, int, int]
DIRS: tuple[Cell, ...] = ((1, 0), (0, 1), (-1, 0), (0, -1))
ARROWS = ">v<^"


# -- the scripted policy --------------------------------------------------------------------


class Scene:
    """The state as the prompt shows it."""

    def __init__(self, prompt: str) -> None:
        lines = prompt.splitlines()
        start = lines.index("Map:") + 1
        rows: list[str] = []
        for line in lines[start:]:
            if not line or line[0] not in "#.KOCL><v^":
                break
            rows.append(line)
        self.rows = rows
        self.size = len(rows)
        self.m = (self.size - 1) // 2
        self.key: Cell | None = None
        self.doors: dict[str, Cell] = {}
        self.door_state: dict[Cell, str] = {}
        for y, row in enumerate(rows):
            for x, ch in enumerate(row):
                if ch in ARROWS:
                    self.agent: Pose = (x, y, ARROWS.index(ch))
                elif ch == "K":
                    self.key = (x, y)
                elif ch in "OCL":
                    self.door_state[(x, y)] = {"O": "open", "C": "closed", "L": "locked"}[ch]
        for name, x, y in re.findall(r"(door_[nswe]) at \((\d+), (\d+)\)", prompt):
            self.doors[name] = (int(x), int(y))
            if (int(x), int(y)) not in self.door_state:  # the agent stands in it
                self.door_state[(int(x), int(y))] = "open"
        self.holding = "Key: you carry it" in prompt
        intent = re.search(r"Intent: make this true: (.*)\.", prompt)
        self.intent = [] if intent is None else intent.group(1).split(" and ")

    def room_of(self, c: Cell) -> str | None:
        x, y, m = c[0], c[1], self.m
        if not (0 < x < 2 * m and 0 < y < 2 * m) or x == m or y == m:
            return None
        return ("n" if y < m else "s") + ("w" if x < m else "e")

    def passable(self, c: Cell) -> bool:
        if c == self.key:
            return False
        if c in self.door_state:
            return self.door_state[c] != "locked" or self.holding
        return self.room_of(c) is not None

    def front(self) -> Cell:
        x, y, d = self.agent
        return (x + DIRS[d][0], y + DIRS[d][1])

    def holds(self, lit: str) -> bool | None:
        neg = lit.startswith("not ")
        atom = lit[4:] if neg else lit
        m = re.fullmatch(r"(\w+)\(([^)]*)\)", atom)
        if m is None:
            return None
        pred, args = m.group(1), [a.strip() for a in m.group(2).split(",")]
        if pred == "holding":
            value = self.holding
        elif pred in ("open", "closed", "locked"):
            value = self.door_state.get(self.doors.get(args[0], (-1, -1))) == pred
        elif pred == "in_room" and args[0] == "agent":
            value = self.room_of(self.agent[:2]) == args[1]
        elif pred == "in_room" and args[0] == "key":
            value = self.key is not None and self.room_of(self.key) == args[1]
        else:
            return None
        return value != neg


def _bfs(scene: Scene, goal: set[Pose]) -> str | None:
    """First action of a shortest left/right/forward path to a pose in ``goal``;
    ``toggle`` when that first step walks into a closed (or, with the key, locked) door."""
    start = scene.agent
    if start in goal:
        return None
    first: dict[Pose, str] = {start: ""}
    queue = deque([start])
    while queue:
        pose = queue.popleft()
        x, y, d = pose
        nxt = [((x, y, (d - 1) % 4), "left"), ((x, y, (d + 1) % 4), "right")]
        ahead = (x + DIRS[d][0], y + DIRS[d][1])
        if scene.passable(ahead):
            nxt.append(((ahead[0], ahead[1], d), "forward"))
        for p, a in nxt:
            if p in first:
                continue
            first[p] = first[pose] or a
            if p in goal:
                act = first[p]
                if act == "forward" and scene.front() in scene.door_state and scene.door_state[scene.front()] != "open":
                    return "toggle"
                return act
            queue.append(p)
    return None


def _facing(target: Cell) -> set[Pose]:
    return {(target[0] - dx, target[1] - dy, d) for d, (dx, dy) in enumerate(DIRS)}


def policy(prompt: str) -> tuple[str, str]:
    """(thought, action) for the state and intent in ``prompt``."""
    scene = Scene(prompt)
    pending = [lit for lit in scene.intent if scene.holds(lit) is False]
    if not pending:
        return "The intent already holds.", "done"
    lit = pending[0]
    if lit == "holding(key)" or (
        lit.startswith("open(")
        and not scene.holding
        and scene.door_state.get(scene.doors.get(lit[5:-1], (-1, -1))) == "locked"
    ):
        if scene.key is None:
            return "No key to fetch.", "done"
        if scene.front() == scene.key:
            return "The key is in front of me.", "pickup"
        act = _bfs(scene, _facing(scene.key))
        return ("I walk to the key.", act) if act else ("I cannot reach the key.", "done")
    if lit == "not holding(key)":
        front = scene.front()
        if scene.room_of(front) is not None and scene.passable(front):
            return "There is free floor in front of me.", "drop"
        return "I turn to find free floor.", "left"
    m = re.fullmatch(r"open\((door_\w)\)", lit)
    if m and m.group(1) in scene.doors:
        door = scene.doors[m.group(1)]
        if scene.front() == door:
            return f"{m.group(1)} is in front of me.", "toggle"
        act = _bfs(scene, _facing(door))
        return ("I walk to the door.", act) if act else ("I cannot reach the door.", "done")
    m = re.fullmatch(r"in_room\(agent,\s*(\w+)\)", lit)
    if m:
        goal = {
            (x, y, d)
            for y in range(scene.size)
            for x in range(scene.size)
            for d in range(4)
            if scene.room_of((x, y)) == m.group(1)
        }
        act = _bfs(scene, goal)
        return (f"I walk to room {m.group(1)}.", act) if act else ("I cannot get there.", "done")
    return f"I do not know how to make {lit} true.", "done"


# -- the scripted tabletop planner (SayCan) -----------------------------------------------------


def tabletop_scores(prompt: str) -> dict[str, float]:
    """Scores for the candidate skills of a SayCan prompt: 0.9 for the next skill of a
    simple plan read off the scene, 0.3 for putting the held block down on the table
    when that plan places it elsewhere, 0.05 for ``done`` (0.95 once the instruction
    holds), 0.01 for the rest.  Like a language model it does not check whether the
    robot can do it: it proposes placing into a full bowl or onto a block in a bowl,
    and the agent's affordance has to stop that."""
    lines = prompt.splitlines()
    m = re.search(r"\((put_in|stack)\((\w+),(\w+)\)\)\s*$", lines[lines.index("Scene:") - 1])
    if m is None:
        raise ValueError("no instruction")
    _, block, target = m.groups()
    support: dict[str, str] = {}
    held = None
    for line in lines[lines.index("Scene:") + 1 : lines.index("Candidate skills:")]:
        g = re.fullmatch(r"- (\w+): (on the table|in the gripper|in (\w+)|on (\w+)|holding (\w+)|.*)", line)
        if g is None:
            continue
        name, where = g.group(1), g.group(2)
        if name == "gripper":
            held = g.group(5)
        elif where == "on the table":
            support[name] = "table"
        elif where == "in the gripper":
            support[name] = "gripper"
        elif g.group(3) or g.group(4):
            support[name] = g.group(3) or g.group(4)
    candidates = lines[lines.index("Candidate skills:") + 1 :]
    scores = dict.fromkeys(candidates, 0.01)
    if support.get(block) == target:
        return {**dict.fromkeys(candidates, 0.0), "done": 0.95}

    def on_top(x: str) -> str | None:
        return next((b for b, s in support.items() if s == x), None)

    if held is not None and held != block:
        nxt = f"place({held}, table)"
    elif held == block:
        nxt = f"place({block}, {target})"
        scores[f"place({block}, table)"] = 0.3
    else:  # clear the block, then the target block, then pick the block
        top = on_top(block) or (on_top(target) if target in support else None)
        nxt = f"pick({top or block})"
    scores[nxt] = 0.9
    scores["done"] = 0.05
    return scores


# -- the HTTP server ----------------------------------------------------------------------------


class _State:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.in_flight = 0  # not reset: requests may be under way when a test resets
        self.reset()

    def reset(self) -> None:
        self.faults: deque[str] = deque()
        self.latency = 0.0
        self.hang_seconds = 5.0
        self.stats: dict[str, int] = {"chat_requests": 0}
        self.max_in_flight = 0


STATE = _State()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        pass  # quiet: the tests read /stats instead

    def _send(self, status: int, body: Any, headers: dict[str, str] | None = None) -> None:
        data = json.dumps(body).encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):  # the client gave up (a timeout test)
            self.wfile.write(data)

    def _body(self) -> Any:
        n = int(self.headers.get("Content-Length") or 0)
        return json.loads(self.rfile.read(n) or b"{}")

    def do_GET(self) -> None:  # http.server's naming
        if self.path == "/stats":
            with STATE.lock:
                self._send(200, dict(STATE.stats))
        elif self.path == "/in_flight":
            with STATE.lock:
                self._send(200, {"max": STATE.max_in_flight})
        else:
            self._send(404, {"error": {"message": "not found"}})

    def do_POST(self) -> None:
        body = self._body()
        if self.path == "/control":
            with STATE.lock:
                if body.get("reset"):
                    STATE.reset()
                STATE.faults.extend(body.get("faults", []))
                STATE.latency = float(body.get("latency", STATE.latency))
                STATE.hang_seconds = float(body.get("hang_seconds", STATE.hang_seconds))
            self._send(200, {"ok": True})
            return
        if not self.path.endswith("/chat/completions"):
            self._send(404, {"error": {"message": "not found"}})
            return
        with STATE.lock:
            STATE.stats["chat_requests"] += 1
            fault = STATE.faults.popleft() if STATE.faults else "ok"
            STATE.stats[fault] = STATE.stats.get(fault, 0) + 1
            if (self.headers.get("Authorization") or "").startswith("Bearer "):
                STATE.stats["with_api_key"] = STATE.stats.get("with_api_key", 0) + 1
            latency, hang = STATE.latency, STATE.hang_seconds
            STATE.in_flight += 1
            STATE.max_in_flight = max(STATE.max_in_flight, STATE.in_flight)
        time.sleep(latency)
        with STATE.lock:
            STATE.in_flight -= 1
        if fault == "429":
            self._send(429, {"error": {"message": "rate limited"}}, {"Retry-After": "0"})
            return
        if fault == "500":
            self._send(500, {"error": {"message": "internal error"}})
            return
        if fault == "hang":
            time.sleep(hang)
        messages = body.get("messages", [])
        prompt = "\n".join(str(m.get("content", "")) for m in messages)
        if fault == "malformed":
            content = "I think I should go somewhere nice."
        elif fault == "illegal":
            content = "Thought: I will fly over the wall.\nAction: fly"
        elif "Candidate skills:" in prompt:
            try:
                content = json.dumps(tabletop_scores(messages[-1]["content"]))
            except (ValueError, KeyError, IndexError):
                content = json.dumps({"done": 1.0})
        else:
            try:
                thought, action = policy(messages[-1]["content"])
            except (ValueError, KeyError, IndexError, AttributeError):
                thought, action = "I cannot read the state.", "done"
            content = f"Thought: {thought}\nAction: {action}"
        usage = {"prompt_tokens": len(prompt.split()), "completion_tokens": len(content.split())}
        usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
        self._send(
            200,
            {
                "id": f"chatcmpl-{STATE.stats['chat_requests']}",
                "object": "chat.completion",
                "model": body.get("model", ""),
                "choices": [
                    {"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}
                ],
                "usage": usage,
            },
        )


def serve(port: int = 0) -> None:
    server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    server.daemon_threads = True  # hanging handlers must not keep the process alive
    print(f"PORT {server.server_address[1]}", flush=True)
    server.serve_forever()


# -- the tests' handle on the process ------------------------------------------------------------


class LocalChatServer:
    """The server in a child process; ``base_url`` is what the agent is given."""

    def __init__(self, startup_timeout: float = 10.0) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, __file__],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        assert self.proc.stdout is not None
        ready, _, _ = select.select([self.proc.stdout], [], [], startup_timeout)
        line = self.proc.stdout.readline() if ready else ""
        if not line.startswith("PORT "):
            self.close()
            raise RuntimeError(f"the local chat server did not start within {startup_timeout}s")
        self.port = int(line.split()[1])
        self.base_url = f"http://127.0.0.1:{self.port}/v1"

    def _call(self, path: str, body: Any | None = None) -> Any:
        data = None if body is None else json.dumps(body).encode("utf-8")
        req = urllib.request.Request(
            f"http://127.0.0.1:{self.port}{path}",
            data=data,
            headers={"Content-Type": "application/json"},
            method="GET" if data is None else "POST",
        )
        with urllib.request.urlopen(req, timeout=5.0) as r:
            return json.loads(r.read())

    def control(
        self,
        *,
        faults: list[str] | None = None,
        latency: float | None = None,
        hang_seconds: float | None = None,
        reset: bool = False,
    ) -> None:
        body: dict[str, Any] = {"reset": reset, "faults": faults or []}
        if latency is not None:
            body["latency"] = latency
        if hang_seconds is not None:
            body["hang_seconds"] = hang_seconds
        self._call("/control", body)

    def stats(self) -> dict[str, int]:
        return dict(self._call("/stats"))

    def max_in_flight(self) -> int:
        return int(self._call("/in_flight")["max"])

    def close(self) -> None:
        self.proc.kill()
        try:
            self.proc.wait(timeout=5.0)
        finally:
            if self.proc.stdout is not None:
                self.proc.stdout.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def running() -> Iterator[LocalChatServer]:
    """A generator for pytest fixtures: the server, closed afterwards."""
    server = LocalChatServer()
    try:
        yield server
    finally:
        server.close()


if __name__ == "__main__":
    serve(int(sys.argv[1]) if len(sys.argv) > 1 else 0)
