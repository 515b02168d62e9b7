#!/usr/bin/env bash
# ZeRO in a trainer on 2 ranks: --zero 1 and --zero 2 follow plain data parallelism over 50
# steps (the CSV's losses within 1e-5); stage 2's step graph
# reduce-scatters the gradients and all-gathers the parameters instead of all-reducing the
# gradients; each rank reports its share of the optimizer state; and a stage-2 checkpoint
# resumes bit-exactly on 2 ranks with --zero 2, and on 1 rank without ZeRO as 1 rank follows 2
# (within REPLICAS_TOLERANCE, default 1e-4, as trainer_replicas.sh: one rank sums its batch in
# another order).
#   trainer_zero.sh <scratch dir> <python3> <lt-launch> <trainer> [trainer flags...]
set -euo pipefail
dir=$1 python=$2 launch=$3 trainer=$4
shift 4
rm -rf "$dir"
mkdir -p "$dir"
flags=(--max-steps 50 --log-interval 1 --eval-every 50 --train-limit 1600 --test-limit 100
       --batch-size 32 --compiler-opt --quiet "$@")
two() { "$launch" -n 2 -t 1 --oversubscribe -- "$trainer" "${flags[@]}" "$@"; }
two --log-csv "$dir/plain.csv" >"$dir/plain.txt"
two --zero 1 --log-csv "$dir/zero1.csv" >"$dir/zero1.txt"
LT_DUMP_DIR="$dir/dump" two --zero 2 --log-csv "$dir/zero2.csv" --save-dir "$dir/ckpt" \
  --save-every 30 >"$dir/zero2.txt"
for stage in 1 2; do
  grep -q "ZeRO stage $stage: this rank keeps .* MB of the optimizer state's .* MB" \
    "$dir/zero$stage.txt" ||
    { echo "no ZeRO line"; cat "$dir/zero$stage.txt"; exit 1; }
done
traced=$(ls "$dir"/dump/rank0/*.traced.ir | head -n 1)  # the first step
grep -q "= reduce_scatter(.*{reduce=mean, world=2}" "$traced" &&
  grep -q "= all_gather(.*{world=2}" "$traced" &&
  ! grep -q "= all_reduce(.*{reduce=mean}" "$traced" ||
  { echo "stage 2's step graph ($traced) does not reduce-scatter and all-gather alone"; exit 1; }
LT_NUM_THREADS=1 "$trainer" "${flags[@]}" --resume "$dir/ckpt/step-30.safetensors" \
  --log-csv "$dir/one.csv" >"$dir/one.txt"
two --zero 2 --resume "$dir/ckpt/step-30.safetensors" --log-csv "$dir/resumed.csv" \
  >"$dir/resumed.txt"
"$python" - "$dir" "${REPLICAS_TOLERANCE:-1e-4}" <<'PY'
import csv, sys
d, tol, replicas_tol = sys.argv[1], 1e-5, float(sys.argv[2])
rows = lambda name: [r for r in csv.DictReader(open(f"{d}/{name}.csv")) if r["kind"] == "train"]
plain = rows("plain")
for name in ("zero1", "zero2"):
    got = rows(name)
    assert [r["step"] for r in got] == [r["step"] for r in plain], name
    worst = max(abs(float(a["loss"]) - float(b["loss"])) for a, b in zip(got, plain))
    assert worst <= tol, (name, worst)
    print(f"{name} follows plain data parallelism over {len(got)} steps: {worst:.1e} at most")
late = [r for r in rows("zero2") if int(r["step"]) > 30]
for name, exact in (("resumed", True), ("one", False)):
    got = rows(name)
    assert [r["step"] for r in got] == [r["step"] for r in late], name
    for a, b in zip(got, late):
        if exact:
            assert a["loss"] == b["loss"], (name, a["step"], a["loss"], b["loss"])
        else:
            assert abs(float(a["loss"]) - float(b["loss"])) <= replicas_tol, (name, a["step"])
    print(f"{name}: {len(got)} steps from the stage-2 checkpoint as the stage-2 run")
PY
echo "zero ok"
