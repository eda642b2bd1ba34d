/* efgs_computed: a hold'em round's bucket computed on the device from a small description
 * (docs/compact-format.md, "Computed buckets"), instead of a table over every canonical hand.
 *
 * The features are the pipeline's (efgkit/abstraction/cards/holdem/features.py), by
 * enumeration of the cards still unseen: on the final street, 2 x wins + ties against every
 * opponent pair, per opponent cluster of preflop classes (OCHS) or in all (E[HS]), divided
 * in double and rounded to float as the pipeline stores them; before it, the histogram of
 * the final strength over every runout (bin min(d x bins / (2 x opponents), bins - 1), in
 * integers). The bucket is the nearest stored centroid (squared L2 over the float features,
 * or L1 between CDFs for histograms, summed in double in a fixed order; the lowest bucket
 * on a tie), unless the hand's canonical index is among the stored exceptions: the hands
 * whose pipeline bucket differs from that (k-means stopped before its assignment settled,
 * the pipeline's float32 distances, ties), so the bucket always equals the pipeline's.
 *
 * Hands are ranked by their best five cards with the standard ranks (a reduced deck's card
 * 4 r + s is the standard 4 (r + 13 - ranks) + s): only the order matters, which is
 * efgkit's hand_value order. Nothing here allocates; the description stays in the file.
 */
#include <string.h>

#include "efgs.h"

#define COMPUTED_HEAD_SIZE 16u
#define MAX_DIMS 255u
#define STANDARD_RANKS 13u

enum { CATEGORY_HIGH, CATEGORY_PAIR, CATEGORY_TWO_PAIR, CATEGORY_TRIPS, CATEGORY_STRAIGHT, CATEGORY_FLUSH,
       CATEGORY_FULL_HOUSE, CATEGORY_QUADS, CATEGORY_STRAIGHT_FLUSH };

