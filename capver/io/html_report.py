"""One self-contained HTML page for a ``capver learn`` run (``capver report``).

:func:`render` turns what a run directory holds — the manifest, the pessimistic
model h∧, the learning curve, and, when present, the z3 certificate and property
verdicts — into a single HTML string.  The page needs nothing but a browser: the CSS
is inline, the learning curve is inline SVG drawn here (no image file, no script, no
CDN), and the run's files are reached by relative links, so the page can be opened
from disk, copied with its run directory, or attached to an issue.

Every piece of text that comes from a file (capability and atom names, JSON keys
and values, the manifest) goes through :func:`html.escape`: names in the DSL may be
quoted strings holding ``<`` or ``&``.

This module does no I/O; :mod:`capver.commands.report` reads the files and passes
:class:`ReportInputs`.
"""

from __future__ import annotations

import html
import json
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from fractions import Fraction

from capver.core.state import Capability
from capver.engines.verification.verdict import VerdictRecord
from capver.errors import RunFileError
from capver.io import verdicts_file
from capver.io.dsl.conditions import condition_text
from capver.io.run_file import RunManifest
from capver.model.capability_model import (
    CapabilityModel,
    CompoundModel,
    IntentSuccess,
    Rule,
    SuccessCase,
    intent_success,
)

CONDITION_CHARS = 140
"""Conditions longer than this are cut, with the whole text in a "show all" element:
h∧'s conditions list observed states and run to thousands of characters."""

JSON_CHARS = 4000
"""A JSON value nested too deep for tables is shown as text, cut at this length."""

"""Case split of :func:`success` above which the success range is not computed (the
same bound as the DSL writer's comments)."""

METRICS: tuple[tuple[str, str, str], ...] = (
    # (curve.csv column, label, line colour); colours differ for colour-blind readers too.
    ("agreement", "agreement", "#1f6feb"),
    ("coverage_agreement", "coverage agreement", "#d97706"),
    ("exact_vd", "exact VD (lower is better)", "#a21caf"),
)


# =====================================================================================
# Inputs
# =====================================================================================


@dataclass(frozen=True, slots=True)
class CurvePoint:
    """One row of ``curve.csv``: a checkpoint of the run (``None``: not recorded)."""

    method: str
    steps: int
    queries: int | None = None
    transitions: int | None = None
    agreement: float | None = None
    coverage_agreement: float | None = None
    exact_vd: float | None = None


@dataclass(frozen=True, slots=True)
class JsonFile:
    """An optional JSON file of the run (certificate, verdicts): its parsed content,
    or why it could not be read.  The page shows an unreadable file as such rather
    than refusing to render: the rest of the report is still worth reading."""

    name: str
    data: object = None
    error: str | None = None


@dataclass(frozen=True, slots=True)
class ReportInputs:
    """Everything :func:`render` shows.  ``None`` or empty means the run does not
    have it (yet): the page says "not present" there."""

    manifest: RunManifest
    h_and: CompoundModel | None = None
    curve: Sequence[CurvePoint] = ()
    certificate: JsonFile | None = None
    verdicts: JsonFile | None = None
    # File name → relative URL from the page, or None when the run lacks the file.
    links: Mapping[str, str | None] = field(default_factory=dict)
    # report.txt's "what the learned model reveals" section (capver.io.explain.read_findings).
    findings: Sequence[tuple[str, Sequence[str]]] | None = None


def curve_points(rows: Iterable[Mapping[str, str]], source: str) -> list[CurvePoint]:
    """``curve.csv`` rows (as :func:`capver.io.curves.read_curves` returns them)
    as typed points; a malformed value is a :class:`RunFileError` naming ``source``
    and the row (header = row 1), since a silently skipped row would draw a wrong
    curve."""

    def number(row: Mapping[str, str], key: str, line: int, kind: type[int | float]) -> float | None:
        text = (row.get(key) or "").strip()
        if not text:
            return None
        try:
            value = float(text)
        except ValueError:
            raise RunFileError(f"{source}: row {line}: {key} {text!r} is not a number") from None
        if not math.isfinite(value):
            raise RunFileError(f"{source}: row {line}: {key} {text!r} is not a finite number")
        if kind is int and value != int(value):
            raise RunFileError(f"{source}: row {line}: {key} {text!r} is not a whole number")
        return value

    points = []
    for line, row in enumerate(rows, 2):
        steps = number(row, "steps", line, int)
        if steps is None:
            raise RunFileError(f"{source}: row {line}: no steps; expected the curve.csv of capver learn")
        counts = [number(row, k, line, int) for k in ("queries", "transitions")]
        scores = [number(row, k, line, float) for k in ("agreement", "coverage_agreement", "exact_vd")]
        points.append(
            CurvePoint(
                str(row.get("method") or ""),
                int(steps),
                *(None if c is None else int(c) for c in counts),
                *scores,
            )
        )
    return points


