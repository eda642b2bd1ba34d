/* efgs: read a compact efgkit strategy (.efgs) in portable C99. See efgs.h and
 * docs/compact-format.md. */
#if defined(__unix__) || defined(__APPLE__)
#define _POSIX_C_SOURCE 200809L
#define EFGS_HAVE_MMAP 1
#endif

#include "efgs.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef EFGS_HAVE_MMAP
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#endif

#define HEADER_SIZE 150u
#define HEADER_CRC_OFFSET 112u
#define CLASS_ENTRY_SIZE 16u
#define VALUES_HEAD_SIZE 16u
#define MAX_SLOT_BITS 56u
#define FLAG_KEYS 2u
#define FLAG_GAMEDEF 4u
#define FLAG_CODED 8u
#define FLAG_COMPUTED 16u  /* format 8: a round's bucket is computed (efgs_computed.c) */
#define FLAG_MODELLED 32u  /* format 9 (or 10): rows coded by the context model and range coder */
#define MODEL_HEAD_SIZE 40u
#define FLAG_RULE 64u      /* format 10: the card table records the rule that chose each round's method
                              and may hold compressed tables (efgs_compressed.c) */
#define RULE_RECORD_SIZE 8u
#define CODED_HEAD_SIZE 40u
#define CODED_CONTEXT_SIZE 16u
#define MAX_CODE_LENGTH 24u
#define MAX_CODED_SYMBOLS 16384u
#define CODED_ESCAPE 0u
#define CODED_EMPTY 1u
#define CODED_FIRST_ENTRY 2u
#define MAX_CARDS 62u

static const unsigned char MAGIC[8] = {'E', 'F', 'G', 'S', '\r', '\n', 0x1a, '\n'};

static uint32_t read_u16(const unsigned char *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8; }

static uint32_t read_u32(const unsigned char *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t read_u64(const unsigned char *p) {
    return (uint64_t)read_u32(p) | (uint64_t)read_u32(p + 4) << 32;
}

static uint32_t crc32_update(uint32_t crc, const unsigned char *data, size_t length) {
    size_t i;
    int bit;
    crc = ~crc;
    for (i = 0; i < length; i++) {
        crc ^= data[i];
        for (bit = 0; bit < 8; bit++) crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1u)));
    }
    return ~crc;
}

/* ---- BLAKE2b (RFC 7693), enough of it for 8-byte digests of short keys ---------------- */

static const uint64_t BLAKE2B_IV[8] = {
    0x6A09E667F3BCC908ull, 0xBB67AE8584CAA73Bull, 0x3C6EF372FE94F82Bull, 0xA54FF53A5F1D36F1ull,
    0x510E527FADE682D1ull, 0x9B05688C2B3E6C1Full, 0x1F83D9ABFB41BD6Bull, 0x5BE0CD19137E2179ull};

static const unsigned char BLAKE2B_SIGMA[12][16] = {
    {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15},
    {14, 10, 4, 8, 9, 15, 13, 6, 1, 12, 0, 2, 11, 7, 5, 3},
    {11, 8, 12, 0, 5, 2, 15, 13, 10, 14, 3, 6, 7, 1, 9, 4},
    {7, 9, 3, 1, 13, 12, 11, 14, 2, 6, 5, 10, 4, 0, 15, 8},
    {9, 0, 5, 7, 2, 4, 10, 15, 14, 1, 11, 12, 6, 8, 3, 13},
    {2, 12, 6, 10, 0, 11, 8, 3, 4, 13, 7, 5, 15, 14, 1, 9},
    {12, 5, 1, 15, 14, 13, 4, 10, 0, 7, 6, 3, 9, 2, 8, 11},
    {13, 11, 7, 14, 12, 1, 3, 9, 5, 0, 15, 4, 8, 6, 2, 10},
    {6, 15, 14, 9, 11, 3, 0, 8, 12, 2, 13, 7, 1, 4, 10, 5},
    {10, 2, 8, 4, 7, 6, 1, 5, 15, 11, 9, 14, 3, 12, 13, 0},
    {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15},
    {14, 10, 4, 8, 9, 15, 13, 6, 1, 12, 0, 2, 11, 7, 5, 3}};

#define ROTR64(x, n) (((x) >> (n)) | ((x) << (64 - (n))))
#define BLAKE2B_G(a, b, c, d, x, y)            \
    do {                                       \
        v[a] = v[a] + v[b] + (x);              \
        v[d] = ROTR64(v[d] ^ v[a], 32);        \
        v[c] = v[c] + v[d];                    \
        v[b] = ROTR64(v[b] ^ v[c], 24);        \
        v[a] = v[a] + v[b] + (y);              \
        v[d] = ROTR64(v[d] ^ v[a], 16);        \
        v[c] = v[c] + v[d];                    \
        v[b] = ROTR64(v[b] ^ v[c], 63);        \
    } while (0)

static void blake2b_compress(uint64_t h[8], const unsigned char block[128], uint64_t counted, int last) {
    uint64_t v[16], m[16];
    int i;
    for (i = 0; i < 8; i++) {
        v[i] = h[i];
        v[i + 8] = BLAKE2B_IV[i];
    }
    v[12] ^= counted; /* the 128-bit byte counter's high half stays 0 for keys < 2^64 bytes */
    if (last) v[14] = ~v[14];
    for (i = 0; i < 16; i++) m[i] = read_u64(block + 8 * i);
    for (i = 0; i < 12; i++) {
        const unsigned char *s = BLAKE2B_SIGMA[i];
        BLAKE2B_G(0, 4, 8, 12, m[s[0]], m[s[1]]);
        BLAKE2B_G(1, 5, 9, 13, m[s[2]], m[s[3]]);
        BLAKE2B_G(2, 6, 10, 14, m[s[4]], m[s[5]]);
        BLAKE2B_G(3, 7, 11, 15, m[s[6]], m[s[7]]);
        BLAKE2B_G(0, 5, 10, 15, m[s[8]], m[s[9]]);
        BLAKE2B_G(1, 6, 11, 12, m[s[10]], m[s[11]]);
        BLAKE2B_G(2, 7, 8, 13, m[s[12]], m[s[13]]);
        BLAKE2B_G(3, 4, 9, 14, m[s[14]], m[s[15]]);
    }
    for (i = 0; i < 8; i++) h[i] ^= v[i] ^ v[i + 8];
}

/* BLAKE2b with an 8-byte digest of (seed as 8 little-endian bytes, then the key): the
 * digest's bytes read little-endian are h[0]. */
uint64_t efgs_key_hash(const char *key, size_t key_length, uint64_t seed) {
    uint64_t h[8];
    unsigned char block[128];
    size_t total = key_length + 8u, done = 0, fill, i;
    for (i = 0; i < 8; i++) h[i] = BLAKE2B_IV[i];
    h[0] ^= 0x01010000ull ^ 8u; /* digest length 8, no key, fanout and depth 1 */
    for (;;) {
        for (fill = 0; fill < 128 && done + fill < total; fill++) {
            size_t at = done + fill;
            block[fill] = at < 8 ? (unsigned char)(seed >> (8 * at)) : (unsigned char)key[at - 8];
        }
        done += fill;
        if (done == total) {
            memset(block + fill, 0, 128 - fill);
            blake2b_compress(h, block, (uint64_t)done, 1);
            return h[0];
        }
        blake2b_compress(h, block, (uint64_t)done, 0);
    }
}

/* ---- SHA-256 (FIPS 180-4): the bucket-table file's fingerprint -------------------------- */

static const uint32_t SHA256_K[64] = {
    0x428a2f98u, 0x71374491u, 0xb5c0fbcfu, 0xe9b5dba5u, 0x3956c25bu, 0x59f111f1u, 0x923f82a4u, 0xab1c5ed5u,
    0xd807aa98u, 0x12835b01u, 0x243185beu, 0x550c7dc3u, 0x72be5d74u, 0x80deb1feu, 0x9bdc06a7u, 0xc19bf174u,
    0xe49b69c1u, 0xefbe4786u, 0x0fc19dc6u, 0x240ca1ccu, 0x2de92c6fu, 0x4a7484aau, 0x5cb0a9dcu, 0x76f988dau,
    0x983e5152u, 0xa831c66du, 0xb00327c8u, 0xbf597fc7u, 0xc6e00bf3u, 0xd5a79147u, 0x06ca6351u, 0x14292967u,
    0x27b70a85u, 0x2e1b2138u, 0x4d2c6dfcu, 0x53380d13u, 0x650a7354u, 0x766a0abbu, 0x81c2c92eu, 0x92722c85u,
    0xa2bfe8a1u, 0xa81a664bu, 0xc24b8b70u, 0xc76c51a3u, 0xd192e819u, 0xd6990624u, 0xf40e3585u, 0x106aa070u,
    0x19a4c116u, 0x1e376c08u, 0x2748774cu, 0x34b0bcb5u, 0x391c0cb3u, 0x4ed8aa4au, 0x5b9cca4fu, 0x682e6ff3u,
    0x748f82eeu, 0x78a5636fu, 0x84c87814u, 0x8cc70208u, 0x90befffau, 0xa4506cebu, 0xbef9a3f7u, 0xc67178f2u};

#define ROTR32(x, n) (((x) >> (n)) | ((x) << (32 - (n))))

static void sha256_block(uint32_t h[8], const unsigned char block[64]) {
    uint32_t w[64], a[8], t1, t2;
    int i;
    for (i = 0; i < 16; i++)
        w[i] = (uint32_t)block[4 * i] << 24 | (uint32_t)block[4 * i + 1] << 16 |
               (uint32_t)block[4 * i + 2] << 8 | (uint32_t)block[4 * i + 3];
    for (i = 16; i < 64; i++)
        w[i] = w[i - 16] + (ROTR32(w[i - 15], 7) ^ ROTR32(w[i - 15], 18) ^ (w[i - 15] >> 3)) + w[i - 7] +
               (ROTR32(w[i - 2], 17) ^ ROTR32(w[i - 2], 19) ^ (w[i - 2] >> 10));
    for (i = 0; i < 8; i++) a[i] = h[i];
    for (i = 0; i < 64; i++) {
        t1 = a[7] + (ROTR32(a[4], 6) ^ ROTR32(a[4], 11) ^ ROTR32(a[4], 25)) + ((a[4] & a[5]) ^ (~a[4] & a[6])) +
             SHA256_K[i] + w[i];
        t2 = (ROTR32(a[0], 2) ^ ROTR32(a[0], 13) ^ ROTR32(a[0], 22)) + ((a[0] & a[1]) ^ (a[0] & a[2]) ^ (a[1] & a[2]));
        memmove(a + 1, a, 7 * sizeof *a);
        a[4] += t1;
        a[0] = t1 + t2;
    }
    for (i = 0; i < 8; i++) h[i] += a[i];
}

static void sha256(const unsigned char *data, size_t length, unsigned char digest[32]) {
    uint32_t h[8] = {0x6a09e667u, 0xbb67ae85u, 0x3c6ef372u, 0xa54ff53au,
                     0x510e527fu, 0x9b05688cu, 0x1f83d9abu, 0x5be0cd19u};
    unsigned char tail[128];
    size_t done = length / 64u * 64u, rest = length - done, i, padded;
    uint64_t bits = (uint64_t)length * 8u;
    for (i = 0; i < done; i += 64u) sha256_block(h, data + i);
    memset(tail, 0, sizeof tail);
    memcpy(tail, data + done, rest);
    tail[rest] = 0x80;
    padded = rest < 56u ? 64u : 128u;
    for (i = 0; i < 8; i++) tail[padded - 1u - i] = (unsigned char)(bits >> (8u * i));
    for (i = 0; i < padded; i += 64u) sha256_block(h, tail + i);
    for (i = 0; i < 32; i++) digest[i] = (unsigned char)(h[i / 4] >> (24u - 8u * (i % 4)));
}

/* Does [offset, offset + length) lie inside [start, size)? Written so nothing overflows. */
static int inside(uint64_t offset, uint64_t length, uint64_t start, uint64_t size) {
    return offset >= start && offset <= size && length <= size - offset;
}

static unsigned bit_length(uint64_t value) {
    unsigned length = 0;
    while (value) {
        length++;
        value >>= 1;
    }
    return length;
}

