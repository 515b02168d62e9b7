#!/usr/bin/env bash
# fmnist_resnet on 2 ranks: with SyncBatchNorm (the default) the first traced step sums batch
# statistics across the ranks (all_reduce {reduce=sum}) besides averaging the gradients
# ({reduce=mean}); with --no-sync-batchnorm it averages the gradients alone, the same number.
#   sync_batchnorm_flag.sh <scratch dir> <lt-launch> <fmnist_resnet>
set -euo pipefail
dir=$1 launch=$2 trainer=$3
rm -rf "$dir"
mkdir -p "$dir"
count() {  # all-reduces of one kind in the first traced step of rank 0
  grep -c "= all_reduce(.*{reduce=$2}" "$(ls "$1"/rank0/0001-*.traced.ir)" || true
}
for sync in --sync-batchnorm --no-sync-batchnorm; do
  LT_DUMP_DIR="$dir/$sync" "$launch" -n 2 -t 1 --oversubscribe -- "$trainer" --compiler-opt \
    --max-steps 1 --train-limit 64 --test-limit 16 --batch-size 16 --quiet "$sync" \
    >"$dir/$sync.txt"
done
mean_sync=$(count "$dir/--sync-batchnorm" mean) sum_sync=$(count "$dir/--sync-batchnorm" sum)
mean_own=$(count "$dir/--no-sync-batchnorm" mean) sum_own=$(count "$dir/--no-sync-batchnorm" sum)
echo "sync: $mean_sync gradient all-reduces, $sum_sync of statistics; own: $mean_own, $sum_own"
[ "$mean_sync" -gt 0 ] && [ "$sum_sync" -gt 0 ] && [ "$mean_own" = "$mean_sync" ] &&
  [ "$sum_own" = 0 ] || exit 1
echo "sync_batchnorm_flag ok"
