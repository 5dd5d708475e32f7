/* Branchy integer: quicksort of random keys (data-dependent branches) and an open-addressing hash table, whose probes branch on the keys. */
#include "common.h"
#define N 4096
#define H 4096
static uint32_t keys[N];
static uint32_t table[H];
static void qsort_u32(uint32_t *v, long lo, long hi) {
    while (lo < hi) {
        uint32_t p = v[(lo + hi) / 2];
        long i = lo, j = hi;
        while (i <= j) {
            while (v[i] < p) i++;
            while (v[j] > p) j--;
            if (i <= j) { uint32_t t = v[i]; v[i] = v[j]; v[j] = t; i++; j--; }
        }
        if (j - lo < hi - i) { qsort_u32(v, lo, j); lo = i; } else { qsort_u32(v, i, hi); hi = j; }
    }
}
int main(int argc, char **argv) {
    long rounds = pct_arg(argc, argv) / 25 + 1;
    uint64_t s = 88172645463325252ULL, found = 0;
    for (long r = 0; r < rounds; r++) {
        for (long i = 0; i < N; i++) keys[i] = (uint32_t)xorshift(&s);
        qsort_u32(keys, 0, N - 1);
        for (long i = 0; i < H; i++) table[i] = 0;
        for (long i = 0; i < N / 2; i++) {              /* half full: probes of a few slots */
            uint32_t k = keys[i] | 1, h = (k * 2654435761u) & (H - 1);
            while (table[h] && table[h] != k) h = (h + 1) & (H - 1);
            table[h] = k;
        }
        for (long i = 0; i < N; i++) {                  /* lookups: half hit, half miss */
            uint32_t k = keys[i] | 1, h = (k * 2654435761u) & (H - 1);
            while (table[h] && table[h] != k) h = (h + 1) & (H - 1);
            found += table[h] == k;
        }
    }
    printf("%u %llu\n", keys[N / 2], (unsigned long long)found);
    return 0;
}
