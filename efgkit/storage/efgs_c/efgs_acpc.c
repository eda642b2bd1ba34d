/*
 * efgs_acpc: play a compact strategy (.efgs) against an ACPC dealer, in C99 with the
 * standard library and POSIX sockets only.
 *
 *     efgs_acpc STRATEGY.efgs HOST PORT [SEED]
 *
 * The strategy file carries the ACPC game definition it was exported for (efgkit export
 * writes it; docs/compact-format.md, "Game definition"); any two-player limit game is
 * played. The program connects to HOST:PORT, sends the version line, and reads the
 * dealer's MATCHSTATE lines (protocol 2.0 of the ACPC server: position, hand number,
 * betting f/c/r with rounds separated by '/', the cards as hole|hole/board/...). Each
 * line is checked against the game: its betting replayed under the limit rules, its cards
 * named in the game's deck, distinct, as many as the round shows. When the line's
 * position is to act, the strategy row of (position, hole cards, board, betting) is read
 * (efgs_quantized_in_class: the same key efgkit's readers take, "P0 cards=AsKh
 * board=2c3d4s/5h bets=rc/cr") and an action drawn from its integer weights with a seeded
 * generator (splitmix64) is sent back as the line followed by ":f", ":c" or ":r".
 *
 * Everything is allocated before the first line is read (the file mapped by efgs_open_file,
 * one line buffer and one key buffer on the stack). A malformed or mismatched line, a
 * damaged file, a file without a game definition or one for another deck: one line on
 * stderr and exit code 2, before any action is drawn from it. Exit 0 when the dealer
 * closes the connection, with one line on stdout: decisions played and the mean and
 * largest time of a decision (key, lookup with bucket tables, draw) in microseconds.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include "efgs.h"

#define MAX_ROUNDS 4
#define MAX_CARDS 52
#define MAX_HOLE 3
#define MAX_LINE 4096
#define MAX_KEY 512
#define MAX_ACTIONS_PER_ROUND 64
#define EXIT_BAD_INPUT 2

static const char ACPC_RANKS[] = "23456789TJQKA";
static const char ACPC_SUITS[] = "cdhs";
static const char EFGKIT_SUITS[] = "shdc";

typedef struct game {
    unsigned rounds, suits, ranks, hole;
    unsigned blind[2], raise_size[MAX_ROUNDS], first[MAX_ROUNDS], max_raises[MAX_ROUNDS];
    unsigned board[MAX_ROUNDS];
    char names[MAX_CARDS][3];  /* efgkit's card names by card id (rank * suits + suit) */
} game;

/* The betting of a hand, replayed under the limit rules (as the dealer's). */
typedef struct hand {
    unsigned round, actions_in_round, raises_in_round, finished, own_actions[2];
    unsigned spent[2];
} hand;

static void fail(const char *format, ...) {
    va_list args;
    va_start(args, format);
    fputs("efgs_acpc: ", stderr);
    vfprintf(stderr, format, args);
    fputc('\n', stderr);
    va_end(args);
    exit(EXIT_BAD_INPUT);
}

/* ------------------------------------------------------------------ game definition */
static int name_is(const char *name, size_t length, const char *wanted) {
    size_t i;
    if (strlen(wanted) != length) return 0;
    for (i = 0; i < length; ++i) {
        char c = name[i];
        if (c >= 'A' && c <= 'Z') c = (char)(c - 'A' + 'a');
        if (c != wanted[i]) return 0;
    }
    return 1;
}

/* Read up to max whole numbers of a field's value; the count read. */
static unsigned read_numbers(const char *at, const char *end, unsigned *values, unsigned max) {
    unsigned count = 0;
    while (at < end) {
        unsigned long value = 0;
        int digits = 0;
        while (at < end && (*at == ' ' || *at == '\t' || *at == '=' || *at == '\r')) ++at;
        if (at == end) break;
        while (at < end && *at >= '0' && *at <= '9' && digits < 10) {
            value = value * 10u + (unsigned long)(*at++ - '0');
            ++digits;
        }
        if (digits == 0 || count == max || value > 1000000000ul ||
            (at < end && *at != ' ' && *at != '\t' && *at != '\r'))
            fail("the strategy's game definition has a malformed field");
        values[count++] = (unsigned)value;
    }
    return count;
}

