# Sourced by the trainer benchmarks (replicas_scaling.sh, bucket_sizes.sh).
summary() {  # ms/step of a run's "done:" line
  sed -n 's/^done: .* median \([0-9.]*\) ms\/step = .*/\1/p'
}
min() {  # the smaller of two numbers; the second when the first is empty
  if [ -z "$1" ]; then echo "$2"; else awk -v a="$1" -v b="$2" 'BEGIN { print (b + 0 < a + 0) ? b : a }'; fi
}
median() {  # the median of the arguments (the lower middle one of an even count)
  printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'
}
