/*
 * efgs: read a compact efgkit strategy (.efgs) in portable C99.
 *
 * The format is documented byte by byte in docs/compact-format.md; efgkit writes it with
 * `efgkit export STRATEGY.h5 --bits {16,8,4} --out FILE.efgs`. A reader holds no memory
 * of its own: it reads the file's bytes in place, from a buffer the caller owns (the
 * file copied into flash, say) or from the file mapped by efgs_open_file. Nothing is
 * allocated after opening, and a lookup is a hash, three slot reads, perhaps a class
 * entry, and one row read: each abstract infoset's row is stored once; the three slots
 * an explicit infoset key hashes to XOR to its row number and a fingerprint of the key
 * (an xor table), and the other infosets follow their class (Cermak et al. 4.1.1: player,
 * own-sequence length, number of actions), which the caller passes.
 *
 *     efgs_reader reader;
 *     if (efgs_open_file(&reader, "leduc.efgs") != EFGS_OK) ...
 *     double p[8];
 *     efgs_class c = {player, own_sequence_length, num_actions};
 *     int n = efgs_probabilities_in_class(&reader, key, strlen(key), &c, p, 8); // n, or < 0
 *     int a = efgs_sample_in_class(&reader, key, strlen(key), &c, random_64_bits);
 *     efgs_close(&reader);
 *
 * The functions without _in_class pass no class: they answer for explicit keys only
 * (EFGS_ERROR_NEEDS_CLASS for the others when the file has a class rule).
 *
 * A file exported on a card abstraction holds its bucket tables instead: a poker key
 * ("P1 card=Ks board=Qh bets=rc/c", or for hold'em "P0 cards=AsKh board=2c3d4s/5h
 * bets=rc/cr", the ACPC betting string) is read as its betting history (bets=), which the
 * key index takes to a block of rows, and the bucket of its cards (card=/cards=, board=),
 * which picks the row in the block. No class is needed. A round's bucket is read from a
 * packed table over the cards or over their canonical (suit-isomorphic, Waugh 2013) index,
 * or is that index itself, the deal itself (lossless), or 0, or (format 8) is computed from
 * a small description: hold'em features by enumeration, the nearest stored centroid
 * (efgs_computed.c). Tables too large to ship in
 * every strategy live in a bucket-table file (.efgb) that the strategy names and checks
 * by sha256: efgs_open_file opens it beside the strategy (the recorded name), or the
 * caller attaches it with efgs_open_bucket_tables / efgs_attach_bucket_tables.
 *
 * Integers in the file are little-endian and are read byte by byte, so the reader works
 * on any host byte order and alignment.
 */
#ifndef EFGS_H
#define EFGS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define EFGS_FORMAT_VERSION 10      /* the newest version read; 6 to 9 are read too */
#define EFGS_MAX_MODEL_ACTIONS 4    /* actions of a modelled row (formats 9 and 10) */
#define EFGS_MAX_MODEL_TOTAL 256    /* the modelled rows' grid */
#define EFGS_MAX_MODEL_CONTEXTS (1 + (8 + EFGS_MAX_MODEL_TOTAL) * \
                                 (EFGS_MAX_MODEL_ACTIONS * (EFGS_MAX_MODEL_ACTIONS - 1) / 2))
#define EFGS_MAX_CODED_CONTEXTS 64  /* (actions, field width) codes of a file with coded rows */
#define EFGS_MAX_CODED_ACTIONS 64   /* actions of a coded row */
#define EFGS_MAX_CARD_ROUNDS 8
#define EFGS_MAX_ACTION_GROUPS 16
#define EFGS_MAX_CODES 64          /* per-suit card counts of a canonical index: (hole + 1)(board + 1) */
#define EFGS_MAX_CONFIGURATIONS 48 /* sorted suit counts of (hole, board): 38 for 2 + 5 cards */

