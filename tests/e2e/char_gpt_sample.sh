#!/usr/bin/env bash
# char_gpt's report after a short run: the validation loss against the unigram entropy of the
# validation text (the ratio printed is loss / entropy, recomputed here from the two numbers),
# and a greedy and a temperature sample of the asked length. In lazy mode both samples run one
# compiled forward graph: the context is padded to its fixed length.
#   char_gpt_sample.sh <scratch dir> <char_gpt> [flags...]
set -euo pipefail
dir=$1 gpt=$2
shift 2
rm -rf "$dir"
mkdir -p "$dir"
"$gpt" --max-steps 30 --train-limit 320 --test-limit 40 --batch-size 16 --quiet --lr 3e-3 \
  --prompt "Q: " --sample-bytes 40 "$@" >"$dir/out.txt"
line=$(grep '^validation loss ' "$dir/out.txt") || { cat "$dir/out.txt"; exit 1; }
read -r loss entropy ratio < <(sed -E \
  's/^validation loss ([0-9.]+) nats\/byte .* = ([0-9.]+) x the unigram entropy ([0-9.]+) .*/\1 \3 \2/' \
  <<<"$line")
awk -v l="$loss" -v e="$entropy" -v r="$ratio" \
  'BEGIN { if (e < 2 || e > 4 || (l / e - r) > 0.001 || (r - l / e) > 0.001) exit 1 }' ||
  { echo "inconsistent: $line"; exit 1; }
# 30 steps at a high learning rate already beat a uniform guess over 256 bytes (5.545 nats).
awk -v l="$loss" 'BEGIN { exit !(l < 5.0) }' || { echo "not learning: $line"; exit 1; }
grep -q '^sample, greedy, after "Q: ":$' "$dir/out.txt"
grep -q '^sample, temperature 0.8, seed 0, after "Q: ":$' "$dir/out.txt"
if [[ " $* " == *" --compiler-opt "* ]]; then
  grep -q '^sampling: 1 graph prepared for 80 forward steps$' "$dir/out.txt" ||
    { grep '^sampling' "$dir/out.txt"; exit 1; }
fi
echo "ok: $line"
