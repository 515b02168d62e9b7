#!/usr/bin/env bash
# A trainer on 2 ranks (lt-launch) follows the same trainer on 1 rank with the same global
# batch: the CSV's train losses (averaged over the ranks) agree to 1e-4 and the evaluation's
# loss and accuracy (over the sharded test set) to 1e-4; only rank 0 prints and writes the log;
# a global batch that does not split over the ranks is refused with exit status 2; and 2 ranks
# resume from a checkpoint with the losses of the uninterrupted 2-rank run.
#   trainer_replicas.sh <scratch dir> <python3> <lt-launch> <trainer> [trainer flags...]
# REPLICAS_TOLERANCE (default 1e-4; losses) and REPLICAS_ACC_TOLERANCE (default the same;
# accuracy) widen the comparison for a model whose trajectory amplifies rounding differences
# (the ResNet: see tests/CMakeLists.txt).
set -euo pipefail
dir=$1 python=$2 launch=$3 trainer=$4
shift 4
rm -rf "$dir"
mkdir -p "$dir"
flags=(--max-steps 30 --log-interval 1 --eval-every 15 --train-limit 960 --test-limit 300
       --batch-size 32 --quiet "$@")
LT_NUM_THREADS=1 "$trainer" "${flags[@]}" --log-csv "$dir/one.csv" >"$dir/one.txt"
"$launch" -n 2 -t 1 --oversubscribe -- "$trainer" "${flags[@]}" --log-csv "$dir/two.csv" \
  --save-dir "$dir/ckpt" --save-every 10 >"$dir/two.txt"
tol=${REPLICAS_TOLERANCE:-1e-4}
"$python" - "$dir/one.csv" "$dir/two.csv" "$tol" "${REPLICAS_ACC_TOLERANCE:-$tol}" <<'PY'
import csv, sys
one, two = ([r for r in csv.DictReader(open(p))] for p in sys.argv[1:3])
tolerance = {"loss": float(sys.argv[3]), "eval_loss": float(sys.argv[3]),
             "eval_acc": float(sys.argv[4])}
assert [(r["kind"], r["step"]) for r in one] == [(r["kind"], r["step"]) for r in two], "rows"
for a, b in zip(one, two):
    for col in ("loss", "eval_loss", "eval_acc"):
        if a[col]:
            assert abs(float(a[col]) - float(b[col])) <= tolerance[col], (a["kind"], a["step"],
                                                                          col, a[col], b[col])
print(f"2 ranks follow 1 rank: {len(one)} rows")
PY
[ "$(grep -c '^done:' "$dir/two.txt")" = 1 ] || { echo "expected one summary line"; cat "$dir/two.txt"; exit 1; }
grep -q ", 2 ranks of 16 examples$" "$dir/two.txt" || { echo "no rank line"; cat "$dir/two.txt"; exit 1; }
# Resume the 2-rank run from its step-20 checkpoint: steps 21-30 as before.
"$launch" -n 2 -t 1 --oversubscribe -- "$trainer" "${flags[@]}" --log-csv "$dir/resumed.csv" \
  --resume "$dir/ckpt/step-20.safetensors" >"$dir/resumed.txt"
"$python" - "$dir/two.csv" "$dir/resumed.csv" <<'PY'
import csv, sys
two, resumed = ([r for r in csv.DictReader(open(p))] for p in sys.argv[1:3])
late = [r for r in two if int(r["step"]) > 20 and r["kind"] == "train"]
got = [r for r in resumed if r["kind"] == "train"]
assert [r["step"] for r in late] == [r["step"] for r in got], "resumed rows"
for a, b in zip(late, got):
    assert a["loss"] == b["loss"], (a["step"], a["loss"], b["loss"])
print(f"resumed on 2 ranks: {len(got)} steps as before")
PY
set +e
"$launch" -n 2 -t 1 --oversubscribe -- "$trainer" "${flags[@]}" --batch-size 33 >"$dir/bad.txt" 2>&1
rc=$?
set -e
[ "$rc" = 2 ] || { echo "--batch-size 33 on 2 ranks: exit status $rc"; cat "$dir/bad.txt"; exit 1; }
grep -q "error: --batch-size 33 does not split evenly over 2 ranks" "$dir/bad.txt" ||
  { cat "$dir/bad.txt"; exit 1; }
echo "replicas ok"
