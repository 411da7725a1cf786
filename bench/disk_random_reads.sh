#!/bin/sh
# Why a spill file is not read selectively: random O_DIRECT reads of 4 KiB,
# 64 KiB and 1 MiB blocks at random aligned offsets of FILE, against a
# sequential O_DIRECT read of it with dd, on the same disk in the same run.
# A chunk's few rows scattered over a spilled piece would be read as
# separate 4 KiB blocks (a spill slot is checked block by block at best).
#
#   bench/disk_random_reads.sh FILE     (FILE: a few GiB or more, e.g. the
#                                        graph file bench/outofcore.sh uses)
# READS: how many random reads of each size ("20000 5000 500": 4 KiB,
# 64 KiB, 1 MiB; FILE must be larger than 1 MiB).
set -eu
file=$1
set -- ${READS:-20000 5000 500}
reads4k=$1 reads64k=$2 reads1m=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cat > "$tmp/rr.c" <<'C'
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
int main(int argc, char **argv) {
  int fd = open(argv[1], O_RDONLY | O_DIRECT);
  if (fd < 0) { perror(argv[1]); return 1; }
  long size = lseek(fd, 0, SEEK_END), bs = atol(argv[2]);
  int n = atoi(argv[3]);
  void *buf;
  if (posix_memalign(&buf, 4096, (size_t)bs)) return 1;
  srand(1);
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (int i = 0; i < n; ++i) {
    long at = ((long)rand() * 4096L) % (size - bs) / 4096 * 4096;
    if (pread(fd, buf, (size_t)bs, at) != bs) { perror("pread"); return 1; }
  }
  clock_gettime(CLOCK_MONOTONIC, &t1);
  double s = (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) * 1e-9;
  printf("random O_DIRECT reads of %ld bytes: %d in %.2f s, %.0f per second, "
         "%.1f MB/s\n", bs, n, s, n / s, n * (double)bs / s / 1e6);
  return 0;
}
C
cc -O2 -o "$tmp/rr" "$tmp/rr.c"
echo "# $(date -u +%Y-%m-%dT%H:%M:%SZ) $(ls -l "$file")"
dd if="$file" of=/dev/null bs=64M count=48 iflag=direct 2>&1 | tail -1 |
  sed 's/^/sequential O_DIRECT read (3 GiB, dd): /'
"$tmp/rr" "$file" 4096 "$reads4k"
"$tmp/rr" "$file" 65536 "$reads64k"
"$tmp/rr" "$file" 1048576 "$reads1m"
