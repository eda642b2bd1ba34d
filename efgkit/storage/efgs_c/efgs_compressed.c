/* efgs_compressed: a round's canonical-hand -> bucket table compressed with random access
 * (bucket method 6, format 10; docs/compact-format.md "Compressed bucket tables").
 *
 * A hand's bucket is almost a function of its ranks (where no flush can matter, suits change
 * no feature), so the table holds a base bucket per rank pattern -- the hole ranks' multiset,
 * the board ranks' multiset and, optionally, the flush state (the most board cards of one
 * suit m, the most hole cards h in a suit holding m) -- and the residual bucket - base of
 * every canonical hand, in canonical-index order, coded in blocks of block_entries hands:
 * symbols of one canonical Huffman code (most significant bit first), r + B - 1 for a
 * residual r != 0, 2 B - 1 + k - 1 for a run of k zeros. The block index holds each block's
 * first bit, so a lookup computes one pattern and decodes at most block_entries symbols,
 * reading the file in place: nothing is allocated. Every read is checked against the stream's
 * end and every bucket against B, so a damaged table is refused (EFGS_ERROR_CORRUPTED),
 * never read past.
 */
#include "efgs.h"

#define COMPRESSED_HEAD_SIZE 40u
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

int efgs_compressed_open(efgs_reader *reader, unsigned round, const unsigned char *bytes, uint64_t position,
                         uint64_t limit, uint64_t *length) {
    efgs_compressed *table = &reader->compressed[round];
    const unsigned char *head = bytes + position;
    uint64_t buckets = reader->buckets[round], kraft = 0, total = 0, end, i;
    unsigned length_bits, bits = reader->bucket_bits[round];
    if (position > limit || limit - position < COMPRESSED_HEAD_SIZE) return EFGS_ERROR_FORMAT;
    table->max_length = head[1];
    table->flush_states = head[2];
    table->block_entries = le32(head + 4);
    table->entries = le64(head + 8);
    table->num_symbols = le32(head + 16);
    table->stream_bits = le64(head + 24);
    table->patterns = le64(head + 32);
    if (head[0] != RANK_PATTERN_RESIDUALS || head[3] != 0 || le32(head + 20) != 0 || table->flush_states > 1u ||
        table->max_length < 1u || table->max_length > MAX_CODE_LENGTH || table->block_entries < 1u ||
        table->block_entries > MAX_BLOCK_ENTRIES || table->entries != reader->canonical[round].size ||
        buckets > MAX_COMPRESSED_BUCKETS || table->num_symbols < 1u ||
        table->num_symbols > 2u * buckets - 1u + table->block_entries || table->stream_bits >= (uint64_t)1 << 32 ||
        reader->private_cards != 2u ||
        table->patterns != pattern_count(reader->num_cards / 4u, reader->board_cards[round], table->flush_states))
        return EFGS_ERROR_FORMAT;
    table->blocks = (table->entries + table->block_entries - 1u) / table->block_entries;
    table->counts[0] = 0;
    end = position + COMPRESSED_HEAD_SIZE + 4u * (uint64_t)table->max_length + 2u * (uint64_t)table->num_symbols;
    if (end > limit) return EFGS_ERROR_FORMAT;
    for (length_bits = 1; length_bits <= table->max_length; length_bits++) {
        table->counts[length_bits] = le32(head + COMPRESSED_HEAD_SIZE + 4u * (length_bits - 1u));
        if (table->counts[length_bits] > table->num_symbols) return EFGS_ERROR_FORMAT;
        total += table->counts[length_bits];
        kraft += (uint64_t)table->counts[length_bits] << (table->max_length - length_bits);
    }
    if (total != table->num_symbols || kraft > (uint64_t)1 << table->max_length) return EFGS_ERROR_FORMAT;
    table->symbols_offset = (size_t)(position + COMPRESSED_HEAD_SIZE + 4u * table->max_length);
    for (i = 0; i < table->num_symbols; i++)
        if (le16(bytes + table->symbols_offset + 2u * i) >= 2u * buckets - 1u + table->block_entries)
            return EFGS_ERROR_FORMAT;
    /* sections are aligned to 8 bytes from the table's start (which need not be aligned) */
    table->base_offset = (size_t)(position + aligned8(end - position));
    table->index_offset = (size_t)(position + aligned8(table->base_offset - position + (table->patterns * bits + 7u) / 8u));
    table->stream_offset = (size_t)(position + aligned8(table->index_offset - position + 4u * table->blocks));
    end = table->stream_offset + (table->stream_bits + 7u) / 8u;
    if (table->index_offset > limit || table->stream_offset > limit || end > limit) return EFGS_ERROR_FORMAT;
    *length = end - position;
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

static unsigned stream_bit(const unsigned char *stream, uint64_t bit) { return stream[bit >> 3] >> (bit & 7u) & 1u; }

int64_t efgs_compressed_bucket(const efgs_reader *reader, unsigned round, const unsigned *hand,
                               const unsigned *board, uint64_t index) {
    const efgs_compressed *table = &reader->compressed[round];
    const unsigned char *stream = reader->data + table->stream_offset, *base = reader->data + table->base_offset;
    uint64_t within = index % table->block_entries, at = 0, bit, k, pattern;
    uint32_t buckets = reader->buckets[round], bits = reader->bucket_bits[round], length, code, first, position;
    uint32_t symbol, run_symbol = 2u * buckets - 1u;
    int64_t value = 0, residual = 0;
    if (index >= table->entries) return EFGS_ERROR_CORRUPTED;
    pattern = pattern_of(table, reader->num_cards / 4u, hand, board, reader->board_cards[round]);
    if (pattern >= table->patterns) return EFGS_ERROR_CORRUPTED;
    for (k = 0; k < bits; k++) value |= (int64_t)stream_bit(base, pattern * bits + k) << k;
    bit = le32(reader->data + table->index_offset + 4u * (index / table->block_entries));
    for (;;) { /* canonical decoding: the codes of one length are consecutive */
        code = first = position = 0;
        for (length = 1; length <= table->max_length; length++) {
            if (bit >= table->stream_bits) return EFGS_ERROR_CORRUPTED;
            code |= stream_bit(stream, bit++);
            if (code - first < table->counts[length]) break;
            position += table->counts[length];
            first = (first + table->counts[length]) << 1;
            code <<= 1;
        }
        if (length > table->max_length) return EFGS_ERROR_CORRUPTED;
        symbol = le16(reader->data + table->symbols_offset + 2u * (position + code - first));
        if (symbol >= run_symbol) { /* a run of zero residuals */
            at += symbol - run_symbol + 1u;
            if (at > within) break;
        } else if (at == within) {
            residual = (int64_t)symbol - (int64_t)(buckets - 1u);
            break;
        } else {
            at++;
        }
    }
    value += residual;
    return value >= 0 && value < (int64_t)buckets ? value : EFGS_ERROR_CORRUPTED;
}
