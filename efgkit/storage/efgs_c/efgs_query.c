/* efgs_query: look up infoset keys in a compact strategy with the C reader.
 *
 *   efgs_query FILE.efgs < keys          one line per key: "<key>\t<action>=<probability> ..."
 *                                        (each row normalised: weight / total, the actions
 *                                        named in the row's order, efgs_action_names; by
 *                                        their index for games whose keys do not spell them);
 *                                        an input line may give the infoset's class after a
 *                                        tab: "<key>\t<player> <own-sequence length> <actions>"
 *   efgs_query --weights FILE.efgs < keys   the quantized weights instead: "<key>\t<w1> <w2> ..."
 *   efgs_query --verify FILE.efgs        check the whole file; prints "ok" or the problem
 *   efgs_query --bench FILE.efgs R < keys   time R rounds of lookups of every key; prints
 *                                        nanoseconds per efgs_probabilities call
 *
 * A line the file does not answer (a card not in the deck, betting that is no decision of
 * the game, a cell with no row, a key not in the file, a missing class) is one line on
 * stderr, "efgs_query: line N: <key>: <reason>", and the next line is read; the exit code
 * is then 1. A damaged file stops the tool with exit code 2.
 *
 * A strategy whose bucket tables are in a bucket-table file (.efgb) opens it beside itself
 * (the name it records); a missing or other file is one line and exit code 2.
 *
 * Build: cc -std=c99 -O2 efgs.c efgs_query.c -o efgs_query
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "efgs.h"

#define MAX_ACTIONS 256
#define MAX_KEY 4096

static int fail(const char *path, int status) {
    fprintf(stderr, "efgs_query: %s: %s\n", path, efgs_status_message(status));
    return 2;
}

static size_t chomp(char *line) {
    size_t length = strlen(line);
    while (length > 0 && (line[length - 1] == '\n' || line[length - 1] == '\r')) line[--length] = '\0';
    return length;
}

static int bench(efgs_reader *reader, long rounds) {
    char line[MAX_KEY];
    char **keys = NULL;
    size_t count = 0, capacity = 0, i;
    long round;
    double probabilities[MAX_ACTIONS], checksum = 0.0;
    clock_t started;
    while (fgets(line, sizeof line, stdin) != NULL) {
        size_t length = chomp(line);
        if (count == capacity) {
            capacity = capacity ? 2 * capacity : 1024;
            keys = (char **)realloc(keys, capacity * sizeof *keys);
            if (keys == NULL) return 2;
        }
        keys[count] = (char *)malloc(length + 1);
        if (keys[count] == NULL) return 2;
        memcpy(keys[count++], line, length + 1);
    }
    if (count == 0) return 2;
    started = clock();
    for (round = 0; round < rounds; round++)
        for (i = 0; i < count; i++)
            if (efgs_probabilities(reader, keys[i], strlen(keys[i]), probabilities, MAX_ACTIONS) > 0)
                checksum += probabilities[0];
    printf("%.1f ns per lookup (%lu keys x %ld rounds, checksum %.3f)\n",
           1e9 * (double)(clock() - started) / CLOCKS_PER_SEC / ((double)count * (double)rounds),
           (unsigned long)count, rounds, checksum);
    for (i = 0; i < count; i++) free(keys[i]);
    free(keys);
    return 0;
}

/* Is a lookup status a fault of the key (reported, and the next line read)? */
static int bad_key(int status) {
    return status == EFGS_ERROR_NOT_FOUND || status == EFGS_ERROR_NEEDS_CLASS || status == EFGS_ERROR_CARD ||
           status == EFGS_ERROR_BETTING || status == EFGS_ERROR_MISSING_CELL;
}

static void print_row(const efgs_reader *reader, const char *key, size_t key_length, const uint32_t *weights,
                      int n, int raw) {
    const char *names[MAX_ACTIONS];
    unsigned long total = 0;
    int k, named = raw ? 0 : efgs_action_names(reader, key, key_length, n, names);
    for (k = 0; k < n; k++) total += weights[k];
    printf("%s\t", key);
    for (k = 0; k < n; k++) {
        if (k) printf(" ");
        if (raw)
            printf("%lu", (unsigned long)weights[k]);
        else if (named > 0)
            printf("%s=%.17g", names[k], (double)weights[k] / (double)total);
        else
            printf("%d=%.17g", k, (double)weights[k] / (double)total);
    }
    printf("\n");
}

int main(int argc, char **argv) {
    efgs_reader reader;
    char line[MAX_KEY];
    uint32_t weights[MAX_ACTIONS];
    const char *path;
    char *tab;
    efgs_class infoset_class;
    unsigned long player, length, actions, number = 0;
    int status, n, has_class, raw = 0, failed = 0;
    if (argc == 3 && strcmp(argv[1], "--verify") == 0) {
        if ((status = efgs_open_file(&reader, argv[2])) != EFGS_OK) return fail(argv[2], status);
        status = efgs_verify(&reader);
        efgs_close(&reader);
        if (status != EFGS_OK) return fail(argv[2], status);
        printf("ok\n");
        return 0;
    }
    if (argc == 4 && strcmp(argv[1], "--bench") == 0) {
        if ((status = efgs_open_file(&reader, argv[2])) != EFGS_OK) return fail(argv[2], status);
        status = bench(&reader, atol(argv[3]));
        efgs_close(&reader);
        return status;
    }
    if (argc == 3 && strcmp(argv[1], "--weights") == 0) raw = 1;
    if (argc != 2 + raw) {
        fprintf(stderr, "usage: efgs_query [--weights | --verify | --bench FILE ROUNDS] FILE.efgs < keys\n");
        return 2;
    }
    path = argv[1 + raw];
    if ((status = efgs_open_file(&reader, path)) != EFGS_OK) return fail(path, status);
    while (fgets(line, sizeof line, stdin) != NULL) {
        size_t key_length = chomp(line);
        number++;
        has_class = 0;
        if ((tab = strchr(line, '\t')) != NULL) {
            *tab = '\0';
            key_length = (size_t)(tab - line);
            if (sscanf(tab + 1, "%lu %lu %lu", &player, &length, &actions) != 3) {
                fprintf(stderr, "efgs_query: line %lu: %s: expected <key>\\t<player> <own-sequence length> "
                        "<actions>\n", number, line);
                failed = 1;
                continue;
            }
            infoset_class.player = (uint32_t)player;
            infoset_class.own_sequence_length = (uint32_t)length;
            infoset_class.num_actions = (uint32_t)actions;
            has_class = 1;
        }
        n = efgs_quantized_in_class(&reader, line, key_length, has_class ? &infoset_class : NULL,
                                    weights, MAX_ACTIONS);
        if (bad_key(n)) {
            fprintf(stderr, "efgs_query: line %lu: %s: %s\n", number, line, efgs_status_message(n));
            failed = 1;
            continue;
        }
        if (n < 0) {
            efgs_close(&reader);
            return fail(path, n);
        }
        print_row(&reader, line, key_length, weights, n, raw);
    }
    efgs_close(&reader);
    return failed;
}
