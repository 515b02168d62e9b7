#!/usr/bin/env bash
# Simulates a two-host data-parallel job on one machine: two network namespaces (lt_host_a,
# lt_host_b) joined by a veth pair (10.77.0.1 and 10.77.0.2), mpirun started in the first,
# OpenMPI's remote launcher (plm_rsh_agent) pointed at `ip netns exec` instead of ssh, and all
# traffic over TCP between the two addresses. Runs a trainer through lt-launch --hosts and
# compares its evaluation with the same trainer on one rank. Each "host" has a disk cache of its
# own (the same path, /etc/lt-two-host-cache, bind-mounted by `ip netns exec` from
# /etc/netns/<host>/), starting empty, so the run also shows that rank 0 alone runs LLVM and the
# other host loads the objects rank 0 sent (LT_METRICS). Needs root (network namespaces); not
# part of CI. docs/DISTRIBUTED.md records the run.
#   scripts/two_host_sim.sh [build-dir (build)] [trainer (fmnist_mlp)] [extra trainer flags...]
set -euo pipefail
build=$(realpath "${1:-build}")
trainer=${2:-fmnist_mlp}
shift $(( $# > 2 ? 2 : $# ))
flags=(--max-steps 100 --train-limit 6400 --test-limit 500 --batch-size 64 --quiet --compiler-opt "$@")
cache=/etc/lt-two-host-cache
remove_namespaces() {  # their veth ends go with them
  ip netns del lt_host_a 2>/dev/null || true
  ip netns del lt_host_b 2>/dev/null || true
  rm -rf /etc/netns/lt_host_a /etc/netns/lt_host_b "$cache"
}
work=$(mktemp -d)
trap 'remove_namespaces; rm -rf "$work"' EXIT
remove_namespaces  # left by an interrupted earlier run
ip netns add lt_host_a
ip netns add lt_host_b
mkdir -p "$cache" /etc/netns/lt_host_a/lt-two-host-cache /etc/netns/lt_host_b/lt-two-host-cache
ip link add lt_veth_a type veth peer name lt_veth_b
ip link set lt_veth_a netns lt_host_a
ip link set lt_veth_b netns lt_host_b
ip -n lt_host_a addr add 10.77.0.1/24 dev lt_veth_a
ip -n lt_host_b addr add 10.77.0.2/24 dev lt_veth_b
for ns in lt_host_a lt_host_b; do
  ip -n "$ns" link set lo up
done
ip -n lt_host_a link set lt_veth_a up
ip -n lt_host_b link set lt_veth_b up
# OpenMPI runs its remote launcher as `agent [options] HOST COMMAND...`, like ssh.
cat >"$work/netns_rsh" <<'AGENT'
#!/usr/bin/env bash
while [ $# -gt 0 ] && [ "${1#-}" != "$1" ]; do shift; done  # ssh options, if any
host=$1
shift
case $host in
  10.77.0.1) ns=lt_host_a ;;
  10.77.0.2) ns=lt_host_b ;;
  *) echo "netns_rsh: unknown host $host" >&2; exit 255 ;;
esac
exec ip netns exec "$ns" /bin/sh -c "$*"
AGENT
chmod +x "$work/netns_rsh"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
echo "== 1 rank"
LT_NUM_THREADS=1 "$build/examples/$trainer" "${flags[@]}" | tee "$work/one.txt"
echo "== 2 hosts x 1 rank"
# --bind none: both "hosts" are this machine, where each would bind its rank to core 0.
LT_CACHE_DIR=$cache LT_METRICS=1 ip netns exec lt_host_a "$build/tools/lt-launch" \
  --hosts 10.77.0.1:1,10.77.0.2:1 -t 1 --bind none \
  --mca plm_rsh_agent "$work/netns_rsh" --mca btl tcp,self \
  --mca btl_tcp_if_include 10.77.0.0/24 --mca oob_tcp_if_include 10.77.0.0/24 \
  -- "$build/examples/$trainer" "${flags[@]}" 2> >(tee "$work/metrics.txt" >&2) \
  | tee "$work/two.txt"
# One metrics report per rank, in the order the ranks exit.
compiles=$(sed -n 's/^  counter llvm_compile *\([0-9]*\)$/\1/p' "$work/metrics.txt" | sort -n | tr '\n' ' ')
echo "llvm_compile per rank: $compiles"
echo "host a cache: $(ls /etc/netns/lt_host_a/lt-two-host-cache | wc -l) entries," \
  "host b cache: $(ls /etc/netns/lt_host_b/lt-two-host-cache | wc -l) entries"
read -r fewest most <<<"$compiles"
[ "${fewest:-}" = 0 ] && [ "${most:-0}" -gt 0 ] \
  || { echo "expected LLVM compiles on rank 0 only"; exit 1; }
one=$(grep '^eval' "$work/one.txt" | tail -1)
two=$(grep '^eval' "$work/two.txt" | tail -1)
echo "1 rank:  $one"
echo "2 hosts: $two"
[ "$one" = "$two" ] || { echo "the evaluations differ"; exit 1; }
echo "two-host run ok"
