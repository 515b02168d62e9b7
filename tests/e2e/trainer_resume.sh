#!/usr/bin/env bash
# Resume is bit-exact through a trainer's command line: 40 steps in one run (saving at 20 and 40)
# and 20 steps + a new process resuming from step-20 to step 40 write step-40 checkpoints with
# identical tensors and metadata, read back by the independent reader (read_safetensors.py).
# Shuffling, warmup, weight decay and clipping are in play, epoch 1 ends between the two saves,
# and the trainer flags given add dropout or augmentation (a flag given twice: the last wins).
# Resuming with another --loss-scale is refused.
#   trainer_resume.sh <python3> <read_safetensors.py> <scratch dir> <trainer> [trainer flags...]
set -euo pipefail
py=$1 reader=$2 dir=$3 trainer=$4
shift 4
rm -rf "$dir"
mkdir -p "$dir"
common=(--train-limit 1600 --test-limit 200 --batch-size 64 --warmup-steps 5 --weight-decay 1e-4
        --clip-grad 5 --quiet "$@")
"$trainer" "${common[@]}" --max-steps 40 --save-every 20 --save-dir "$dir/straight" \
  >"$dir/straight.log"
"$trainer" "${common[@]}" --max-steps 40 --save-dir "$dir/resumed" \
  --resume "$dir/straight/step-20.safetensors" >"$dir/resumed.log"
grep -q "resumed from $dir/straight/step-20.safetensors at step 20" "$dir/resumed.log"
"$py" "$reader" read "$dir/straight/step-40.safetensors" >"$dir/straight.json"
"$py" "$reader" read "$dir/resumed/step-40.safetensors" >"$dir/resumed.json"
if ! cmp -s "$dir/straight.json" "$dir/resumed.json"; then
  echo "step-40 checkpoints differ (straight vs resumed):"
  diff <(tr ',' '\n' <"$dir/straight.json") <(tr ',' '\n' <"$dir/resumed.json") | head -20
  exit 1
fi
# The check can fail: the checkpoint of step 20 holds other parameters than step 40's.
"$py" "$reader" read "$dir/straight/step-20.safetensors" >"$dir/step20.json"
if cmp -s "$dir/step20.json" "$dir/straight.json"; then
  echo "step-20 and step-40 checkpoints are identical: nothing was trained"
  exit 1
fi
# Another loss-scale setting than the checkpoint's is refused: the scaler's state is the run's.
set +e
"$trainer" "${common[@]}" --max-steps 40 --resume "$dir/straight/step-20.safetensors" \
  --loss-scale 512 >"$dir/scale.log" 2>&1
rc=$?
set -e
if [ "$rc" != 2 ] ||
   ! grep -q "resumed with --loss-scale 512 (the loss scaler's state is part of the run)" \
     "$dir/scale.log"; then
  echo "resuming with --loss-scale 512: exit status $rc"
  cat "$dir/scale.log"
  exit 1
fi
echo "step-40 checkpoints identical ($(wc -c <"$dir/straight.json") bytes of JSON)"