# =====================================================================================
# Success probability of a rule
# =====================================================================================


def _note(s: IntentSuccess) -> str:
    return "" if s.case is SuccessCase.RANGE else s.case.value


def best_success(model: CompoundModel, cm: CapabilityModel) -> Fraction | None:
    """The highest success probability of any rule (None: no rule has one)."""
    highs = [s.high for r in cm.rules if (s := intent_success(cm.capability, r)).high is not None]
    return max(highs) if highs else None


# =====================================================================================
# Rendering helpers
# =====================================================================================


def _e(text: object) -> str:
    return html.escape(str(text), quote=True)


def _fraction(p: Fraction) -> str:
    return str(p.numerator) if p.denominator == 1 else f"{p.numerator}/{p.denominator}"


def _percent(p: Fraction | float) -> str:
    return f"{float(p):.0%}"


def _number(value: float | None, digits: int = 3) -> str:
    if value is None:
        return "—"
    if isinstance(value, int):
        return f"{value:,}"
    return f"{value:.{digits}f}"


def _intent_words(cap: Capability) -> str:
    return " and ".join(str(x.atom) if x.positive else f"not {x.atom}" for x in cap.intent) or "(none)"


def _anchor(index: int) -> str:
    # Capability names may hold any character; ids are made from positions instead.
    return f"cap-{index}"


def _bar(low: Fraction | None, high: Fraction | None) -> str:
    """A small horizontal bar: solid up to ``low``, hatched up to ``high``."""
    if low is None or high is None:
        return ""
    lo, hi = float(low) * 100, float(high) * 100
    return (
        f'<span class="bar" aria-hidden="true"><span class="lo" style="width:{lo:.1f}%"></span>'
        f'<span class="hi" style="left:{lo:.1f}%;width:{hi - lo:.1f}%"></span></span>'
    )


def _success_cell(s: IntentSuccess) -> str:
    if s.low is None or s.high is None:
        return f'<span class="muted">{_e(_note(s))}</span>'
    if s.low == s.high:
        words, extra = f"{_fraction(s.low)} ({_percent(s.low)})", _note(s)
    else:
        words = f"{_fraction(s.low)} to {_fraction(s.high)} ({_percent(s.low)}–{_percent(s.high)})"
        extra = "; ".join(x for x in ("depends on the state", _note(s)) if x)
    note = f'<div class="muted">{_e(extra)}</div>' if extra else ""
    return f'{_bar(s.low, s.high)}<span class="prob">{_e(words)}</span>{note}'


def _condition_cell(text: str) -> str:
    if len(text) <= CONDITION_CHARS:
        return f"<code>{_e(text)}</code>"
    short = text[:CONDITION_CHARS].rstrip() + "…"
    return (
        f"<code>{_e(short)}</code>"
        f'<details><summary>show all ({len(text):,} characters)</summary><code class="full">{_e(text)}</code>'
        "</details>"
    )


def _effect_words(model: CompoundModel, rule: Rule) -> str:
    items = []
    for p, eta in rule.effects:
        what = eta.format(model.vocabulary) if (eta.add or eta.delete) else "nothing changes"
        items.append(f"<li><b>{_e(_fraction(p))}</b> <span class=muted>({_percent(p)})</span>: {_e(what)}</li>")
    return f'<ul class="effects">{"".join(items)}</ul>'


def _state_count(model: CompoundModel, rule: Rule) -> int:
    return model.ctx.bdd.count(rule.condition.bdd)


def _not_present(what: str) -> str:
    return f'<p class="absent">{_e(what)}: not present</p>'


# =====================================================================================
# Sections
# =====================================================================================


def _setting_section(m: RunManifest) -> str:
    rows = [
        ("agent", m.agent),
        ("domain", m.setting.domain),
        ("problem", m.setting.problem),
        ("method", m.method),
        ("budget", m.budget.describe()),
    ]
    rest = {k: v for k, v in asdict(m.setting).items() if k not in ("domain", "problem")}
    rows += [
        (k.replace("_", " "), "inf" if v is None and k == "theta" else ("—" if v in (None, "") else v))
        for k, v in rest.items()
    ]
    # A grid of short pairs rather than a tall two-column table: the setting is
    # context, and the page's first screen should also reach the numbers and curve.
    body = "".join(f"<div><dt>{_e(k)}</dt><dd>{_e(v)}</dd></div>" for k, v in rows)
    return f'<section><h2>Setting</h2><dl class="setting">{body}</dl></section>'


