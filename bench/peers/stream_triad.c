/* A plain STREAM-style triad (a[i] = b[i] + 3.0 * c[i]) for the peer comparison with
 * truebench memory.bandwidth. Arrays of N doubles each, first touched in parallel, one
 * clock_gettime pair around each whole pass, the first pass dropped; prints the median
 * rate of the remaining passes in MB/s (10^6 B/s, 24 bytes per element, STREAM counting).
 * Build: gcc -O3 -march=native -fopenmp stream_triad.c -o stream_triad
 * Usage: OMP_NUM_THREADS=T ./stream_triad ELEMENTS PASSES */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int cmp(const void *x, const void *y) {
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

int main(int argc, char **argv) {
    long n = argc > 1 ? atol(argv[1]) : 16L << 20;
    int passes = argc > 2 ? atoi(argv[2]) : 11;
    double *a, *b, *c, *rate = malloc(sizeof(double) * passes);
    if (posix_memalign((void **)&a, 4096, n * 8) || posix_memalign((void **)&b, 4096, n * 8) ||
        posix_memalign((void **)&c, 4096, n * 8) || !rate) {
        fprintf(stderr, "out of memory\n");
        return 1;
    }
#pragma omp parallel for schedule(static)
    for (long i = 0; i < n; i++) { a[i] = 1.0; b[i] = 2.0; c[i] = 0.5; }
    for (int p = 0; p < passes; p++) {
        double t0 = now();
#pragma omp parallel for schedule(static)
        for (long i = 0; i < n; i++) a[i] = b[i] + 3.0 * c[i];
        rate[p] = 24.0 * n / (now() - t0) / 1e6;
    }
    for (long i = 0; i < n; i += n / 7 + 1)
        if (a[i] != 3.5) { fprintf(stderr, "validation failed at %ld: %f\n", i, a[i]); return 1; }
    qsort(rate + 1, passes - 1, sizeof(double), cmp);
    int m = passes - 1;
    double med = m % 2 ? rate[1 + m / 2] : (rate[m / 2] + rate[m / 2 + 1]) / 2;
    printf("%.1f\n", med);
    return 0;
}
