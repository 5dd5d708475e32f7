/* A working set that fits the L2 (256 KB), not the L1: random read-modify-write of 4-byte counters. */
#include "common.h"
#define N (1 << 16)
static uint32_t v[N];
int main(int argc, char **argv) {
    long n = 4000 * pct_arg(argc, argv);
    uint64_t s = 977ULL;
    for (long i = 0; i < n; i++) {
        uint64_t r = xorshift(&s);
        v[r & (N - 1)] += (uint32_t)(r >> 40);
    }
    uint32_t x = 0;
    for (long i = 0; i < N; i++) x ^= v[i];
    printf("%u\n", x);
    return 0;
}
