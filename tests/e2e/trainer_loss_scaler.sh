#!/usr/bin/env bash
# What a trainer prints of its loss scaler (--amp fp16: a dynamic scale from 2^16), eager and
# lazy: each log line's scale and the steps skipped since the line before, and the summary's
# final scale and skipped total. The skips must add up to the total, the dynamic scale must be
# 2^16 halved once per skip (20 steps grow it never), and both modes must skip the same steps.
# (On the development host this run skips one step; the unit tests of GradScaler::found_inf
# inject their infs.)
#   trainer_loss_scaler.sh <scratch dir> <trainer>
set -euo pipefail
dir=$1 trainer=$2
rm -rf "$dir"
mkdir -p "$dir"
for mode in eager lazy; do
  flags=(--amp fp16 --max-steps 20 --log-interval 5 --train-limit 1280 --test-limit 100)
  [ "$mode" = lazy ] && flags+=(--compiler-opt)
  "$trainer" "${flags[@]}" >"$dir/$mode.txt"
  lines=$(grep -cE '^step .*  scale [0-9.e+]+  skipped [0-9]+$' "$dir/$mode.txt" || true)
  [ "$lines" = 4 ] || { echo "$mode: $lines log lines with the scale"; cat "$dir/$mode.txt"; exit 1; }
  sum=0
  for n in $(sed -nE 's/^step .*  skipped ([0-9]+)$/\1/p' "$dir/$mode.txt"); do sum=$((sum + n)); done
  summary=$(grep '^loss scaler: ' "$dir/$mode.txt") || { echo "$mode: no summary"; exit 1; }
  want="loss scaler: scale $((65536 >> sum)) at the end, $sum of 20 steps skipped"
  [ "$summary" = "$want" ] || { echo "$mode: '$summary', want '$want'"; exit 1; }
done
# Timing and memory differ between the modes: the lines are compared without them.
untimed() { grep -E '^step|^loss scaler' "$1" | sed -E 's/  [0-9]+ samples\/s  .* MB//'; }
diff <(untimed "$dir/eager.txt") <(untimed "$dir/lazy.txt") \
  || { echo "eager and lazy differ"; exit 1; }
echo "loss scaler ok: $(grep '^loss scaler' "$dir/lazy.txt")"
