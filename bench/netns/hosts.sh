#!/usr/bin/env bash
# Several MPI "hosts" on one machine: network namespaces joined by veth links
# through a bridge, each link rate-limited with tc (tbf), for tests and
# benchmarks of sagac train --partition across hosts. Addresses come from a
# private /24 that exists only inside these namespaces.
#
#   hosts.sh up N [RATE]   make hosts sagaH0..sagaH{N-1} (10.77.0.10+i) and
#                          the bridge namespace sagaBR; RATE e.g. 1gbit
#                          (default: unshaped); writes $STATE/hostfile
#   hosts.sh down          kill what runs inside them and delete them all
#   hosts.sh link H up|down   bring host H's link up or down (fault tests)
#
# SAGA_NETNS_PREFIX (default saga) names them: ${PREFIX}H0.., ${PREFIX}BR;
# another prefix keeps one user's hosts apart from another's (down removes
# only its own prefix's).
#
# mpirun runs inside sagaH0 (run.sh does it): `--mca plm_rsh_agent` is
# agent.sh, which enters the target host's namespace with its own UTS
# namespace and hostname (Open MPI's session folders are per hostname).
set -euo pipefail
STATE=${SAGA_NETNS_STATE:-/tmp/saga-netns}
NAME=${SAGA_NETNS_PREFIX:-saga}
PREFIX=10.77.0
BR=${NAME}BR

up() {
  local n=$1 rate=${2:-}
  down >/dev/null 2>&1 || true
  mkdir -p "$STATE"
  : > "$STATE/hostfile"
  ip netns add $BR
  ip -n $BR link add br0 type bridge
  ip -n $BR link set br0 up
  ip -n $BR link set lo up
  for ((i = 0; i < n; i++)); do
    local h=${NAME}H$i
    ip netns add $h
    ip link add eth0 netns $h type veth peer name p$i netns $BR
    ip -n $BR link set p$i master br0
    ip -n $BR link set p$i up
    ip -n $h addr add $PREFIX.$((10 + i))/24 dev eth0
    ip -n $h link set eth0 up
    ip -n $h link set lo up
    if [ -n "$rate" ]; then
      tc -n $h qdisc replace dev eth0 root tbf rate "$rate" burst 512kb latency 100ms
      tc -n $BR qdisc replace dev p$i root tbf rate "$rate" burst 512kb latency 100ms
    fi
    echo "$PREFIX.$((10 + i)) slots=1" >> "$STATE/hostfile"
    echo "$PREFIX.$((10 + i)) $h" >> "$STATE/names"
  done
  echo "$n hosts up (${rate:-unshaped}): $(tr '\n' ' ' < "$STATE/hostfile")"
}

down() {
  for ns in $(ip netns list | awk '{print $1}' | grep -E "^$NAME(H[0-9]+|BR)\$" || true); do
    # ip netns del does not kill the processes inside.
    for pid in $(ip netns pids "$ns" 2>/dev/null); do kill -9 "$pid" 2>/dev/null || true; done
    ip netns del "$ns"
  done
  rm -rf "$STATE"
}

link() {
  local i=${1#"$NAME"H}
  ip -n $BR link set p$i "$2"
}

case "${1:-}" in
  up) up "${2:?hosts}" "${3:-}" ;;
  down) down ;;
  link) link "${2:?host}" "${3:?up|down}" ;;
  *) echo "usage: $0 up N [RATE] | down | link H up|down" >&2; exit 2 ;;
esac
