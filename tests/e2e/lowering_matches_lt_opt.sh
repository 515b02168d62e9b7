#!/usr/bin/env bash
# A real training step and lt-opt run the same lowering: every graph a short lazy run of the MLP
# trainer prepares (LT_DUMP_DIR) is lowered again by `lt-opt --passes=pipeline` from its traced
# IR, and every stage's dump (graph after each pass, fusion plan, buffer plan) must be identical.
# Usage: lowering_matches_lt_opt.sh <fmnist_mlp> <lt-opt> <scratch dir>
set -euo pipefail
mlp=$1 opt=$2 work=$3
rm -rf "$work"
mkdir -p "$work/step" "$work/opt"
LT_DUMP_DIR="$work/step" LT_VERIFY=1 "$mlp" --compiler-opt --epochs 1 --train-limit 256 \
  --batch-size 64 > "$work/train.log"
graphs=0 files=0
for traced in "$work"/step/*.traced.ir; do
  key=$(basename "$traced" .traced.ir)
  key=${key#*-}
  "$opt" "$traced" --passes=pipeline --dump-dir "$work/opt" --dump-prefix "$key" > /dev/null
  for f in "$work/step/$key"-[0-9][0-9]-*; do
    other="$work/opt/$(basename "$f")"
    if ! cmp -s "$f" "$other"; then
      echo "FAIL: $(basename "$f") differs between the step and lt-opt"
      diff "$f" "$other" | head -20 || true
      exit 1
    fi
    files=$((files + 1))
  done
  # The step and lt-opt wrote the same set of stage files.
  n_step=$(ls "$work/step/$key"-[0-9][0-9]-* | wc -l)
  n_opt=$(ls "$work/opt/$key"-[0-9][0-9]-* | wc -l)
  [ "$n_step" -eq "$n_opt" ] || { echo "FAIL: $key: $n_step stage dumps vs $n_opt"; exit 1; }
  for stage in fuse buffer_plan; do
    ls "$work/step/$key"-[0-9][0-9]-$stage.txt > /dev/null
  done
  graphs=$((graphs + 1))
done
[ "$graphs" -ge 2 ] || { echo "FAIL: only $graphs graphs dumped"; exit 1; }
echo "lowering matches lt-opt: $graphs graphs, $files stage dumps identical"