enum efgs_status {
    EFGS_OK = 0,
    EFGS_ERROR_IO = -1,          /* the file cannot be opened, mapped or read, or is not a regular file */
    EFGS_ERROR_FORMAT = -2,      /* not a compact strategy, or inconsistent sizes/offsets */
    EFGS_ERROR_VERSION = -3,     /* written by another format version (older ones are not read) */
    EFGS_ERROR_TRUNCATED = -4,   /* shorter than its header says */
    EFGS_ERROR_CORRUPTED = -5,   /* a CRC mismatch or a row whose weights pass its total */
    EFGS_ERROR_NOT_FOUND = -6,   /* no such infoset key (not in the game, or pruned) */
    EFGS_ERROR_CAPACITY = -7,    /* the output array is shorter than the row */
    EFGS_ERROR_NEEDS_CLASS = -8, /* not an explicit key and no class given (file has a class rule) */
    EFGS_ERROR_TABLES = -9,      /* the bucket-table file is missing, not a regular file, another one (sha256), or damaged */
    EFGS_ERROR_CARD = -10,       /* the key's cards: a name not in the deck, a card twice, or the wrong number */
    EFGS_ERROR_BETTING = -11,    /* the key's betting (bets=) is no decision of the game, or not in the file */
    EFGS_ERROR_MISSING_CELL = -12 /* a valid key whose cell has no row (never dealt, or pruned) */
};

/* Waugh's canonical index of (hole cards, board) in a deck of 4 suits, numbered as efgkit's
 * HandIndexer((hole, board)): built when opening, read by every lookup of the round. */
typedef struct efgs_canonical {
    unsigned groups[2];         /* cards per group: hole, board (num_groups 1: hole only) */
    unsigned num_groups;
    unsigned num_configurations;
    uint64_t size;              /* canonical hands */
    uint64_t suit_range[EFGS_MAX_CODES];
    uint32_t configuration_codes[EFGS_MAX_CONFIGURATIONS];  /* 4 codes, descending, a byte each */
    uint64_t configuration_first[EFGS_MAX_CONFIGURATIONS];
    uint64_t multiplier[EFGS_MAX_CONFIGURATIONS][3];        /* the fourth is always 1 */
    unsigned char group_rank[EFGS_MAX_CONFIGURATIONS][3];
} efgs_canonical;

/* A code of coded rows (format 7): rows of num_actions actions and fields of field_bits
 * bits, a canonical Huffman code over escape, empty cell and a dictionary of rows. */
typedef struct efgs_coded_context {
    uint32_t num_actions, field_bits, max_length, num_symbols;
    size_t counts_offset;   /* u32 codes per length 1..max_length */
    size_t order_offset;    /* u16 symbols in code order */
    size_t entries_offset;  /* u32 fields (num_actions - 1) per dictionary row */
    uint32_t counts[25];    /* codes per length 0..24, read from the file when opening */
} efgs_coded_context;

/* A round whose bucket is computed on the device (bucket method 5, format 8, docs/
 * compact-format.md "Computed buckets"): the pipeline's features by enumeration, the
 * nearest stored centroid, unless the canonical index is a stored exception. */
enum efgs_computed_kind {
    EFGS_COMPUTED_OCHS = 1,      /* final street: strength against each opponent cluster, L2 */
    EFGS_COMPUTED_EHS = 2,       /* final street: E[HS], L2 (|x - c|) */
    EFGS_COMPUTED_HISTOGRAM = 3  /* before it: final-strength histogram over the runouts, EMD */
};
#define EFGS_METHOD_COMPUTED 5u
typedef struct efgs_computed {
    unsigned kind, dims;         /* dims: opponent clusters (OCHS), 1 (E[HS]) or bins */
    unsigned final_board;        /* board cards at the showdown */
    unsigned centroid_width;     /* doubles per centroid: dims, or bins - 1 (a CDF) */
    uint32_t num_classes, num_exceptions;
    uint32_t budget;             /* the rule's hand evaluations per lookup that chose it */
    size_t classes_offset, centroids_offset, exception_index_offset, exception_bucket_offset;
} efgs_computed;

