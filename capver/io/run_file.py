"""The manifest of a ``capver learn`` run: ``run.json`` records which agent, setting,
method and budget produced the dataset, so that ``capver eval`` can rebuild the same
setting (discovered capabilities, simulator, true model), ``--resume`` can refuse to
mix two settings in one dataset and continues under the run's own budget, and no
command takes a directory that capver did not write for a run of its own."""

from __future__ import annotations

import json
import shlex
from collections.abc import Mapping
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any

from capver.core.setting_args import SettingArgs
from capver.errors import RunFileError
from capver.io.atomic import replace_text

FORMAT = 2
NAME = "run.json"

CUSTOM = "custom"
"""The agent of a run whose setting was made in Python (:func:`capver.gym_setting`):
its agent and simulator live in the user's code, so no command can rebuild them
from ``run.json``; what needs them is offered on the result in Python."""


@dataclass(frozen=True, slots=True)
class RunBudget:
    """When ``capver learn`` stops: simulator steps and queries count over the whole
    run (a resumed run continues the counts), seconds count per invocation."""

    max_steps: int | None = None
    max_queries: int | None = None
    max_seconds: float | None = None

    def describe(self) -> str:
        parts = [
            f"{v} {unit}"
            for v, unit in ((self.max_steps, "steps"), (self.max_queries, "queries"), (self.max_seconds, "seconds"))
            if v is not None
        ]
        return ", ".join(parts) or "none"


@dataclass(frozen=True, slots=True)
class RunManifest:
    agent: str
    setting: SettingArgs
    method: str
    budget: RunBudget = RunBudget()
    name: str | None = None  # the setting's name, for a run of a custom setting

    @property
    def custom(self) -> bool:
        """A run of a setting made in Python (see :data:`CUSTOM`)."""
        return self.agent == CUSTOM

    def differences(self, other: RunManifest) -> list[str]:
        """``--option: this X, other Y`` for each setting field (and the agent) that
        differs; the budget may change between invocations of one run (the method
        may not, which ``capver learn`` checks itself, naming the run's method)."""
        out = [f"--agent: the run has {self.agent}, given {other.agent}"] if self.agent != other.agent else []
        for f in fields(SettingArgs):
            mine, theirs = getattr(self.setting, f.name), getattr(other.setting, f.name)
            if mine != theirs:
                out.append(f"{_option(f.name)}: the run has {_show(mine)}, given {_show(theirs)}")
        return out

    def learn_options(self) -> list[str]:
        """The run's setting as ``capver learn`` options: ``--agent`` and each setting
        field that is not the default, shell-quoted."""
        defaults = SettingArgs()
        out = ["--agent", shlex.quote(self.agent)]
        for f in fields(SettingArgs):
            value = getattr(self.setting, f.name)
            if value != getattr(defaults, f.name):
                out += [_option(f.name), "inf" if value is None else shlex.quote(str(value))]
        return out


def _option(field_name: str) -> str:
    """The command-line option of a setting field (``step_cap`` → ``--step-cap``)."""
    return f"--{field_name.replace('_', '-')}"


def _show(value: object) -> str:
    return "inf" if value is None else repr(value) if isinstance(value, str) else str(value)


MODELS_FROM = "models_from"
"""run.json's record of the data the run's models were built from (:func:`stamp_models`)."""


def write(directory: Path, manifest: RunManifest) -> None:
    """Write ``run.json`` atomically (a kill leaves the old file or the new one),
    keeping the record of what the models were built from."""
    kept = models_from(directory)
    body: dict[str, Any] = {
        "format": FORMAT,
        "agent": manifest.agent,
        "method": manifest.method,
        "setting": asdict(manifest.setting),
        "budget": asdict(manifest.budget),
    }
    if manifest.name is not None:
        body["name"] = manifest.name
    if kept is not None:
        body[MODELS_FROM] = kept
    replace_text(directory / NAME, json.dumps(body, indent=2, sort_keys=True) + "\n")


