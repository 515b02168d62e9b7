#!/usr/bin/env bash
# A trainer's CSV log (--log-csv) from the command line: the exact header, a train row per
# --log-interval steps and at the end, an eval row per --eval-every steps and at the end, every
# row with 12 fields, numbers where they apply and empty fields where they do not.
#   trainer_csv.sh <scratch dir> <trainer> [trainer flags...]
set -euo pipefail
dir=$1 trainer=$2
shift 2
rm -rf "$dir"
mkdir -p "$dir"
"$trainer" --max-steps 12 --log-interval 5 --eval-every 6 --train-limit 640 --test-limit 100 \
  --batch-size 32 --quiet --log-csv "$dir/log.csv" "$@" >"$dir/out.txt"
header=$(head -1 "$dir/log.csv")
want='kind,step,epoch,loss,lr,samples_per_s,ms_per_step,data_wait_ms,peak_mb,eval_loss,eval_acc,eval_top5'
[ "$header" = "$want" ] || { echo "header: $header"; exit 1; }
# kind and step of every row, in order: train rows at 5, 10, 12 (the end); eval rows at 6, 12.
rows=$(tail -n +2 "$dir/log.csv" | cut -d, -f1,2 | tr '\n' ' ')
[ "$rows" = "train,5 eval,6 train,10 train,12 eval,12 " ] || { echo "rows: $rows"; exit 1; }
num='-?[0-9][0-9.e+-]*'
train="^train,[0-9]+,[0-9]+,$num,$num,$num,$num,$num,$num,,,\$"
eval="^eval,[0-9]+,[0-9]+,,,,,,$num,$num,$num,($num)?\$"
bad=$(tail -n +2 "$dir/log.csv" | grep -Ev "$train|$eval" || true)
[ -z "$bad" ] || { echo "malformed rows:"; echo "$bad"; exit 1; }
grep -q "^done: 12 steps" "$dir/out.txt" || { echo "no summary line"; cat "$dir/out.txt"; exit 1; }
echo "csv ok: $(($(wc -l <"$dir/log.csv") - 1)) rows"
