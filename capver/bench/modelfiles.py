"""Benchmark: writing the learned models h∧ and h∨ in the shared
model-file form, and reading them back: time, size and equality.

One LAO* run of MCQS-E (default: Blocksworld, 2,000 simulator steps) learns h∧ and
h∨; each model is then written in the shared form (``capver.io.dsl.emit``: observed
states and each capability's tried states named once as ``(:derived ...)``
formulas) and, unless ``--no-before``, in the per-rule form capver wrote before
(``shared=False``: every condition printed from its own cover or its complement's).
For every file the table gives the seconds spent writing it (wall clock and CPU:
the machine may be shared), its size and line count, and, for the files read back
(``--read-back``), the seconds ``capver.io.dsl.read`` takes and whether the model
read is equal to the one written (z3 equivalence and the same distributions).
The target: writing h∧ and h∨ takes less than 10 % of the learning time.

Run: ``capver bench modelfiles [--quick] [--steps N] [--domain D] [--out DIR]``.
"""

from __future__ import annotations

import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from capver.bench.cli import BenchParser, summary
from capver.bench.timing import Timing, timed
from capver.commands.argtypes import non_negative, positive
from capver.core.setting_args import SettingArgs
from capver.engines.learning import LearnConfig, Learner
from capver.engines.mcqs import QUERY_METHODS
from capver.engines.verification import relations
from capver.io import dsl
from capver.model.capability_model import CompoundModel
from capver.settings import build_assessment

TARGET = 0.10
"""Writing h∧ and h∨ may take at most this share of the learning time."""
FORMS = {"shared": True, "per-rule": False}
READ_BACK = ("after", "both", "none")
QUICK: dict[str, object] = {"steps": 300}


@dataclass(frozen=True, slots=True)
class FileRow:
    model: str  # h_and / h_or
    form: str  # shared / per-rule
    write: Timing
    size: int
    lines: int
    read: Timing | None
    equal: bool | None


def learn(domain: str, method: str, steps: int, seed: int) -> tuple[CompoundModel, CompoundModel, Timing, str]:
    """h∧ and h∨ of one run, the learning time, and what the run did in words."""
    a = build_assessment("lao", SettingArgs(domain=domain, seed=seed), np.random.default_rng(seed))
    config = LearnConfig.from_options(
        method, executions=2, iterations=100, horizon=10, xi_cap=1e-5, patience=25, max_steps=steps
    )
    learner = Learner(a.ctx, a.setting, config, np.random.default_rng(seed), grow=a.grow)
    progress, t = timed(lambda: learner.run(None))
    rules = sum(len(m.rules) for m in learner.h_and.values())
    what = (
        f"{a.name} {method}, seed {seed}: {progress.steps} simulator steps, {progress.queries} queries, "
        f"{progress.unique_transitions} unique transitions, {len(learner.h_and)} capabilities, {rules} rules "
        f"({progress.stop_reason})"
    )
    return learner.h_and, learner.h_or, t, what


def write_file(h: CompoundModel, path: Path, model: str, form: str, read_back: bool) -> FileRow:
    _, w = timed(lambda: dsl.write(h, path, name=model, shared=FORMS[form]))
    text = path.read_text(encoding="utf-8")
    read = equal = None
    if read_back:
        parsed, read = timed(lambda: dsl.read(path, ctx=h.ctx).model)
        equal = relations.equivalent(h, parsed).holds and relations.same_distributions(h, parsed).holds
    return FileRow(model, form, w, len(text.encode("utf-8")), text.count("\n"), read, equal)


def _seconds(t: Timing | None) -> str:
    return "—" if t is None else f"{t.wall:.2f} ({t.cpu:.2f})"


def _size(n: int) -> str:
    return f"{n / 1e6:.2f} MB" if n >= 1e5 else f"{n / 1e3:.1f} kB"


def table(rows: Sequence[FileRow], learning: Timing) -> list[str]:
    lines = [
        "| file | form | write s, wall (CPU) | share of learning (CPU) | size | lines | read s, wall (CPU) | read = written |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        share = r.write.cpu / max(learning.cpu, 1e-9)
        equal = "—" if r.equal is None else ("yes (z3)" if r.equal else "NO")
        lines.append(
            f"| {r.model}.capm | {r.form} | {_seconds(r.write)} | {share:.1%} | {_size(r.size)} | "
            f"{r.lines:,} | {_seconds(r.read)} | {equal} |"
        )
    return lines


def build_parser() -> BenchParser:
    p = BenchParser("modelfiles", summary(__doc__))
    p.add_argument("--domain", default="blocks", help="bundled PDDLGym domain of the LAO* agent (default blocks)")
    p.add_argument("--method", choices=sorted(QUERY_METHODS), default="mcqs-e", help="query synthesis (default mcqs-e)")
    p.add_argument("--steps", type=positive, default=2000, help="simulator-step budget of the run (default 2000)")
    p.add_argument("--seed", type=non_negative, default=0, help="seed of the setting and of the learner (default 0)")
    p.add_argument(
        "--no-before",
        action="store_true",
        help="skip the older per-rule form, from before the shared form (minutes on long runs)",
    )
    p.add_argument(
        "--read-back",
        choices=READ_BACK,
        default="after",
        help="read back and compare the files of the shared form (after), of both forms, or none "
        "(reading a per-rule h∨ of a long run takes minutes); default after",
    )
    p.add_argument(
        "--out", type=Path, help="new or empty directory for the model files and table.md (default: a temporary one)"
    )
    p.add_quick(QUICK, "a smoke run: a 300-step run, both forms written and the shared one read back")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse(argv)
    if args.out is not None and args.out.exists() and (not args.out.is_dir() or any(args.out.iterdir())):
        parser.error(f"--out {args.out}: expected a new or empty directory")
    h_and, h_or, learning, what = learn(args.domain, args.method, args.steps, args.seed)
    print(f"learned {what} in {learning.wall:.1f} s ({learning.cpu:.1f} s CPU)", flush=True)
    forms = ["shared"] if args.no_before else ["per-rule", "shared"]
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) if args.out is None else args.out
        out.mkdir(parents=True, exist_ok=True)
        rows = []
        for form in forms:
            back = args.read_back == "both" or (args.read_back == "after" and form == "shared")
            for model, h in (("h_and", h_and), ("h_or", h_or)):
                suffix = "" if form == "shared" else ".per-rule"
                row = write_file(h, out / f"{model}{suffix}.capm", model, form, back)
                print(f"  {model} {form}: written in {_seconds(row.write)} s, {_size(row.size)}", flush=True)
                rows.append(row)
        shared = [r for r in rows if r.form == "shared"]
        cpu, wall = sum(r.write.cpu for r in shared), sum(r.write.wall for r in shared)
        ok = cpu <= TARGET * learning.cpu and all(r.equal is not False for r in rows)
        verdict = (
            f"Writing h∧ and h∨ (shared form): {cpu:.2f} s CPU = {cpu / max(learning.cpu, 1e-9):.1%} of "
            f"the learning CPU time ({wall / max(learning.wall, 1e-9):.1%} of its wall clock); "
            f"target < {TARGET:.0%}: {'met' if ok else 'NOT met'}."
        )
        lines = [
            f"Learned {what}: {learning.wall:.1f} s wall, {learning.cpu:.1f} s CPU.",
            "",
            *table(rows, learning),
            "",
            verdict,
        ]
        print("\n".join(lines))
        if args.out is not None:
            (out / "table.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
