"""The LLM agent (the paper's GPT ReAct agent) against a real HTTP endpoint: a local chat-completions
server process (tests/helpers/llm_server.py) answering from a scripted MiniGrid policy,
with injected latency, hangs, 429/500 errors and malformed or illegal replies.

Nothing of capver is mocked: the agent, its HTTP client, the executor and ``capver
learn`` run as users run them.  Every wait is bounded (client timeouts well below
the server's hangs; subprocess timeouts), so a broken endpoint fails a test rather
than hanging the suite.
"""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from capver.agents.llm import (
    ChatClient,
    LLMAgent,
    LLMConfig,
    LLMConfigError,
    LLMEndpointError,
    LLMReplyError,
    parse_action,
    render_state,
)
from capver.agents.minigrid_agents import training_intents
from capver.api import learn, load_setting
from capver.core.state import Capability
from capver.engines.execution import Execution, ExecutionBudget, execute
from capver.envs.minigrid_env import (
    Layout,
    MiniGridRepresentation,
    minigrid_simulator,
    start_state,
)
from tests.helpers.cli import capver_command
from tests.helpers.llm_server import LocalChatServer, policy

# nw holds the key at (1, 1); the agent starts in nw at (3, 3) facing east, every
# door closed: holding(key) takes a few turns and moves, open(door_*) a walk.
LAYOUT = Layout(3, ((4, 2), (4, 6), (2, 4), (6, 4)), ("closed",) * 4, (1, 1), (3, 3), 0)
BUDGET = ExecutionBudget(max_steps=60, theta=None)


def _cap(name: str) -> Capability:
    caps = {c.name: c for c in (Capability.for_intent(i) for i in training_intents())}
    return caps[name]


@pytest.fixture(scope="module")
def server() -> Iterator[LocalChatServer]:
    with LocalChatServer() as srv:
        yield srv


@pytest.fixture()
def srv(server: LocalChatServer) -> LocalChatServer:
    server.control(reset=True)
    return server


def _config(srv: LocalChatServer, **kw: object) -> LLMConfig:
    base: dict[str, object] = {"base_url": srv.base_url, "model": "scripted", "timeout": 2.0, "backoff": 0.0}
    base.update(kw)
    return LLMConfig(**base)  # type: ignore[arg-type]


def _run(agent: LLMAgent, cap: str, layout: Layout = LAYOUT) -> Execution:
    sim = minigrid_simulator()
    return execute(
        agent, sim, MiniGridRepresentation(), _cap(cap), start_state(layout), np.random.default_rng(0), BUDGET
    )


def test_the_scripted_endpoint_drives_the_agent_to_its_intent(srv: LocalChatServer) -> None:
    agent = LLMAgent(_config(srv))
    ex = _run(agent, "holding(key)")
    assert ex.failure is None and ex.stop_reason == "done" and ex.steps > 0
    assert ex.transition.s != ex.transition.s_next
    # One endpoint call per action, plus the one that answered "done".
    assert agent.usage.calls == ex.steps + 1 == srv.stats()["chat_requests"]


def test_prompt_shows_the_map_the_facts_and_the_intent() -> None:
    text = render_state(start_state(LAYOUT))
    assert text.splitlines()[1:4] == ["#########", "#K..#...#", "#...C...#"]
    assert "You are at (3, 3) in room nw, facing east." in text
    assert "door_w at (2, 4): closed" in text
    thought, action = policy("Intent: make this true: holding(key).\n" + text)
    assert action in {"left", "right", "forward"} and thought


def test_parse_action() -> None:
    assert parse_action("Thought: go\nAction: Forward.") == "forward"
    assert parse_action("Thought: a\nAction: left\nThought: b\n**Action:** toggle") == "toggle"
    with pytest.raises(LLMReplyError, match="no 'Action: <name>' line"):
        parse_action("I would move forward")


def test_token_accounting_from_usage(srv: LocalChatServer) -> None:
    client = ChatClient(_config(srv, cache_dir=None))
    prompts = ["Intent: make this true: holding(key).\n" + render_state(start_state(LAYOUT)), "hello there"]
    words_in = words_out = 0
    for p in prompts:
        reply = client.complete([{"role": "user", "content": p}])
        words_in += len(p.split())
        words_out += len(reply.content.split())
    u = client.usage
    assert (u.calls, u.http_requests, u.cache_hits) == (2, 2, 0)
    assert (u.prompt_tokens, u.completion_tokens) == (words_in, words_out)
    assert u.total_tokens == words_in + words_out and "tokens paid" in u.describe()