def _summary_section(curve: Sequence[CurvePoint]) -> str:
    if not curve:
        return f"<section class=summary><h2>Summary</h2>{_not_present('curve.csv')}</section>"
    last = curve[-1]
    cards = [
        ("simulator steps", _number(last.steps)),
        ("queries", _number(last.queries)),
        ("transitions", _number(last.transitions)),
        ("agreement", _number(last.agreement)),
        ("coverage agreement", _number(last.coverage_agreement)),
    ]
    if last.exact_vd is not None:
        cards.append(("exact VD", _number(last.exact_vd)))
    body = "".join(
        f'<div class="card"><div class="value">{_e(v)}</div><div class="label">{_e(k)}</div></div>' for k, v in cards
    )
    return (
        f'<section class="summary"><h2>Summary</h2><p class="muted">At the last checkpoint of curve.csv '
        f"({len(curve)} checkpoint{'s' if len(curve) != 1 else ''}).</p><div class=cards>{body}</div></section>"
    )


def _ticks(top: float) -> list[float]:
    """Round tick values 0..top, at most about six of them."""
    if top <= 0:
        return [0.0]
    raw = top / 5
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw)
    return [i * step for i in range(int(top / step + 1e-9) + 1)]


def curve_svg(curve: Sequence[CurvePoint], width: int = 660, height: int = 300) -> str:
    """The learning curve as inline SVG: each recorded metric against simulator steps,
    one line each, with a hover title on every checkpoint."""
    left, right, top, bottom = 56, 16, 16, 72
    pw, ph = width - left - right, height - top - bottom
    max_steps = max((p.steps for p in curve), default=0)
    xmax = float(max_steps) if max_steps > 0 else 1.0

    def x(steps: float) -> float:
        return left + pw * steps / xmax

    def y(v: float) -> float:
        return top + ph * (1 - min(max(v, 0.0), 1.0))

    parts = [
        (
            f'<svg class="curve" role="img" viewBox="0 0 {width} {height}" width="{width}" height="{height}" '
            'xmlns="http://www.w3.org/2000/svg"><title>learning curve: model agreement against simulator steps'
            "</title>"
        )
    ]
    for v in (0, 0.25, 0.5, 0.75, 1):
        parts.append(
            f'<line class="grid" x1="{left}" x2="{left + pw}" y1="{y(v):.1f}" y2="{y(v):.1f}"/>'
            f'<text class="tick" x="{left - 8}" y="{y(v) + 4:.1f}" text-anchor="end">{v:g}</text>'
        )
    for t in _ticks(xmax) if max_steps > 0 else [0.0]:
        parts.append(
            f'<line class="grid" x1="{x(t):.1f}" x2="{x(t):.1f}" y1="{top}" y2="{top + ph}"/>'
            f'<text class="tick" x="{x(t):.1f}" y="{top + ph + 18}" text-anchor="middle">{t:,.0f}</text>'
        )
    parts.append(f'<rect class="frame" x="{left}" y="{top}" width="{pw}" height="{ph}"/>')
    parts.append(
        f'<text class="axis" x="{left + pw / 2:.1f}" y="{top + ph + 38}" text-anchor="middle">simulator steps</text>'
    )
    legend_x = left
    for key, label, colour in METRICS:
        pts = [(p.steps, v, p) for p in curve if (v := getattr(p, key)) is not None]
        if not pts:
            continue
        coords = " ".join(f"{x(s):.1f},{y(v):.1f}" for s, v, _ in pts)
        parts.append(f'<polyline fill="none" stroke="{colour}" stroke-width="2.5" points="{coords}"/>')
        for s, v, p in pts:
            tip = f"{label} {v:.3f} at {s:,} steps, {p.queries if p.queries is not None else '?'} queries"
            parts.append(
                f'<circle cx="{x(s):.1f}" cy="{y(v):.1f}" r="3.5" fill="{colour}"><title>{_e(tip)}</title></circle>'
            )
        ly = height - 12
        parts.append(
            f'<line x1="{legend_x}" x2="{legend_x + 22}" y1="{ly - 4}" y2="{ly - 4}" stroke="{colour}" '
            f'stroke-width="3"/><text class="legend" x="{legend_x + 28}" y="{ly}">{_e(label)}</text>'
        )
        legend_x += 40 + 8 * len(label)
    parts.append("</svg>")
    return "".join(parts)