static void read_game(game *g, const char *text, size_t length) {
    const char *at = text, *end = text + length;
    unsigned seen = 0, players = 0, limit = 0, inside = 0, closed = 0, values[MAX_ROUNDS], n, r, c;
    memset(g, 0, sizeof *g);
    while (at < end) {
        const char *line = at, *line_end = memchr(at, '\n', (size_t)(end - at)), *name;
        size_t name_length;
        if (line_end == NULL) line_end = end;
        at = line_end + (line_end < end);
        while (line < line_end && (*line == ' ' || *line == '\t')) ++line;
        if (line == line_end || *line == '#' || *line == '\r') continue;
        name = line;
        while (line < line_end && ((*line >= 'a' && *line <= 'z') || (*line >= 'A' && *line <= 'Z'))) ++line;
        name_length = (size_t)(line - name);
        if (name_is(name, name_length, "gamedef")) { inside = 1; continue; }
        if (!inside || closed) fail("the strategy's game definition is malformed");
        if (name_is(name, name_length, "end")) { closed = 1; continue; }
        if (name_is(name, name_length, "limit")) { limit = 1; continue; }
        if (name_is(name, name_length, "nolimit")) fail("the strategy's game is no-limit; efgs_acpc plays limit games");
        n = read_numbers(line, line_end, values, MAX_ROUNDS);
#define FIELD(field_name, bit) if (name_is(name, name_length, field_name) && (seen |= bit))
        FIELD("numplayers", 1) { if (n == 1) players = values[0]; }
        else FIELD("numrounds", 2) { if (n == 1) g->rounds = values[0]; }
        else FIELD("blind", 4) { if (n == 2) { g->blind[0] = values[0]; g->blind[1] = values[1]; } else seen &= ~4u; }
        else FIELD("raisesize", 8) { for (r = 0; r < n; ++r) g->raise_size[r] = values[r]; if (n != g->rounds) seen &= ~8u; }
        else FIELD("firstplayer", 16) { for (r = 0; r < n; ++r) g->first[r] = values[r]; if (n != g->rounds) seen &= ~16u; }
        else FIELD("maxraises", 32) { for (r = 0; r < n; ++r) g->max_raises[r] = values[r]; if (n != g->rounds) seen &= ~32u; }
        else FIELD("numsuits", 64) { if (n == 1) g->suits = values[0]; }
        else FIELD("numranks", 128) { if (n == 1) g->ranks = values[0]; }
        else FIELD("numholecards", 256) { if (n == 1) g->hole = values[0]; }
        else FIELD("numboardcards", 512) { for (r = 0; r < n; ++r) g->board[r] = values[r]; if (n != g->rounds) seen &= ~512u; }
        else FIELD("stack", 1024) { }
        else fail("the strategy's game definition has an unknown field");
#undef FIELD
    }
    if (!closed || !limit || seen != 1023u)
        fail("the strategy's game definition is incomplete (fields given in order after numRounds)");
    if (players != 2 || g->rounds < 1 || g->rounds > MAX_ROUNDS || g->suits < 1 || g->suits > 4 ||
        g->ranks < 1 || g->ranks > 13 || g->hole < 1 || g->hole > MAX_HOLE || g->board[0] != 0)
        fail("the strategy's game is not a two-player limit game efgs_acpc plays");
    for (r = 0, n = 2 * g->hole; r < g->rounds; ++r) {
        n += g->board[r];
        if (g->first[r] < 1 || g->first[r] > 2 || g->max_raises[r] < 1 ||
            g->max_raises[r] > MAX_ACTIONS_PER_ROUND - 2 || g->raise_size[r] < 1)
            fail("the strategy's game definition has a round efgs_acpc cannot play");
    }
    if (n > g->suits * g->ranks) fail("the strategy's game deals more cards than its deck holds");
    /* efgkit's names (games.poker.rank_symbols): four suits keep the top ranks; fewer count
       down from the king unless all 13 ranks are there */
    for (c = 0; c < g->suits * g->ranks; ++c) {
        unsigned top = (g->suits == 4 || g->ranks == 13) ? 13u : 12u;
        g->names[c][0] = ACPC_RANKS[top - g->ranks + c / g->suits];
        g->names[c][1] = g->suits == 1 ? '\0' : EFGKIT_SUITS[c % g->suits];
        g->names[c][2] = '\0';
    }
}

/* The file's card table (if any) must name the same deck and deal. */
static void check_card_table(const efgs_reader *reader, const game *g) {
    unsigned c;
    if (reader->cards_offset == 0) return;
    if (reader->num_cards != g->suits * g->ranks || reader->private_cards != g->hole ||
        reader->num_card_rounds != g->rounds)
        fail("the strategy's card table does not fit its game definition (damaged file?)");
    for (c = 0; c < reader->num_cards; ++c) {
        const char *name = (const char *)reader->data + reader->card_names_offset + c * reader->card_name_width;
        if (reader->card_name_width != strlen(g->names[c]) || memcmp(name, g->names[c], reader->card_name_width) != 0)
            fail("the strategy's card names are not its game definition's deck");
    }
}

