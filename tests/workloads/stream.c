/* Streaming, bandwidth-bound: triad a = b + s * c over 3 x 1 MB arrays (3 MB: past the 1 MB L2). */
#include "common.h"
#define N (1 << 17)
static double a[N], b[N], c[N];
int main(int argc, char **argv) {
    long passes = pct_arg(argc, argv) / 50 + 1;
    for (long i = 0; i < N; i++) { b[i] = (double)i; c[i] = 0.5 * (double)i; }
    for (long p = 0; p < passes; p++)
        for (long i = 0; i < N; i++) a[i] = b[i] + 1.5 * c[i];
    printf("%f\n", a[N / 3]);
    return 0;
}
