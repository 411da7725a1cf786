#!/usr/bin/env bash
# Open MPI's launch agent for the namespaced hosts (hosts.sh): called as
# `agent.sh [options] HOST command...` like ssh; runs the command inside
# HOST's namespace, in its own UTS namespace named after it.
STATE=${SAGA_NETNS_STATE:-/tmp/saga-netns}
while [[ "${1:-}" == -* ]]; do shift; done
host=$1; shift
ns=$(awk -v h="$host" '$1 == h || $2 == h {print $2}' "$STATE/names")
[ -n "$ns" ] || { echo "agent.sh: unknown host $host" >&2; exit 1; }
exec ip netns exec "$ns" unshare --uts sh -c "hostname $ns && exec $*"
