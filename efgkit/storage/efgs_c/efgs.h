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
 * ("P1 card=Ks board=Qh bets=rc/c") is read as its betting history (bets=), which the key
 * index takes to a block of rows, and the bucket of its cards (card=/cards=, board=),
 * which picks the row in the block. No class is needed.
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

#define EFGS_FORMAT_VERSION 4
#define EFGS_MAX_CARD_ROUNDS 8

enum efgs_status {
    EFGS_OK = 0,
    EFGS_ERROR_IO = -1,          /* the file cannot be opened, mapped or read */
    EFGS_ERROR_FORMAT = -2,      /* not a compact strategy, or inconsistent sizes/offsets */
    EFGS_ERROR_VERSION = -3,     /* written by another format version (older ones are not read) */
    EFGS_ERROR_TRUNCATED = -4,   /* shorter than its header says */
    EFGS_ERROR_CORRUPTED = -5,   /* a CRC mismatch or a row not summing to the total */
    EFGS_ERROR_NOT_FOUND = -6,   /* no such infoset key (not in the game, or pruned) */
    EFGS_ERROR_CAPACITY = -7,    /* the output array is shorter than the row */
    EFGS_ERROR_NEEDS_CLASS = -8  /* not an explicit key and no class given (file has a class rule) */
};

/* An infoset's class: what the coarsest abstraction (Cermak et al. 4.1.1) knows of it. */
typedef struct efgs_class {
    uint32_t player;
    uint32_t own_sequence_length;  /* actions the player took before this infoset */
    uint32_t num_actions;
} efgs_class;

typedef struct efgs_reader {
    const unsigned char *data;  /* the whole file */
    size_t size;
    unsigned bits;              /* 16, 8 or 4 */
    unsigned flags;             /* 1: unreachable infosets pruned, 2: keys stored */
    uint32_t total;             /* every row sums to this: 2^bits - 1 */
    uint32_t num_infosets;      /* original infosets in the file */
    uint32_t num_explicit;      /* keys in the index (explicit entries) */
    uint32_t num_classes;       /* entries of the class rule, 0 if none */
    uint32_t num_rows;          /* abstract infosets: rows of probabilities */
    uint64_t num_values;
    uint64_t seed;
    uint32_t segment;           /* slots per segment of the xor table (3 segments) */
    unsigned slot_bits;         /* bits per slot: row bits + check bits */
    unsigned check_bits;        /* bits of key fingerprint */
    size_t slots_offset, starts_offset, values_offset, keys_offset, classes_offset;
    /* Card table (cards_offset 0: none): keys are (betting history, cards), the key index
     * holds betting histories and a row is its history's first row plus its cell. */
    size_t cards_offset, card_names_offset;
    unsigned card_name_width, num_cards, private_cards, num_card_rounds, perfect_recall;
    unsigned card_value_bits, card_action_bits;  /* widths in an index value of a block */
    unsigned board_cards[EFGS_MAX_CARD_ROUNDS];   /* board cards seen in each round */
    unsigned bucket_bits[EFGS_MAX_CARD_ROUNDS];
    uint32_t buckets[EFGS_MAX_CARD_ROUNDS];
    size_t bucket_table_offset[EFGS_MAX_CARD_ROUNDS];
    const char *spec;           /* the game spec, NOT zero-terminated */
    size_t spec_length;
    const unsigned char *fingerprint;  /* 32 bytes: sha256 of the game tree */
    int mapped;                 /* 1 if efgs_open_file mapped or loaded the data */
} efgs_reader;

/* Open a file already in memory (not copied: it must outlive the reader). */
int efgs_open_memory(efgs_reader *reader, const void *data, size_t size);
/* Open a file: mapped with mmap on POSIX systems, else read into one malloc'd buffer. */
int efgs_open_file(efgs_reader *reader, const char *path);
void efgs_close(efgs_reader *reader);

/* The abstract row of an infoset (its key and class; class NULL: explicit keys only), or
 * EFGS_ERROR_NOT_FOUND / EFGS_ERROR_NEEDS_CLASS. */
int64_t efgs_find_in_class(const efgs_reader *reader, const char *key, size_t key_length,
                           const efgs_class *infoset_class);
/* The quantized weights (summing to reader->total) of an infoset's actions, in the game's
 * action order. Returns the number of actions or a negative efgs_status. */
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
/* Read the whole file: payload CRC, every row summing to the total. */
int efgs_verify(const efgs_reader *reader);

/* The 64-bit key hash: BLAKE2b, 8-byte digest, of (seed as 8 little-endian bytes, key). */
uint64_t efgs_key_hash(const char *key, size_t key_length, uint64_t seed);
const char *efgs_status_message(int status);

#ifdef __cplusplus
}
#endif

#endif /* EFGS_H */
