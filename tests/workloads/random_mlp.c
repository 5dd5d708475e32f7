/* Random access with many independent misses: a gather from a 4 MB table at random indices; the loads do not
   depend on each other, so an out-of-order core keeps several misses in flight (memory-level parallelism). */
#include "common.h"
#define N (1 << 20)
static uint32_t table[N];
int main(int argc, char **argv) {
    long n = 1500 * pct_arg(argc, argv);
    for (long i = 0; i < N; i += 16) table[i] = (uint32_t)i;   /* touch every line once (one store per line) */
    uint64_t s = 2463534242ULL, sum = 0;
    for (long i = 0; i < n; i++) sum += table[xorshift(&s) & (N - 1)];
    printf("%llu\n", (unsigned long long)sum);
    return 0;
}