/* ------------------------------------------------------------------ betting */
static int facing_bet(const hand *h, unsigned actor) { return h->spent[1 - actor] > h->spent[actor]; }

static unsigned actor_of(const game *g, const hand *h) {
    return (g->first[h->round] - 1u + h->actions_in_round) % 2u;
}

/* The legal actions in efgkit's order (fold facing a bet, call, raise below the cap). */
static unsigned legal_actions(const game *g, const hand *h, char *actions) {
    unsigned n = 0, actor = actor_of(g, h);
    if (facing_bet(h, actor)) actions[n++] = 'f';
    actions[n++] = 'c';
    if (h->raises_in_round < g->max_raises[h->round]) actions[n++] = 'r';
    actions[n] = '\0';
    return n;
}

/* Apply one action; 0 if it is not legal. */
static int apply_action(const game *g, hand *h, char action) {
    char legal[4];
    unsigned actor;
    if (h->finished) return 0;
    actor = actor_of(g, h);
    legal_actions(g, h, legal);
    if (strchr(legal, action) == NULL || action == '\0') return 0;
    ++h->own_actions[actor];
    ++h->actions_in_round;
    if (action == 'f') {
        h->finished = 1;
    } else if (action == 'c') {
        h->spent[actor] = h->spent[1 - actor];
        if (h->actions_in_round > 1) {
            if (h->round + 1 == g->rounds) {
                h->finished = 1;
            } else {
                ++h->round;
                h->actions_in_round = h->raises_in_round = 0;
                return 2; /* a round ended: a '/' comes next */
            }
        }
    } else {
        h->spent[actor] = h->spent[1 - actor] + g->raise_size[h->round];
        ++h->raises_in_round;
    }
    return 1;
}

/* ------------------------------------------------------------------ match state */
typedef struct state {
    unsigned position;
    hand h;
    const char *betting;
    size_t betting_length;
    int hole[2][MAX_HOLE];
    unsigned have_hole[2];
    int board[MAX_CARDS];
    unsigned board_count;
} state;

static int card_of(const game *g, const char *name) {
    const char *rank = name[0] ? strchr(ACPC_RANKS, name[0]) : NULL;
    const char *suit = name[1] ? strchr(ACPC_SUITS, name[1]) : NULL;
    unsigned r, s;
    if (rank == NULL || suit == NULL) return -1;
    if ((unsigned)(rank - ACPC_RANKS) < 13u - g->ranks) return -1;
    r = (unsigned)(rank - ACPC_RANKS) - (13u - g->ranks);
    s = (unsigned)(strchr(EFGKIT_SUITS, *suit) - EFGKIT_SUITS);
    if (s >= g->suits) return -1;
    return (int)(r * g->suits + s);
}

/* Read count cards at *at (up to end); 0 if malformed. */
static int read_cards(const game *g, const char **at, const char *end, int *cards, unsigned count) {
    unsigned i;
    for (i = 0; i < count; ++i) {
        char name[3];
        if (end - *at < 2) return 0;
        name[0] = (*at)[0];
        name[1] = (*at)[1];
        name[2] = '\0';
        if ((cards[i] = card_of(g, name)) < 0) return 0;
        *at += 2;
    }
    return 1;
}

static unsigned read_number(const char **at, const char *end) {
    unsigned long value = 0;
    int digits = 0;
    while (*at < end && **at >= '0' && **at <= '9' && digits < 10) {
        value = value * 10u + (unsigned long)(*(*at)++ - '0');
        ++digits;
    }
    if (digits == 0 || value > 0xffffffffUL) fail("malformed MATCHSTATE line (a number)");
    return (unsigned)value;
}