/* A round's bucket table compressed with random access (bucket method 6, format 10, docs/
 * compact-format.md "Compressed bucket tables"): a base bucket per rank pattern (hole and board
 * ranks, optionally the flush state), coded as differences along the patterns, and every
 * canonical hand's residual from it, each coded in blocks of block_entries (zero runs and
 * values, a canonical Huffman code each); block indices give each block's first bit
 * (efgs_compressed.c). */
#define EFGS_METHOD_COMPRESSED 6u
/* One canonical Huffman code and its stream in blocks (the residuals', or the base's). */
typedef struct efgs_compressed_code {
    uint32_t max_length, num_symbols;
    uint64_t stream_bits;
    size_t symbols_offset, index_offset, stream_offset;
    uint32_t counts[25];         /* codes per length 0..24 */
} efgs_compressed_code;
typedef struct efgs_compressed {
    uint32_t block_entries, flush_states;
    uint64_t entries, patterns;
    efgs_compressed_code residuals, base;
} efgs_compressed;

/* An infoset's class: what the coarsest abstraction (Cermak et al. 4.1.1) knows of it. */
typedef struct efgs_class {
    uint32_t player;
    uint32_t own_sequence_length;  /* actions the player took before this infoset */
    uint32_t num_actions;
} efgs_class;

typedef struct efgs_reader {
    const unsigned char *data;  /* the whole file */
    size_t size;
    unsigned bits;              /* 16, 8 or 4 per action; rows of the wide tier 2 bits, narrow bits / 2 */
    unsigned flags;             /* 1: unreachable infosets pruned, 2: keys stored */
    uint32_t num_infosets;      /* original infosets in the file */
    uint32_t num_explicit;      /* keys in the index (explicit entries) */
    uint32_t num_classes;       /* entries of the class rule, 0 if none */
    uint32_t num_rows;          /* abstract infosets: rows of probabilities */
    uint64_t num_values;
    uint64_t wide_end, narrow_start;  /* values [0, wide_end): wide tier; [narrow_start, ...): narrow */
    uint64_t seed;
    uint32_t segment;           /* slots per segment of the xor table (3 segments) */
    unsigned slot_bits;         /* bits per slot: row bits + check bits */
    unsigned check_bits;        /* bits of key fingerprint */
    size_t slots_offset, starts_offset, values_offset, keys_offset, classes_offset;
    /* Card table (cards_offset 0: none): keys are (betting history, cards), the key index
     * holds betting histories and a row is its history's first row plus its cell. */
    size_t cards_offset, card_names_offset;
    unsigned card_name_width, num_cards, private_cards, num_card_rounds, perfect_recall;
    unsigned card_action_bits;                    /* width of a block's actions in an index value */
    unsigned num_action_groups;                   /* blocks of one number of actions each */
    uint32_t group_actions[EFGS_MAX_ACTION_GROUPS], group_first_row[EFGS_MAX_ACTION_GROUPS];
    uint64_t group_first_value[EFGS_MAX_ACTION_GROUPS];
    unsigned board_cards[EFGS_MAX_CARD_ROUNDS];   /* board cards seen in each round */
    unsigned board_dealt[EFGS_MAX_CARD_ROUNDS];   /* board cards dealt in each round */
    unsigned bucket_bits[EFGS_MAX_CARD_ROUNDS];
    unsigned bucket_method[EFGS_MAX_CARD_ROUNDS]; /* 0 table by card ranks, 1 table by canonical
                                                     index, 2 canonical index, 3 lossless, 4 zero,
                                                     5 computed (format 8), 6 compressed
                                                     table (format 10) */
    unsigned bucket_source[EFGS_MAX_CARD_ROUNDS]; /* 0 in this file, 1 in the bucket-table file */
    uint32_t buckets[EFGS_MAX_CARD_ROUNDS];
    size_t bucket_table_offset[EFGS_MAX_CARD_ROUNDS];  /* in data, or in tables_data (source 1) */
    efgs_canonical canonical[EFGS_MAX_CARD_ROUNDS];
    efgs_computed computed[EFGS_MAX_CARD_ROUNDS];  /* rounds of method 5 */
    efgs_compressed compressed[EFGS_MAX_CARD_ROUNDS];  /* rounds of method 6 */
    uint32_t rule_budget, rule_decode_budget;  /* the rule that chose each round's method (flag 64) */
    uint16_t pair_class[52 * 52];         /* preflop class of hole pair (a, b), for OCHS */
    /* The bucket-table file (.efgb) when a round's table lives there. */
    const unsigned char *tables_sha256;   /* 32 bytes in the strategy file, NULL if none needed */
    const char *tables_name;              /* its recorded file name, NOT zero-terminated */
    size_t tables_name_length;
    const unsigned char *tables_data;     /* NULL until attached */
    size_t tables_size;
    int tables_mapped;
    const char *spec;           /* the game spec, NOT zero-terminated */
    size_t spec_length;
    const unsigned char *fingerprint;  /* 32 bytes: sha256 of the game tree */
    int mapped;                 /* 1 if efgs_open_file mapped or loaded the data */
    size_t gamedef_offset, gamedef_length;  /* the ACPC game definition (flag 4), else 0 */
    /* Coded rows (format 7, docs/compact-format.md "Coded rows"): a row is decoded from
     * the start of its block of block_rows rows, whose first bit the block index holds. */
    unsigned version;
    int coded;
    uint32_t block_rows;
    size_t block_index_offset, stream_offset;
    uint64_t stream_bits;
    unsigned num_contexts;
    efgs_coded_context contexts[EFGS_MAX_CODED_CONTEXTS];
    /* Modelled rows (format 9, "Modelled rows"): a block of block_rows rows is range-decoded
     * from its first byte, every context starting at its stored probability. */
    int modelled;
    uint32_t model_total;             /* what a row's weights sum to */
    unsigned model_max_actions, model_tree_bits, model_contexts;
    uint64_t model_blocks, model_stream_bytes;
    size_t model_first_offset, model_index_offset, model_stream_offset;
} efgs_reader;

