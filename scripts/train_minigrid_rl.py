"""Train the tabular RL agent of the MiniGrid experiment (section 4.2) and write the
policy file that capver ships (``capver/data/minigrid/rl_policy.json``).

Training is SMDP Q-learning over options in the real MiniGrid environment, on the
skewed layout distribution ``TRAINING_LAYOUTS`` (keys only in nw/sw, usually behind a
closed door) that gives the agent its "superstitious" habits.  Everything random is
drawn from one ``numpy.random.Generator`` seeded by ``--seed``, so a run is
reproducible bit for bit.

    python scripts/train_minigrid_rl.py --seed 0 --episodes 60000
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np

from capver.agents.minigrid_agents import (
    TrainingConfig,
    default_policy_path,
    train_q_policy,
)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    defaults = TrainingConfig()
    parser.add_argument("--seed", type=int, default=0, help="seed of the training generator (default 0)")
    parser.add_argument("--episodes", type=int, default=defaults.episodes, help=f"default {defaults.episodes}")
    parser.add_argument("--room-size", type=int, default=defaults.room_size, help="interior width of a room")
    parser.add_argument("--out", type=Path, default=default_policy_path(), help="policy file to write")
    args = parser.parse_args(argv)
    if args.episodes < 1:
        parser.error(f"argument --episodes: expected a positive integer, got {args.episodes}")
    config = TrainingConfig(episodes=args.episodes, room_size=args.room_size)
    policy, stats = train_q_policy(np.random.default_rng(args.seed), config)
    policy = replace(policy, meta={**policy.meta, "seed": args.seed})
    args.out.parent.mkdir(parents=True, exist_ok=True)
    policy.save(args.out)
    print(f"episodes           {stats.episodes}")
    print(f"primitive steps    {stats.primitive_steps}")
    print(f"abstract states    {stats.states} ({len(policy.q)} stored)")
    print(f"training time      {stats.seconds:.1f} s")
    print(f"success (last {stats.window} episodes, ε-greedy): {stats.success_rate:.3f}")
    for intent, rate in stats.per_intent_success.items():
        print(f"  {intent:22s} {rate:.3f}")
    print(f"wrote {args.out} ({args.out.stat().st_size} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