/* Parse a dealer line (without its line end) into s, checking it against the game. */
static void parse_state(const game *g, const char *line, size_t length, state *s) {
    const char *at = line, *end = line + length;
    unsigned p, r, seen[MAX_CARDS], i;
    memset(s, 0, sizeof *s);
    if (length < 11 || memcmp(line, "MATCHSTATE:", 11) != 0) fail("not a MATCHSTATE line from the dealer");
    at += 11;
    s->position = read_number(&at, end);
    if (s->position > 1 || at == end || *at++ != ':') fail("malformed MATCHSTATE line (position)");
    (void)read_number(&at, end);
    if (at == end || *at++ != ':') fail("malformed MATCHSTATE line (hand number)");
    s->h.spent[0] = g->blind[0];
    s->h.spent[1] = g->blind[1];
    s->betting = at;
    while (at < end && *at != ':') {
        int result = apply_action(g, &s->h, *at);
        if (result == 0) fail("the dealer's betting is not legal in the strategy's game");
        ++at;
        if (result == 2) {
            if (at == end || *at != '/') fail("the dealer's betting does not end its rounds as the game does");
            ++at;
        }
    }
    s->betting_length = (size_t)(at - s->betting);
    if (at == end || *at++ != ':') fail("malformed MATCHSTATE line (betting)");
    for (p = 0; p < 2; ++p) {
        if (p == 1 && (at == end || *at++ != '|')) fail("malformed MATCHSTATE line (hole cards)");
        if (at < end && *at != '|' && *at != '/') {
            if (!read_cards(g, &at, end, s->hole[p], g->hole)) fail("the dealer's hole cards are not the game's");
            s->have_hole[p] = 1;
        }
    }
    if (!s->have_hole[s->position]) fail("the dealer sent no hole cards for this player");
    for (r = 1; r <= s->h.round; ++r) {
        if (at == end || *at++ != '/') fail("the dealer's board does not fit the betting round");
        if (!read_cards(g, &at, end, s->board + s->board_count, g->board[r]))
            fail("the dealer's board cards are not the game's");
        s->board_count += g->board[r];
    }
    if (at != end) fail("malformed MATCHSTATE line (text after the cards)");
    memset(seen, 0, sizeof seen);
    for (p = 0; p < 2; ++p)
        for (i = 0; i < g->hole * s->have_hole[p]; ++i)
            if (seen[s->hole[p][i]]++) fail("the dealer dealt a card twice");
    for (i = 0; i < s->board_count; ++i)
        if (seen[s->board[i]]++) fail("the dealer dealt a card twice");
}

/* The infoset key of the acting position (efgkit's: "P0 cards=AsKh board=TdJdQd/Tc bets=rc/c"). */
static size_t infoset_key(const game *g, const state *s, char *key) {
    size_t n = 0;
    unsigned i, r, at = 0, boards = 0;
    n += (size_t)sprintf(key + n, "P%u %s=", s->position, g->hole == 1 ? "card" : "cards");
    for (i = 0; i < g->hole; ++i) n += (size_t)sprintf(key + n, "%s", g->names[s->hole[s->position][i]]);
    for (r = 0; r < g->rounds; ++r) boards += g->board[r];
    if (boards > 0) {
        n += (size_t)sprintf(key + n, " board=");
        if (s->board_count == 0) key[n++] = '-';
        for (r = 1; r <= s->h.round; ++r) {
            if (r > 1) key[n++] = '/';
            for (i = 0; i < g->board[r]; ++i) n += (size_t)sprintf(key + n, "%s", g->names[s->board[at++]]);
        }
    }
    n += (size_t)sprintf(key + n, " bets=");
    if (s->betting_length == 0) key[n++] = '-';
    memcpy(key + n, s->betting, s->betting_length);
    n += s->betting_length;
    key[n] = '\0';
    return n;
}