def _curve_section(curve: Sequence[CurvePoint]) -> str:
    if not curve:
        return f"<section class=curve><h2>Learning curve</h2>{_not_present('curve.csv')}</section>"
    methods = sorted({p.method for p in curve if p.method})
    note = (
        (
            f'<p class="muted">Method{"s" if len(methods) > 1 else ""}: {_e(", ".join(methods))}. '
            "Agreement of the learned model with an independent evaluation dataset; coverage agreement also counts "
            "the transitions the model does not cover.</p>"
        )
        if methods
        else ""
    )
    return f'<section class="curve"><h2>Learning curve</h2>{note}<div class="figure">{curve_svg(curve)}</div></section>'


_GOOD = frozenset(
    {
        "holds",
        "hold",
        "held",
        "verified",
        "valid",
        "pass",
        "passed",
        "ok",
        "proved",
        "proven",
        "true",
        "yes",
        "success",
        "succeeded",
        "certified",
    }
)
_BAD = frozenset(
    {"violated", "fails", "fail", "failed", "false", "invalid", "refuted", "counterexample", "no", "error", "unsound"}
)
_STATUS_KEYS = ("status", "verdict", "result", "holds", "valid", "verified", "ok")


def _verdict_badge(value: object) -> str:
    """A coloured word for a verdict-like value (green, red, or grey for unknown)."""
    word = ("true" if value else "false") if isinstance(value, bool) else str(value)
    tone = "good" if word.lower() in _GOOD else "bad" if word.lower() in _BAD else "neutral"
    return f'<span class="badge {tone}">{_e(word)}</span>'


def _json_html(value: object, depth: int = 0) -> str:
    """JSON of unknown shape as nested tables: objects as key/value rows, lists of
    objects as one table with a column per key; deeper nesting as cut text.  Used for
    certificate.json, and for a verdicts.json capver did not write (the one capver
    verify saves has its own table, :func:`_verdicts_block`), so nothing here assumes
    a key beyond the verdict-looking ones that get a coloured badge."""
    if isinstance(value, bool) or value is None:
        return _verdict_badge(value) if isinstance(value, bool) else '<span class="muted">null</span>'
    if isinstance(value, int | float):
        return _e(value)
    if isinstance(value, str):
        return _verdict_badge(value) if value.lower() in _GOOD | _BAD else _e(value)
    if depth >= 3:
        text = json.dumps(value, ensure_ascii=False, sort_keys=True)
        if len(text) > JSON_CHARS:
            text = text[:JSON_CHARS] + f"… ({len(text):,} characters)"
        return f"<code>{_e(text)}</code>"
    if isinstance(value, dict):
        if not value:
            return '<span class="muted">(empty)</span>'
        rows = "".join(f"<tr><th>{_e(k)}</th><td>{_json_html(v, depth + 1)}</td></tr>" for k, v in value.items())
        return f'<table class="kv">{rows}</table>'
    if isinstance(value, list):
        if not value:
            return '<span class="muted">(none)</span>'
        if all(isinstance(v, dict) for v in value):
            keys: list[str] = []
            for v in value:
                keys += [k for k in v if k not in keys]
            head = "".join(f"<th>{_e(k)}</th>" for k in keys)
            body = "".join(
                "<tr>"
                + "".join(f"<td>{_json_html(v.get(k), depth + 1) if k in v else ''}</td>" for k in keys)
                + "</tr>"
                for v in value
            )
            return f'<table class="grid"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'
        return "<ul>" + "".join(f"<li>{_json_html(v, depth + 1)}</li>" for v in value) + "</ul>"
    return _e(value)


def _json_file_block(title: str, doc: JsonFile | None, missing_name: str) -> str:
    if doc is None:
        return f"<h3>{_e(title)}</h3>{_not_present(missing_name)}"
    if doc.error is not None:
        return f'<h3>{_e(title)}</h3><p class="absent">{_e(doc.name)}: present but unreadable ({_e(doc.error)})</p>'
    status = ""
    if isinstance(doc.data, dict):
        for key in _STATUS_KEYS:
            if key in doc.data and isinstance(doc.data[key], str | bool):
                status = f"<p>{_e(key)}: {_verdict_badge(doc.data[key])}</p>"
                break
    return f"<h3>{_e(title)} <span class=muted>({_e(doc.name)})</span></h3>{status}{_json_html(doc.data)}"


def _json_number(value: object) -> str:
    return f"{value:.6g}" if isinstance(value, float) else str(value)


