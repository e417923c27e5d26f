"""The properties of a property-directed ``capver learn`` run: ``properties.props`` (the
properties as the user wrote them, copied into the run) and ``properties.json`` (the
targets, each property's tier now and the history of its tier changes with the
simulator steps they took), rewritten after every change so that a killed run keeps
them and ``--resume`` continues from them (:mod:`capver.engines.directed`)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from capver.core.properties import to_text
from capver.engines.directed import DEFAULT_WIDTH, PropertyTracker, Targets, TierChange
from capver.errors import RunFileError
from capver.io.atomic import replace_text

PROPS = "properties.props"
NAME = "properties.json"
FORMAT = "capver-properties"


@dataclass(frozen=True, slots=True)
class StoredProperties:
    """What ``properties.json`` holds."""

    targets: Targets
    directed: bool
    history: tuple[TierChange, ...]


def write(directory: Path, tracker: PropertyTracker, directed: bool) -> None:
    rows = []
    for prop in tracker.properties:
        st = tracker.status.get(prop.name)
        reached = tracker.reached(prop.name)
        rows.append(
            {
                "name": prop.name,
                "text": to_text(prop),
                "verdict": st.verdict if st else "",
                "tier": st.tier if st else "",
                "decided": bool(st and st.decided),
                "missing": st.missing if st else "",
                "steps": reached.steps if reached else None,
            }
        )
    doc = {
        "format": FORMAT,
        "delta": tracker.targets.delta,
        "epsilon": tracker.targets.epsilon,
        "width": tracker.targets.width,
        "directed": directed,
        "properties": rows,
        "history": [
            {"name": h.name, "verdict": h.verdict, "tier": h.tier, "steps": h.steps, "queries": h.queries}
            for h in tracker.history
        ],
    }
    replace_text(directory / NAME, json.dumps(doc, ensure_ascii=False, indent=1) + "\n")


def read(directory: Path) -> StoredProperties | None:
    """The stored targets and history (None when the run has no properties.json)."""
    path = directory / NAME
    if not path.exists():
        return None
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
        if doc.get("format") != FORMAT:
            raise ValueError(f"format is {doc.get('format')!r}, expected {FORMAT!r}")
        history = tuple(
            TierChange(str(h["name"]), str(h["verdict"]), str(h["tier"]), int(h["steps"]), int(h["queries"]))
            for h in doc["history"]
        )
        targets = Targets(float(doc["delta"]), float(doc["epsilon"]), float(doc.get("width", DEFAULT_WIDTH)))
        return StoredProperties(targets, bool(doc["directed"]), history)
    except (ValueError, KeyError, TypeError) as exc:
        raise RunFileError(f"{path}: not a properties file capver wrote ({exc})") from None
