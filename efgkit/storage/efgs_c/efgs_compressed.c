/* efgs_compressed: a round's canonical-hand -> bucket table compressed with random access
 * (bucket method 6, format 10; docs/compact-format.md "Compressed bucket tables").
 *
 * A hand's bucket is almost a function of its ranks (where no flush can matter, suits change
 * no feature), so the table holds a base bucket per rank pattern -- the hole ranks' multiset,
 * the board ranks' multiset and, optionally, the flush state (the most board cards of one
 * suit m, the most hole cards h in a suit holding m) -- and the residual bucket - base of
 * every canonical hand, in canonical-index order. Both sequences (the base as differences
 * from the pattern before, from 0 at each block's start) are coded in blocks of
 * block_entries values with a canonical Huffman code each (most significant bit first):
 * v + B - 1 for a value v != 0, 2 B - 1 + k - 1 for a run of k zeros. Block indices hold
 * each block's first bit, so a lookup computes one pattern and decodes at most
 * block_entries symbols of two blocks, reading the file in place: nothing is allocated.
 * Every read is checked against its stream's end and the bucket against B, so a damaged
 * table is refused (EFGS_ERROR_CORRUPTED), never read past.
 */
#include "efgs.h"

#define COMPRESSED_HEAD_SIZE 48u
#define RANK_PATTERN_RESIDUALS 1u
#define MAX_CODE_LENGTH 24u
#define MAX_BLOCK_ENTRIES 4096u
#define MAX_COMPRESSED_BUCKETS (32768u - MAX_BLOCK_ENTRIES)

static uint32_t le16(const unsigned char *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8; }