/* Open a file already in memory (not copied: it must outlive the reader). */
int efgs_open_memory(efgs_reader *reader, const void *data, size_t size);
/* Open a file: mapped with mmap on POSIX systems, else read into one malloc'd buffer. */
int efgs_open_file(efgs_reader *reader, const char *path);
void efgs_close(efgs_reader *reader);
/* Attach the bucket-table file a strategy names (reader->tables_name): in memory (not
 * copied), or mapped from a path. Its sha256 must be the one the strategy recorded.
 * efgs_open_file does this itself with the recorded name beside the strategy file. */
int efgs_attach_bucket_tables(efgs_reader *reader, const void *data, size_t size);
int efgs_open_bucket_tables(efgs_reader *reader, const char *path);

/* The abstract row of an infoset (its key and class; class NULL: explicit keys only), or
 * EFGS_ERROR_NOT_FOUND / EFGS_ERROR_NEEDS_CLASS. */
int64_t efgs_find_in_class(const efgs_reader *reader, const char *key, size_t key_length,
                           const efgs_class *infoset_class);
/* The quantized weights of an infoset's actions, in the game's action order, summing to the
 * row's total: 2^floor(A b / max(A - 1, 1)) - 2 for A actions at b bits per action (its
 * tier: bits, twice or half that); a row stores only its first A - 1 weights. Returns the
 * number of actions or a negative efgs_status. */
int efgs_quantized_in_class(const efgs_reader *reader, const char *key, size_t key_length,
                            const efgs_class *infoset_class, uint32_t *weights, int capacity);
/* The same as probabilities weight / total. */
int efgs_probabilities_in_class(const efgs_reader *reader, const char *key, size_t key_length,
                                const efgs_class *infoset_class, double *probabilities,
                                int capacity);
/* An action drawn with probability weight / total, from 64 random bits the caller supplies. */
int efgs_sample_in_class(const efgs_reader *reader, const char *key, size_t key_length,
                         const efgs_class *infoset_class, uint64_t random_bits);
/* The same with no class (explicit keys only). */
int64_t efgs_find(const efgs_reader *reader, const char *key, size_t key_length);
int efgs_quantized(const efgs_reader *reader, const char *key, size_t key_length,
                   uint32_t *weights, int capacity);
