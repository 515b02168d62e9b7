#!/usr/bin/python3
"""What synchronous replicas lose to step-time jitter alone, from one rank's per-step times.

Every step of a data-parallel run ends when the slower rank arrives at its last all-reduce, so
with step times that vary from step to step, a 2-rank step takes the larger of two draws even if
communication and memory cost nothing. This reads a trainer's CSV log of a 1-rank run written
with --log-interval 1 (its ms_per_step column), drops the warm-up steps, and prints the median
step, its spread, the median of the larger of two independent draws (resampled) and the
throughput ratio that bound allows: 2 x median / median(max of 2).

  build/examples/fmnist_cnn --compiler-opt --max-steps 200 --log-interval 1 --quiet \\
      --log-csv /tmp/cnn.csv && /usr/bin/python3 bench/sync_skew.py /tmp/cnn.csv
"""
import argparse
import csv
import random
import statistics


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("csv", help="a trainer's --log-csv file, logged every step")
    ap.add_argument("--skip", type=int, default=10, help="warm-up steps left out (10)")
    ap.add_argument("--ranks", type=int, default=2, help="ranks whose slowest sets a step (2)")
    args = ap.parse_args()
    with open(args.csv, newline="") as f:
        rows = [r for r in csv.DictReader(f) if r.get("kind") == "train"]
    steps = [int(r["step"]) for r in rows]
    if len(steps) > 1 and steps[1] - steps[0] != 1:
        raise SystemExit(f"{args.csv}: rows every {steps[1] - steps[0]} steps; "
                         "log with --log-interval 1")
    ms = [float(r["ms_per_step"]) for r in rows][args.skip:]
    if len(ms) < 20:
        raise SystemExit(f"{args.csv}: {len(ms)} steps after the first {args.skip}; need 20")
    rng = random.Random(1)
    draws = sorted(max(rng.choice(ms) for _ in range(args.ranks)) for _ in range(20000))
    med, slowest = statistics.median(ms), draws[len(draws) // 2]
    print(f"{len(ms)} steps: median {med:.3f} ms, standard deviation "
          f"{statistics.pstdev(ms):.3f} ms")
    print(f"median of the slowest of {args.ranks} draws: {slowest:.3f} ms "
          f"(+{slowest - med:.3f} ms, +{100 * (slowest / med - 1):.1f}%)")
    print(f"throughput bound of {args.ranks} ranks over 1: {args.ranks * med / slowest:.2f}x")


if __name__ == "__main__":
    main()