static uint32_t le32(const unsigned char *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static double le_double(const unsigned char *p) {
    uint64_t bits = (uint64_t)le32(p) | (uint64_t)le32(p + 4) << 32;
    double value;
    memcpy(&value, &bits, sizeof value);
    return value;
}

/* ---- hand values -------------------------------------------------------------------------
 * A hand is kept as the ranks held at least once, twice, three and four times, and the ranks
 * of each suit (13-bit masks), so adding a card is a few bit operations; the value then
 * needs a handful of lookups of the highest rank of a mask. */
typedef struct hand_state {
    uint32_t held[4];   /* held[n]: ranks held more than n times */
    uint32_t suits[4];
} hand_state;

static unsigned char TOP_RANK[1u << 13];   /* highest set bit of a rank mask (0 for 0) */
static unsigned char RANK_COUNT[1u << 13]; /* set bits of a rank mask */

/* Fill the two tables (once; idempotent, so a second reader opening does no harm). */
static void init_rank_tables(void) {
    unsigned mask;
    if (RANK_COUNT[(1u << 13) - 1u] == 13u) return;
    for (mask = 1; mask < (1u << 13); mask++) {
        TOP_RANK[mask] = (unsigned char)(mask >> 1 ? TOP_RANK[mask >> 1] + 1u : 0u);
        RANK_COUNT[mask] = (unsigned char)(RANK_COUNT[mask >> 1] + (mask & 1u));
    }
}

static void add_card(hand_state *state, unsigned standard_card) {
    uint32_t bit = 1u << (standard_card >> 2);
    state->held[3] |= state->held[2] & bit;
    state->held[2] |= state->held[1] & bit;
    state->held[1] |= state->held[0] & bit;
    state->held[0] |= bit;
    state->suits[standard_card & 3u] |= bit;
}

/* The top rank of the best straight in a rank mask (the wheel's top is the five), -1 if none. */
static int top_straight(uint32_t ranks) {
    uint32_t low = (ranks << 1 | (ranks >> 12 & 1u)) & 0x3FFFu; /* bit r + 1: rank r; bit 0: the ace low */
    uint32_t runs = low & low >> 1 & low >> 2 & low >> 3 & low >> 4;
    return runs ? (int)TOP_RANK[runs] + 3 : -1; /* a run from bit b (rank b - 1) tops at rank b + 3 */
}

/* The category, then the deciding ranks ``first`` and ``second`` (-1: none), then the
 * ``wanted`` highest other ranks of ``mask``: 4 bits each, always six fields. */
static uint32_t ranked(uint32_t category, int first, int second, uint32_t mask, unsigned wanted) {
    uint32_t value = category;
    unsigned fields = 0, top;
    if (first >= 0) { value = value << 4 | (uint32_t)(first + 1); fields++; mask &= ~(1u << first); }
    if (second >= 0) { value = value << 4 | (uint32_t)(second + 1); fields++; mask &= ~(1u << second); }
    for (; wanted > 0 && mask; wanted--, fields++) {
        top = TOP_RANK[mask];
        value = value << 4 | (top + 1u);
        mask &= ~(1u << top);
    }
    return value << (4u * (5u - fields));
}

static int top_or_none(uint32_t mask) { return mask ? (int)TOP_RANK[mask] : -1; }

/* The value of the best five of up to seven cards (higher wins, equal ties), in the order
 * of efgkit's hand_value. ``flush_suit``: the only suit that can hold five (4: none). */
static uint32_t hand_value(const hand_state *state, unsigned flush_suit) {
    uint32_t all = state->held[0], others;
    int top, quad, trips, pair_high, pair_low;
    if (flush_suit < 4u && RANK_COUNT[state->suits[flush_suit]] >= 5u) {
        /* seven cards: no full house or quads beside a flush */
        if ((top = top_straight(state->suits[flush_suit])) >= 0) return ranked(CATEGORY_STRAIGHT_FLUSH, top, -1, 0, 0);
        return ranked(CATEGORY_FLUSH, -1, -1, state->suits[flush_suit], 5u);
    }
    quad = top_or_none(state->held[3]);
    others = quad >= 0 ? ~(1u << quad) : ~0u;
    trips = top_or_none(state->held[2] & others);
    if (trips >= 0) others &= ~(1u << trips);
    pair_high = top_or_none(state->held[1] & others);
    if (pair_high >= 0) others &= ~(1u << pair_high);
    pair_low = top_or_none(state->held[1] & others);
    if (quad >= 0) return ranked(CATEGORY_QUADS, quad, -1, all, 1u);
    if (trips >= 0 && pair_high >= 0) return ranked(CATEGORY_FULL_HOUSE, trips, pair_high, 0, 0);
    if ((top = top_straight(all)) >= 0) return ranked(CATEGORY_STRAIGHT, top, -1, 0, 0);
    if (trips >= 0) return ranked(CATEGORY_TRIPS, trips, -1, all, 2u);
    if (pair_low >= 0) return ranked(CATEGORY_TWO_PAIR, pair_high, pair_low, all, 1u);
    if (pair_high >= 0) return ranked(CATEGORY_PAIR, pair_high, -1, all, 3u);
    return ranked(CATEGORY_HIGH, -1, -1, all, 5u);
}

/* ---- the description ------------------------------------------------------------------ */
static size_t description_size(const efgs_computed *c, uint32_t buckets) {
    size_t classes = (c->num_classes + 7u) & ~(size_t)7u;
    return COMPUTED_HEAD_SIZE + classes + 8u * (size_t)buckets * c->centroid_width + 8u * (size_t)c->num_exceptions;
}

int efgs_computed_open(efgs_reader *reader, unsigned round, const unsigned char *bytes, uint64_t position,
                       uint64_t limit, uint64_t *length) {
    efgs_computed *c = &reader->computed[round];
    const unsigned char *head = bytes + position;
    uint64_t size, previous = 0, i, entries = reader->canonical[round].size;
    unsigned board = reader->board_cards[round], ranks = reader->num_cards / 4u;
    init_rank_tables();
    if (position > limit || limit - position < COMPUTED_HEAD_SIZE) return EFGS_ERROR_FORMAT;
    c->kind = head[0];
    c->dims = head[1];
    c->final_board = head[2];
    c->num_classes = le32(head + 4);
    c->num_exceptions = le32(head + 8);
    c->budget = le32(head + 12);
    if (c->kind < EFGS_COMPUTED_OCHS || c->kind > EFGS_COMPUTED_HISTOGRAM || c->dims < 1u || head[3] != 0 ||
        reader->private_cards != 2u || c->final_board > 5u || c->final_board < board ||
        c->final_board - board > 2u || c->final_board + 4u > reader->num_cards ||
        (c->kind == EFGS_COMPUTED_HISTOGRAM) != (c->final_board > board) ||
        (c->kind == EFGS_COMPUTED_HISTOGRAM && c->dims < 2u) || (c->kind == EFGS_COMPUTED_EHS && c->dims != 1u) ||
        c->num_classes != (c->kind == EFGS_COMPUTED_OCHS ? ranks * ranks : 0u) || c->num_exceptions > entries)
        return EFGS_ERROR_FORMAT;
    c->centroid_width = c->kind == EFGS_COMPUTED_HISTOGRAM ? c->dims - 1u : c->dims;
    size = description_size(c, reader->buckets[round]);
    if (limit - position < size) return EFGS_ERROR_FORMAT;
    c->classes_offset = (size_t)position + COMPUTED_HEAD_SIZE;
    c->centroids_offset = c->classes_offset + ((c->num_classes + 7u) & ~(size_t)7u);
    c->exception_index_offset = c->centroids_offset + 8u * (size_t)reader->buckets[round] * c->centroid_width;
    c->exception_bucket_offset = c->exception_index_offset + 4u * (size_t)c->num_exceptions;
    for (i = 0; i < c->num_classes; i++)
        if (bytes[c->classes_offset + i] >= c->dims) return EFGS_ERROR_FORMAT;
    for (i = 0; i < (uint64_t)reader->buckets[round] * c->centroid_width; i++) {
        double x = le_double(bytes + c->centroids_offset + 8u * i);
        if (!(x == x) || x > 1e300 || x < -1e300) return EFGS_ERROR_FORMAT; /* NaN or infinite */
    }
    for (i = 0; i < c->num_exceptions; i++) { /* strictly increasing indices, buckets in range */
        uint64_t index = le32(bytes + c->exception_index_offset + 4u * i);
        if ((i > 0 && index <= previous) || index >= entries ||
            le32(bytes + c->exception_bucket_offset + 4u * i) >= reader->buckets[round])
            return EFGS_ERROR_FORMAT;
        previous = index;
    }
    if (c->kind == EFGS_COMPUTED_OCHS) { /* the opponent cluster of every hole pair, by its preflop class */
        efgs_canonical preflop;
        unsigned a, b, pair[2];
        if (efgs_canonical_init(&preflop, 2u, 0u, ranks) != EFGS_OK || preflop.size != c->num_classes)
            return EFGS_ERROR_FORMAT;
        for (a = 0; a < reader->num_cards; a++)
            for (b = 0; b < reader->num_cards; b++) {
                uint64_t cls;
                if (a == b) { reader->pair_class[a * reader->num_cards + b] = 0; continue; }
                pair[0] = a < b ? a : b;
                pair[1] = a < b ? b : a;
                cls = efgs_canonical_index(&preflop, pair);
                if (cls >= c->num_classes) return EFGS_ERROR_FORMAT;
                reader->pair_class[a * reader->num_cards + b] = (uint16_t)cls;
            }
    }
    *length = size;
    return EFGS_OK;
}

/* ---- features ------------------------------------------------------------------------- */
/* 2 x wins + ties of ``hand`` on a complete board against every opponent pair of the cards
 * in neither, per opponent cluster (OCHS: ``clusters`` of them) or in all (``clusters`` 1);
 * opponents per cluster. */
static void showdown(const efgs_reader *reader, const efgs_computed *c, const unsigned *hand,
                     const unsigned *board, unsigned board_count, unsigned clusters, uint64_t *doubled,
                     uint64_t *opponents) {
    unsigned offset = 4u * (STANDARD_RANKS - reader->num_cards / 4u), i, a, b, k;
    unsigned char used[64] = {0};
    const unsigned char *cluster = reader->data + c->classes_offset;
    hand_state base = {{0, 0, 0, 0}, {0, 0, 0, 0}}, ours, theirs, with_a;
    uint32_t mine, value;
    unsigned flush_suit = 4u;
    for (i = 0; i < board_count; i++) { add_card(&base, board[i] + offset); used[board[i]] = 1; }
    for (i = 0; i < 4u; i++) /* five of a suit among seven cards need three on the board */
        if (RANK_COUNT[base.suits[i]] + 2u >= 5u) flush_suit = i;
    ours = base;
    add_card(&ours, hand[0] + offset);
    add_card(&ours, hand[1] + offset);
    used[hand[0]] = used[hand[1]] = 1;
    mine = hand_value(&ours, flush_suit);
    for (k = 0; k < clusters; k++) doubled[k] = opponents[k] = 0;
    for (a = 0; a < reader->num_cards; a++) {
        if (used[a]) continue;
        with_a = base;
        add_card(&with_a, a + offset);
        for (b = a + 1u; b < reader->num_cards; b++) {
            if (used[b]) continue;
            theirs = with_a;
            add_card(&theirs, b + offset);
            value = hand_value(&theirs, flush_suit);
            k = clusters > 1u ? cluster[reader->pair_class[a * reader->num_cards + b]] : 0u;
            doubled[k] += mine > value ? 2u : mine == value ? 1u : 0u;
            opponents[k]++;
        }
    }
}

/* The final-street features as the pipeline stores them (float32): OCHS, or E[HS]. */
static void final_features(const efgs_reader *reader, const efgs_computed *c, const unsigned *hand,
                           const unsigned *board, double *features) {
    uint64_t doubled[MAX_DIMS], opponents[MAX_DIMS], sum = 0, total = 0;
    unsigned k;
    float ehs;
    showdown(reader, c, hand, board, c->final_board, c->kind == EFGS_COMPUTED_OCHS ? c->dims : 1u, doubled,
             opponents);
    for (k = 0; k < c->dims; k++) { sum += doubled[k]; total += opponents[k]; }
    ehs = (float)((double)sum / (2.0 * (double)total));
    for (k = 0; k < c->dims; k++)
        features[k] = c->kind == EFGS_COMPUTED_EHS ? (double)ehs
                      : opponents[k] > 0 ? (double)(float)((double)doubled[k] / (2.0 * (double)opponents[k]))
                                         : (double)ehs;
}

/* The histogram (runouts per bin) of the final strength over every runout of the board. */
static void histogram_features(const efgs_reader *reader, const efgs_computed *c, const unsigned *hand,
                               const unsigned *board, unsigned board_count, double *features) {
    unsigned cards[5], runout = c->final_board - board_count, a, b, i, bin;
    unsigned char used[64] = {0};
    uint64_t doubled[1], opponents[1], unseen = reader->num_cards - 2u - c->final_board;
    uint64_t total = unseen * (unseen - 1u) / 2u;
    for (i = 0; i < c->dims; i++) features[i] = 0.0;
    for (i = 0; i < board_count; i++) { cards[i] = board[i]; used[board[i]] = 1; }
    used[hand[0]] = used[hand[1]] = 1;
    for (a = 0; a < reader->num_cards; a++) {
        if (used[a]) continue;
        cards[board_count] = a;
        for (b = runout == 2u ? a + 1u : reader->num_cards - 1u; b < reader->num_cards; b++) {
            if (runout == 2u) { if (used[b]) continue; cards[board_count + 1u] = b; }
            showdown(reader, c, hand, cards, c->final_board, 1u, doubled, opponents);
            bin = (unsigned)(doubled[0] * c->dims / (2u * total));
            features[bin < c->dims ? bin : c->dims - 1u] += 1.0;
            if (runout == 1u) break;
        }
    }
}

int efgs_computed_features(const efgs_reader *reader, unsigned round, const unsigned *hand,
                           const unsigned *board, double *features, int capacity) {
    const efgs_computed *c;
    if (round >= reader->num_card_rounds || reader->bucket_method[round] != EFGS_METHOD_COMPUTED) return EFGS_ERROR_NOT_FOUND;
    c = &reader->computed[round];
    if (capacity < (int)c->dims) return EFGS_ERROR_CAPACITY;
    if (c->kind == EFGS_COMPUTED_HISTOGRAM) histogram_features(reader, c, hand, board, reader->board_cards[round], features);
    else final_features(reader, c, hand, board, features);
    return (int)c->dims;
}

/* ---- the bucket ----------------------------------------------------------------------- */
static int64_t exception_of(const efgs_reader *reader, const efgs_computed *c, uint64_t index) {
    uint64_t lo = 0, hi = c->num_exceptions;
    const unsigned char *indices = reader->data + c->exception_index_offset;
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2u, at = le32(indices + 4u * mid);
        if (at == index) return (int64_t)le32(reader->data + c->exception_bucket_offset + 4u * mid);
        if (at < index) lo = mid + 1u; else hi = mid;
    }
    return -1;
}

