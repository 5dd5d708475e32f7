/* Compute-bound integer: multiply-add and shift chains in registers, no memory traffic. */
#include "common.h"
int main(int argc, char **argv) {
    long n = 20000 * pct_arg(argc, argv);
    uint64_t a = 1, b = 7, c = 3;
    for (long i = 0; i < n; i++) {
        a = a * 6364136223846793005ULL + (b >> 3);
        b = (b ^ a) * 0x9E3779B97F4A7C15ULL + i;
        c += (a >> 11) ^ (b << 5);
    }
    printf("%llu\n", (unsigned long long)(a ^ b ^ c));
    return 0;
}
