"""What a showdown costs per hand, one reach vector at a time or many at once (issue 33).

The sampled walk (``sampled_cfr``) sweeps one showdown at a time (``grouped_showdown_values``);
the best response sweeps a block of reach vectors at once (``showdown_values_batch``). This
times, on real river boards of ``holdem(ranks=5)`` (105 hands) and heads-up limit hold'em
(1,081 hands), the CPU nanoseconds per hand and reach vector of:

* the sampled walk's kernel, one vector per call;
* the best response's kernel with 9 columns (a limit river subtree's showdowns) and 64 (its
  block width);
* ``grouped_sweep``, defined here: the sampled walk's grouped sweep over K vectors at once
  (K known when compiled), the candidate for batching a river subtree's showdowns in the
  sampled walk. It gives each vector the same bits as the one-vector kernel (checked below).

Random opponent reaches in (0, 1); every kernel in a numba loop, best of five rounds. Run
``python benchmarks/bench_showdown_floor.py`` (writes the "showdown-floor" section of
docs/benchmarks.md) or ``--quick`` for a smoke run that writes nothing.
"""

from __future__ import annotations

import argparse
import datetime
import os
import time
from pathlib import Path

import numba
import numpy as np
from markdown_sections import update_section

from efgkit.poker.betting_tree import BettingTree
from efgkit.poker.materialised.public_tree import showdown_orders
from efgkit.poker.terminal_values import (
    CANCELLATION,
    WRITE,
    compatible_reach,
    compatible_totals,
    grouped_showdown_values,
    showdown_values_batch,
    strength_groups,
)
from efgkit.specs import make_game

DOCS = Path(__file__).resolve().parent.parent / "docs" / "benchmarks.md"
GAMES = ("holdem(ranks=5)", "holdem")
BATCH = 9
"""Showdowns of a limit river subtree (kk, kbc, kbrc, kbrrc, kbrrrc, bc, brc, brrc, brrrc)."""
BLOCK = 64
"""The best response's block width."""


def grouped_sweep_kernel(k: int):
    """``grouped_showdown_values`` over ``k`` reach vectors at once: ``reach`` (m, k) in strength
    order, ``card_sum`` (cards, k) and ``total`` (k,) scratch, ``values`` (m, k) out."""

    @numba.njit(inline="always")
    def add_hands(reach, sorted_cards, start, end, card_sum, total):
        for x in range(start, end):
            a, b = sorted_cards[x, 0], sorted_cards[x, 1]
            for c in range(k):
                total[c] += reach[x, c]
                card_sum[a, c] += reach[x, c]
                card_sum[b, c] += reach[x, c]

    @numba.njit(inline="always")
    def compatible(total, card_sum, a, b, c):
        difference = total[c] - card_sum[a, c] - card_sum[b, c]
        return 0.0 if abs(difference) <= CANCELLATION * total[c] else difference

    @numba.njit
    def sweep(reach, sorted_cards, group_start, groups, card_sum, total, win, lose, values):
        total[:] = 0.0
        for g in range(groups):  # wins: the hands strictly below, ascending
            start, end = group_start[g], group_start[g + 1]
            for x in range(start, end):
                a, b = sorted_cards[x, 0], sorted_cards[x, 1]
                for c in range(k):
                    values[x, c] = win * compatible(total, card_sum, a, b, c)
            add_hands(reach, sorted_cards, start, end, card_sum, total)
        card_sum[:, :] = 0.0
        total[:] = 0.0
        for g in range(groups - 1, -1, -1):  # losses: the hands strictly above, descending
            start, end = group_start[g], group_start[g + 1]
            for x in range(start, end):
                a, b = sorted_cards[x, 0], sorted_cards[x, 1]
                for c in range(k):
                    values[x, c] -= lose * compatible(total, card_sum, a, b, c)
            add_hands(reach, sorted_cards, start, end, card_sum, total)
        card_sum[:, :] = 0.0

    @numba.njit
    def repeat(n, reach, sorted_cards, group_start, groups, card_sum, total, values):
        for _ in range(n):
            sweep(reach, sorted_cards, group_start, groups, card_sum, total, 1.5, 1.5, values)

    return repeat


@numba.njit
def _one_at_a_time(n, reach, hands, sorted_cards, group_start, groups, card_sum, sorted_reach, values):
    """The sampled walk's kernel on each row of ``reach`` (k, hands), ``n`` times."""
    for _ in range(n):
        for c in range(reach.shape[0]):
            grouped_showdown_values(reach[c], hands, sorted_cards, group_start, groups, card_sum, 1.5, 1.5,
                                    sorted_reach, values[c])


@numba.njit
def _folds(n, reach, cards, positions, card_sum, out):
    """The sampled walk's fold (``_terminal_values``) on each row of ``reach`` (k, hands), ``n`` times."""
    for _ in range(n):
        for c in range(reach.shape[0]):
            total = compatible_totals(reach[c], cards, positions, card_sum)
            for i in range(positions.shape[0]):
                out[c, i] = 1.5 * compatible_reach(reach[c], cards, card_sum, total, i)
            card_sum[:] = 0.0


@numba.njit
def _batch(n, reach, hand_cards, hands, strength, card_sum, total, win, lose, out):
    """The best response's kernel on the columns of ``reach`` (hands, k), ``n`` times."""
    for _ in range(n):
        showdown_values_batch(reach, hand_cards, hands, strength, card_sum, total, win, lose, out, out, WRITE)


