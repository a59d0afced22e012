/*
 * STREAM-style triad, a[i] = b[i] + s * c[i], with OpenMP, for bench/measure_vs_reference.py.
 *
 * After McCalpin's STREAM benchmark (stream.c): arrays initialised in parallel (so
 * pages are first touched by the threads that use them), NTIMES timed passes with a wall
 * clock (omp_get_wtime), the first pass discarded, and 3 words per element counted (2 reads,
 * 1 write; write-allocate traffic not counted).
 *
 * Build: gcc -O3 -march=native -fopenmp -DSTREAM_TYPE=float stream_triad.c -o stream_triad
 * Run:   OMP_NUM_THREADS=2 ./stream_triad ELEMENTS NTIMES     (prints one JSON object)
 */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

#ifndef STREAM_TYPE
#define STREAM_TYPE double
#endif

static int compare_doubles(const void *x, const void *y) {
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

static STREAM_TYPE *alloc_array(size_t n) {
    size_t bytes = n * sizeof(STREAM_TYPE);
    bytes = (bytes + 63) / 64 * 64; /* aligned_alloc wants a multiple of the alignment */
    STREAM_TYPE *p = aligned_alloc(64, bytes);
    if (!p) {
        fprintf(stderr, "allocation of %zu bytes failed\n", bytes);
        exit(1);
    }
    return p;
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: %s ELEMENTS NTIMES\n", argv[0]);
        return 2;
    }
    long n = atol(argv[1]);
    int ntimes = atoi(argv[2]);
    if (n < 1 || ntimes < 2) {
        fprintf(stderr, "ELEMENTS must be >= 1 and NTIMES >= 2\n");
        return 2;
    }
    STREAM_TYPE *a = alloc_array((size_t)n), *b = alloc_array((size_t)n), *c = alloc_array((size_t)n);
    const STREAM_TYPE scalar = 3.0;

#pragma omp parallel for
    for (long i = 0; i < n; i++) {
        a[i] = 1.0;
        b[i] = 2.0;
        c[i] = 0.5;
    }

    double *times = malloc(sizeof(double) * (size_t)ntimes);
    for (int k = 0; k < ntimes; k++) {
        double t0 = omp_get_wtime();
#pragma omp parallel for
        for (long i = 0; i < n; i++) a[i] = b[i] + scalar * c[i];
        times[k] = omp_get_wtime() - t0;
    }

    /* Discard the first pass, as STREAM does. */
    int kept = ntimes - 1;
    qsort(times + 1, (size_t)kept, sizeof(double), compare_doubles);
    double min_s = times[1];
    double median_s = kept % 2 ? times[1 + kept / 2] : 0.5 * (times[kept / 2] + times[1 + kept / 2]);
    double bytes = 3.0 * sizeof(STREAM_TYPE) * (double)n;
    double expected = 2.0 + 3.0 * 0.5;
    int ok = (double)a[n - 1] == expected && (double)a[0] == expected;

    printf("{\"elements\": %ld, \"element_bytes\": %zu, \"bytes\": %.0f, \"threads\": %d, "
           "\"passes\": %d, \"min_s\": %.9g, \"median_s\": %.9g, \"best_gb_per_s\": %.6g, "
           "\"median_gb_per_s\": %.6g, \"check_ok\": %s}\n",
           n, sizeof(STREAM_TYPE), bytes, omp_get_max_threads(), kept, min_s, median_s, bytes / min_s / 1e9,
           bytes / median_s / 1e9, ok ? "true" : "false");
    free(a);
    free(b);
    free(c);
    free(times);
    return ok ? 0 : 1;
}
