/*
 * test_pcmap.c - report/pcmap.c: every address put is found with its value,
 * through collisions, the wrap at the table's end and each growth; an
 * address never put is not found; one address in two modules (libraries
 * loaded one after another at one address) holds two values. Addresses are drawn so that many share a
 * first slot (the low bits of the hash), as a program's frames do.
 */
#include "report/pcmap.h"

#include <stdio.h>
#include <stdlib.h>

#define N 20000

static uint64_t rnd(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

int main(void)
{
    static uintptr_t pcs[N];
    static const char mods[2] = { 0 }; /* two modules: their records' addresses */
    struct gmg_pcmap m = { 0 };
    uint64_t s = 0x9e3779b97f4a7c15ull, v;
    int bad = 0;
    for (size_t i = 0; i < N; i++) {
        /* code addresses in a few modules: close together, 1 to 64 bytes apart */
        pcs[i] = (i ? pcs[i - 1] : 0x7f0000001000u) + 1 + rnd(&s) % 64;
        gmg_pcmap_put(&m, pcs[i], &mods[0], i * 7 + 1);
        if (i % 3 == 0) /* the same address in the module loaded there next */
            gmg_pcmap_put(&m, pcs[i], &mods[1], i * 7 + 2);
        /* what was put so far is found, at every size the table takes */
        if ((i & (i + 1)) == 0 || i % 997 == 0)
            for (size_t j = 0; j <= i; j++)
                if (!gmg_pcmap_get(&m, pcs[j], &mods[0], &v) || v != j * 7 + 1 ||
                    gmg_pcmap_get(&m, pcs[j], &mods[1], &v) != (j % 3 == 0) || (j % 3 == 0 && v != j * 7 + 2) ||
                    gmg_pcmap_get(&m, pcs[j], NULL, &v)) {
                    fprintf(stderr, "after %zu puts: %#lx not found with its value in each module\n", i + 1,
                            (unsigned long)pcs[j]);
                    bad = 1;
                    break;
                }
    }
    size_t absent = 0;
    for (uintptr_t pc = pcs[0] + 1; pc < pcs[N - 1] && absent < 100000; pc++) {
        size_t lo = 0, hi = N; /* is pc one of pcs[] (sorted)? */
        while (lo < hi) {
            size_t mid = (lo + hi) / 2;
            if (pcs[mid] < pc)
                lo = mid + 1;
            else
                hi = mid;
        }
        if (lo < N && pcs[lo] == pc)
            continue;
        absent++;
        if (gmg_pcmap_get(&m, pc, &mods[0], &v) || gmg_pcmap_get(&m, pc, &mods[1], &v)) {
            fprintf(stderr, "%#lx found, never put\n", (unsigned long)pc);
            bad = 1;
            break;
        }
    }
    if (gmg_pcmap_get(&m, 0, &mods[0], &v)) {
        fprintf(stderr, "0 found\n");
        bad = 1;
    }
    printf("%d addresses (a third of them in a second module too) in a table of %zu slots, each found with its "
           "module's value; %zu never put, none found\n", N, m.cap, absent);
    gmg_pcmap_free(&m);
    return bad;
}