/* C(n, k), or UINT64_MAX if it does not fit in 64 bits. */
static uint64_t binomial(uint64_t n, uint64_t k) {
    uint64_t result = 1, i;
    if (k > n) return 0;
    if (k > n - k) k = n - k;
    for (i = 1; i <= k; i++) { /* result = C(n - k + i, i) after each step */
        if (result > UINT64_MAX / (n - k + i)) return UINT64_MAX;
        result = result * (n - k + i) / i;
    }
    return result;
}

enum { BY_COMBINATION, BY_CANONICAL, CANONICAL, LOSSLESS, CONSTANT, COMPUTED, COMPRESSED, NUM_METHODS };
#define ACTION_GROUP_SIZE 16u
#define TABLES_HEAD_SIZE 16u
#define TABLES_ROUND_SIZE 24u
static const unsigned char TABLES_MAGIC[8] = {'E', 'F', 'G', 'B', '\r', '\n', 0x1a, '\n'};

static unsigned popcount32(uint32_t x) {
    unsigned count = 0;
    for (; x; x &= x - 1u) count++;
    return count;
}

/* Build Waugh's configuration table of (hole, board) cards in a deck of num_ranks ranks x 4
 * suits, in efgkit's order: configurations (four per-suit card counts, ascending) are
 * enumerated lexicographically, each with its first index; suits of equal counts form a
 * multiset. EFGS_ERROR_FORMAT if the deal does not fit the fixed tables. */
int efgs_canonical_init(efgs_canonical *c, unsigned hole, unsigned board, unsigned num_ranks) {
    unsigned radix = hole + 1u, codes = board ? radix * (board + 1u) : radix, code, a[4], p, rank;
    uint64_t total = 0, multiplier, size;
    memset(c, 0, sizeof *c);
    c->groups[0] = hole;
    c->groups[1] = board;
    c->num_groups = board ? 2u : 1u;
    if (codes > EFGS_MAX_CODES || num_ranks < 1u || num_ranks > 13u || hole + board > 4u * num_ranks)
        return EFGS_ERROR_FORMAT;
    for (code = 0; code < codes; code++) {
        unsigned in_hole = code % radix, in_board = code / radix;
        c->suit_range[code] = in_hole + in_board > num_ranks ? 0u :
            binomial(num_ranks, in_hole) * binomial(num_ranks - in_hole, in_board);
    }
    for (a[0] = 0; a[0] < codes; a[0]++)
        for (a[1] = a[0]; a[1] < codes; a[1]++)
            for (a[2] = a[1]; a[2] < codes; a[2]++)
                for (a[3] = a[2]; a[3] < codes; a[3]++) {
                    unsigned in_hole = 0, in_board = 0, d[4], previous = codes;
                    for (p = 0; p < 4; p++) {
                        if (c->suit_range[a[p]] == 0) break;
                        in_hole += a[p] % radix;
                        in_board += a[p] / radix;
                        d[p] = a[3 - p]; /* descending */
                    }
                    if (p < 4 || in_hole != hole || in_board != board) continue;
                    if (c->num_configurations == EFGS_MAX_CONFIGURATIONS) return EFGS_ERROR_FORMAT;
                    /* fold from the last position up: multipliers and ranks within groups */
                    multiplier = 1;
                    rank = 0;
                    for (p = 4; p-- > 0;) {
                        if (d[p] == previous) {
                            rank++;
                        } else {
                            if (previous != codes) multiplier *= binomial(c->suit_range[previous] + rank - 1u, rank);
                            previous = d[p];
                            rank = 1;
                        }
                        if (p < 3) {
                            c->multiplier[c->num_configurations][p] = multiplier;
                            c->group_rank[c->num_configurations][p] = (unsigned char)rank;
                        }
                    }
                    size = multiplier * binomial(c->suit_range[previous] + rank - 1u, rank);
                    c->configuration_codes[c->num_configurations] =
                        (uint32_t)d[0] << 24 | (uint32_t)d[1] << 16 | (uint32_t)d[2] << 8 | d[3];
                    c->configuration_first[c->num_configurations++] = total;
                    total += size;
                }
    c->size = total;
    return EFGS_OK;
}

/* Colexicographic rank of a rank set among the sets of its size. */
static uint64_t colex(uint32_t ranks) {
    uint64_t rank = 0;
    unsigned member = 0, low;
    for (; ranks; ranks &= ranks - 1u) {
        for (low = 0; !((ranks >> low) & 1u); low++) continue;
        rank += binomial(low, ++member);
    }
    return rank;
}

/* The canonical index of cards (hole cards, then board; ids 4 rank + suit). */
uint64_t efgs_canonical_index(const efgs_canonical *c, const unsigned *cards) {
    uint32_t used[4] = {0, 0, 0, 0}, ranks[4], shifted[4], bit;
    uint64_t keys[4] = {0, 0, 0, 0}, key, first, value;
    unsigned codes[4] = {0, 0, 0, 0}, position = 0, group, k, suit, configuration, rank;
    for (group = 0; group < c->num_groups; group++) {
        memset(ranks, 0, sizeof ranks);
        memset(shifted, 0, sizeof shifted);
        for (k = 0; k < c->groups[group]; k++, position++) {
            suit = cards[position] & 3u;
            bit = (uint32_t)1 << (cards[position] >> 2);
            ranks[suit] |= bit;
            /* the rank's place among the ranks this suit has not dealt before */
            shifted[suit] |= bit >> popcount32(used[suit] & (bit - 1u));
        }
        for (suit = 0; suit < 4; suit++) {
            keys[suit] += c->suit_range[codes[suit]] * colex(shifted[suit]);
            codes[suit] += popcount32(ranks[suit]) * (group ? c->groups[0] + 1u : 1u);
            used[suit] |= ranks[suit];
        }
    }
    for (suit = 0; suit < 4; suit++) keys[suit] |= (uint64_t)codes[suit] << 40;
    for (suit = 1; suit < 4; suit++) { /* sort descending: the suit names vanish */
        key = keys[suit];
        for (k = suit; k > 0 && keys[k - 1] < key; k--) keys[k] = keys[k - 1];
        keys[k] = key;
    }
    key = (uint32_t)(keys[0] >> 40) << 24 | (uint32_t)(keys[1] >> 40) << 16 |
          (uint32_t)(keys[2] >> 40) << 8 | (uint32_t)(keys[3] >> 40);
    for (configuration = 0; configuration < c->num_configurations; configuration++)
        if (c->configuration_codes[configuration] == key) break;
    if (configuration == c->num_configurations) return UINT64_MAX; /* cannot happen for valid cards */
    first = c->configuration_first[configuration] + (keys[3] & 0xFFFFFFFFFFull);
    for (k = 0; k < 3; k++) {
        value = keys[k] & 0xFFFFFFFFFFull;
        rank = c->group_rank[configuration][k];
        first += c->multiplier[configuration][k] * (rank == 1u ? value : binomial(value + rank - 1u, rank));
    }
    return first;
}

/* Bucket count of the lossless method: every deal of the board in order, then the hand;
 * UINT64_MAX if it does not fit. */
static uint64_t lossless_buckets(const efgs_reader *reader, unsigned round) {
    uint64_t count = binomial(reader->num_cards, reader->private_cards), factor;
    unsigned past;
    for (past = 0; past <= round; past++) {
        if (reader->board_dealt[past] == 0) continue;
        factor = binomial(reader->num_cards, reader->board_dealt[past]);
        if (count == UINT64_MAX || factor == UINT64_MAX || count > UINT64_MAX / factor) return UINT64_MAX;
        count *= factor;
    }
    return count;
}

/* Entries of a round's bucket table: hands x boards, or canonical hands; UINT64_MAX if huge. */
static uint64_t bucket_table_entries(const efgs_reader *reader, unsigned round) {
    uint64_t hands = binomial(reader->num_cards, reader->private_cards);
    uint64_t boards = binomial(reader->num_cards, reader->board_cards[round]);
    if (reader->bucket_method[round] == BY_CANONICAL) return reader->canonical[round].size;
    if (hands == UINT64_MAX || boards == UINT64_MAX || (boards && hands > UINT64_MAX / 64u / boards))
        return UINT64_MAX;
    return hands * boards;
}

/* Check a round's record (its method, bucket count) and build its canonical index. */
static int open_card_round(efgs_reader *reader, unsigned round) {
    unsigned method = reader->bucket_method[round], board = reader->board_cards[round];
    uint64_t computed = 0;
    if (method >= NUM_METHODS || reader->bucket_source[round] > 1u || reader->bucket_bits[round] > 32u ||
        reader->buckets[round] < 1u || (uint64_t)reader->buckets[round] > (uint64_t)1 << reader->bucket_bits[round] ||
        reader->private_cards + board > reader->num_cards ||
        (reader->bucket_source[round] == 1u && method != BY_CANONICAL) ||
        (method == COMPUTED && !(reader->flags & FLAG_COMPUTED)) ||
        (method == COMPRESSED && (!(reader->flags & FLAG_RULE) || reader->bucket_source[round] != 0)))
        return EFGS_ERROR_FORMAT;
    if (method == BY_CANONICAL || method == CANONICAL || method == COMPUTED || method == COMPRESSED) {
        if (reader->num_cards % 4u != 0 || reader->num_cards > 52u ||
            efgs_canonical_init(&reader->canonical[round], reader->private_cards, board, reader->num_cards / 4u) != EFGS_OK)
            return EFGS_ERROR_FORMAT;
        computed = reader->canonical[round].size;
    }
    if (method == LOSSLESS) computed = lossless_buckets(reader, round);
    if (method == CONSTANT) computed = 1;
    if (method >= CANONICAL && method < COMPUTED &&
        (reader->bucket_source[round] != 0 || computed != reader->buckets[round]))
        return EFGS_ERROR_FORMAT;
    return EFGS_OK;
}

/* Read and check the card table's head, per-round records, action groups, names, the
 * bucket-table file's reference and the inline tables' extents. */
static int open_card_table(efgs_reader *reader, const unsigned char *bytes, size_t size) {
    const unsigned char *head = bytes + reader->cards_offset;
    uint64_t position = reader->cards_offset + 8u, length;
    unsigned round, board = 0, i, j, external = 0;
    int status;
    if (!inside(reader->cards_offset, 8u, 0, size)) return EFGS_ERROR_FORMAT;
    reader->card_name_width = head[0];
    reader->num_cards = head[1];
    reader->private_cards = head[2];
    reader->num_card_rounds = head[3];
    reader->perfect_recall = head[4];
    reader->num_action_groups = head[5];
    reader->card_action_bits = head[6];
    if (reader->card_name_width < 1u || reader->card_name_width > 4u || reader->num_cards < 2u ||
        reader->num_cards > MAX_CARDS || reader->private_cards < 1u ||
        reader->private_cards > reader->num_cards || reader->num_card_rounds < 1u ||
        reader->num_card_rounds > EFGS_MAX_CARD_ROUNDS || reader->perfect_recall > 1u ||
        reader->num_action_groups < 1u || reader->num_action_groups > EFGS_MAX_ACTION_GROUPS ||
        reader->card_action_bits < 1u || reader->card_action_bits > 16u ||
        !inside(position, 8u * reader->num_card_rounds + ACTION_GROUP_SIZE * reader->num_action_groups +
                (uint64_t)reader->card_name_width * reader->num_cards, 0, size))
        return EFGS_ERROR_FORMAT;
    for (round = 0; round < reader->num_card_rounds; round++, position += 8u) {
        board += bytes[position];
        reader->board_dealt[round] = bytes[position];
        reader->board_cards[round] = board;
        reader->bucket_bits[round] = bytes[position + 1u];
        reader->bucket_method[round] = bytes[position + 2u];
        reader->bucket_source[round] = bytes[position + 3u];
        reader->buckets[round] = read_u32(bytes + position + 4u);
        external |= reader->bucket_source[round] == 1u;
    }
    for (i = 0; i < reader->num_action_groups; i++, position += ACTION_GROUP_SIZE) {
        reader->group_actions[i] = read_u16(bytes + position);
        reader->group_first_row[i] = read_u32(bytes + position + 4u);
        reader->group_first_value[i] = read_u64(bytes + position + 8u);
        if (reader->group_actions[i] < 1u || reader->group_actions[i] >= 1u << reader->card_action_bits)
            return EFGS_ERROR_FORMAT;
    }
    reader->card_names_offset = (size_t)position;
    for (i = 0; i < reader->num_cards * reader->card_name_width; i++) /* ASCII names */
        if (bytes[position + i] > 127u) return EFGS_ERROR_FORMAT;
    for (i = 0; i < reader->num_cards; i++) /* every card's name differs from the others' */
        for (j = 0; j < i; j++)
            if (memcmp(bytes + position + i * reader->card_name_width,
                       bytes + position + j * reader->card_name_width, reader->card_name_width) == 0)
                return EFGS_ERROR_FORMAT;
    position += (uint64_t)reader->card_name_width * reader->num_cards;
    if (external) { /* sha256, u16 name length, name */
        if (!inside(position, 34u, 0, size) || !inside(position + 34u, read_u16(bytes + position + 32u), 0, size))
            return EFGS_ERROR_FORMAT;
        reader->tables_sha256 = bytes + position;
        reader->tables_name_length = read_u16(bytes + position + 32u);
        reader->tables_name = (const char *)bytes + position + 34u;
        position += 34u + reader->tables_name_length;
    }
    if (reader->flags & FLAG_RULE) { /* u32 hand evaluations, u32 decoded entries per lookup */
        if (!inside(position, RULE_RECORD_SIZE, 0, size)) return EFGS_ERROR_FORMAT;
        reader->rule_budget = read_u32(bytes + position);
        reader->rule_decode_budget = read_u32(bytes + position + 4u);
        position += RULE_RECORD_SIZE;
    }
    for (round = 0; round < reader->num_card_rounds; round++) {
        if ((status = open_card_round(reader, round)) != EFGS_OK) return status;
        if (reader->bucket_method[round] == COMPUTED) { /* its description, where a table would be */
            if (reader->bucket_source[round] != 0 ||
                (status = efgs_computed_open(reader, round, bytes, position, size, &length)) != EFGS_OK)
                return EFGS_ERROR_FORMAT;
            position += length;
            continue;
        }
        if (reader->bucket_method[round] == COMPRESSED) { /* its compressed table, inline */
            if ((status = efgs_compressed_open(reader, round, bytes, position, size, &length)) != EFGS_OK)
                return EFGS_ERROR_FORMAT;
            position += length;
            continue;
        }
        if (reader->bucket_method[round] > BY_CANONICAL || reader->bucket_source[round] == 1u) continue;
        length = bucket_table_entries(reader, round);
        if (length == UINT64_MAX) return EFGS_ERROR_FORMAT;
        length = (length * reader->bucket_bits[round] + 7u) / 8u;
        if (!inside(position, length, 0, size)) return EFGS_ERROR_FORMAT;
        reader->bucket_table_offset[round] = (size_t)position;
        position += length;
    }
    return EFGS_OK;
}

