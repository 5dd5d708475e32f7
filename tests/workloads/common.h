/* Shared by the suite: a size argument in percent and a cheap generator (no libc rand: same stream everywhere). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
static inline long pct_arg(int argc, char **argv) { return argc > 1 ? atol(argv[1]) : 100; }
static inline uint64_t xorshift(uint64_t *s) {
    uint64_t x = *s;
    x ^= x << 13; x ^= x >> 7; x ^= x << 17;
    return *s = x;
}
