/* Compute-bound double precision: a dependent chain with a divide and independent multiply-adds. */
#include "common.h"
int main(int argc, char **argv) {
    long n = 12000 * pct_arg(argc, argv);
    double x = 1.0, y = 0.5, z = 0.25, w = 2.0;
    for (long i = 0; i < n; i++) {
        x = x * 1.0000001 + 0.5 / (x + 1.0);
        y = y * 0.999999 + z * 1e-7;
        z = z * 1.0000002 - w * 1e-8;
        w = w * 0.9999998 + y * 1e-9;
    }
    printf("%f %f %f %f\n", x, y, z, w);
    return 0;
}