int efgs_attach_bucket_tables(efgs_reader *reader, const void *data, size_t size) {
    const unsigned char *bytes = (const unsigned char *)data, *record;
    unsigned char digest[32];
    unsigned round, rounds;
    uint64_t entries, offset;
    if (reader->tables_sha256 == NULL) return EFGS_OK; /* every table is in the strategy file */
    sha256(bytes, size, digest);
    if (memcmp(digest, reader->tables_sha256, 32) != 0 || size < TABLES_HEAD_SIZE ||
        memcmp(bytes, TABLES_MAGIC, 8) != 0 || read_u16(bytes + 8) != 1u)
        return EFGS_ERROR_TABLES;
    rounds = bytes[10];
    if (bytes[11] * 4u != reader->num_cards || !inside(TABLES_HEAD_SIZE, (uint64_t)TABLES_ROUND_SIZE * rounds, 0, size))
        return EFGS_ERROR_TABLES;
    for (round = 0; round < reader->num_card_rounds; round++) {
        if (reader->bucket_source[round] != 1u) continue;
        if (round >= rounds) return EFGS_ERROR_TABLES;
        record = bytes + TABLES_HEAD_SIZE + TABLES_ROUND_SIZE * round;
        entries = read_u64(record + 8);
        offset = read_u64(record + 16);
        if (record[0] != reader->private_cards || record[1] != reader->board_cards[round] ||
            record[2] != reader->bucket_bits[round] || read_u32(record + 4) != reader->buckets[round] ||
            entries != reader->canonical[round].size ||
            !inside(offset, (entries * reader->bucket_bits[round] + 7u) / 8u, 0, size))
            return EFGS_ERROR_TABLES;
        reader->bucket_table_offset[round] = (size_t)offset;
    }
    reader->tables_data = bytes;
    reader->tables_size = size;
    return EFGS_OK;
}

static uint64_t value_bit(const efgs_reader *reader, uint64_t j);

/* The coded rows' head, contexts and block index (format 7): every table inside the file,
 * every code's lengths within the Kraft bound (so decoding never runs past a table). */
static int open_coded(efgs_reader *reader, const unsigned char *bytes, size_t size) {
    const unsigned char *head = bytes + reader->values_offset, *record;
    uint64_t base = reader->values_offset, blocks, used, kraft, table, entries;
    unsigned c, length;
    efgs_coded_context *context;
    reader->block_rows = read_u32(head);
    reader->num_contexts = read_u32(head + 4u);
    blocks = read_u64(head + 8u);
    reader->stream_bits = read_u64(head + 32u);
    if (reader->block_rows == 0 || reader->num_contexts > EFGS_MAX_CODED_CONTEXTS ||
        blocks != ((uint64_t)reader->num_rows + reader->block_rows - 1u) / reader->block_rows ||
        blocks > size / 8u || read_u64(head + 16u) > size || read_u64(head + 24u) > size ||
        !inside(base + read_u64(head + 16u), 8u * blocks, 0, size) ||
        !inside(base + read_u64(head + 24u), (reader->stream_bits + 7u) / 8u, 0, size) ||
        !inside(base + CODED_HEAD_SIZE, (uint64_t)CODED_CONTEXT_SIZE * reader->num_contexts, 0, size))
        return EFGS_ERROR_FORMAT;
    reader->block_index_offset = (size_t)(base + read_u64(head + 16u));
    reader->stream_offset = (size_t)(base + read_u64(head + 24u));
    for (c = 0; c < reader->num_contexts; c++) {
        record = head + CODED_HEAD_SIZE + CODED_CONTEXT_SIZE * c;
        context = &reader->contexts[c];
        context->num_actions = read_u16(record);
        context->field_bits = record[2];
        context->max_length = record[3];
        context->num_symbols = read_u32(record + 4u);
        table = read_u64(record + 8u);
        if (context->num_actions < 1u || context->num_actions > EFGS_MAX_CODED_ACTIONS ||
            context->field_bits > 32u || context->max_length > MAX_CODE_LENGTH ||
            context->num_symbols < CODED_FIRST_ENTRY || context->num_symbols > MAX_CODED_SYMBOLS ||
            table > size || !inside(base + table, 4u * context->max_length, 0, size))
            return EFGS_ERROR_FORMAT;
        context->counts_offset = (size_t)(base + table);
        used = kraft = 0;
        context->counts[0] = 0;
        for (length = 1; length <= context->max_length; length++) {
            context->counts[length] = read_u32(bytes + context->counts_offset + 4u * (length - 1u));
            if (context->counts[length] > MAX_CODED_SYMBOLS) return EFGS_ERROR_FORMAT;
            used += context->counts[length];
            kraft += (uint64_t)context->counts[length] << (context->max_length - length);
        }
        entries = base + table + 4u * context->max_length + 2u * used;
        if (used > context->num_symbols || kraft > ((uint64_t)1 << context->max_length) ||
            !inside(entries, 4u * (uint64_t)(context->num_symbols - CODED_FIRST_ENTRY) *
                                 (context->num_actions - 1u), 0, size))
            return EFGS_ERROR_FORMAT;
        context->order_offset = context->counts_offset + 4u * context->max_length;
        context->entries_offset = (size_t)entries;
    }
    return EFGS_OK;
}

/* The modelled rows' head, first probabilities and block index (format 9): all inside
 * the file, every first probability non-zero (so no context ever has probability 0 or 1). */
static int open_modelled(efgs_reader *reader, const unsigned char *bytes, size_t size) {
    const unsigned char *head = bytes + reader->values_offset;
    uint64_t base = reader->values_offset, index_at, stream_at, c;
    reader->block_rows = read_u32(head);
    reader->model_total = read_u16(head + 4u);
    reader->model_max_actions = head[6];
    reader->model_blocks = read_u64(head + 8u);
    index_at = read_u64(head + 16u);
    stream_at = read_u64(head + 24u);
    reader->model_stream_bytes = read_u64(head + 32u);
    if (reader->block_rows == 0 || reader->model_total < 2u || reader->model_total > EFGS_MAX_MODEL_TOTAL ||
        reader->model_max_actions < 1u || reader->model_max_actions > EFGS_MAX_MODEL_ACTIONS)
        return EFGS_ERROR_FORMAT;
    reader->model_tree_bits = bit_length(reader->model_total - 2u);
    reader->model_contexts = 1u + (8u + (1u << reader->model_tree_bits)) *
                                      (reader->model_max_actions * (reader->model_max_actions - 1u) / 2u);
    if (reader->model_blocks != ((uint64_t)reader->num_rows + reader->block_rows - 1u) / reader->block_rows ||
        reader->model_blocks > size / 4u || index_at > size || stream_at > size ||
        reader->model_stream_bytes > size || index_at < MODEL_HEAD_SIZE + reader->model_contexts ||
        stream_at < index_at + 4u * reader->model_blocks ||
        !inside(base + index_at, 4u * reader->model_blocks, 0, size) ||
        !inside(base + stream_at, reader->model_stream_bytes, 0, size))
        return EFGS_ERROR_FORMAT;
    reader->model_first_offset = (size_t)(base + MODEL_HEAD_SIZE);
    reader->model_index_offset = (size_t)(base + index_at);
    reader->model_stream_offset = (size_t)(base + stream_at);
    for (c = 0; c < reader->model_contexts; c++)
        if (bytes[reader->model_first_offset + c] == 0) return EFGS_ERROR_FORMAT;
    return EFGS_OK;
}

