/* Mixed phases of different character, one after the other: integer, streaming, floating point, pointer chase. */
#include "common.h"
#define N (1 << 17)
static double a[N], b[N];
static uint32_t next_idx[1 << 19];
int main(int argc, char **argv) {
    long pct = pct_arg(argc, argv);
    uint64_t acc = 1;
    for (long i = 0; i < 5000 * pct; i++) acc = acc * 6364136223846793005ULL + (acc >> 7) + i;
    for (long i = 0; i < N; i++) a[i] = b[i] * 2.0 + (double)i;
    double x = 1.0;
    for (long i = 0; i < 3000 * pct; i++) x = x * 1.0000001 + 0.5 / (x + 1.0);
    for (uint32_t i = 0; i < (1 << 19); i += 4) next_idx[i] = (uint32_t)((i * 2654435761u) % (1 << 19)) & ~3u;
    uint32_t p = 4;
    for (long i = 0; i < 300 * pct; i++) p = next_idx[p];
    printf("%llu %f %f %u\n", (unsigned long long)acc, x, a[N / 2], p);
    return 0;
}