/* ------------------------------------------------------------------ play */
static uint64_t splitmix64(uint64_t *x) {
    uint64_t z = (*x += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static double seconds_now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* The action to send in state s: drawn from the row's quantized weights. */
static char decide(const efgs_reader *reader, const game *g, const state *s, uint64_t *rng) {
    char key[MAX_KEY], legal[4];
    uint32_t weights[4];
    uint64_t total = 0, draw;
    unsigned n = legal_actions(g, &s->h, legal), i;
    efgs_class c;
    size_t key_length = infoset_key(g, s, key);
    int got;
    c.player = s->position;
    c.own_sequence_length = s->h.own_actions[s->position];
    c.num_actions = n;
    got = efgs_quantized_in_class(reader, key, key_length, &c, weights, 4);
    if (got < 0) fail("no strategy row for %s: %s", key, efgs_status_message(got));
    if ((unsigned)got != n) fail("the strategy's row for %s has %d actions, the game %u (another game?)", key, got, n);
    for (i = 0; i < n; ++i) total += weights[i];
    if (total == 0) fail("the strategy's row for %s is empty (damaged file?)", key);
    draw = splitmix64(rng) % total;
    for (i = 0; i + 1 < n && draw >= weights[i]; ++i) draw -= weights[i];
    return legal[i];
}

static int connect_to(const char *host, const char *port) {
    struct addrinfo hints, *found, *a;
    int fd = -1, status;
    memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    if ((status = getaddrinfo(host, port, &hints, &found)) != 0) fail("cannot resolve %s:%s: %s", host, port, gai_strerror(status));
    for (a = found; a != NULL; a = a->ai_next) {
        fd = socket(a->ai_family, a->ai_socktype, a->ai_protocol);
        if (fd < 0) continue;
        if (connect(fd, a->ai_addr, a->ai_addrlen) == 0) {
            int one = 1; /* a line at a time: no Nagle delay on the answers */
            setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
            break;
        }
        close(fd);
        fd = -1;
    }
    freeaddrinfo(found);
    if (fd < 0) fail("cannot connect to %s:%s: %s", host, port, strerror(errno));
    return fd;
}

static void send_all(int fd, const char *data, size_t length) {
    while (length > 0) {
        ssize_t sent = send(fd, data, length, 0);
        if (sent < 0 && errno == EINTR) continue;
        if (sent <= 0) fail("cannot send to the dealer: %s", strerror(errno));
        data += sent;
        length -= (size_t)sent;
    }
}

int main(int argc, char **argv) {
    efgs_reader reader;
    game g;
    const char *text;
    size_t text_length, filled = 0;
    char buffer[MAX_LINE + 1], answer[MAX_LINE + 8];
    uint64_t rng = 0, decisions = 0;
    double total_seconds = 0.0, longest = 0.0;
    int fd, status;
    if (argc < 4 || argc > 5) {
        fprintf(stderr, "usage: efgs_acpc STRATEGY.efgs HOST PORT [SEED]\n");
        return EXIT_BAD_INPUT;
    }
    if (argc == 5) {
        char *end;
        errno = 0;
        rng = strtoull(argv[4], &end, 10);
        if (*argv[4] == '\0' || *end != '\0' || errno != 0) fail("SEED must be a whole number, got %s", argv[4]);
    }
    if ((status = efgs_open_file(&reader, argv[1])) != EFGS_OK) fail("%s: %s", argv[1], efgs_status_message(status));
    if ((status = efgs_verify(&reader)) != EFGS_OK) fail("%s: %s", argv[1], efgs_status_message(status));
    if ((status = efgs_game_definition(&reader, &text, &text_length)) != EFGS_OK)
        fail("%s: %s", argv[1], status == EFGS_ERROR_NOT_FOUND ? "the file carries no ACPC game definition "
             "(export it again with efgkit export)" : efgs_status_message(status));
    read_game(&g, text, text_length);
    check_card_table(&reader, &g);
    fd = connect_to(argv[2], argv[3]);
    send_all(fd, "VERSION:2.0.0\r\n", 15);
    for (;;) {
        char *line_end = memchr(buffer, '\n', filled);
        size_t line_length;
        if (line_end == NULL) {
            ssize_t got;
            if (filled == MAX_LINE) fail("a dealer line is longer than %d bytes", MAX_LINE);
            got = recv(fd, buffer + filled, MAX_LINE - filled, 0);
            if (got < 0 && errno == EINTR) continue;
            if (got < 0) fail("cannot read from the dealer: %s", strerror(errno));
            if (got == 0) {
                if (filled > 0) fail("the dealer closed the connection inside a line");
                break;
            }
            filled += (size_t)got;
            continue;
        }
        line_length = (size_t)(line_end - buffer);
        if (line_length > 0 && buffer[line_length - 1] == '\r') --line_length;
        buffer[line_length] = '\0';
        if (strlen(buffer) != line_length) fail("a dealer line holds a zero byte");
        if (buffer[0] != '#' && buffer[0] != ';') {
            state s;
            parse_state(&g, buffer, line_length, &s);
            if (!s.h.finished && actor_of(&g, &s.h) == s.position) {
                double started = seconds_now(), spent;
                char action = decide(&reader, &g, &s, &rng);
                spent = seconds_now() - started;
                total_seconds += spent;
                if (spent > longest) longest = spent;
                ++decisions;
                memcpy(answer, buffer, line_length);
                answer[line_length] = ':';
                answer[line_length + 1] = action;
                answer[line_length + 2] = '\r';
                answer[line_length + 3] = '\n';
                send_all(fd, answer, line_length + 4);
            }
        }
        filled -= (size_t)(line_end + 1 - buffer);
        memmove(buffer, line_end + 1, filled);
    }
    close(fd);
    printf("decisions %llu mean_us %.3f max_us %.3f\n", (unsigned long long)decisions,
           decisions ? 1e6 * total_seconds / (double)decisions : 0.0, 1e6 * longest);
    efgs_close(&reader);
    return 0;
}