int efgs_open_memory(efgs_reader *reader, const void *data, size_t size) {
    const unsigned char *bytes = (const unsigned char *)data;
    uint64_t header_end, stored_size, value_bytes, slot_bytes, n, rows, cards_offset;
    size_t sections_end;
    uint32_t crc;
    unsigned block_bits = 0;
    int status;
    memset(reader, 0, sizeof *reader);
    if (size < 10u || memcmp(bytes, MAGIC, 8) != 0) return EFGS_ERROR_FORMAT;
    if (read_u16(bytes + 8) < 6u || read_u16(bytes + 8) > EFGS_FORMAT_VERSION)
        return EFGS_ERROR_VERSION;
    if (size < HEADER_SIZE) return EFGS_ERROR_TRUNCATED;
    reader->spec_length = read_u16(bytes + 148);
    header_end = HEADER_SIZE + reader->spec_length;
    stored_size = read_u64(bytes + 100);
    if (stored_size != size || header_end > size) return EFGS_ERROR_TRUNCATED;
    crc = crc32_update(0, bytes, HEADER_CRC_OFFSET);
    crc = crc32_update(crc, bytes + HEADER_CRC_OFFSET + 4, (size_t)header_end - HEADER_CRC_OFFSET - 4);
    if (crc != read_u32(bytes + HEADER_CRC_OFFSET)) return EFGS_ERROR_CORRUPTED;

    reader->bits = bytes[10];
    reader->flags = bytes[11];
    sections_end = size; /* the sections lie before a trailing game definition */
    if (reader->flags & FLAG_GAMEDEF) {
        uint32_t length;
        if (size < header_end + 4u) return EFGS_ERROR_FORMAT;
        length = read_u32(bytes + size - 4u);
        if (length == 0u || length > size - 4u - header_end) return EFGS_ERROR_FORMAT;
        sections_end = size - 4u - length;
        reader->gamedef_offset = sections_end;
        reader->gamedef_length = length;
    }
    reader->version = read_u16(bytes + 8);
    reader->coded = (reader->flags & FLAG_CODED) != 0;
    reader->modelled = (reader->flags & FLAG_MODELLED) != 0;
    /* 6: packed rows; 7: coded rows; 8: computed buckets (rows packed or coded); 9: modelled
     * rows of a card table (buckets computed or not); 10: the rule's record and compressed
     * tables (flag 64; computed buckets and coded or modelled rows too) */
    if ((reader->version < 8u && (reader->coded != (reader->version == 7u) || (reader->flags & FLAG_COMPUTED))) ||
        (reader->version == 8u && !(reader->flags & FLAG_COMPUTED)) ||
        (reader->version < 9u && reader->modelled) || (reader->version == 9u && !reader->modelled) ||
        (reader->modelled && reader->coded) ||
        ((reader->version == 10u) != ((reader->flags & FLAG_RULE) != 0)))
        return EFGS_ERROR_FORMAT;
    reader->num_infosets = read_u32(bytes + 12);
    reader->num_rows = read_u32(bytes + 16);
    reader->num_values = read_u64(bytes + 20);
    reader->seed = read_u64(bytes + 28);
    reader->segment = read_u32(bytes + 36);
    reader->slot_bits = bytes[40];
    reader->check_bits = bytes[41];
    reader->num_explicit = read_u32(bytes + 44);
    reader->num_classes = read_u32(bytes + 48);
    n = reader->num_infosets;
    rows = reader->num_rows;
    cards_offset = read_u64(bytes + 92);
    if (cards_offset != 0) { /* blocks of a card table: no row starts, no class rule */
        if (reader->num_classes > 0 || read_u64(bytes + 60) != 0 || cards_offset < header_end ||
            cards_offset > sections_end)
            return EFGS_ERROR_FORMAT;
        reader->cards_offset = (size_t)cards_offset;
        if ((status = open_card_table(reader, bytes, sections_end)) != EFGS_OK) return status;
        /* an index value is (first row, actions) of a betting history's block */
        block_bits = reader->card_action_bits;
    }
    if (reader->bits != 4 && reader->bits != 8 && reader->bits != 16) return EFGS_ERROR_FORMAT;
    if (reader->slot_bits == 0 || reader->slot_bits > MAX_SLOT_BITS ||
        reader->check_bits > reader->slot_bits || (reader->num_explicit > 0 && reader->segment == 0) ||
        reader->check_bits + block_bits > reader->slot_bits ||
        (rows > 0 && bit_length(rows - 1u) > reader->slot_bits - reader->check_bits - block_bits))
        return EFGS_ERROR_FORMAT;
    slot_bytes = (3u * (uint64_t)reader->segment * reader->slot_bits + 7u) / 8u;
    if (!inside(read_u64(bytes + 52), slot_bytes, header_end, sections_end) ||
        (cards_offset == 0 && !inside(read_u64(bytes + 60), 4u * (rows + 1u), header_end, sections_end)) ||
        !inside(read_u64(bytes + 68), VALUES_HEAD_SIZE, header_end, sections_end))
        return EFGS_ERROR_FORMAT;
    reader->slots_offset = (size_t)read_u64(bytes + 52);
    reader->starts_offset = (size_t)read_u64(bytes + 60);
    /* the values section: the tiers' bounds (value indices), then the rows' bit string */
    reader->wide_end = read_u64(bytes + read_u64(bytes + 68));
    reader->narrow_start = read_u64(bytes + read_u64(bytes + 68) + 8u);
    if (reader->wide_end > reader->narrow_start || reader->narrow_start > reader->num_values ||
        (reader->bits == 16 && reader->wide_end > 0) ||
        (reader->modelled && (cards_offset == 0 || reader->wide_end != 0 ||
                              reader->narrow_start != reader->num_values)))
        return EFGS_ERROR_FORMAT;
    value_bytes = reader->coded ? CODED_HEAD_SIZE : reader->modelled ? MODEL_HEAD_SIZE
                : (value_bit(reader, reader->num_values) + 7u) / 8u;
    if (!inside(read_u64(bytes + 68) + VALUES_HEAD_SIZE, value_bytes, header_end, sections_end))
        return EFGS_ERROR_FORMAT;
    reader->values_offset = (size_t)read_u64(bytes + 68) + VALUES_HEAD_SIZE;
    if (reader->coded && (status = open_coded(reader, bytes, sections_end)) != EFGS_OK) return status;
    if (reader->modelled && (status = open_modelled(reader, bytes, sections_end)) != EFGS_OK) return status;
    if (reader->flags & FLAG_KEYS) {
        if (!inside(read_u64(bytes + 76), 4u * (rows + 1u) + 4u * (n + 1u), header_end, sections_end))
            return EFGS_ERROR_FORMAT;
        reader->keys_offset = (size_t)read_u64(bytes + 76);
    }
    if (reader->num_classes > 0) {
        if (!inside(read_u64(bytes + 84), (uint64_t)CLASS_ENTRY_SIZE * reader->num_classes,
                    header_end, sections_end))
            return EFGS_ERROR_FORMAT;
        reader->classes_offset = (size_t)read_u64(bytes + 84);
    }
    reader->data = bytes;
    reader->size = size;
    reader->fingerprint = bytes + 116;
    reader->spec = (const char *)bytes + HEADER_SIZE;
    if (cards_offset == 0 && read_u32(bytes + reader->starts_offset + 4u * rows) != reader->num_values) {
        reader->data = NULL;
        return EFGS_ERROR_FORMAT;
    }
    return EFGS_OK;
}

static int open_recorded_tables(efgs_reader *reader, const char *path, void *data, size_t size);

#ifdef EFGS_HAVE_MMAP
/* Open a regular file for reading, its status in *info; -1 for anything else. Checked
 * before opening (a FIFO would block the open, a device never end) and again on the open
 * file, which is opened without blocking in case a FIFO took the name in between. */
static int open_regular(const char *path, struct stat *info) {
    int fd;
    if (stat(path, info) != 0 || !S_ISREG(info->st_mode)) return -1;
    fd = open(path, O_RDONLY | O_NONBLOCK);
    if (fd < 0) return -1;
    if (fstat(fd, info) != 0 || !S_ISREG(info->st_mode)) {
        close(fd);
        return -1;
    }
    return fd;
}
#endif

int efgs_open_file(efgs_reader *reader, const char *path) {
    int status;
    void *data;
    size_t size;
#ifdef EFGS_HAVE_MMAP
    struct stat info;
    int fd = open_regular(path, &info);
    memset(reader, 0, sizeof *reader);
    if (fd < 0) return EFGS_ERROR_IO;
    if (info.st_size < (off_t)HEADER_SIZE) { /* too short to be a compact strategy (or empty) */
        close(fd);
        return EFGS_ERROR_FORMAT;
    }
    size = (size_t)info.st_size;
    data = mmap(NULL, size, PROT_READ, MAP_SHARED, fd, 0);
    close(fd);
    if (data == MAP_FAILED) return EFGS_ERROR_IO;
    status = efgs_open_memory(reader, data, size);
    if (status != EFGS_OK) munmap(data, size);
    else status = open_recorded_tables(reader, path, data, size);
#else
    long length;
    FILE *file = fopen(path, "rb");
    memset(reader, 0, sizeof *reader);
    if (file == NULL) return EFGS_ERROR_IO;
    if (fseek(file, 0, SEEK_END) != 0 || (length = ftell(file)) < 0 || fseek(file, 0, SEEK_SET) != 0) {
        fclose(file);
        return EFGS_ERROR_IO;
    }
    size = (size_t)length;
    data = malloc(size ? size : 1u);
    if (data == NULL || fread(data, 1, size, file) != size) {
        free(data);
        fclose(file);
        return EFGS_ERROR_IO;
    }
    fclose(file);
    status = efgs_open_memory(reader, data, size);
    if (status != EFGS_OK) free(data);
    else status = open_recorded_tables(reader, path, data, size);
#endif
    if (status == EFGS_OK) reader->mapped = 1;
    return status;
}

/* Map (or read) a whole file: its bytes and size, or EFGS_ERROR_IO. */
static int map_file(const char *path, const unsigned char **data, size_t *size) {
#ifdef EFGS_HAVE_MMAP
    struct stat info;
    void *mapped;
    int fd = open_regular(path, &info);
    if (fd < 0) return EFGS_ERROR_IO;
    if (info.st_size <= 0) {
        close(fd);
        return EFGS_ERROR_IO;
    }
    *size = (size_t)info.st_size;
    mapped = mmap(NULL, *size, PROT_READ, MAP_SHARED, fd, 0);
    close(fd);
    if (mapped == MAP_FAILED) return EFGS_ERROR_IO;
    *data = (const unsigned char *)mapped;
#else
    long length;
    unsigned char *buffer;
    FILE *file = fopen(path, "rb");
    if (file == NULL) return EFGS_ERROR_IO;
    if (fseek(file, 0, SEEK_END) != 0 || (length = ftell(file)) <= 0 || fseek(file, 0, SEEK_SET) != 0) {
        fclose(file);
        return EFGS_ERROR_IO;
    }
    *size = (size_t)length;
    buffer = (unsigned char *)malloc(*size);
    if (buffer == NULL || fread(buffer, 1, *size, file) != *size) {
        free(buffer);
        fclose(file);
        return EFGS_ERROR_IO;
    }
    fclose(file);
    *data = buffer;
#endif
    return EFGS_OK;
}

static void unmap_file(const unsigned char *data, size_t size) {
#ifdef EFGS_HAVE_MMAP
    munmap((void *)data, size);
#else
    (void)size;
    free((void *)data);
#endif
}

int efgs_open_bucket_tables(efgs_reader *reader, const char *path) {
    const unsigned char *data;
    size_t size;
    int status;
    if (reader->tables_sha256 == NULL) return EFGS_OK;
    if (map_file(path, &data, &size) != EFGS_OK) return EFGS_ERROR_TABLES;
    status = efgs_attach_bucket_tables(reader, data, size);
    if (status != EFGS_OK) {
        unmap_file(data, size);
        return status;
    }
    reader->tables_mapped = 1;
    return EFGS_OK;
}

/* Attach the bucket-table file a strategy names, found beside the strategy file; on
 * failure the strategy is closed again. */
static int open_recorded_tables(efgs_reader *reader, const char *path, void *data, size_t size) {
    char name[4096];
    const char *slash = strrchr(path, '/');
    size_t directory = slash == NULL ? 0 : (size_t)(slash - path) + 1u;
    int status = EFGS_OK;
    if (reader->tables_sha256 == NULL) return EFGS_OK;
    if (reader->tables_name_length == 0 || memchr(reader->tables_name, '/', reader->tables_name_length) != NULL ||
        directory + reader->tables_name_length >= sizeof name) {
        status = EFGS_ERROR_TABLES;
    } else {
        memcpy(name, path, directory);
        memcpy(name + directory, reader->tables_name, reader->tables_name_length);
        name[directory + reader->tables_name_length] = '\0';
        status = efgs_open_bucket_tables(reader, name);
    }
    if (status != EFGS_OK) {
        unmap_file((const unsigned char *)data, size);
        memset(reader, 0, sizeof *reader);
    }
    return status;
}

void efgs_close(efgs_reader *reader) {
    if (reader->tables_mapped && reader->tables_data != NULL) unmap_file(reader->tables_data, reader->tables_size);
    if (reader->mapped && reader->data != NULL) {
#ifdef EFGS_HAVE_MMAP
        munmap((void *)reader->data, reader->size);
#else
        free((void *)reader->data);
#endif
    }
    memset(reader, 0, sizeof *reader);
}

/* Compare a stored key with the wanted one like memcmp, shorter first on a tie. */
static int compare_key(const efgs_reader *reader, uint64_t position, const char *key, size_t length,
                       int *order) {
    uint64_t offsets = reader->keys_offset + 4u * ((uint64_t)reader->num_rows + 1u);
    uint64_t blob = offsets + 4u * ((uint64_t)reader->num_infosets + 1u);
    uint32_t lo = read_u32(reader->data + offsets + 4u * position);
    uint32_t hi = read_u32(reader->data + offsets + 4u * position + 4u);
    size_t stored, shorter;
    int difference;
    if (lo > hi || !inside(blob + lo, hi - lo, blob, reader->size)) return EFGS_ERROR_CORRUPTED;
    stored = hi - lo;
    shorter = stored < length ? stored : length;
    difference = memcmp(reader->data + blob + lo, key, shorter);
    *order = difference != 0 ? difference : (stored > length) - (stored < length);
    return EFGS_OK;
}

/* Is the key among the row's stored keys (sorted by bytes within the row)? 1, 0 or an error. */
static int row_has_key(const efgs_reader *reader, uint64_t row, const char *key, size_t length) {
    const unsigned char *starts = reader->data + reader->keys_offset + 4u * row;
    uint64_t lo = read_u32(starts), hi = read_u32(starts + 4u), middle;
    int order, status;
    if (lo > hi || hi > reader->num_infosets) return EFGS_ERROR_CORRUPTED;
    while (lo < hi) { /* first stored key >= the wanted one */
        middle = lo + (hi - lo) / 2u;
        if ((status = compare_key(reader, middle, key, length, &order)) != EFGS_OK) return status;
        if (order < 0) lo = middle + 1u; else hi = middle;
    }
    if (lo == read_u32(starts + 4u)) return 0;
    if ((status = compare_key(reader, lo, key, length, &order)) != EFGS_OK) return status;
    return order == 0;
}

