#!/usr/bin/env bash
# Gradient bucket sizes on 2 ranks x 1 thread: the trainers' median step time for each
# (LT_BUCKET_FIRST_KB, LT_BUCKET_KB) setting, lazy (the step graph's buckets) and eager
# (dist::GradientReducer). "off" is LT_BUCKET_KB=0: one all-reduce per gradient, where the trace
# put it. The settings alternate within each repetition and the fastest of LT_REPS (default 3)
# runs is kept, so the host's drift hits every setting alike. docs/RESULTS.md has the figures.
#   bench/bucket_sizes.sh [build-dir (build)] [models (mlp cnn resnet)]
set -euo pipefail
build=${1:-build}
models=${2:-mlp cnn resnet}
launch=$build/tools/lt-launch
declare -A batch=([mlp]=128 [cnn]=128 [resnet]=256)
declare -A steps=([mlp]=400 [cnn]=60 [resnet]=25)
settings=("off:256:0" "64/64:64:64" "64/256:64:256" "256/1024:256:1024" "1024/4096:1024:4096")
source "$(dirname "$0")/trainer_runs.sh"
reps=${LT_REPS:-3}
header='| model | mode | global batch |'
for s in "${settings[@]}"; do header+=" ${s%%:*} KiB ms/step |"; done
echo "$header"
echo "|---|---|---|$(printf -- '---|%.0s' "${settings[@]}")"
for m in $models; do
  prog=$build/examples/fmnist_$m
  for mode in lazy eager; do
    flags=(--max-steps "${steps[$m]}" --train-limit 20000 --test-limit 100 --quiet
           --log-interval 1000000 --batch-size "${batch[$m]}")
    [ "$mode" = lazy ] && flags+=(--compiler-opt)
    declare -A best=()
    for ((i = 0; i < reps; ++i)); do
      for s in "${settings[@]}"; do
        IFS=: read -r name first rest <<<"$s"
        ms=$(LT_BUCKET_FIRST_KB=$first LT_BUCKET_KB=$rest "$launch" -n 2 -t 1 -- "$prog" \
             "${flags[@]}" | summary)
        best[$name]=$(min "${best[$name]:-}" "$ms")
      done
    done
    row="| $m | $mode | ${batch[$m]} |"
    for s in "${settings[@]}"; do row+=" ${best[${s%%:*}]} |"; done
    echo "$row"
    unset best
  done
done