int efgs_probabilities(const efgs_reader *reader, const char *key, size_t key_length,
                       double *probabilities, int capacity);
int efgs_sample(const efgs_reader *reader, const char *key, size_t key_length,
                uint64_t random_bits);
/* The names of the key's num_actions actions in the row's order, static strings (docs/
 * compact-format.md, "Action order"): for ACPC betting (Leduc, two-card poker, hold'em)
 * facing a bet or raise, or a blind before the first round's first action, "fold" "call"
 * "raise" ("fold" "call" once raises are capped), facing none "call" "raise"; Kuhn "pass"
 * "bet". Returns num_actions; 0 for a game whose keys do not spell their actions (the
 * caller names them by index); EFGS_ERROR_BETTING if the betting is no decision with
 * num_actions actions. */
int efgs_action_names(const efgs_reader *reader, const char *key, size_t key_length,
                      int num_actions, const char **names);
/* The ACPC game definition the file carries (header flag 4: its text, then its u32 length,
 * end the file): *text points into the file (NOT zero-terminated), *length its bytes.
 * EFGS_ERROR_NOT_FOUND if the file carries none, EFGS_ERROR_FORMAT if it does not fit. */
int efgs_game_definition(const efgs_reader *reader, const char **text, size_t *length);
/* Read the whole file: payload CRC, every row's code. */
int efgs_verify(const efgs_reader *reader);

/* Waugh's canonical index of (hole, board) cards of a deck of num_ranks ranks x 4 suits
 * (card ids 4 rank + suit), numbered as efgkit's HandIndexer((hole, board)); board 0:
 * hole cards alone. init returns EFGS_ERROR_FORMAT for a deal the tables cannot hold.
 * index takes the hole cards, then the board (valid, distinct); c->size classes. */
int efgs_canonical_init(efgs_canonical *c, unsigned hole, unsigned board, unsigned num_ranks);
uint64_t efgs_canonical_index(const efgs_canonical *c, const unsigned *cards);

/* The bucket of sorted hole cards ``hand`` with the ``board`` seen in ``round`` (in the order
 * dealt), as a key lookup reads it: >= 0, or a negative efgs_status. */
int64_t efgs_bucket(const efgs_reader *reader, unsigned round, const unsigned *hand, const unsigned *board);
/* A computed round's features of a hand (the pipeline's, efgs_computed.c): the OCHS values or
 * E[HS] as the pipeline's float32, or the histogram's runout counts. Returns their number,
 * EFGS_ERROR_NOT_FOUND for a round not computed, EFGS_ERROR_CAPACITY. */
int efgs_computed_features(const efgs_reader *reader, unsigned round, const unsigned *hand,
                           const unsigned *board, double *features, int capacity);
/* Used by the reader: open round ``round``'s description at ``position`` (before ``limit``),
 * its bytes in *length; the bucket of a hand whose canonical index is ``index``. */
int efgs_computed_open(efgs_reader *reader, unsigned round, const unsigned char *bytes, uint64_t position,
                       uint64_t limit, uint64_t *length);
int64_t efgs_computed_bucket(const efgs_reader *reader, unsigned round, const unsigned *hand,
                             const unsigned *board, uint64_t index);

/* Used by the reader: open round ``round``'s compressed table at ``position`` (before
 * ``limit``), its bytes in *length; the bucket of a hand whose canonical index is ``index``. */
int efgs_compressed_open(efgs_reader *reader, unsigned round, const unsigned char *bytes, uint64_t position,
                         uint64_t limit, uint64_t *length);
int64_t efgs_compressed_bucket(const efgs_reader *reader, unsigned round, const unsigned *hand,
                               const unsigned *board, uint64_t index);

/* The 64-bit key hash: BLAKE2b, 8-byte digest, of (seed as 8 little-endian bytes, key). */
uint64_t efgs_key_hash(const char *key, size_t key_length, uint64_t seed);
const char *efgs_status_message(int status);

#ifdef __cplusplus
}
#endif

#endif /* EFGS_H */