/* Slot ``index`` of the xor table: slot_bits bits, least significant first. */
static uint64_t slot_at(const efgs_reader *reader, uint64_t index) {
    uint64_t bit = index * reader->slot_bits, word = 0;
    const unsigned char *at = reader->data + reader->slots_offset + (bit >> 3);
    unsigned shift = (unsigned)(bit & 7u), width = (shift + reader->slot_bits + 7u) >> 3, i;
    for (i = 0; i < width; i++) word |= (uint64_t)at[i] << (8u * i);
    return (word >> shift) & (((uint64_t)1 << reader->slot_bits) - 1u);
}

static uint64_t scaled(uint64_t bits32, uint32_t segment) { return (bits32 * segment) >> 32; }

/* The value the key index gives the key (fingerprint removed), or EFGS_ERROR_NOT_FOUND. */
static int64_t index_value(const efgs_reader *reader, const char *key, size_t key_length) {
    uint64_t hashed, value, check_mask, rotated1, rotated2;
    uint32_t segment = reader->segment;
    hashed = efgs_key_hash(key, key_length, reader->seed);
    rotated1 = (hashed << 21) | (hashed >> 43);
    rotated2 = (hashed << 42) | (hashed >> 22);
    value = slot_at(reader, scaled(hashed & 0xFFFFFFFFu, segment)) ^
            slot_at(reader, segment + scaled(rotated1 & 0xFFFFFFFFu, segment)) ^
            slot_at(reader, 2u * (uint64_t)segment + scaled(rotated2 & 0xFFFFFFFFu, segment));
    check_mask = ((uint64_t)1 << reader->check_bits) - 1u;
    if ((value & check_mask) != ((hashed ^ (hashed >> 32)) & check_mask)) return EFGS_ERROR_NOT_FOUND;
    return (int64_t)(value >> reader->check_bits);
}

/* The row the key index gives the key, or EFGS_ERROR_NOT_FOUND. */
static int64_t explicit_row(const efgs_reader *reader, const char *key, size_t key_length) {
    int64_t row = index_value(reader, key, key_length);
    int has;
    if (row < 0) return row;
    if ((uint64_t)row >= reader->num_rows) return EFGS_ERROR_NOT_FOUND; /* a foreign key's fingerprint matched */
    if (reader->flags & FLAG_KEYS) {
        has = row_has_key(reader, (uint64_t)row, key, key_length);
        if (has < 0) return has;
        if (!has) return EFGS_ERROR_NOT_FOUND;
    }
    return row;
}

/* The value range [lo, hi) of the row at ``position`` (at least one action). */
static int row_bounds(const efgs_reader *reader, uint64_t position, uint32_t *lo, uint32_t *hi) {
    const unsigned char *starts = reader->data + reader->starts_offset + 4u * position;
    *lo = read_u32(starts);
    *hi = read_u32(starts + 4u);
    return *lo < *hi && *hi <= reader->num_values ? EFGS_OK : EFGS_ERROR_CORRUPTED;
}

/* Class entry ``position``'s row, checked: below num_rows and as long as its actions. */
static int64_t class_entry_row(const efgs_reader *reader, uint64_t position) {
    const unsigned char *entry = reader->data + reader->classes_offset + CLASS_ENTRY_SIZE * position;
    uint32_t row = read_u32(entry + 12u), lo, hi;
    if (row >= reader->num_rows || row_bounds(reader, row, &lo, &hi) != EFGS_OK ||
        hi - lo != read_u32(entry + 8u))
        return EFGS_ERROR_CORRUPTED;
    return (int64_t)row;
}

/* The row of a class in the sorted class table, or EFGS_ERROR_NOT_FOUND. */
static int64_t class_row(const efgs_reader *reader, const efgs_class *infoset_class) {
    uint32_t wanted[3], stored[3];
    uint64_t lo = 0, hi = reader->num_classes, middle;
    int k, order;
    wanted[0] = infoset_class->player;
    wanted[1] = infoset_class->own_sequence_length;
    wanted[2] = infoset_class->num_actions;
    while (lo < hi) { /* first entry >= the wanted class */
        middle = lo + (hi - lo) / 2u;
        for (order = 0, k = 0; k < 3 && order == 0; k++) {
            stored[k] = read_u32(reader->data + reader->classes_offset + CLASS_ENTRY_SIZE * middle + 4u * k);
            order = (stored[k] > wanted[k]) - (stored[k] < wanted[k]);
        }
        if (order < 0) lo = middle + 1u; else hi = middle;
    }
    if (lo == reader->num_classes) return EFGS_ERROR_NOT_FOUND;
    for (k = 0; k < 3; k++)
        if (read_u32(reader->data + reader->classes_offset + CLASS_ENTRY_SIZE * lo + 4u * k) != wanted[k])
            return EFGS_ERROR_NOT_FOUND;
    return class_entry_row(reader, lo);
}

/* ---- card tables: a poker key read as (betting history, cards) ----------------------- */

static void sort_cards(unsigned *cards, unsigned count) {
    unsigned i, j, card;
    for (i = 1; i < count; i++) {
        card = cards[i];
        for (j = i; j > 0 && cards[j - 1] > card; j--) cards[j] = cards[j - 1];
        cards[j] = card;
    }
}

/* Position of a sorted card set among all sets of its size from num_cards, lexicographically. */
static uint64_t combination_rank(const unsigned *cards, unsigned size, unsigned num_cards) {
    uint64_t rank = 0;
    unsigned i, skipped, next = 0;
    for (i = 0; i < size; i++) {
        for (skipped = next; skipped < cards[i]; skipped++)
            rank += binomial(num_cards - 1u - skipped, size - 1u - i);
        next = cards[i] + 1u;
    }
    return rank;
}

/* The card names in a field value, in order ('/' skipped if asked): count, or -1 if a
 * name is unknown, the text is not whole names, or there are more than MAX_CARDS. */
static int read_cards(const efgs_reader *reader, const char *text, size_t length, int skip_slashes,
                      unsigned *cards) {
    char name[4];
    unsigned width = reader->card_name_width, filled = 0, count = 0, card;
    size_t i;
    for (i = 0; i < length; i++) {
        if (skip_slashes && text[i] == '/') continue;
        name[filled++] = text[i];
        if (filled < width) continue;
        filled = 0;
        for (card = 0; card < reader->num_cards; card++)
            if (memcmp(reader->data + reader->card_names_offset + (size_t)card * width, name, width) == 0)
                break;
        if (card == reader->num_cards || count == MAX_CARDS) return -1;
        cards[count++] = card;
    }
    return filled == 0 ? (int)count : -1;
}

/* The bucket of a sorted hand with the board seen in a round (in the order dealt), or
 * EFGS_ERROR_CORRUPTED (a stored bucket out of range) / EFGS_ERROR_TABLES (not attached). */
static int64_t bucket_of(const efgs_reader *reader, unsigned round, const unsigned *hand,
                         const unsigned *board) {
    unsigned bits = reader->bucket_bits[round], shift, width, i, method = reader->bucket_method[round];
    unsigned sorted[MAX_CARDS], past, start = 0, dealt;
    uint64_t entry = 0, bit, word = 0, bucket;
    const unsigned char *at;
    if (method == CONSTANT) return 0;
    if (method == LOSSLESS) { /* every deal in order, then the hand */
        for (past = 0; past <= round; past++) {
            if ((dealt = reader->board_dealt[past]) == 0) continue;
            memcpy(sorted, board + start, dealt * sizeof *sorted);
            sort_cards(sorted, dealt);
            entry = entry * binomial(reader->num_cards, dealt) + combination_rank(sorted, dealt, reader->num_cards);
            start += dealt;
        }
        return (int64_t)(entry * binomial(reader->num_cards, reader->private_cards) +
                         combination_rank(hand, reader->private_cards, reader->num_cards));
    }
    if (method == BY_COMBINATION) {
        memcpy(sorted, board, reader->board_cards[round] * sizeof *sorted);
        sort_cards(sorted, reader->board_cards[round]);
        entry = combination_rank(hand, reader->private_cards, reader->num_cards) *
                    binomial(reader->num_cards, reader->board_cards[round]) +
                combination_rank(sorted, reader->board_cards[round], reader->num_cards);
    } else {
        memcpy(sorted, hand, reader->private_cards * sizeof *sorted);
        memcpy(sorted + reader->private_cards, board, reader->board_cards[round] * sizeof *sorted);
        entry = efgs_canonical_index(&reader->canonical[round], sorted);
        if (method == CANONICAL) return (int64_t)entry;
        if (method == COMPUTED) return efgs_computed_bucket(reader, round, hand, board, entry);
        if (method == COMPRESSED) return efgs_compressed_bucket(reader, round, hand, board, entry);
    }
    if (reader->bucket_source[round] == 1u && reader->tables_data == NULL) return EFGS_ERROR_TABLES;
    at = (reader->bucket_source[round] == 1u ? reader->tables_data : reader->data) + reader->bucket_table_offset[round];
    bit = entry * bits;
    at += bit >> 3;
    shift = (unsigned)(bit & 7u);
    width = (shift + bits + 7u) >> 3;
    for (i = 0; i < width; i++) word |= (uint64_t)at[i] << (8u * i);
    bucket = (word >> shift) & (((uint64_t)1 << bits) - 1u);
    return bucket < reader->buckets[round] ? (int64_t)bucket : EFGS_ERROR_CORRUPTED;
}

int64_t efgs_bucket(const efgs_reader *reader, unsigned round, const unsigned *hand, const unsigned *board) {
    unsigned sorted[MAX_CARDS], j, k, count;
    if (reader->data == NULL || reader->cards_offset == 0 || round >= reader->num_card_rounds) return EFGS_ERROR_CARD;
    count = reader->private_cards + reader->board_cards[round];
    for (j = 0; j < count; j++) {
        sorted[j] = j < reader->private_cards ? hand[j] : board[j - reader->private_cards];
        if (sorted[j] >= reader->num_cards) return EFGS_ERROR_CARD;
        for (k = 0; k < j; k++)
            if (sorted[k] == sorted[j]) return EFGS_ERROR_CARD;
    }
    sort_cards(sorted, reader->private_cards);
    return bucket_of(reader, round, sorted, board);
}

/* Split a key into its fields card=/cards=, board=, bets= (the last of each wins) and its
 * player's digits (P0: "0", the first such field). */
static void find_fields(const char *key, size_t length, const char *values[5], size_t lengths[5]) {
    static const char *const names[4] = {"card", "cards", "board", "bets"};
    size_t start = 0, end, equals, k;
    while (start <= length) {
        for (end = start; end < length && key[end] != ' '; end++) continue;
        for (equals = start; equals < end && key[equals] != '='; equals++) continue;
        if (equals == end && end > start + 1 && key[start] == 'P' && values[4] == NULL) {
            for (k = start + 1; k < end && key[k] >= '0' && key[k] <= '9'; k++) continue;
            if (k == end) {
                values[4] = key + start + 1;
                lengths[4] = end - start - 1;
            }
        }
        if (equals < end)
            for (k = 0; k < 4; k++)
                if (strlen(names[k]) == equals - start && memcmp(key + start, names[k], equals - start) == 0) {
                    values[k] = key + equals + 1;
                    lengths[k] = end - equals - 1;
                }
        start = end + 1;
    }
}

/* How the game's keys spell their betting (betting_style in compact_reader.py). */
enum { STYLE_NONE, STYLE_ACPC, STYLE_KUHN };

static int spec_is(const efgs_reader *reader, const char *name) {
    size_t length = strlen(name);
    return reader->spec_length >= length && memcmp(reader->spec, name, length) == 0 &&
           (reader->spec_length == length || reader->spec[length] == '(');
}

static int betting_style(const efgs_reader *reader) {
    if (spec_is(reader, "leduc") || spec_is(reader, "twocard") || spec_is(reader, "holdem") ||
        spec_is(reader, "HULHE") || (reader->spec_length >= 5 && memcmp(reader->spec, "acpc:", 5) == 0))
        return STYLE_ACPC;
    return spec_is(reader, "kuhn") ? STYLE_KUHN : STYLE_NONE;
}

/* Is the betting a decision (betting_rounds in compact_reader.py)? EFGS_OK, with where its
 * current round starts and whether it is the first round before any action; or
 * EFGS_ERROR_BETTING. An empty string is "-". */