int64_t efgs_computed_bucket(const efgs_reader *reader, unsigned round, const unsigned *hand,
                             const unsigned *board, uint64_t index) {
    const efgs_computed *c = &reader->computed[round];
    const unsigned char *centroid = reader->data + c->centroids_offset;
    double features[MAX_DIMS], cumulative[MAX_DIMS], best = 0.0, distance, runouts = 0.0;
    int64_t stored = exception_of(reader, c, index);
    uint32_t bucket, nearest = 0;
    unsigned k;
    if (stored >= 0) return stored;
    efgs_computed_features(reader, round, hand, board, features, MAX_DIMS);
    if (c->kind == EFGS_COMPUTED_HISTOGRAM) { /* the CDF without its final 1 */
        for (k = 0; k < c->dims; k++) runouts += features[k];
        for (k = 0, distance = 0.0; k + 1u < c->dims; k++) {
            distance += features[k];
            cumulative[k] = distance / runouts;
        }
    } else {
        for (k = 0; k < c->dims; k++) cumulative[k] = features[k];
    }
    /* A partial sum never decreases (its terms are >= 0 and IEEE addition is monotone), so a
     * centroid is left once it reaches the best distance: it could not be strictly nearer,
     * and the result is the full sums' result. */
    for (bucket = 0; bucket < reader->buckets[round]; bucket++, centroid += 8u * c->centroid_width) {
        distance = 0.0;
        for (k = 0; k < c->centroid_width && (bucket == 0 || distance < best); k++) {
            double d = cumulative[k] - le_double(centroid + 8u * k);
            distance += c->kind == EFGS_COMPUTED_HISTOGRAM ? (d < 0.0 ? -d : d) : d * d;
        }
        if (bucket == 0 || distance < best) { best = distance; nearest = bucket; }
    }
    return (int64_t)nearest;
}
