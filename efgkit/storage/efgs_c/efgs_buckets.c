/* efgs_buckets: the bucket of hands in a round of a compact bucket strategy, as the C reader
 * finds it (a table, or computed on the device: efgs_computed.c).
 *
 *   efgs_buckets FILE.efgs ROUND < hands              a signed 32-bit little-endian bucket
 *                                                     per hand (a negative efgs_status if
 *                                                     the reader refuses the hand)
 *   efgs_buckets --features FILE.efgs ROUND < hands   a computed round's features per hand,
 *                                                     float64 little-endian (the OCHS values
 *                                                     or E[HS] as the pipeline's float32, or
 *                                                     the histogram's runout counts)
 *   efgs_buckets --time FILE.efgs ROUND < hands       nanoseconds per bucket over the hands
 *                                                     (read first) and the resident
 *                                                     memory after them, one line of text
 *
 * A hand is 2 + (board cards of the round) bytes: the hole cards, then the board, card ids
 * 4 rank + suit of the file's deck. A damaged file (or a damaged description of a computed
 * round) is one line on stderr and exit code 2.
 *
 * Build: make (efgs_c/Makefile)
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "efgs.h"

#define MAX_HAND 16
#define MAX_FEATURES 256

static int fail(const char *path, const char *message) {
    fprintf(stderr, "efgs_buckets: %s: %s\n", path, message);
    return 2;
}

static void write_u32(uint32_t value) {
    unsigned char bytes[4];
    bytes[0] = (unsigned char)value;
    bytes[1] = (unsigned char)(value >> 8);
    bytes[2] = (unsigned char)(value >> 16);
    bytes[3] = (unsigned char)(value >> 24);
    fwrite(bytes, 1, 4, stdout);
}

static void write_double(double value) {
    uint64_t bits;
    unsigned char bytes[8];
    unsigned i;
    memcpy(&bits, &value, sizeof bits);
    for (i = 0; i < 8u; i++) bytes[i] = (unsigned char)(bits >> (8u * i));
    fwrite(bytes, 1, 8, stdout);
}

/* Resident memory now, in kB: VmRSS of /proc/self/status where there is one (the peak of
 * getrusage counts the parent's pages before exec), else the peak. */
static long resident_kb(void) {
    char line[256];
    long kb = -1;
    struct rusage usage;
    FILE *status = fopen("/proc/self/status", "r");
    if (status != NULL) {
        while (fgets(line, sizeof line, status) != NULL)
            if (strncmp(line, "VmRSS:", 6) == 0) kb = strtol(line + 6, NULL, 10);
        fclose(status);
    }
    if (kb < 0 && getrusage(RUSAGE_SELF, &usage) == 0) kb = (long)usage.ru_maxrss;
    return kb;
}

static int time_buckets(const efgs_reader *reader, unsigned round, size_t width) {
    unsigned char *hands = NULL, record[MAX_HAND];
    size_t count = 0, capacity = 0, i, j;
    unsigned cards[MAX_HAND];
    int64_t checksum = 0;
    clock_t started;
    double seconds;
    while (fread(record, 1, width, stdin) == width) {
        if (count == capacity) {
            unsigned char *grown;
            capacity = capacity ? 2 * capacity : 4096;
            grown = (unsigned char *)realloc(hands, capacity * width);
            if (grown == NULL) { free(hands); return 2; }
            hands = grown;
        }
        memcpy(hands + count * width, record, width);
        count++;
    }
    started = clock();
    for (i = 0; i < count; i++) {
        for (j = 0; j < width; j++) cards[j] = hands[i * width + j];
        checksum += efgs_bucket(reader, round, cards, cards + 2);
    }
    seconds = (double)(clock() - started) / CLOCKS_PER_SEC;
    printf("%lu hands, %.1f ns per bucket (checksum %lld), RSS %ld kB\n", (unsigned long)count,
           count ? 1e9 * seconds / (double)count : 0.0, (long long)checksum, resident_kb());
    free(hands);
    return 0;
}

int main(int argc, char **argv) {
    efgs_reader reader;
    const char *mode = "", *path, *round_text;
    unsigned char record[MAX_HAND];
    unsigned cards[MAX_HAND], round;
    double features[MAX_FEATURES];
    size_t width, j;
    char *end;
    int status, k, n;
    if (argc == 4 && argv[1][0] == '-') mode = argv[1];
    else if (argc != 3) {
        fprintf(stderr, "usage: efgs_buckets [--features | --time] FILE.efgs ROUND < hands\n");
        return 2;
    }
    path = argv[argc - 2];
    round_text = argv[argc - 1];
    if (*mode && strcmp(mode, "--features") != 0 && strcmp(mode, "--time") != 0)
        return fail(mode, "unknown option (--features or --time)");
    if ((status = efgs_open_file(&reader, path)) != EFGS_OK) return fail(path, efgs_status_message(status));
    round = (unsigned)strtoul(round_text, &end, 10);
    if (*end != '\0' || reader.cards_offset == 0 || round >= reader.num_card_rounds ||
        2u + reader.board_cards[round] > MAX_HAND || reader.private_cards != 2u) {
        efgs_close(&reader);
        return fail(path, "no such round of a hold'em card table");
    }
    width = 2u + reader.board_cards[round];
    if (strcmp(mode, "--time") == 0) {
        status = time_buckets(&reader, round, width);
        efgs_close(&reader);
        return status;
    }
    while (fread(record, 1, width, stdin) == width) {
        for (j = 0; j < width; j++) cards[j] = record[j];
        if (*mode == '\0') {
            write_u32((uint32_t)(int32_t)efgs_bucket(&reader, round, cards, cards + 2));
            continue;
        }
        n = efgs_computed_features(&reader, round, cards, cards + 2, features, MAX_FEATURES);
        if (n < 0) {
            efgs_close(&reader);
            return fail(path, efgs_status_message(n));
        }
        for (k = 0; k < n; k++) write_double(features[k]);
    }
    efgs_close(&reader);
    return 0;
}
