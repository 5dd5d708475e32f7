/* Dependent pointer chase: one random cycle through 2 MB of 64-byte nodes; each load needs the previous one,
   so misses never overlap. */
#include "common.h"
#define NODES (1 << 15)
struct node { struct node *next; char pad[56]; };
static struct node nodes[NODES];
static uint32_t order[NODES];
int main(int argc, char **argv) {
    long n = 600 * pct_arg(argc, argv);
    uint64_t s = 1234567ULL;
    for (uint32_t i = 0; i < NODES; i++) order[i] = i;
    for (uint32_t i = NODES - 1; i > 0; i--) {                  /* Fisher-Yates: one cycle over all nodes */
        uint32_t j = (uint32_t)(xorshift(&s) % (i + 1)), t = order[i];
        order[i] = order[j]; order[j] = t;
    }
    for (uint32_t i = 0; i < NODES; i++) nodes[order[i]].next = &nodes[order[(i + 1) % NODES]];
    struct node *p = &nodes[order[0]];
    for (long i = 0; i < n; i++) p = p->next;
    printf("%ld\n", (long)(p - nodes));
    return 0;
}
