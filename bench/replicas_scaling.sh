#!/usr/bin/env bash
# Data-parallel scaling of the trainers: 2 ranks x 1 thread against 1 rank x 1 thread at the
# same per-rank batch (the global batch doubles), lazy and eager, from each run's summary line
# (median step time of the run). The host's noise moves single runs by 5-20%, so the 1-rank and
# 2-rank runs alternate LT_REPS times (default 3) and the fastest run of each is kept; speedup =
# 2 x (1-rank ms/step) / (2-rank ms/step), the throughput ratio. The last column gives the same
# ratio from the median run of each instead, which a slow stretch of the host in one run of three
# does not hide. Run on a quiet machine with at
# least 2 cores; docs/RESULTS.md has the figures. Two rows after the models give the host's own
# ceiling in the same window (bench/ceiling_bench.cpp): the same ratio for a fixed multiply-add
# loop per rank (the cores' speed when both are busy) and for a 32 MiB array sum (DRAM bandwidth).
# Each run lasts long enough (the MLP's 3000 steps, about a second) for its median to be a
# steady step: on a virtual machine whose other core idles, a lone rank's first fraction of a
# second can run at half speed (docs/BENCHMARKS.md), which would flatter the 2-rank ratio.
# LT_BASELINE_FLAGS="--mca NAME VALUE ...": each round also runs 2 ranks with these lt-launch flags
# added (a setting to compare against lt-launch's own), in a column of its own;
# LT_BASELINE_ENV="LT_X=v ...": the same with these variables set (e.g. LT_SHM_ALL_REDUCE=0).
# LT_TRAINER_FLAGS="...": added to every trainer run (e.g. --no-sync-batchnorm for the ResNet, to
# compare with PyTorch DDP, which bench/ddp_torch.py runs with each rank's own batch statistics).
#   bench/replicas_scaling.sh [build-dir (build)] [models (mlp cnn resnet)]
set -euo pipefail
build=${1:-build}
models=${2:-mlp cnn resnet}
launch=$build/tools/lt-launch
declare -A batch=([mlp]=64 [cnn]=64 [resnet]=128)
declare -A steps=([mlp]=3000 [cnn]=60 [resnet]=25)
source "$(dirname "$0")/trainer_runs.sh"
reps=${LT_REPS:-3}
read -r -a baseline <<<"${LT_BASELINE_FLAGS:-}"
read -r -a baseline_env <<<"${LT_BASELINE_ENV:-}"
read -r -a trainer_flags <<<"${LT_TRAINER_FLAGS:-}"
if [ ${#baseline[@]} -gt 0 ] || [ ${#baseline_env[@]} -gt 0 ]; then
  printf '| model | mode | per-rank batch | 1 rank ms/step | 2 ranks, %s: ms/step | throughput ' \
    "${baseline_env[*]} ${baseline[*]}"
  printf '| 2 ranks ms/step | throughput 2 ranks / 1 rank | of the medians |\n'
  printf '|---|---|---|---|---|---|---|---|---|\n'
else
  printf '| model | mode | per-rank batch | 1 rank ms/step | 2 ranks ms/step | throughput 2 ranks / 1 rank '
  printf '| of the medians |\n'
  printf '|---|---|---|---|---|---|---|\n'
fi
for m in $models; do
  prog=$build/examples/fmnist_$m
  b=${batch[$m]}
  for mode in lazy eager; do
    flags=(--max-steps "${steps[$m]}" --train-limit 20000 --test-limit 100 --quiet
           --log-interval 1000000 "${trainer_flags[@]}")
    [ "$mode" = lazy ] && flags+=(--compiler-opt)
    best1="" best2="" bestb="" all1=() all2=()
    for ((i = 0; i < reps; ++i)); do
      ms1=$("$launch" -n 1 -t 1 -- "$prog" "${flags[@]}" --batch-size "$b" | summary)
      if [ ${#baseline[@]} -gt 0 ] || [ ${#baseline_env[@]} -gt 0 ]; then
        msb=$(env "${baseline_env[@]}" "$launch" -n 2 -t 1 "${baseline[@]}" -- "$prog" \
          "${flags[@]}" --batch-size $((2 * b)) | summary)
        bestb=$(min "$bestb" "$msb")
      fi
      ms2=$("$launch" -n 2 -t 1 -- "$prog" "${flags[@]}" --batch-size $((2 * b)) | summary)
      best1=$(min "$best1" "$ms1") best2=$(min "$best2" "$ms2")
      all1+=("$ms1") all2+=("$ms2")
    done
    base=""
    [ -n "$bestb" ] &&
      base=$(printf '%s | %.2fx | ' "$bestb" "$(echo "2 * $best1 / $bestb" | bc -l)")
    printf '| %s | %s | %s | %s | %s%s | %.2fx | %.2fx |\n' "$m" "$mode" "$b" "$best1" "$base" \
      "$best2" "$(echo "2 * $best1 / $best2" | bc -l)" \
      "$(echo "2 * $(median "${all1[@]}") / $(median "${all2[@]}")" | bc -l)"
  done
done
for kind in fma stream; do
  best1="" best2="" all1=() all2=()
  for ((i = 0; i < reps; ++i)); do
    ms1=$("$launch" -n 1 -t 1 -- "$build/bench/lt_bench_ceiling" "$kind" | summary)
    ms2=$("$launch" -n 2 -t 1 -- "$build/bench/lt_bench_ceiling" "$kind" | summary)
    best1=$(min "$best1" "$ms1") best2=$(min "$best2" "$ms2")
    all1+=("$ms1") all2+=("$ms2")
  done
  skip=""  # the baseline's two columns, which the ceiling does not have
  [ ${#baseline[@]} -gt 0 ] || [ ${#baseline_env[@]} -gt 0 ] && skip=" | |"
  printf '| ceiling: %s | | | %s |%s %s | %.2fx | %.2fx |\n' "$kind" "$best1" "$skip" "$best2" \
    "$(echo "2 * $best1 / $best2" | bc -l)" \
    "$(echo "2 * $(median "${all1[@]}") / $(median "${all2[@]}")" | bc -l)"
done