def test_a_hanging_endpoint_times_out_and_the_retry_answers(srv: LocalChatServer) -> None:
    # The default 2 s timeout, not a shorter one: the retry's healthy reply must beat it
    # on a busy machine too.  The hang outlasts it by far.
    hang = 30.0
    srv.control(faults=["hang"], hang_seconds=hang)
    client = ChatClient(_config(srv))
    t0 = time.monotonic()
    reply = client.complete([{"role": "user", "content": "hello"}])
    # Answered before the hung reply could have come: the client gave up on it.  A
    # bound near the timeout would measure the machine's load instead.
    assert time.monotonic() - t0 < hang
    assert "Action:" in reply.content
    u = client.usage
    assert (u.timeouts, u.retries, u.http_requests) == (1, 1, 2)


def test_429_and_500_are_retried_with_exponential_backoff(srv: LocalChatServer) -> None:
    srv.control(faults=["429", "500", "429"])
    slept: list[float] = []
    client = ChatClient(_config(srv, backoff=0.1, max_backoff=0.3), sleep=slept.append)
    reply = client.complete([{"role": "user", "content": "hello"}])
    assert "Action:" in reply.content
    # Retry-After: 0 does not shorten the backoff; the cap bounds it.
    assert slept == pytest.approx([0.1, 0.2, 0.3])
    assert client.usage.retries == 3
    assert srv.stats() == {"chat_requests": 4, "429": 2, "500": 1, "ok": 1}


def test_retries_are_bounded(srv: LocalChatServer) -> None:
    srv.control(faults=["500"] * 10)
    client = ChatClient(_config(srv, max_retries=2))
    with pytest.raises(LLMEndpointError, match=r"gave up after 3 attempts; last: HTTP 500"):
        client.complete([{"role": "user", "content": "hello"}])
    assert srv.stats()["chat_requests"] == 3


def test_a_refused_connection_is_retried_then_reported() -> None:
    with socket.socket() as s:  # a port nobody listens on any more
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    client = ChatClient(LLMConfig(f"http://127.0.0.1:{port}/v1", "scripted", timeout=1.0, max_retries=1, backoff=0.0))
    with pytest.raises(LLMEndpointError, match="connection failed"):
        client.complete([{"role": "user", "content": "hello"}])
    assert client.usage.http_requests == 2


def test_endpoint_failure_is_a_failed_execution(srv: LocalChatServer) -> None:
    srv.control(faults=["500"] * 3)
    ex = _run(LLMAgent(_config(srv, max_retries=2)), "holding(key)")
    assert ex.failed and ex.failure is not None and "LLMEndpointError" in ex.failure and ex.steps == 0


@pytest.mark.parametrize(("fault", "words"), [("malformed", "malformed reply"), ("illegal", "illegal action 'fly'")])
def test_a_bad_reply_fails_the_execution_and_the_next_one_runs(srv: LocalChatServer, fault: str, words: str) -> None:
    agent = LLMAgent(_config(srv, cache_dir=None))
    srv.control(faults=["ok", "ok", fault])
    bad = _run(agent, "holding(key)")
    assert bad.failed and bad.failure is not None and "LLMReplyError" in bad.failure and words in bad.failure
    assert bad.steps == 2  # the two good actions were taken and are part of the record
    good = _run(agent, "holding(key)")
    assert good.failure is None and good.stop_reason == "done"


