/*
 * Load-to-use latency by pointer chasing, for measure/latency.py (compiled at run time).
 *
 * The working set is split into lines of LINE bytes. Sattolo's algorithm turns the line indices
 * into one random cycle through every line, and the first word of each line points to the next
 * line of the cycle. Walking the chain (p = *p) makes every load's address depend on the value of
 * the previous load, so loads cannot overlap and the hardware prefetchers cannot guess the next
 * address: the time per load is the latency of the level that holds the working set.
 *
 * Per working set: allocate (2 MiB aligned and madvise(MADV_HUGEPAGE) where available, so the
 * TLB misses less), build the cycle, walk WARM loads untimed (at most one full cycle), then
 * REPEATS timed samples of LOADS dependent loads each, continuing along the chain. Times come
 * from clock_gettime(CLOCK_MONOTONIC); one sample is one clock pair around LOADS loads.
 *
 * Build: cc -O2 pointer_chase.c -o pointer_chase
 * Run:   ./pointer_chase LINE REPEATS LOADS WARM BYTES [BYTES ...]
 *        (prints one JSON object per working set; LOADS 0 = calibrate to ~20 ms per sample)
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;

static uint64_t next_random(void) { /* xorshift64* (Vigna) */
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 2685821657736338717ull;
}

static uint64_t below(uint64_t n) { /* uniform-enough integer in [0, n): multiply-high */
    return (uint64_t)(((unsigned __int128)next_random() * n) >> 64);
}

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* LOADS dependent loads, unrolled by 8; returns where the walk stopped. */
static void **walk(void **p, long loads) {
    for (long k = 0; k < loads; k += 8) {
        p = (void **)*p;
        p = (void **)*p;
        p = (void **)*p;
        p = (void **)*p;
        p = (void **)*p;
        p = (void **)*p;
        p = (void **)*p;
        p = (void **)*p;
    }
    return p;
}

static int measure(size_t bytes, size_t line, int repeats, long loads, long warm) {
    size_t lines = bytes / line;
    if (lines < 2) {
        fprintf(stderr, "working set %zu is smaller than two lines of %zu bytes\n", bytes, line);
        return 2;
    }
    size_t align = bytes >= (2u << 20) ? (2u << 20) : 4096;
    size_t alloc = (lines * line + align - 1) / align * align;
    char *buf = aligned_alloc(align, alloc);
    uint32_t *next32 = NULL;
    uint64_t *next64 = NULL;
    int huge = 0;
    if (!buf) {
        fprintf(stderr, "allocation of %zu bytes failed\n", alloc);
        return 1;
    }
#ifdef MADV_HUGEPAGE
    if (align == (2u << 20)) huge = madvise(buf, alloc, MADV_HUGEPAGE) == 0;
#endif
    memset(buf, 0, alloc);
    /* Sattolo's algorithm: a uniformly random permutation with a single cycle. */
    if (lines < UINT32_MAX) {
        next32 = malloc(lines * sizeof *next32);
        if (!next32) return 1;
        for (size_t i = 0; i < lines; i++) next32[i] = (uint32_t)i;
        for (size_t i = lines - 1; i > 0; i--) {
            size_t j = (size_t)below(i);
            uint32_t t = next32[i];
            next32[i] = next32[j];
            next32[j] = t;
        }
        for (size_t i = 0; i < lines; i++) *(void **)(buf + i * line) = buf + (size_t)next32[i] * line;
        free(next32);
    } else {
        next64 = malloc(lines * sizeof *next64);
        if (!next64) return 1;
        for (size_t i = 0; i < lines; i++) next64[i] = i;
        for (size_t i = lines - 1; i > 0; i--) {
            size_t j = (size_t)below(i);
            uint64_t t = next64[i];
            next64[i] = next64[j];
            next64[j] = t;
        }
        for (size_t i = 0; i < lines; i++) *(void **)(buf + i * line) = buf + (size_t)next64[i] * line;
        free(next64);
    }
    void **p = (void **)buf;
    if (warm < 0 || (size_t)warm > lines) warm = (long)lines;
    p = walk(p, (warm + 7) / 8 * 8);
    if (loads <= 0) { /* calibrate: about 20 ms per sample, at least 8,192 loads */
        double t0 = now_s();
        p = walk(p, 1 << 14);
        double per_load = (now_s() - t0) / (1 << 14);
        loads = per_load > 0 ? (long)(0.02 / per_load) : (1L << 20);
        if (loads < (1L << 13)) loads = 1L << 13;
    }
    loads = (loads + 7) / 8 * 8;
    printf("{\"bytes\": %zu, \"line_bytes\": %zu, \"lines\": %zu, \"loads\": %ld, \"warm_loads\": %ld, "
           "\"huge_pages_advised\": %s, \"samples_ns\": [",
           lines * line, line, lines, loads, warm, huge ? "true" : "false");
    for (int r = 0; r < repeats; r++) {
        double t0 = now_s();
        p = walk(p, loads);
        double elapsed = now_s() - t0;
        printf("%s%.6g", r ? ", " : "", elapsed * 1e9 / (double)loads);
    }
    /* Print where the walk ended, so the compiler must perform every load. */
    printf("], \"end_line\": %zu}\n", (size_t)((char *)p - buf) / line);
    fflush(stdout);
    free(buf);
    return 0;
}

int main(int argc, char **argv) {
    if (argc < 6) {
        fprintf(stderr, "usage: %s LINE REPEATS LOADS WARM BYTES [BYTES ...]\n", argv[0]);
        return 2;
    }
    size_t line = (size_t)strtoull(argv[1], NULL, 10);
    int repeats = atoi(argv[2]);
    long loads = atol(argv[3]);
    long warm = atol(argv[4]);
    if (line < sizeof(void *) || line % sizeof(void *) || repeats < 1) {
        fprintf(stderr, "LINE must be a multiple of %zu and REPEATS >= 1\n", sizeof(void *));
        return 2;
    }
    for (int a = 5; a < argc; a++) {
        int rc = measure((size_t)strtoull(argv[a], NULL, 10), line, repeats, loads, warm);
        if (rc) return rc;
    }
    return 0;
}