def read(directory: Path) -> RunManifest:
    path = directory / NAME
    if not directory.is_dir():
        what = "not a directory" if directory.exists() else "no such directory"
        raise RunFileError(f"{directory}: {what}; expected the --out directory of capver learn")
    if not path.exists():
        raise RunFileError(f"{path}: missing; expected the --out directory of a capver learn run")
    try:
        body: Any = json.loads(path.read_text())
    except json.JSONDecodeError as e:
        raise RunFileError(
            f"{path}:{e.lineno}:{e.colno}: {e.msg}; expected the JSON manifest of a capver learn run"
        ) from None
    except (OSError, UnicodeDecodeError) as e:
        raise RunFileError(f"{path}: cannot read it ({e}); expected the JSON manifest of a capver learn run") from None
    if not isinstance(body, dict) or body.get("format") not in (1, FORMAT):
        raise RunFileError(f'{path}: expected a manifest with "format": {FORMAT}')
    setting = body.get("setting")
    if isinstance(setting, dict) and body["format"] == 1 and "max_steps" in setting:
        # Format 1 called the per-execution step cap "max_steps", the name of the budget.
        setting = {("step_cap" if k == "max_steps" else k): v for k, v in setting.items()}
    names = {f.name for f in fields(SettingArgs)}
    if not isinstance(setting, dict) or set(setting) != names:
        raise RunFileError(f'{path}: "setting" must have exactly the keys {sorted(names)}')
    agent, method = body.get("agent"), body.get("method")
    if not isinstance(agent, str) or not isinstance(method, str):
        raise RunFileError(f'{path}: "agent" and "method" must be strings')
    budget = body.get("budget", {})
    budget_names = {f.name for f in fields(RunBudget)}
    if not isinstance(budget, dict) or not set(budget) <= budget_names:
        raise RunFileError(f'{path}: "budget" must be an object with keys among {sorted(budget_names)}')
    name = body.get("name")
    if name is not None and not isinstance(name, str):
        raise RunFileError(f'{path}: "name" must be a string')
    return RunManifest(agent, SettingArgs(**setting), method, RunBudget(**budget), name)


def check_resume(directory: Path, manifest: RunManifest) -> RunManifest:
    """The stored manifest of the run in ``directory``, after refusing a ``--resume``
    of anything but a run capver wrote (a valid ``run.json``) with the same agent and
    setting (the budget may change: a run can be continued for longer; ``capver
    learn`` refuses another query method, since a run's curve and models describe
    one method's data)."""
    if not (directory / NAME).exists():
        raise RunFileError(
            f"--resume: {directory} holds no {NAME}, so it is not a capver learn run; "
            "nothing was written (use a new --out to start a run)"
        )
    stored = read(directory)
    diff = stored.differences(manifest)
    if diff:
        raise RunFileError(
            f"--resume: {directory} holds a run of another setting ({'; '.join(diff)}); "
            "use the same options, or a new --out"
        )
    return stored


def models_from(directory: Path) -> dict[str, Any] | None:
    """The data the run's models were built from, as :func:`stamp_models` recorded it
    (None: not recorded, or no readable run.json)."""
    try:
        body = json.loads((directory / NAME).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    stamp = body.get(MODELS_FROM) if isinstance(body, dict) else None
    return stamp if isinstance(stamp, dict) else None


def stamp_models(directory: Path, stamp: Mapping[str, Any]) -> None:
    """Record in run.json that the models now in ``directory`` were built from the data
    ``stamp`` describes (written after the models: a kill in between leaves the old
    record, which the data no longer matches, so the run is refused, not trusted)."""
    path = directory / NAME
    try:
        body = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return  # a run without a manifest (a plain set of model files) records nothing
    if isinstance(body, dict):
        body[MODELS_FROM] = dict(stamp)
        replace_text(path, json.dumps(body, indent=2, sort_keys=True) + "\n")
