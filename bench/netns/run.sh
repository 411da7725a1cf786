#!/usr/bin/env bash
# mpirun across the namespaced hosts (hosts.sh up N first), from sagaH0:
#   run.sh NP COMMAND...
# TCP between hosts on the private subnet, one rank per host, keepalives so
# that a host whose link goes down aborts the job in ~10 s instead of
# hanging it. SAGA_NETNS_PREFIX: as hosts.sh's (default saga).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
STATE=${SAGA_NETNS_STATE:-/tmp/saga-netns}
H0=${SAGA_NETNS_PREFIX:-saga}H0
np=$1; shift
exec ip netns exec "$H0" unshare --uts sh -c "hostname $H0 && exec mpirun \
  --allow-run-as-root -np $np --hostfile $STATE/hostfile --map-by node \
  --mca plm_rsh_agent $HERE/agent.sh \
  --mca btl tcp,self --mca btl_tcp_if_include 10.77.0.0/24 \
  --mca oob_tcp_if_include 10.77.0.0/24 --mca btl_tcp_links 2 \
  --mca oob_tcp_keepalive_time 5 --mca oob_tcp_keepalive_intvl 2 \
  --mca oob_tcp_keepalive_probes 3 \
  -x OPENBLAS_NUM_THREADS=1 -x SAGA_NETNS_STATE=$STATE $*"