static int check_betting(int style, const char *bets, size_t length, size_t *round_start, int *opening) {
    size_t i, start = 0;
    static const char *const kuhn[4] = {"-", "p", "b", "pb"};
    if (length == 0 || (length == 1 && bets[0] == '-')) {
        *round_start = length;
        *opening = 1;
        return EFGS_OK;
    }
    *opening = 0;
    if (style == STYLE_KUHN) {
        for (i = 0; i < 4; i++)
            if (strlen(kuhn[i]) == length && memcmp(kuhn[i], bets, length) == 0) return *round_start = 0, EFGS_OK;
        return EFGS_ERROR_BETTING;
    }
    for (i = 0; i <= length; i++) {
        if (i < length && bets[i] != '/') {
            if (bets[i] != 'c' && bets[i] != 'r') return EFGS_ERROR_BETTING; /* unknown, or a fold */
            continue;
        }
        /* a round ends at i: closed (two actions or more, the last a call) iff a / follows */
        if ((i - start >= 2 && bets[i - 1] == 'c') != (i < length)) return EFGS_ERROR_BETTING;
        if (i < length) start = i + 1;
    }
    *round_start = start;
    return EFGS_OK;
}

/* The action names after a checked betting (action_names in compact_reader.py), or
 * EFGS_ERROR_BETTING if it allows no num_actions actions. */
static int betting_names(int style, const char *bets, size_t length, size_t round_start, int opening,
                         int num_actions, const char **names) {
    static const char *const acpc[3] = {"fold", "call", "raise"};
    int facing = memchr(bets + round_start, 'r', length - round_start) != NULL, k;
    if (style == STYLE_KUHN) {
        if (num_actions != 2) return EFGS_ERROR_BETTING;
        names[0] = "pass";
        names[1] = "bet";
        return 2;
    }
    if (num_actions == 3 && (facing || opening)) {
        for (k = 0; k < 3; k++) names[k] = acpc[k];
        return 3;
    }
    if (num_actions != 2) return EFGS_ERROR_BETTING;
    names[0] = acpc[facing ? 0 : 1];
    names[1] = acpc[facing ? 1 : 2];
    return 2;
}

/* The value of a key's field (player "P" or a name=value field), or NULL. */
static const char *key_field(const char *key, size_t key_length, const char *name, size_t *value_length) {
    const char *values[5] = {NULL, NULL, NULL, NULL, NULL};
    size_t lengths[5] = {0, 0, 0, 0, 0};
    find_fields(key, key_length, values, lengths);
    if (strcmp(name, "bets") == 0) {
        *value_length = lengths[3];
        return values[3];
    }
    *value_length = lengths[4];
    return values[4];
}

int efgs_action_names(const efgs_reader *reader, const char *key, size_t key_length,
                      int num_actions, const char **names) {
    int style = betting_style(reader), opening;
    size_t length, round_start;
    const char *bets;
    if (style == STYLE_NONE) return 0;
    if ((bets = key_field(key, key_length, "bets", &length)) == NULL) return EFGS_ERROR_BETTING;
    if (check_betting(style, bets, length, &round_start, &opening) != EFGS_OK) return EFGS_ERROR_BETTING;
    return betting_names(style, bets, length, round_start, opening, num_actions, names);
}

static int64_t index_value(const efgs_reader *reader, const char *key, size_t key_length);
static int row_has_key(const efgs_reader *reader, uint64_t row, const char *key, size_t length);
/* A row's code (below): where it starts, its field width, padding and total. */
typedef struct row_code {
    uint64_t bit;      /* the row's first bit in the values' bit string */
    uint64_t actions;
    unsigned width;    /* bits per field */
    unsigned padding;  /* zero bits after the fields */
    uint64_t total;    /* what the weights sum to */
    uint32_t fields[EFGS_MAX_CODED_ACTIONS];  /* a coded row's weights but the last, decoded */
} row_code;
static int row_status(const efgs_reader *reader, uint64_t lo, uint64_t hi, row_code *code);

/* The row and values [lo, hi) of a key in a file with a card table. The key index gives its
 * betting history's block (first row, first value, actions); its cell (the current bucket,
 * or every round's bucket in mixed radix with perfect recall) picks the row in the block.
 * A row of all ones is a cell no infoset of the file has (never dealt, or pruned). */
static int64_t card_cell(const efgs_reader *reader, const char *key, size_t key_length,
                         uint32_t *lo, uint32_t *hi, row_code *code) {
    const char *values[5] = {NULL, NULL, NULL, NULL, NULL}, *names[3];
    size_t lengths[5] = {0, 0, 0, 0, 0}, i, round_start = 0;
    unsigned hand[MAX_CARDS], board[MAX_CARDS], round = 0, past, first_round, group;
    int hand_count, board_count, j, k, style = betting_style(reader), opening = 0;
    int64_t bucket, block;
    uint64_t cell = 0, row, first_row, first_value, actions, limit = (uint64_t)1 << 33;
    find_fields(key, key_length, values, lengths);
    if (values[0] != NULL) { /* card= before cards=, as a dict of the fields would */
        values[1] = values[0];
        lengths[1] = lengths[0];
    }
    if (values[3] == NULL) return EFGS_ERROR_BETTING;
    if (style != STYLE_NONE && check_betting(style, values[3], lengths[3], &round_start, &opening) != EFGS_OK)
        return EFGS_ERROR_BETTING;
    for (i = 0; i < lengths[3]; i++) round += values[3][i] == '/';
    if (values[1] == NULL) return EFGS_ERROR_CARD;
    if (round >= reader->num_card_rounds) return EFGS_ERROR_BETTING;
    hand_count = read_cards(reader, values[1], lengths[1], 0, hand);
    board_count = values[2] == NULL || (lengths[2] == 1 && values[2][0] == '-')
                      ? 0 : read_cards(reader, values[2], lengths[2], 1, board);
    if (hand_count < 0 || board_count < 0 ||
        (unsigned)hand_count != reader->private_cards || (unsigned)board_count != reader->board_cards[round])
        return EFGS_ERROR_CARD;
    for (j = 0; j < hand_count + board_count; j++)
        for (k = 0; k < j; k++)
            if ((j < hand_count ? hand[j] : board[j - hand_count]) ==
                (k < hand_count ? hand[k] : board[k - hand_count]))
                return EFGS_ERROR_CARD;
    sort_cards(hand, (unsigned)hand_count);
    first_round = reader->perfect_recall ? 0u : round;
    for (past = first_round; past <= round; past++) {
        if ((bucket = bucket_of(reader, past, hand, board)) < 0) return bucket;
        cell = cell * reader->buckets[past] + (uint64_t)bucket;
        if (cell > limit) cell = limit; /* past any row: saturate instead of overflowing */
    }
    if (lengths[3] == 0) { /* the ACPC string before any action */
        values[3] = "-";
        lengths[3] = 1;
    }
    /* not in the index, or a foreign betting history whose fingerprint matched */
    if ((block = index_value(reader, values[3], lengths[3])) < 0) return EFGS_ERROR_BETTING;
    actions = (uint64_t)block & (((uint64_t)1 << reader->card_action_bits) - 1u);
    first_row = (uint64_t)block >> reader->card_action_bits;
    for (group = 0; group < reader->num_action_groups; group++)
        if (reader->group_actions[group] == actions && first_row >= reader->group_first_row[group]) break;
    if (group == reader->num_action_groups) return EFGS_ERROR_BETTING;
    if (style != STYLE_NONE && betting_names(style, values[3], lengths[3], round_start, opening,
                                             (int)actions, names) < 0)
        return EFGS_ERROR_BETTING;
    first_value = reader->group_first_value[group] + (first_row - reader->group_first_row[group]) * actions;
    row = first_row + cell;
    if (row >= reader->num_rows || first_value > reader->num_values ||
        cell > (reader->num_values - first_value) / actions ||
        first_value + cell * actions + actions > reader->num_values)
        return EFGS_ERROR_BETTING;
    *lo = (uint32_t)(first_value + cell * actions);
    *hi = (uint32_t)(*lo + actions);
    if ((j = row_status(reader, *lo, *hi, code)) != EFGS_OK)
        return j == EFGS_ERROR_NOT_FOUND ? EFGS_ERROR_MISSING_CELL : j;
    if (reader->flags & FLAG_KEYS) {
        if ((j = row_has_key(reader, row, key, key_length)) < 0) return j;
        if (!j) return EFGS_ERROR_MISSING_CELL;
    }
    return (int64_t)row;
}

/* The row of a key (and its values [lo, hi)), or a negative efgs_status. A poker key's
 * betting is checked before it is looked up, and a key read by its class must be of the
 * class's player and allow its number of actions: a nonsense key never reads a class's row. */
static int64_t locate(const efgs_reader *reader, const char *key, size_t key_length,
                      const efgs_class *infoset_class, uint32_t *lo, uint32_t *hi, row_code *code) {
    const char *names[3], *bets = NULL, *player;
    size_t length = 0, player_length = 0, round_start = 0, k;
    int64_t row = EFGS_ERROR_NOT_FOUND;
    int has, style = betting_style(reader), opening = 0;
    uint64_t player_number = 0;
    if (reader->cards_offset != 0)
        return reader->num_explicit == 0 ? EFGS_ERROR_BETTING : card_cell(reader, key, key_length, lo, hi, code);
    if (style != STYLE_NONE) {
        if ((bets = key_field(key, key_length, "bets", &length)) == NULL ||
            check_betting(style, bets, length, &round_start, &opening) != EFGS_OK)
            return EFGS_ERROR_BETTING;
    }
    if (reader->num_explicit > 0) {
        row = explicit_row(reader, key, key_length);
    }
    if (row == EFGS_ERROR_NOT_FOUND) {
        if (reader->num_classes == 0) return EFGS_ERROR_NOT_FOUND;
        if (infoset_class == NULL) return EFGS_ERROR_NEEDS_CLASS;
        if (style != STYLE_NONE) {
            if ((player = key_field(key, key_length, "P", &player_length)) == NULL) return EFGS_ERROR_NOT_FOUND;
            for (k = 0; k < player_length && k < 10; k++) player_number = 10u * player_number + (uint64_t)(player[k] - '0');
            if (player_length > 10 || player_number != infoset_class->player) return EFGS_ERROR_NOT_FOUND;
        }
        row = class_row(reader, infoset_class);
        if (row >= 0 && (reader->flags & FLAG_KEYS)) {
            has = row_has_key(reader, (uint64_t)row, key, key_length);
            if (has < 0) return has;
            if (!has) return EFGS_ERROR_NOT_FOUND;
        }
    }
    if (row < 0) return row;
    if (row_bounds(reader, (uint64_t)row, lo, hi) != EFGS_OK) return EFGS_ERROR_CORRUPTED;
    if (style != STYLE_NONE &&
        betting_names(style, bets, length, round_start, opening, (int)(*hi - *lo), names) < 0)
        return EFGS_ERROR_NOT_FOUND;
    return row;
}

int64_t efgs_find_in_class(const efgs_reader *reader, const char *key, size_t key_length,
                           const efgs_class *infoset_class) {
    uint32_t lo, hi;
    row_code code;
    return locate(reader, key, key_length, infoset_class, &lo, &hi, &code);
}

int64_t efgs_find(const efgs_reader *reader, const char *key, size_t key_length) {
    return efgs_find_in_class(reader, key, key_length, NULL);
}

/* ---- the row code: a row of A actions at b bits per action is A * b bits; its first A - 1
 * weights are fields of floor(A b / max(A - 1, 1)) bits (least significant first), then zero
 * bits; the weights sum to 2^field_bits - 2, the last action's weight is what the others
 * leave. A row of all ones is an empty cell. b is the row's tier: 2 bits for values below
 * wide_end, bits / 2 from narrow_start, else bits. ------------------------------------- */

static unsigned field_bits(unsigned bits, uint64_t actions) {
    return (unsigned)(actions * bits / (actions > 1u ? actions - 1u : 1u));
}

/* Position of value ``j`` in the values' bit string. */
static uint64_t value_bit(const efgs_reader *reader, uint64_t j) {
    uint64_t wide = j < reader->wide_end ? j : reader->wide_end;
    uint64_t narrow = j < reader->narrow_start ? j : reader->narrow_start;
    return 2u * reader->bits * wide + reader->bits * (narrow - wide) + reader->bits / 2u * (j - narrow);
}