def river_boards(spec: str, count: int, rng: np.random.Generator):
    """``count`` random river boards of ``spec``: per board its hands by strength (uint64), their
    strengths, ``strength_groups`` tables and group count; and the game's hand cards and deck size."""
    game = make_game(spec)
    betting = BettingTree(game)
    hand_cards, hand_mask = betting.hands()
    deck = game.card_structure
    n = betting.num_cards
    boards = np.sort(np.array([rng.choice(n, 5, replace=False) for _ in range(count)]), axis=1)
    hands = np.zeros((count, hand_cards.shape[0]), np.int64)
    strength = np.zeros_like(hands)
    valid = np.zeros(count, np.int64)
    showdown_orders(hand_cards, hand_mask, boards, np.ones(count, np.bool_), deck.num_ranks, deck.num_suits,
                    valid, hands, strength)
    tables = []
    for i in range(count):
        m = int(valid[i])
        cards, starts = np.zeros((m, 2), np.uint64), np.zeros(m + 1, np.uint64)
        groups = strength_groups(hand_cards, hands[i, :m], strength[i, :m], cards, starts)
        tables.append((hands[i, :m].astype(np.uint64), strength[i, :m], cards, starts, groups))
    return tables, hand_cards, n


def nanoseconds(kernel, target_work: int, per_call: int, *args, rounds: int = 5) -> float:
    """Best of ``rounds`` CPU times of ``kernel(n, *args)`` (compiled first), in ns per unit of work,
    ``per_call`` units a call and ``n`` calls for about ``target_work`` units."""
    kernel(1, *args)
    n = max(1, target_work // per_call)
    best = float("inf")
    for _ in range(rounds):
        start = time.process_time()
        kernel(n, *args)
        best = min(best, time.process_time() - start)
    return best * 1e9 / (n * per_call)


def measure(spec: str, boards: int, work: int) -> dict:
    """ns per (hand, reach vector) of each kernel on ``boards`` random river boards of ``spec``,
    about ``work`` (hand, vector) pairs a round."""
    rng = np.random.default_rng(0)
    tables, hand_cards, n = river_boards(spec, boards, rng)
    grouped = grouped_sweep_kernel(BATCH)
    times = {"fold": [], "one": [], "grouped9": [], "batch9": [], "batch64": []}
    for hands, strength, cards, starts, groups in tables:
        m, signed = hands.shape[0], hands.astype(np.int64)
        reach = rng.random((BLOCK, hand_cards.shape[0]))
        in_order = np.sort(signed)
        times["fold"].append(nanoseconds(
            _folds, work, m * BATCH, np.ascontiguousarray(reach[:BATCH][:, in_order]),
            hand_cards[in_order].astype(np.uint64), np.arange(m, dtype=np.uint64), np.zeros(n),
            np.zeros((BATCH, m))))
        one_values = np.zeros((BATCH, m))
        times["one"].append(nanoseconds(
            _one_at_a_time, work, m * BATCH, reach[:BATCH], hands, cards, starts, groups, np.zeros(n),
            np.zeros(m), one_values))
        grouped_values = np.zeros((m, BATCH))
        times["grouped9"].append(nanoseconds(
            grouped, work, m * BATCH, np.ascontiguousarray(reach[:BATCH][:, signed].T), cards,
            starts, groups, np.zeros((n, BATCH)), np.zeros(BATCH), grouped_values))
        if not np.array_equal(grouped_values, one_values.T):
            raise AssertionError("the batched grouped sweep differs from the one-vector kernel")
        for k, key in ((BATCH, "batch9"), (BLOCK, "batch64")):
            times[key].append(nanoseconds(
                _batch, work, m * k, np.ascontiguousarray(reach[:k].T), hand_cards, signed,
                strength, np.zeros((n, k)), np.zeros(k), np.full(k, 1.5), np.full(k, 1.5),
                np.zeros((hand_cards.shape[0], k))))
    return {"hands": int(tables[0][0].shape[0]), "groups": float(np.mean([table[4] for table in tables])),
            **{key: float(np.median(value)) for key, value in times.items()}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--boards", type=int, default=20, help="random river boards per game (default 20)")
    parser.add_argument("--quick", action="store_true", help="seconds-long smoke run; writes nothing")
    args = parser.parse_args()
    boards, work = (2, 20_000) if args.quick else (args.boards, 4_000_000)
    lines = ["| game | hands | strength classes (mean) | fold, one vector a call (sampled walk) | "
             "showdown, one vector a call (sampled walk) | "
             f"{BATCH} vectors, grouped sweep (candidate) | {BATCH} columns (best response's kernel) | "
             f"{BLOCK} columns (best response's kernel) |", "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for spec in GAMES:
        result = measure(spec, boards, work)
        cells = " | ".join(f"{result[key]:.2f}" for key in ("fold", "one", "grouped9", "batch9", "batch64"))
        lines.append(f"| {spec} | {result['hands']} | {result['groups']:.1f} | {cells} |")
        print(lines[-1], flush=True)
    if args.quick:
        return
    header = (f"## What a showdown costs per hand (issue 33) — {datetime.date.today()}, "
              f"load average {os.getloadavg()[0]:.1f} at the end\n\n"
              f"`python benchmarks/bench_showdown_floor.py`: CPU ns per (hand, reach vector) of a fold and "
              f"of both sweeps of a showdown on {boards} random river boards per game (median over boards "
              f"of the best of five rounds), random reaches; the grouped sweep of {BATCH} vectors gives "
              f"each the one-vector kernel's bits (checked).\n\n")
    update_section(DOCS, "showdown-floor", header + "\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