def _verdict_values(r: VerdictRecord) -> list[str]:
    """The numbers behind one verdict of ``verdicts.json``, as short phrases: the
    value of a quantitative query (its exact fraction when there is one), the
    agent's bounds at 1 − δ, the verdicts on h∧ and h∨, the model, the state count,
    the replays.  The file is read, so every field is checked for its type."""
    out: list[str] = []
    if isinstance(r.get("quantity"), str):
        exact, value = r.get("exact"), r.get("value")
        if r.get("infinite") is True:
            shown = "∞"
        elif isinstance(exact, str) and "/" in exact:
            shown = f"{exact} ≈ {_json_number(value)}"
        else:
            shown = exact if isinstance(exact, str) else _json_number(value)
        if value is not None or exact is not None or r.get("infinite") is True:
            out.append(f"{r.get('quantity')} = {shown}")
    threshold = r.get("threshold")
    if isinstance(threshold, dict):
        out.append(f"threshold {threshold.get('comparison')} {_json_number(threshold.get('value'))}")
    bound = r.get("agent")
    if isinstance(bound, dict) and isinstance(bound.get("delta"), int | float):
        # JSON has no infinity: a null bound is ∞ (verdict.py writes it so).
        lower, upper = (
            f"{b:.4g}" if isinstance(b, int | float) else "∞" for b in (bound.get("lower"), bound.get("upper"))
        )
        out.append(
            f"the agent: {lower} ≤ {bound.get('quantity')} ≤ {upper} with probability "
            f"≥ {1 - bound['delta']:g} ({bound.get('scope', '?')} bound)"
        )
    low, high, level = r.get("lower"), r.get("upper"), r.get("delta")
    if (
        isinstance(r.get("scheduler"), str)
        and isinstance(low, int | float)
        and isinstance(high, int | float)
        and isinstance(level, int | float)
    ):
        out.append(
            f"under {r.get('scheduler')}: P in [{low:.4g}, {high:.4g}] with probability ≥ {1 - level:g} "
            f"after {r.get('runs')} runs with the agent"
        )
    abstraction = r.get("abstraction")
    if isinstance(abstraction, dict) and isinstance(abstraction.get("name"), str):
        refuted = abstraction.get("refuted")
        n = len(refuted) if isinstance(refuted, list) else 0
        rests = "resting on" if abstraction.get("used") is True else "asked under"
        out.append(
            f"{rests} the abstraction {abstraction['name']} ({abstraction.get('classes')} classes; "
            + (f"the data refute it in {n}" if n else "not refuted by the data")
            + ")"
        )
    if r.get("on_h_and") is not None or r.get("on_h_or") is not None:
        out.append(f"h∧: {r.get('on_h_and')}, h∨: {r.get('on_h_or')}")
    if isinstance(r.get("model"), str):
        out.append(f"on {r.get('model')}")
    if isinstance(r.get("reachable"), int):
        out.append(f"{r.get('reachable'):,} reachable states")
    replay = r.get("replay")
    if isinstance(replay, dict):
        out.append(f"goal reached in {replay.get('reached_goal')} of {replay.get('runs')} replays on the agent")
    return out


def _witness_html(witness: object, label: str) -> str:
    """A witness of ``verdicts.json`` as capver verify prints it: the initial state,
    then per step the atoms added and removed, inside a closed "show" element."""
    if not isinstance(witness, dict) or not isinstance(witness.get("steps"), list):
        return f"<p><code>{_e(json.dumps(witness, ensure_ascii=False)[:JSON_CHARS])}</code></p>"
    steps = witness["steps"]
    initial = witness.get("initial")
    atoms = ", ".join(map(str, initial)) if isinstance(initial, list) else str(initial)
    items = []
    for step in steps:
        if not isinstance(step, dict):
            items.append(f"<li><code>{_e(step)}</code></li>")
            continue
        diff = [f"+{a}" for a in step.get("added") or ()] + [f"-{a}" for a in step.get("removed") or ()]
        items.append(
            f"<li>{_e(step.get('capability'))}: <code>{_e(' '.join(diff) if diff else '(no change)')}</code></li>"
        )
    loop = witness.get("loop")
    if isinstance(loop, int):
        back = "the initial state" if loop == 0 else f"the state after step {loop}"
        items.append(f'<li class="muted">then back to {_e(back)}, around that cycle forever</li>')
    n = len(steps)
    return (
        f"<details><summary>{_e(label)}: {n} step{'s' if n != 1 else ''}</summary>"
        f"<p>from <code>{{{_e(atoms)}}}</code></p><ol>{''.join(items)}</ol></details>"
    )


