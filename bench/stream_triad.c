/* stream_triad.c - the machine's memory bandwidth, STREAM's triad kernel.
 *
 *   cc -O3 -march=native -fopenmp bench/stream_triad.c -o stream_triad
 *   OMP_NUM_THREADS=2 ./stream_triad [N]
 *
 * a[i] = b[i] + s * c[i] over N doubles, OpenMP static schedule, arrays
 * first-touched by the same threads that use them; the best of 10 timed
 * passes (after one untimed pass) gives the bandwidth. Bytes are counted as
 * STREAM does: 3 arrays x 8 bytes per element (read b, read c, write a), the
 * compulsory traffic; the write-allocate read of `a` that a cache without
 * streaming stores also performs is not counted (it would make 32 bytes per
 * element, a third more GB/s).
 *
 * N defaults to the larger of 80M and four last-level caches' worth of
 * doubles per array (STREAM's rule: each array at least 4x the LLC), the LLC
 * size read from sysconf. The last line, `RESULT key=value ...`, is for
 * bench/suite.sh; GB/s are 10^9 bytes per second.
 */
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv) {
  long llc = sysconf(_SC_LEVEL3_CACHE_SIZE);
  if (llc <= 0)
    llc = sysconf(_SC_LEVEL2_CACHE_SIZE);
  if (llc < 0)
    llc = 0;
  int64_t n = 80 * 1000 * 1000;
  if (4 * (int64_t)llc / 8 > n)
    n = 4 * (int64_t)llc / 8;
  if (argc > 1) {
    char *end = NULL;
    long long v = strtoll(argv[1], &end, 10);
    if (!*argv[1] || *end || v < 1000) {
      fprintf(stderr, "stream_triad: N must be a number >= 1000, not '%s'\n",
              argv[1]);
      return 1;
    }
    n = v;
  }
  const int repeat = 10;
  double *a = aligned_alloc(64, ((size_t)n * 8 + 63) / 64 * 64);
  double *b = aligned_alloc(64, ((size_t)n * 8 + 63) / 64 * 64);
  double *c = aligned_alloc(64, ((size_t)n * 8 + 63) / 64 * 64);
  if (!a || !b || !c) {
    fprintf(stderr, "stream_triad: cannot allocate 3 x %lld doubles\n",
            (long long)n);
    return 1;
  }
  const double s = 3.0;
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n; ++i) {
    a[i] = 0.0;
    b[i] = 1.0;
    c[i] = 2.0;
  }

  double best = 1e30, worst = 0, sum = 0;
  for (int k = 0; k <= repeat; ++k) {
    double t = omp_get_wtime();
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < n; ++i)
      a[i] = b[i] + s * c[i];
    t = omp_get_wtime() - t;
    if (k == 0)
      continue; /* untimed first pass */
    if (t < best)
      best = t;
    if (t > worst)
      worst = t;
    sum += t;
  }
  /* Check (and keep the compiler from dropping the loop). */
  int64_t bad = 0;
  for (int64_t i = 0; i < n; i += 4099)
    bad += a[i] != 1.0 + s * 2.0;
  if (bad) {
    fprintf(stderr, "stream_triad: wrong results\n");
    return 1;
  }
  double bytes = 24.0 * (double)n;
  printf("stream    triad a = b + s*c, %lld doubles per array (%.0f MB each; "
         "LLC %.0f MB), %d threads\n",
         (long long)n, n * 8 / 1e6, llc / 1e6, omp_get_max_threads());
  printf("stream    best of %d: %.2f ms = %.2f GB/s (24 bytes/element; "
         "avg %.2f GB/s, worst %.2f GB/s; with write-allocate, 32 "
         "bytes/element: %.2f GB/s)\n",
         repeat, best * 1e3, bytes / best / 1e9, bytes / (sum / repeat) / 1e9,
         bytes / worst / 1e9, bytes / 24.0 * 32.0 / best / 1e9);
  printf("RESULT system=stream threads=%d elements=%lld triad_ms=%.3f "
         "triad_gbs=%.3f\n",
         omp_get_max_threads(), (long long)n, best * 1e3, bytes / best / 1e9);
  free(a);
  free(b);
  free(c);
  return 0;
}