/* ``width`` (at most 32) bits of the values' bit string from bit ``bit``. */
static uint64_t values_bits(const efgs_reader *reader, uint64_t bit, unsigned width) {
    const unsigned char *p = reader->data + reader->values_offset + (bit >> 3);
    unsigned shift = (unsigned)(bit & 7u), bytes = (shift + width + 7u) >> 3, i;
    uint64_t word = 0;
    for (i = 0; i < bytes; i++) word |= (uint64_t)p[i] << (8u * i);
    return (word >> shift) & (((uint64_t)1 << width) - 1u);
}

/* Weight ``j`` < actions - 1 of a row (a field). */
static uint64_t field_at(const efgs_reader *reader, const row_code *code, uint64_t j) {
    if (reader->coded || reader->modelled) return code->fields[j];
    return values_bits(reader, code->bit + j * code->width, code->width);
}

/* The code of the row at values [lo, hi), then EFGS_OK for a row in one tier whose fields
 * sum to at most its total and whose padding is zero, EFGS_ERROR_NOT_FOUND for an empty
 * cell (all ones), else EFGS_ERROR_CORRUPTED. */
/* Bits per action of the row at values [lo, hi): its tier; 0 for a row across two tiers. */
static unsigned row_tier(const efgs_reader *reader, uint64_t lo, uint64_t hi) {
    if (hi <= reader->wide_end) return 2u * reader->bits;
    if (reader->wide_end <= lo && hi <= reader->narrow_start) return reader->bits;
    if (reader->narrow_start <= lo) return reader->bits / 2u;
    return 0;
}

static int coded_status(const efgs_reader *reader, uint64_t lo, uint64_t hi, row_code *code);
static int modelled_status(const efgs_reader *reader, uint64_t lo, uint64_t hi, row_code *code);

static int row_status(const efgs_reader *reader, uint64_t lo, uint64_t hi, row_code *code) {
    uint64_t j, field, sum = 0, rest;
    unsigned tier = row_tier(reader, lo, hi);
    int ones = 1;
    if (reader->modelled) return modelled_status(reader, lo, hi, code);
    if (tier == 0) return EFGS_ERROR_CORRUPTED; /* a row across two tiers */
    if (reader->coded) return coded_status(reader, lo, hi, code);
    code->bit = value_bit(reader, lo);
    code->actions = hi - lo;
    code->width = field_bits(tier, code->actions);
    code->padding = (unsigned)(code->actions * tier - (code->actions - 1u) * code->width);
    code->total = ((uint64_t)1 << code->width) - 2u;
    for (j = 0; j + 1u < code->actions; j++) {
        field = field_at(reader, code, j);
        ones = ones && field == code->total + 1u;
        sum += field;
    }
    rest = values_bits(reader, code->bit + (code->actions - 1u) * code->width, code->padding);
    if (ones && rest == ((uint64_t)1 << code->padding) - 1u) return EFGS_ERROR_NOT_FOUND;
    return rest == 0 && sum <= code->total ? EFGS_OK : EFGS_ERROR_CORRUPTED;
}


/* ---- coded rows (format 7): per row one symbol of its context's canonical Huffman code
 * (most significant bit first; escape, empty cell or a dictionary row), after an escape the
 * A - 1 fields raw (least significant first). A block of block_rows rows starts at the bit
 * the block index gives, so a row is decoded from its block's first row. ---------------- */

/* The values [lo, hi) of row ``row``: the row-start table, or the action group it lies in. */
static int coded_row_values(const efgs_reader *reader, uint64_t row, uint64_t *lo, uint64_t *hi) {
    uint32_t a, b;
    unsigned g, best = EFGS_MAX_ACTION_GROUPS;
    if (reader->cards_offset == 0) {
        if (row >= reader->num_rows || row_bounds(reader, row, &a, &b) != EFGS_OK) return EFGS_ERROR_CORRUPTED;
        *lo = a;
        *hi = b;
        return EFGS_OK;
    }
    for (g = 0; g < reader->num_action_groups; g++)
        if (reader->group_first_row[g] <= row &&
            (best == EFGS_MAX_ACTION_GROUPS || reader->group_first_row[g] > reader->group_first_row[best]))
            best = g;
    if (best == EFGS_MAX_ACTION_GROUPS) return EFGS_ERROR_CORRUPTED;
    *lo = reader->group_first_value[best] + (row - reader->group_first_row[best]) * reader->group_actions[best];
    *hi = *lo + reader->group_actions[best];
    return *hi <= reader->num_values ? EFGS_OK : EFGS_ERROR_CORRUPTED;
}

/* The row whose values start at ``lo``, or -1. */
static int64_t coded_row_at(const efgs_reader *reader, uint64_t lo) {
    uint64_t low = 0, high = reader->num_rows, middle, start, end;
    unsigned g, best = EFGS_MAX_ACTION_GROUPS;
    if (reader->cards_offset == 0) {
        while (low < high) { /* the first row starting at lo or later */
            middle = low + (high - low) / 2u;
            if (read_u32(reader->data + reader->starts_offset + 4u * middle) < lo) low = middle + 1u;
            else high = middle;
        }
    } else {
        for (g = 0; g < reader->num_action_groups; g++)
            if (reader->group_first_value[g] <= lo &&
                (best == EFGS_MAX_ACTION_GROUPS || reader->group_first_value[g] > reader->group_first_value[best]))
                best = g;
        if (best == EFGS_MAX_ACTION_GROUPS || reader->group_actions[best] == 0) return -1;
        low = reader->group_first_row[best] + (lo - reader->group_first_value[best]) / reader->group_actions[best];
    }
    if (low >= reader->num_rows || coded_row_values(reader, low, &start, &end) != EFGS_OK || start != lo) return -1;
    return (int64_t)low;
}

/* ``width`` (at most 32) bits of the coded stream from ``*bit``, which moves past them;
 * EFGS_ERROR_CORRUPTED past the stream's end. */
static int stream_read(const efgs_reader *reader, uint64_t *bit, unsigned width, uint32_t *value) {
    const unsigned char *p;
    unsigned shift, bytes, i;
    uint64_t word = 0;
    if (*bit > reader->stream_bits || width > reader->stream_bits - *bit) return EFGS_ERROR_CORRUPTED;
    p = reader->data + reader->stream_offset + (*bit >> 3);
    shift = (unsigned)(*bit & 7u);
    bytes = (shift + width + 7u) >> 3;
    for (i = 0; i < bytes; i++) word |= (uint64_t)p[i] << (8u * i);
    *value = (uint32_t)((word >> shift) & (((uint64_t)1 << width) - 1u));
    *bit += width;
    return EFGS_OK;
}

/* The next 32 bits of the coded stream from ``bit`` (bit k of the result is stream bit
 * bit + k), zeros past the stream's end. */
static uint64_t stream_peek(const efgs_reader *reader, uint64_t bit) {
    const unsigned char *p = reader->data + reader->stream_offset + (bit >> 3);
    uint64_t available = (reader->stream_bits + 7u) / 8u - (bit >> 3), word = 0;
    unsigned i, bytes = available < 5u ? (unsigned)available : 5u;
    for (i = 0; i < bytes; i++) word |= (uint64_t)p[i] << (8u * i);
    return (word >> (bit & 7u)) & 0xffffffffu;
}

/* A symbol of ``context``'s canonical code from ``*bit`` (RFC 1951's decoding by counts per
 * length, on 32 bits read at once), or a negative status. */
static int64_t decode_symbol(const efgs_reader *reader, const efgs_coded_context *context, uint64_t *bit) {
    uint64_t code = 0, first = 0, index = 0, count, next;
    uint32_t symbol;
    unsigned length;
    if (*bit >= reader->stream_bits) return EFGS_ERROR_CORRUPTED;
    next = stream_peek(reader, *bit);
    for (length = 1; length <= context->max_length; length++) {
        code |= (next >> (length - 1u)) & 1u;
        count = context->counts[length];
        if (code - first < count) {
            if (length > reader->stream_bits - *bit) return EFGS_ERROR_CORRUPTED;
            *bit += length;
            symbol = read_u16(reader->data + context->order_offset + 2u * (index + code - first));
            return symbol < context->num_symbols ? (int64_t)symbol : EFGS_ERROR_CORRUPTED;
        }
        index += count;
        first = (first + count) << 1;
        code <<= 1;
    }
    return EFGS_ERROR_CORRUPTED;
}

/* Decode row ``row`` from ``*bit`` into ``code`` (its fields, width, total): EFGS_OK,
 * EFGS_ERROR_NOT_FOUND for an empty cell, else EFGS_ERROR_CORRUPTED. ``skip``: only move
 * ``*bit`` past the row (its fields are neither read nor checked). */
static int decode_row(const efgs_reader *reader, uint64_t row, uint64_t *bit, row_code *code, int skip) {
    uint64_t lo, hi, sum = 0, j;
    unsigned tier, c;
    int64_t symbol;
    const efgs_coded_context *context = NULL;
    if (coded_row_values(reader, row, &lo, &hi) != EFGS_OK || (tier = row_tier(reader, lo, hi)) == 0)
        return EFGS_ERROR_CORRUPTED;
    code->actions = hi - lo;
    code->width = field_bits(tier, code->actions);
    code->padding = 0;
    code->total = ((uint64_t)1 << code->width) - 2u;
    code->bit = *bit;
    for (c = 0; c < reader->num_contexts; c++)
        if (reader->contexts[c].num_actions == code->actions && reader->contexts[c].field_bits == code->width)
            context = &reader->contexts[c];
    if (context == NULL || code->width > 32u || (symbol = decode_symbol(reader, context, bit)) < 0)
        return EFGS_ERROR_CORRUPTED;
    if (symbol == CODED_EMPTY) return EFGS_ERROR_NOT_FOUND;
    if (skip) {
        if (symbol != CODED_ESCAPE) return EFGS_OK;
        if ((code->actions - 1u) * code->width > reader->stream_bits - *bit) return EFGS_ERROR_CORRUPTED;
        *bit += (code->actions - 1u) * code->width;
        return EFGS_OK;
    }
    for (j = 0; j + 1u < code->actions; j++) {
        if (symbol == CODED_ESCAPE) {
            if (stream_read(reader, bit, code->width, &code->fields[j]) != EFGS_OK) return EFGS_ERROR_CORRUPTED;
        } else {
            code->fields[j] = read_u32(reader->data + context->entries_offset +
                                       4u * ((uint64_t)(symbol - CODED_FIRST_ENTRY) * (code->actions - 1u) + j));
        }
        sum += code->fields[j];
    }
    return sum <= code->total ? EFGS_OK : EFGS_ERROR_CORRUPTED;
}

/* The first bit of block ``block``, or a negative status. */
static int block_start(const efgs_reader *reader, uint64_t block, uint64_t *bit) {
    *bit = read_u64(reader->data + reader->block_index_offset + 8u * block);
    return *bit <= reader->stream_bits ? EFGS_OK : EFGS_ERROR_CORRUPTED;
}

/* row_status of a coded row: decoded from its block's first row. */
static int coded_status(const efgs_reader *reader, uint64_t lo, uint64_t hi, row_code *code) {
    int64_t row = coded_row_at(reader, lo);
    uint64_t bit, before, start, end;
    int status;
    if (row < 0 || coded_row_values(reader, (uint64_t)row, &start, &end) != EFGS_OK || end != hi)
        return EFGS_ERROR_CORRUPTED;
    if (block_start(reader, (uint64_t)row / reader->block_rows, &bit) != EFGS_OK) return EFGS_ERROR_CORRUPTED;
    for (before = (uint64_t)row - (uint64_t)row % reader->block_rows; before < (uint64_t)row; before++)
        if ((status = decode_row(reader, before, &bit, code, 1)) == EFGS_ERROR_CORRUPTED) return status;
    return decode_row(reader, (uint64_t)row, &bit, code, 0);
}

/* Every coded row, block by block; a block must end where the next begins. */
static int verify_coded(const efgs_reader *reader) {
    uint64_t block, row, bit, end, blocks = ((uint64_t)reader->num_rows + reader->block_rows - 1u) / reader->block_rows;
    row_code code;
    int status;
    for (block = 0; block < blocks; block++) {
        if (block_start(reader, block, &bit) != EFGS_OK) return EFGS_ERROR_CORRUPTED;
        for (row = block * reader->block_rows; row < reader->num_rows && row < (block + 1u) * reader->block_rows; row++) {
            status = decode_row(reader, row, &bit, &code, 0);
            if (status == EFGS_ERROR_CORRUPTED || (status == EFGS_ERROR_NOT_FOUND && reader->cards_offset == 0))
                return EFGS_ERROR_CORRUPTED;
        }
        if (block + 1u < blocks) {
            if (block_start(reader, block + 1u, &end) != EFGS_OK) return EFGS_ERROR_CORRUPTED;
        } else {
            end = reader->stream_bits;
        }
        if (bit != end) return EFGS_ERROR_CORRUPTED;
    }
    return EFGS_OK;
}