def _verdicts_block(doc: JsonFile | None) -> str:
    """The verdicts ``capver verify RUN --save`` wrote: one row per property with its
    text, verdict, reason and the values behind it.  Another file of that name is
    shown as any JSON file is."""
    title = "Property verdicts"
    if doc is None or doc.error is not None:
        return _json_file_block(title, doc, verdicts_file.NAME)
    try:
        rows = verdicts_file.records(doc.data, doc.name)
    except RunFileError:
        return _json_file_block(title, doc, verdicts_file.NAME)
    if not rows:
        return f'<h3>{_e(title)} <span class=muted>({_e(doc.name)})</span></h3><p class="muted">(no properties)</p>'
    body = []
    for r in rows:
        verdict = r.verdict
        badge = _verdict_badge(verdict) if verdict is not None else '<span class="muted">value only</span>'
        reason = [_e(r.reason)]
        if r.get("assumption"):
            reason.append(f"<br>assuming {_e(r.get('assumption'))}")
        query = r.get("decisive_query")
        if isinstance(query, dict):
            reason.append(
                f"<br>to decide it, execute {_e(query.get('capability'))} from "
                f"<code>{_e(query.get('state'))}</code> (never tried)"
            )
        if r.get("witness") is not None:
            label = "counterexample" if verdict in ("fails", "violated") else "witness"
            reason.append(_witness_html(r.get("witness"), label))
        values = "<br>".join(_e(v) for v in _verdict_values(r))
        name, text = r.name, r.text
        # The text names the property first (capver.core.properties.to_text); the name has its own column.
        text = text.removeprefix(f"{json.dumps(name, ensure_ascii=False)}: ")
        body.append(
            f"<tr><td>{_e(name)}</td><td><code>{_e(text)}</code></td>"
            f"<td>{badge}</td><td>{''.join(reason)}</td><td>{values}</td></tr>"
        )
    starts = {(str(r.get("init")), str(r.get("init_from"))) for r in rows if r.get("init") is not None}
    start = ""
    if len(starts) == 1:
        state, source = next(iter(starts))
        start = f'<p class="muted">Checked from <code>{_e(state)}</code> ({_e(source)}).</p>'
    head = "".join(f"<th>{h}</th>" for h in ("property", "text", "verdict", "reason", "values"))
    return (
        f"<h3>{_e(title)} <span class=muted>({_e(doc.name)})</span></h3>{start}"
        f'<table class="grid"><thead><tr>{head}</tr></thead><tbody>{"".join(body)}</tbody></table>'
    )


def _verification_section(inputs: ReportInputs) -> str:
    return (
        "<section><h2>Verification</h2>"
        + _json_file_block("Certificate", inputs.certificate, "certificate.json")
        + _verdicts_block(inputs.verdicts)
        + "</section>"
    )


def _findings_section(groups: Sequence[tuple[str, Sequence[str]]] | None) -> str:
    """Notable capabilities and limitations (the paper's E2), as report.txt words them."""
    if groups is None:
        return f"<section><h2>What the learned model reveals</h2>{_not_present('report.txt findings')}</section>"
    parts = ["<section><h2>What the learned model reveals</h2>"]
    for heading, items in groups:
        parts.append(f"<h3>{_e(heading)}</h3>")
        if items:
            parts.append("<ul>" + "".join(f"<li>{_e(x)}</li>" for x in items) + "</ul>")
    return "".join(parts) + "</section>"


def _capabilities_section(model: CompoundModel | None) -> str:
    if model is None:
        return f"<section><h2>Capabilities</h2>{_not_present('h_and.capm')}</section>"
    names = sorted(model)
    best = {n: best_success(model, model[n]) for n in names}
    achieving = sum(1 for b in best.values() if b is not None and b > 0)
    intro = (
        f"<p>{len(names)} capabilit{'y' if len(names) == 1 else 'ies'} assessed; {achieving} of them were "
        "observed to bring their intent about (a success probability above 0). Everything below is the pessimistic model h∧: it predicts only behaviour that was "
        "observed, so a rule applies only in states where the capability was tried. The success probability "
        "of a rule is the probability that one execution ends with the intent achieved, in the states where "
        "the rule applies and the intent does not hold yet.</p>"
    )
    rows = []
    for i, n in enumerate(names):
        cm = model[n]
        b = best[n]
        if not cm.rules:
            status = '<span class="badge neutral">never tried</span>'
        elif b is None:
            # Tried only where the intent already held (or cases too many to count).
            notes = {_note(intent_success(cm.capability, r)) for r in cm.rules}
            words = (
                "already held where tried" if notes == {SuccessCase.ALREADY_HOLDS.value} else " / ".join(sorted(notes))
            )
            status = f'<span class="badge neutral">{_e(words)}</span>'
        elif b > 0:
            # Observed on h∧, like report.txt's label: not a claim about untried states.
            status = '<span class="badge good">observed to achieve it</span>'
        else:
            status = '<span class="badge bad">never achieved</span>'
        states = sum(_state_count(model, r) for r in cm.rules)
        best_cell = (
            f"{_bar(b, b)}<span class=prob>{_e(_fraction(b))} ({_percent(b)})</span>"
            if b is not None
            else '<span class="muted">—</span>'
        )
        rows.append(
            f'<tr><td><a href="#{_anchor(i)}">{_e(n)}</a></td><td>{_e(_intent_words(cm.capability))}</td>'
            f"<td>{status}</td><td class=num>{len(cm.rules)}</td><td class=num>{states:,}</td>"
            f"<td>{best_cell}</td></tr>"
        )
    overview = (
        '<table class="grid overview" id="overview"><thead><tr><th>capability</th><th>intent</th><th>status</th>'
        "<th>rules</th><th>states tried</th><th>best success probability</th></tr></thead><tbody>"
        + "".join(rows)
        + "</tbody></table>"
    )
    details = [_capability_block(model, i, n) for i, n in enumerate(names)]
    return f"<section><h2>Capabilities</h2>{intro}{overview}{''.join(details)}</section>"