def test_the_cache_answers_a_second_run_without_requests(srv: LocalChatServer, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    first = [_run(LLMAgent(_config(srv, cache_dir=cache)), c) for c in ("holding(key)", "open(door_w)")]
    paid = srv.stats()["chat_requests"]
    agent = LLMAgent(_config(srv, cache_dir=cache))  # a new process would start like this
    second = [_run(agent, c) for c in ("holding(key)", "open(door_w)")]
    assert srv.stats()["chat_requests"] == paid  # nothing paid twice
    assert [e.symbolic_trajectory for e in second] == [e.symbolic_trajectory for e in first]
    u = agent.usage
    assert u.cache_hits == u.calls == paid and u.hit_rate == 1.0
    assert u.prompt_tokens == u.completion_tokens == 0 and u.cached_prompt_tokens > 0
    # The key holds the seed, the temperature and the model: another seed asks again.
    _run(LLMAgent(_config(srv, cache_dir=cache, seed=1)), "holding(key)")
    assert srv.stats()["chat_requests"] > paid


def test_configuration_from_the_environment(tmp_path: Path) -> None:
    env = {
        "CAPVER_LLM_BASE_URL": "http://localhost:1/v1",
        "CAPVER_LLM_MODEL": "m",
        "CAPVER_LLM_API_KEY": "k",
        "CAPVER_LLM_TEMPERATURE": "0.7",
        "CAPVER_LLM_CACHE": str(tmp_path),
    }
    c = LLMConfig.from_environ(env, seed=3)
    assert (c.base_url, c.model, c.api_key, c.temperature, c.seed, c.cache_dir) == (
        "http://localhost:1/v1",
        "m",
        "k",
        0.7,
        3,
        tmp_path,
    )
    assert LLMConfig.from_environ({**env, "CAPVER_LLM_CACHE": "none"}).cache_dir is None
    assert LLMConfig.from_environ({**env, "CAPVER_LLM_CACHE": "", "XDG_CACHE_HOME": "/x"}).cache_dir == Path(
        "/x/capver/llm"
    )
    with pytest.raises(LLMConfigError, match="CAPVER_LLM_BASE_URL is not set"):
        LLMConfig.from_environ({"CAPVER_LLM_MODEL": "m"})
    with pytest.raises(LLMConfigError, match="CAPVER_LLM_TEMPERATURE='hot'"):
        LLMConfig.from_environ({**env, "CAPVER_LLM_TEMPERATURE": "hot"})


def test_api_learn_on_the_llm_setting(srv: LocalChatServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CAPVER_LLM_BASE_URL", srv.base_url)
    monkeypatch.setenv("CAPVER_LLM_MODEL", "scripted")
    monkeypatch.setenv("CAPVER_LLM_API_KEY", "test-key")
    monkeypatch.setenv("CAPVER_LLM_CACHE", str(tmp_path / "cache"))
    a = load_setting("llm", seed=0, layouts=3, step_cap=40)
    result = learn(a, max_steps=150, seed=0)
    assert result.progress.executions > 0 and result.progress.unique_transitions > 0
    assert any(t.s != t.s_next for t, _ in result.data.items())
    assert srv.stats()["with_api_key"] == srv.stats()["chat_requests"] > 0


def test_capver_learn_agent_llm_end_to_end_and_rerun_pays_nothing(srv: LocalChatServer, tmp_path: Path) -> None:
    env = {
        **os.environ,
        "CAPVER_LLM_BASE_URL": srv.base_url,
        "CAPVER_LLM_MODEL": "scripted",
        "CAPVER_LLM_CACHE": str(tmp_path / "cache"),
    }
    argv = [
        "learn",
        "--agent",
        "llm",
        "--layouts",
        "3",
        "--step-cap",
        "40",
        "--max-steps",
        "300",
        "--eval-sequences",
        "3",
        "--eval-every",
        "150",
        "--quiet",
    ]

    def run(out: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            capver_command() + argv + ["--out", str(tmp_path / out)],
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )

    first = run("a")
    assert first.returncode == 0, first.stderr
    paid = srv.stats()["chat_requests"]
    assert paid > 0 and "minigrid-llm mcqs-s" in first.stdout
    records = [json.loads(line) for line in (tmp_path / "a" / "dataset.jsonl").read_text().splitlines()]
    assert any(r["s"] != r["s2"] for r in records if "s2" in r)
    second = run("b")
    assert second.returncode == 0, second.stderr
    assert srv.stats()["chat_requests"] == paid  # every answer came from the cache
    # Token accounting in the summary and report.txt: the first run paid, the re-run did not.
    # (Within one run, a state met again with the same recent history is a cache hit too.)
    m = re.search(r"(\d+) LLM calls \((\d+) cached, 0 retries\), (\d+) prompt", first.stdout)
    assert m is not None and int(m[1]) - int(m[2]) == paid and int(m[3]) > 0, first.stdout
    assert f"{m[1]} LLM calls ({m[1]} cached, 0 retries), 0 prompt + 0 completion tokens paid" in second.stdout
    assert "Endpoint usage of this invocation: " in (tmp_path / "a" / "report.txt").read_text()
    assert (tmp_path / "b" / "h_and.capm").read_text() == (tmp_path / "a" / "h_and.capm").read_text()


def test_capver_learn_agent_llm_without_an_endpoint_says_which_variable(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CAPVER_LLM_")}
    r = subprocess.run(
        [*capver_command(), "learn", "--agent", "llm", "--out", str(tmp_path / "run")],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert r.returncode != 0 and "CAPVER_LLM_BASE_URL is not set" in r.stderr + r.stdout
    assert not (tmp_path / "run").exists()
