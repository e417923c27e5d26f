"""The manifest of a ``capver learn`` run: ``run.json`` records which agent, setting
and method produced the dataset, so that ``capver eval`` can rebuild the same
setting (discovered capabilities, simulator, true model) and ``--resume`` can refuse
to mix two settings in one dataset."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any

from capver.errors import RunFileError
from capver.io.atomic import replace_text
from capver.settings import SettingArgs

FORMAT = 1
NAME = "run.json"


@dataclass(frozen=True, slots=True)
class RunManifest:
    agent: str
    setting: SettingArgs
    method: str

    def describe(self) -> str:
        s = self.setting
        return f"--agent {self.agent} --domain {s.domain} --problem {s.problem} --seed {s.seed} --method {self.method}"


def write(directory: Path, manifest: RunManifest) -> None:
    """Write ``run.json`` atomically (a kill leaves the old file or the new one)."""
    body = {"format": FORMAT, "agent": manifest.agent, "method": manifest.method, "setting": asdict(manifest.setting)}
    replace_text(directory / NAME, json.dumps(body, indent=2, sort_keys=True) + "\n")


def read(directory: Path) -> RunManifest:
    path = directory / NAME
    if not directory.is_dir():
        raise RunFileError(f"{directory}: no such directory; expected the --out directory of capver learn")
    if not path.exists():
        raise RunFileError(f"{path}: missing; expected the --out directory of a capver learn run")
    try:
        body: Any = json.loads(path.read_text())
    except json.JSONDecodeError as e:
        raise RunFileError(f"{path}:{e.lineno}:{e.colno}: {e.msg}; expected the JSON manifest of a capver learn run") from None
    if not isinstance(body, dict) or body.get("format") != FORMAT:
        raise RunFileError(f"{path}: expected a manifest with \"format\": {FORMAT}")
    names = {f.name for f in fields(SettingArgs)}
    setting = body.get("setting")
    if not isinstance(setting, dict) or set(setting) != names:
        raise RunFileError(f"{path}: \"setting\" must have exactly the keys {sorted(names)}")
    agent, method = body.get("agent"), body.get("method")
    if not isinstance(agent, str) or not isinstance(method, str):
        raise RunFileError(f"{path}: \"agent\" and \"method\" must be strings")
    return RunManifest(agent, SettingArgs(**setting), method)


def check_resume(directory: Path, manifest: RunManifest) -> None:
    """Refuse a ``--resume`` whose agent or setting differs from the stored run's
    (the method may change: a run can be continued by another query method)."""
    if not (directory / NAME).exists():
        write(directory, manifest)
        return
    stored = read(directory)
    if (stored.agent, stored.setting) != (manifest.agent, manifest.setting):
        raise RunFileError(
            f"--resume: {directory} holds a run made with {stored.describe()}; "
            f"got {manifest.describe()} (use the same agent and setting, or a new --out)"
        )