def _capability_block(model: CompoundModel, index: int, name: str) -> str:
    cm = model[name]
    head = (
        f'<h3 id="{_anchor(index)}">{_e(name)} <a class="up" href="#overview">↑ overview</a></h3>'
        f"<p>Intent: <b>{_e(_intent_words(cm.capability))}</b>. "
        f"{len(cm.rules)} rule{'s' if len(cm.rules) != 1 else ''}.</p>"
    )
    if not cm.rules:
        return f'<div class="capability">{head}<p class="muted">Never tried: the model predicts nothing.</p></div>'
    rows = []
    for k, r in enumerate(cm.rules, 1):
        n_states = _state_count(model, r)
        rows.append(
            f"<tr><td class=num>{k}</td><td>{_condition_cell(condition_text(r.condition))}"
            f'<div class="muted">applies in {n_states:,} state{"s" if n_states != 1 else ""}</div></td>'
            f"<td>{_effect_words(model, r)}</td><td>{_success_cell(intent_success(cm.capability, r))}</td></tr>"
        )
    table = (
        '<table class="grid rules"><colgroup><col style="width:5%"><col style="width:44%">'
        '<col style="width:33%"><col style="width:18%"></colgroup><thead><tr><th>rule</th><th>when</th><th>outcomes</th>'
        "<th>success probability</th></tr></thead><tbody>" + "".join(rows) + "</tbody></table>"
    )
    return f'<div class="capability">{head}{table}</div>'


def _files_section(links: Mapping[str, str | None]) -> str:
    if not links:
        return ""
    items = []
    for name, href in links.items():
        if href is None:
            items.append(f'<li><span class="muted">{_e(name)}: not present</span></li>')
        else:
            items.append(f'<li><a href="{_e(href)}">{_e(name)}</a></li>')
    return f'<section><h2>Files</h2><ul class="files">{"".join(items)}</ul></section>'


