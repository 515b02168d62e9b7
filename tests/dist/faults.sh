#!/usr/bin/env bash
# A rank that dies ends the whole job: for each fault of tests/dist/dist_fault_worker.cpp (rank
# 1 killed by SIGKILL, throwing lt::Error, returning 3 early) the 2-rank job launched by
# lt-launch must exit non-zero within 15 s and leave no process behind.
# Usage: faults.sh LT_LAUNCH WORKER
set -u
launch=$1 worker=$2
tag="faults$$"
fail=0
for fault in kill throw exit; do
  start=$(date +%s%N)
  timeout 60 "$launch" -n 2 -t 1 --oversubscribe -- "$worker" --fail "$fault" --rank 1 \
    --step 5 --tag "$tag" > "fault_$fault.log" 2>&1
  rc=$?
  ms=$(( ($(date +%s%N) - start) / 1000000 ))
  sleep 1
  left=$(pgrep -f -- "--tag $tag" | wc -l)
  echo "$fault: exit status $rc after $ms ms, $left processes left"
  if [ "$rc" -eq 0 ] || [ "$rc" -eq 124 ] || [ "$ms" -gt 15000 ] || [ "$left" -ne 0 ]; then
    echo "FAIL: $fault must end the job non-zero within 15 s and leave nothing"
    cat "fault_$fault.log"
    pkill -9 -f -- "--tag $tag"
    fail=1
  fi
done
exit $fail