/* ---- modelled rows (format 9): per row a bit "empty", per weight j < A - 1 (R what the
 * weights before it leave) a bit "zero", a bit "all of R" (R >= 2), else the weight less
 * one down a binary tree of tree_bits levels; the zero and all bits in the context of the
 * previous row of A actions in the block. A binary range decoder (32-bit range, 12-bit
 * probabilities adapted by a shift of 5), bytes past the block's end read as zeros. ---- */

typedef struct model_decoder {
    const unsigned char *code;
    uint64_t length, at;
    uint32_t value, range;
    uint16_t probability[EFGS_MAX_MODEL_CONTEXTS];
} model_decoder;

static uint32_t model_byte(model_decoder *d) {
    uint32_t byte = d->at < d->length ? d->code[d->at] : 0u;
    d->at++;
    return byte;
}

static unsigned model_bit(model_decoder *d, unsigned context) {
    uint32_t p = d->probability[context], bound = (d->range >> 12) * p;
    unsigned bit;
    if (d->value < bound) {
        d->range = bound;
        d->probability[context] = (uint16_t)(p + ((4096u - p) >> 5));
        bit = 0;
    } else {
        d->value -= bound;
        d->range -= bound;
        d->probability[context] = (uint16_t)(p - (p >> 5));
        bit = 1;
    }
    while (d->range < (1u << 24)) {
        d->range <<= 8;
        d->value = (d->value << 8) | model_byte(d);
    }
    return bit;
}

/* Decode the rows of block ``block`` up to row ``last`` into ``code`` (the last row's fields,
 * actions, total): EFGS_OK, EFGS_ERROR_NOT_FOUND if the last row is an empty cell, else
 * EFGS_ERROR_CORRUPTED (a row that breaks the model anywhere before it too). */
static int modelled_rows(const efgs_reader *reader, uint64_t block, uint64_t last, row_code *code) {
    model_decoder d;
    uint32_t previous[EFGS_MAX_MODEL_ACTIONS + 1][EFGS_MAX_MODEL_ACTIONS], rest, weight, predicted;
    int seen[EFGS_MAX_MODEL_ACTIONS + 1] = {0}, status = EFGS_OK;
    uint64_t start, end, row, lo, hi, j, c;
    unsigned per = 8u + (1u << reader->model_tree_bits), actions, base, kind, node, i;
    start = read_u32(reader->data + reader->model_index_offset + 4u * block);
    end = block + 1u < reader->model_blocks ? read_u32(reader->data + reader->model_index_offset + 4u * block + 4u)
                                            : reader->model_stream_bytes;
    if (start > end || end > reader->model_stream_bytes) return EFGS_ERROR_CORRUPTED;
    d.code = reader->data + reader->model_stream_offset + start;
    d.length = end - start;
    d.at = 0;
    d.range = 0xffffffffu;
    d.value = 0;
    for (i = 0; i < 4u; i++) d.value = (d.value << 8) | model_byte(&d);
    if (d.value >= d.range) return EFGS_ERROR_CORRUPTED;
    for (c = 0; c < reader->model_contexts; c++)
        d.probability[c] = (uint16_t)(reader->data[reader->model_first_offset + c] << 4);
    for (row = block * reader->block_rows; row <= last; row++) {
        if (coded_row_values(reader, row, &lo, &hi) != EFGS_OK || hi <= lo || hi - lo > reader->model_max_actions)
            return EFGS_ERROR_CORRUPTED;
        actions = (unsigned)(hi - lo);
        code->actions = actions;
        code->total = reader->model_total;
        code->width = code->padding = 0;
        if (model_bit(&d, 0u)) {
            status = EFGS_ERROR_NOT_FOUND;
            continue;
        }
        status = EFGS_OK;
        rest = reader->model_total;
        for (j = 0; j + 1u < actions; j++) {
            weight = 0;
            if (rest > 0u) {
                base = 1u + per * ((actions - 1u) * (actions - 2u) / 2u + (unsigned)j);
                kind = 0;
                if (seen[actions]) {
                    predicted = previous[actions][j] < rest ? previous[actions][j] : rest;
                    kind = predicted == 0u ? 1u : predicted == rest ? 2u : 3u;
                }
                if (model_bit(&d, base + kind)) {
                    weight = 0;
                } else if (rest == 1u || model_bit(&d, base + 4u + kind)) {
                    weight = rest;
                } else {
                    for (node = 1, i = 0; i < reader->model_tree_bits; i++) node = 2u * node + model_bit(&d, base + 8u + node);
                    weight = node - (1u << reader->model_tree_bits) + 1u;
                    if (weight >= rest) return EFGS_ERROR_CORRUPTED;
                }
            }
            code->fields[j] = previous[actions][j] = weight;
            rest -= weight;
        }
        previous[actions][actions - 1u] = rest;
        seen[actions] = 1;
    }
    return status;
}

/* row_status of a modelled row: decoded from its block's first row. */
static int modelled_status(const efgs_reader *reader, uint64_t lo, uint64_t hi, row_code *code) {
    int64_t row = coded_row_at(reader, lo);
    uint64_t start, end;
    if (row < 0 || coded_row_values(reader, (uint64_t)row, &start, &end) != EFGS_OK || end != hi)
        return EFGS_ERROR_CORRUPTED;
    return modelled_rows(reader, (uint64_t)row / reader->block_rows, (uint64_t)row, code);
}

/* Every modelled row, block by block. */
static int verify_modelled(const efgs_reader *reader) {
    uint64_t block, last;
    row_code code;
    for (block = 0; block < reader->model_blocks; block++) {
        last = (block + 1u) * reader->block_rows;
        last = (last < reader->num_rows ? last : reader->num_rows) - 1u;
        if (modelled_rows(reader, block, last, &code) == EFGS_ERROR_CORRUPTED) return EFGS_ERROR_CORRUPTED;
    }
    return EFGS_OK;
}

/* The row of a key and its code, checked: a row that fails its code (or, outside a card
 * table, is empty) is EFGS_ERROR_CORRUPTED. */
static int64_t checked_row(const efgs_reader *reader, const char *key, size_t key_length,
                           const efgs_class *infoset_class, row_code *code) {
    uint32_t lo = 0, hi = 0;
    int64_t position = locate(reader, key, key_length, infoset_class, &lo, &hi, code);
    if (position < 0) return position;
    if (reader->cards_offset != 0) return position; /* card_cell decoded and checked the row */
    return row_status(reader, lo, hi, code) == EFGS_OK ? position : EFGS_ERROR_CORRUPTED;
}

int efgs_quantized_in_class(const efgs_reader *reader, const char *key, size_t key_length,
                            const efgs_class *infoset_class, uint32_t *weights, int capacity) {
    row_code code;
    int64_t position = checked_row(reader, key, key_length, infoset_class, &code);
    uint64_t j, sum = 0;
    if (position < 0) return (int)position;
    if (code.actions > (uint64_t)capacity) return EFGS_ERROR_CAPACITY;
    for (j = 0; j + 1u < code.actions; j++) sum += weights[j] = (uint32_t)field_at(reader, &code, j);
    weights[code.actions - 1u] = (uint32_t)(code.total - sum);
    return (int)code.actions;
}

int efgs_quantized(const efgs_reader *reader, const char *key, size_t key_length,
                   uint32_t *weights, int capacity) {
    return efgs_quantized_in_class(reader, key, key_length, NULL, weights, capacity);
}

int efgs_probabilities_in_class(const efgs_reader *reader, const char *key, size_t key_length,
                                const efgs_class *infoset_class, double *probabilities,
                                int capacity) {
    row_code code;
    int64_t position = checked_row(reader, key, key_length, infoset_class, &code);
    uint64_t j, sum = 0, weight;
    if (position < 0) return (int)position;
    if (code.actions > (uint64_t)capacity) return EFGS_ERROR_CAPACITY;
    for (j = 0; j < code.actions; j++) {
        weight = j + 1u < code.actions ? field_at(reader, &code, j) : code.total - sum;
        sum += weight;
        probabilities[j] = (double)weight / (double)code.total;
    }
    return (int)code.actions;
}

int efgs_probabilities(const efgs_reader *reader, const char *key, size_t key_length,
                       double *probabilities, int capacity) {
    return efgs_probabilities_in_class(reader, key, key_length, NULL, probabilities, capacity);
}

int efgs_sample_in_class(const efgs_reader *reader, const char *key, size_t key_length,
                         const efgs_class *infoset_class, uint64_t random_bits) {
    row_code code;
    /* the whole row is checked first: a damaged row is never sampled */
    int64_t position = checked_row(reader, key, key_length, infoset_class, &code);
    uint64_t j, draw, sum = 0;
    if (position < 0) return (int)position;
    draw = random_bits % code.total;
    for (j = 0; j + 1u < code.actions; j++) {
        sum += field_at(reader, &code, j);
        if (draw < sum) return (int)j;
    }
    return (int)(code.actions - 1u);
}

int efgs_sample(const efgs_reader *reader, const char *key, size_t key_length, uint64_t random_bits) {
    return efgs_sample_in_class(reader, key, key_length, NULL, random_bits);
}

int efgs_verify(const efgs_reader *reader) {
    size_t header_end = HEADER_SIZE + reader->spec_length;
    uint64_t row;
    uint32_t lo, hi;
    row_code code;
    if (crc32_update(0, reader->data + header_end, reader->size - header_end) != read_u32(reader->data + 108))
        return EFGS_ERROR_CORRUPTED;
    /* with a card table there is no row-start table: rows are checked as they are read */
    if (reader->coded && verify_coded(reader) != EFGS_OK) return EFGS_ERROR_CORRUPTED;
    if (reader->modelled && verify_modelled(reader) != EFGS_OK) return EFGS_ERROR_CORRUPTED;
    for (row = 0; reader->cards_offset == 0 && !reader->coded && row < reader->num_rows; row++) {
        if (row_bounds(reader, row, &lo, &hi) != EFGS_OK || row_status(reader, lo, hi, &code) != EFGS_OK)
            return EFGS_ERROR_CORRUPTED;
    }
    for (row = 0; row < reader->num_classes; row++)
        if (class_entry_row(reader, row) < 0) return EFGS_ERROR_CORRUPTED;
    return EFGS_OK;
}

int efgs_game_definition(const efgs_reader *reader, const char **text, size_t *length) {
    *text = NULL;
    *length = 0;
    if (!(reader->flags & FLAG_GAMEDEF)) return EFGS_ERROR_NOT_FOUND;
    *text = (const char *)reader->data + reader->gamedef_offset;  /* checked when opening */
    *length = reader->gamedef_length;
    return EFGS_OK;
}

const char *efgs_status_message(int status) {
    switch (status) {
    case EFGS_OK: return "ok";
    case EFGS_ERROR_IO: return "cannot open or read the file (or it is not a regular file)";
    case EFGS_ERROR_FORMAT: return "not a compact strategy (.efgs) file";
    case EFGS_ERROR_VERSION: return "written by another compact format version (this reader reads versions 6 to 10; export again)";
    case EFGS_ERROR_TRUNCATED: return "file is truncated";
    case EFGS_ERROR_CORRUPTED: return "file is corrupted";
    case EFGS_ERROR_NOT_FOUND: return "no such infoset key";
    case EFGS_ERROR_CAPACITY: return "output array too short for the row";
    case EFGS_ERROR_NEEDS_CLASS: return "the key is not an explicit entry: give its class (player, own-sequence length, number of actions)";
    case EFGS_ERROR_TABLES: return "its bucket-table file is missing, not a regular file, not the one it was exported with (sha256 differs), or damaged";
    case EFGS_ERROR_CARD: return "a card of the key is not in the deck, is dealt twice, or the key has the wrong number of cards";
    case EFGS_ERROR_BETTING: return "its betting (bets=) is no decision of the game, or not in the file";
    case EFGS_ERROR_MISSING_CELL: return "no row for its cards after this betting (a cell never dealt, or pruned)";
    default: return "unknown status";
    }
}