_CSS = """
:root { color-scheme: light; --fg: #1d2330; --muted: #5d6675; --line: #d8dde6; --head: #f2f4f8; --accent: #1f6feb; }
* { box-sizing: border-box; }
body { margin: 0; font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif;
       color: var(--fg); background: #fafbfc; }
main { max-width: 1180px; margin: 0 auto; padding: 24px 28px 64px; }
header { background: #14213d; color: #fff; padding: 20px 28px; }
header h1 { margin: 0 auto; max-width: 1124px; font-size: 24px; font-weight: 600; }
header p { margin: 4px auto 0; max-width: 1124px; color: #c9d3e6; }
h2 { font-size: 20px; margin: 32px 0 10px; padding-bottom: 4px; border-bottom: 2px solid var(--line); }
h3 { font-size: 16px; margin: 24px 0 6px; }
section { margin-bottom: 8px; }
table { border-collapse: collapse; background: #fff; }
table.kv th { text-align: left; font-weight: 600; padding: 4px 16px 4px 8px; color: var(--muted); vertical-align: top; }
table.kv td { padding: 4px 8px; }
table.kv tr { border-bottom: 1px solid var(--line); }
table.grid { width: 100%; border: 1px solid var(--line); }
table.grid th { background: var(--head); text-align: left; font-weight: 600; padding: 6px 10px;
                border-bottom: 1px solid var(--line); }
table.grid td { padding: 6px 10px; border-bottom: 1px solid var(--line); vertical-align: top; }
table.grid tbody tr:nth-child(even) { background: #f8f9fb; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
code { font: 12.5px/1.45 ui-monospace, "DejaVu Sans Mono", Menlo, Consolas, monospace; word-break: break-word; }
code.full { display: block; white-space: pre-wrap; margin-top: 4px; }
details summary { cursor: pointer; color: var(--accent); font-size: 13px; }
ul.effects { margin: 0; padding-left: 18px; }
ul.files { columns: 2; }
.muted { color: var(--muted); font-size: 13px; }
.absent { color: var(--muted); font-style: italic; }
.row { display: flex; flex-wrap: wrap; gap: 0 40px; align-items: flex-start; }
.row > section { flex: 0 1 auto; }
.row > section.curve { max-width: 700px; }
.row > section.summary { width: 340px; }
.cards { display: grid; grid-template-columns: repeat(2, minmax(150px, 1fr)); gap: 12px; }
.card { background: #fff; border: 1px solid var(--line); border-radius: 8px; padding: 10px 18px; min-width: 150px; }
.card .value { font-size: 24px; font-weight: 600; font-variant-numeric: tabular-nums; }
.card .label { color: var(--muted); font-size: 13px; }
.figure { background: #fff; border: 1px solid var(--line); border-radius: 8px; padding: 8px; display: inline-block; }
svg.curve { max-width: 100%; height: auto; font-family: inherit; }
svg .grid { stroke: #e3e7ee; stroke-width: 1; }
svg .frame { fill: none; stroke: #9aa3b2; }
svg .tick, svg .legend { font-size: 12px; fill: var(--fg); }
svg .axis { font-size: 13px; fill: var(--muted); }
.badge { display: inline-block; padding: 1px 8px; border-radius: 10px; font-size: 12.5px; font-weight: 600;
         white-space: nowrap; }
.badge.good { background: #dcf5e3; color: #135c2b; }
.badge.bad { background: #fde2e1; color: #8a1c17; }
.badge.neutral { background: #eceff4; color: #3d4656; }
.bar { position: relative; display: inline-block; width: 64px; height: 9px; margin-right: 8px; background: #e8ebf0;
       border-radius: 5px; overflow: hidden; vertical-align: middle; }
.bar .lo { position: absolute; left: 0; top: 0; bottom: 0; background: #2e9d55; }
.bar .hi { position: absolute; top: 0; bottom: 0; background: #9ad3ab; }
.capability { margin-top: 12px; }
.prob { white-space: nowrap; }
a.up { font-size: 12.5px; font-weight: 400; margin-left: 10px; text-decoration: none; }
dl.setting { display: grid; grid-template-columns: repeat(auto-fill, minmax(160px, 1fr)); gap: 8px 16px; margin: 0;
             background: #fff; border: 1px solid var(--line); border-radius: 8px; padding: 12px 16px; }
dl.setting dt { color: var(--muted); font-size: 12.5px; }
dl.setting dd { margin: 0; font-weight: 600; overflow-wrap: anywhere; }
a { color: var(--accent); }
"""


GENERATOR_META = '<meta name="generator" content="capver report">'
"""The mark of a page capver wrote, in its ``<head>``."""

# Pages written before the mark have this start and a title beginning "capver report: ".
_LEGACY_START = '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
_LEGACY_TITLE = "<title>capver report: "


def is_report_page(head: str) -> bool:
    """Whether ``head`` (the start of a file, a few KiB) is a page ``capver report``
    wrote: an HTML page whose ``<head>`` carries :data:`GENERATOR_META`, or a page
    from before the mark, with render's exact opening and title.  Anything else is
    someone else's file."""
    start = head[:4096]
    if not start.startswith("<!DOCTYPE html>"):
        return False
    if GENERATOR_META in start.split("</head>", 1)[0]:
        return True
    return start.startswith(_LEGACY_START) and _LEGACY_TITLE in start.split("</title>", 1)[0]


def render(inputs: ReportInputs) -> str:
    """The whole page as one HTML string (UTF-8, no external resource)."""
    m = inputs.manifest
    title = f"capver report: {m.agent} on {m.setting.domain}/{m.setting.problem}"
    subtitle = f"method {m.method}, budget {m.budget.describe()}"
    # The empty data: icon keeps the browser from requesting /favicon.ico (a console
    # error when the page is served over HTTP, a needless file lookup otherwise).
    return "".join(
        [
            '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">',
            '<meta name="viewport" content="width=device-width, initial-scale=1">',
            # The mark by which `capver report` recognises its own page and replaces it.
            GENERATOR_META,
            '<link rel="icon" href="data:,">',
            f"<title>{_e(title)}</title><style>{_CSS}</style></head><body>",
            f"<header><h1>{_e(title)}</h1><p>{_e(subtitle)}</p></header><main>",
            _setting_section(m),
            # Side by side on a wide screen (the first screen then shows the numbers and
            # the curve), stacked on a narrow one.
            '<div class="row">',
            _summary_section(inputs.curve),
            _curve_section(inputs.curve),
            "</div>",
            _verification_section(inputs),
            _findings_section(inputs.findings),
            _capabilities_section(inputs.h_and),
            _files_section(inputs.links),
            "</main></body></html>\n",
        ]
    )