static uint32_t le32(const unsigned char *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t le64(const unsigned char *p) { return (uint64_t)le32(p) | (uint64_t)le32(p + 4) << 32; }

static uint64_t aligned8(uint64_t offset) { return (offset + 7u) & ~(uint64_t)7u; }

/* C(n, k) for the small arguments of a pattern (n < 20, k <= 7). */
static uint64_t choose(unsigned n, unsigned k) {
    uint64_t value = 1;
    unsigned i;
    if (k > n) return 0;
    for (i = 1; i <= k; i++) value = value * (n - k + i) / i;
    return value;
}

static uint64_t pattern_count(unsigned ranks, unsigned board, unsigned flush_states) {
    uint64_t count = (uint64_t)ranks * (ranks + 1u) / 2u * choose(ranks + board - 1u, board);
    return flush_states && board ? count * 3u * board : count;
}

/* Read a code's counts (at *position, advanced past them and its symbols) and check them:
 * the Kraft sum, every symbol below limit_symbol. */
static int open_code(efgs_compressed_code *code, const unsigned char *bytes, uint64_t *position, uint64_t limit,
                     uint32_t limit_symbol) {
    uint64_t kraft = 0, total = 0, i;
    unsigned length;
    if (code->max_length < 1u || code->max_length > MAX_CODE_LENGTH || code->num_symbols < 1u ||
        code->num_symbols > limit_symbol || code->stream_bits >= (uint64_t)1 << 32 ||
        *position + 4u * (uint64_t)code->max_length + 2u * (uint64_t)code->num_symbols > limit)
        return EFGS_ERROR_FORMAT;
    code->counts[0] = 0;
    for (length = 1; length <= code->max_length; length++) {
        code->counts[length] = le32(bytes + *position + 4u * (length - 1u));
        if (code->counts[length] > code->num_symbols) return EFGS_ERROR_FORMAT;
        total += code->counts[length];
        kraft += (uint64_t)code->counts[length] << (code->max_length - length);
    }
    if (total != code->num_symbols || kraft > (uint64_t)1 << code->max_length) return EFGS_ERROR_FORMAT;
    code->symbols_offset = (size_t)(*position + 4u * code->max_length);
    for (i = 0; i < code->num_symbols; i++)
        if (le16(bytes + code->symbols_offset + 2u * i) >= limit_symbol) return EFGS_ERROR_FORMAT;
    *position = code->symbols_offset + 2u * (uint64_t)code->num_symbols;
    return EFGS_OK;
}

int efgs_compressed_open(efgs_reader *reader, unsigned round, const unsigned char *bytes, uint64_t position,
                         uint64_t limit, uint64_t *length) {
    efgs_compressed *table = &reader->compressed[round];
    const unsigned char *head = bytes + position;
    uint64_t buckets = reader->buckets[round], at, start = position;
    uint32_t limit_symbol;
    if (position > limit || limit - position < COMPRESSED_HEAD_SIZE) return EFGS_ERROR_FORMAT;
    table->residuals.max_length = head[1];
    table->flush_states = head[2];
    table->base.max_length = head[3];
    table->block_entries = le32(head + 4);
    table->entries = le64(head + 8);
    table->residuals.num_symbols = le32(head + 16);
    table->base.num_symbols = le32(head + 20);
    table->residuals.stream_bits = le64(head + 24);
    table->patterns = le64(head + 32);
    table->base.stream_bits = le64(head + 40);
    if (head[0] != RANK_PATTERN_RESIDUALS || table->flush_states > 1u || table->block_entries < 1u ||
        table->block_entries > MAX_BLOCK_ENTRIES || table->entries != reader->canonical[round].size ||
        buckets > MAX_COMPRESSED_BUCKETS || reader->private_cards != 2u ||
        table->patterns != pattern_count(reader->num_cards / 4u, reader->board_cards[round], table->flush_states))
        return EFGS_ERROR_FORMAT;
    limit_symbol = 2u * (uint32_t)buckets - 1u + table->block_entries;
    at = position + COMPRESSED_HEAD_SIZE;
    if (open_code(&table->residuals, bytes, &at, limit, limit_symbol) != EFGS_OK ||
        open_code(&table->base, bytes, &at, limit, limit_symbol) != EFGS_OK)
        return EFGS_ERROR_FORMAT;
    /* sections are aligned to 8 bytes from the table's start (which need not be aligned) */
    table->base.index_offset = (size_t)(start + aligned8(at - start));
    at = table->base.index_offset + 4u * ((table->patterns + table->block_entries - 1u) / table->block_entries);
    table->base.stream_offset = (size_t)(start + aligned8(at - start));
    at = table->base.stream_offset + (table->base.stream_bits + 7u) / 8u;
    table->residuals.index_offset = (size_t)(start + aligned8(at - start));
    at = table->residuals.index_offset + 4u * ((table->entries + table->block_entries - 1u) / table->block_entries);
    table->residuals.stream_offset = (size_t)(start + aligned8(at - start));
    at = table->residuals.stream_offset + (table->residuals.stream_bits + 7u) / 8u;
    if (at > limit) return EFGS_ERROR_FORMAT;
    *length = at - start;
    return EFGS_OK;
}

/* The dense index of a hand's rank pattern (compressed_reader.pattern_index). */
static uint64_t pattern_of(const efgs_compressed *table, unsigned ranks, const unsigned *hand,
                           const unsigned *board, unsigned board_cards) {
    unsigned low = hand[0] >> 2, high = hand[1] >> 2, sorted[8], per_suit[4] = {0, 0, 0, 0};
    unsigned i, j, value, most = 0, held = 0, here;
    uint64_t index, board_index = 0;
    if (low > high) { value = low; low = high; high = value; }
    index = (uint64_t)high * (high + 1u) / 2u + low;
    for (i = 0; i < board_cards; i++) { /* insertion sort of the board's ranks */
        value = board[i] >> 2;
        for (j = i; j > 0 && sorted[j - 1] > value; j--) sorted[j] = sorted[j - 1];
        sorted[j] = value;
    }
    for (i = 0; i < board_cards; i++) board_index += choose(sorted[i] + i, i + 1u);
    index = index * choose(ranks + board_cards - 1u, board_cards) + board_index;
    if (!table->flush_states || board_cards == 0) return index;
    for (i = 0; i < board_cards; i++) per_suit[board[i] & 3u]++;
    for (i = 0; i < 4u; i++) most = per_suit[i] > most ? per_suit[i] : most;
    for (i = 0; i < 4u; i++) {
        if (per_suit[i] != most) continue;
        here = ((hand[0] & 3u) == i) + ((hand[1] & 3u) == i);
        held = here > held ? here : held;
    }
    return index * 3u * board_cards + 3u * (most - 1u) + held;
}

/* The value at position ``within`` of block ``block`` of a coded stream (``accumulate``: the sum
 * of the block's values up to it), in *out; EFGS_ERROR_CORRUPTED if a code runs past its stream. */
static int coded_value(const efgs_reader *reader, const efgs_compressed_code *code, uint64_t block,
                       uint64_t within, uint32_t buckets, int accumulate, int64_t *out) {
    const unsigned char *stream = reader->data + code->stream_offset;
    uint64_t bit = le32(reader->data + code->index_offset + 4u * block), at = 0;
    uint32_t length, value, first, position, symbol, run_symbol = 2u * buckets - 1u;
    int64_t total = 0;
    for (;;) { /* at most within + 1 symbols: each moves ``at`` on, or answers */
        value = first = position = 0;
        for (length = 1; length <= code->max_length; length++) {
            if (bit >= code->stream_bits) return EFGS_ERROR_CORRUPTED;
            value |= stream[bit >> 3] >> (bit & 7u) & 1u;
            bit++;
            if (value - first < code->counts[length]) break;
            position += code->counts[length];
            first = (first + code->counts[length]) << 1;
            value <<= 1;
        }
        if (length > code->max_length) return EFGS_ERROR_CORRUPTED;
        symbol = le16(reader->data + code->symbols_offset + 2u * (position + value - first));
        if (symbol >= run_symbol) { /* a run of zeros */
            at += symbol - run_symbol + 1u;
            if (at > within) { *out = accumulate ? total : 0; return EFGS_OK; }
            continue;
        }
        if (at == within) {
            *out = (accumulate ? total : 0) + (int64_t)symbol - (int64_t)(buckets - 1u);
            return EFGS_OK;
        }
        total += (int64_t)symbol - (int64_t)(buckets - 1u);
        at++;
    }
}

int64_t efgs_compressed_bucket(const efgs_reader *reader, unsigned round, const unsigned *hand,
                               const unsigned *board, uint64_t index) {
    const efgs_compressed *table = &reader->compressed[round];
    uint32_t buckets = reader->buckets[round];
    uint64_t pattern;
    int64_t base, residual;
    if (index >= table->entries) return EFGS_ERROR_CORRUPTED;
    pattern = pattern_of(table, reader->num_cards / 4u, hand, board, reader->board_cards[round]);
    if (pattern >= table->patterns ||
        coded_value(reader, &table->base, pattern / table->block_entries, pattern % table->block_entries, buckets, 1,
                    &base) != EFGS_OK ||
        coded_value(reader, &table->residuals, index / table->block_entries, index % table->block_entries, buckets, 0,
                    &residual) != EFGS_OK)
        return EFGS_ERROR_CORRUPTED;
    return base + residual >= 0 && base + residual < (int64_t)buckets ? base + residual : EFGS_ERROR_CORRUPTED;
}
