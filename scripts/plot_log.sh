#!/usr/bin/env bash
# Draws a trainer's CSV log (--log-csv) as a PNG with gnuplot: training loss (per logged step)
# and evaluation loss against step on the left axis, evaluation accuracy on the right.
#   scripts/plot_log.sh FILE.csv [OUT.png (default: FILE.png)]
set -euo pipefail
if [ $# -lt 1 ] || [ $# -gt 2 ]; then
  echo "usage: $0 FILE.csv [OUT.png]" >&2
  exit 2
fi
csv=$1
out=${2:-${csv%.csv}.png}
if [ ! -r "$csv" ]; then
  echo "$0: cannot read $csv" >&2
  exit 2
fi
if ! head -1 "$csv" | grep -qx 'kind,step,epoch,loss,lr,samples_per_s,ms_per_step,data_wait_ms,peak_mb,eval_loss,eval_acc,eval_top5'; then
  echo "$0: $csv is not a trainer log (unexpected header)" >&2
  exit 2
fi
command -v gnuplot >/dev/null || { echo "$0: gnuplot is not installed" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# gnuplot reads whitespace-separated columns best: one file per row kind.
awk -F, 'NR > 1 && $1 == "train" { print $2, $4 }' "$csv" >"$tmp/train.dat"
awk -F, 'NR > 1 && $1 == "eval" { print $2, $10, $11 * 100 }' "$csv" >"$tmp/eval.dat"
plots="'$tmp/train.dat' using 1:2 with lines lw 2 title 'train loss'"
if [ -s "$tmp/eval.dat" ]; then
  plots+=", '$tmp/eval.dat' using 1:2 with linespoints lw 2 title 'eval loss'"
  plots+=", '$tmp/eval.dat' using 1:3 axes x1y2 with linespoints lw 2 title 'eval accuracy (%)'"
fi
# A single evaluation gives an empty accuracy range; gnuplot widens it and says so, harmlessly.
gnuplot 2> >(grep -v "^Warning: empty y2 range" >&2) <<GP
set terminal pngcairo size 900,540 noenhanced
set output '$out'
set title '$(basename "$csv")'
set xlabel 'step'
set ylabel 'loss (nats)'
set y2label 'accuracy (%)'
set y2tics
set ytics nomirror
set grid
set key outside bottom center horizontal
plot $plots
GP
echo "$out"
