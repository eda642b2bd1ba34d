/* efgs_time FILE... : keys on stdin, a "# group" line before each group of keys. Prints,
 * per file and group, the nanoseconds of one efgs_probabilities call (hole cards, board,
 * betting -> row: canonical index, bucket, row decoding), the files interleaved round by
 * round so the machine's load hits all alike (benchmarks/bench_compact_holdem.py). */
#define _POSIX_C_SOURCE 200809L
#include "efgs.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_FILES 16
#define MAX_GROUPS 8
#define ROUNDS 20

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

int main(int argc, char **argv) {
    static char text[1 << 22];
    static char *keys[1 << 16];
    static int group_of[1 << 16];
    static efgs_reader readers[MAX_FILES];
    static double spent[MAX_FILES][MAX_GROUPS];
    static long calls[MAX_FILES][MAX_GROUPS];
    size_t used = fread(text, 1, sizeof text - 1, stdin);
    int n = 0, groups = 0, f, g, k, round, actions;
    double p[16], sink = 0, start;
    char *line;
    text[used] = 0;
    for (line = strtok(text, "\n"); line != NULL && n < (1 << 16); line = strtok(NULL, "\n")) {
        if (line[0] == '#') {
            groups++;
            continue;
        }
        keys[n] = line;
        group_of[n++] = groups - 1;
    }
    if (argc - 1 > MAX_FILES || groups > MAX_GROUPS) return 2;
    for (f = 1; f < argc; f++)
        if (efgs_open_file(&readers[f - 1], argv[f]) != EFGS_OK) {
            fprintf(stderr, "efgs_time: cannot open %s\n", argv[f]);
            return 2;
        }
    for (round = 0; round < ROUNDS; round++)
        for (f = 0; f < argc - 1; f++)
            for (g = 0; g < groups; g++) {
                start = now();
                for (k = 0; k < n; k++) {
                    if (group_of[k] != g) continue;
                    actions = efgs_probabilities(&readers[f], keys[k], strlen(keys[k]), p, 16);
                    if (actions < 0) {
                        fprintf(stderr, "efgs_time: %s: %s\n", keys[k], efgs_status_message(actions));
                        return 1;
                    }
                    sink += p[0];
                    calls[f][g]++;
                }
                spent[f][g] += now() - start;
            }
    for (f = 0; f < argc - 1; f++)
        for (g = 0; g < groups; g++) printf("%d %d %.1f\n", f, g, spent[f][g] / (double)calls[f][g]);
    return sink < 0;
}
