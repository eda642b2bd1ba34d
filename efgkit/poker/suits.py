"""Suit isomorphism of deals: renaming suits maps a deal and its hands to an equivalent one.

Poker's rules treat suits alike, so when a strategy does too (a suit-symmetric card
abstraction) the values of hand ``h`` on board ``c`` equal those of hand ``pi(h)`` on board
``pi(c)`` for every suit permutation ``pi``. Summing over all boards of one class then
needs one board: ``sum over the class of V_c'(h) = (1 / |Stab(c)|) sum_pi V_c(pi^-1(h))``,
where ``Stab(c)`` are the permutations fixing ``c``. Cards are ``rank * num_suits + suit``.
"""

from __future__ import annotations

from itertools import combinations, permutations

import numpy as np


def suit_permutations(num_suits: int) -> np.ndarray:
    """int64 (num_suits!, num_suits): every permutation of the suits, identity first."""
    return np.array(list(permutations(range(num_suits))), np.int64)


def permuted_cards(cards: np.ndarray, perm: np.ndarray) -> np.ndarray:
    num_suits = perm.shape[0]
    return (cards // num_suits) * num_suits + perm[cards % num_suits]


def renamed_deal(cards, perm) -> tuple[int, ...]:
    """The cards ``cards`` (ints) with their suits renamed by ``perm`` (a permutation of the
    suits, a sequence), sorted."""
    suits = len(perm)
    return tuple(sorted(c - c % suits + perm[c % suits] for c in cards))


def hand_permutations(hand_cards: np.ndarray, num_suits: int) -> np.ndarray:
    """int64 (perms, hands): ``out[p, h]`` is the index of hand ``h`` with its suits renamed
    by permutation ``p`` (hands are the rows of ``hand_cards``, each sorted)."""
    index = {tuple(row): h for h, row in enumerate(hand_cards.tolist())}
    out = []
    for perm in suit_permutations(num_suits):
        moved = np.sort(permuted_cards(hand_cards, perm), axis=1)
        out.append([index[tuple(row)] for row in moved.tolist()])
    return np.array(out, np.int64)


def canonical_deals(num_cards: int, num_suits: int, size: int) -> tuple[list[tuple[int, ...]], list[int]]:
    """One deal of ``size`` cards per suit-isomorphism class (the lexicographically smallest)
    and the size of its stabiliser (permutations that fix it), in lexicographic order."""
    perms = suit_permutations(num_suits).tolist()
    representatives, stabilisers = [], []
    for combo in combinations(range(num_cards), size):
        images = [renamed_deal(combo, perm) for perm in perms]
        if min(images) == combo:
            representatives.append(combo)
            stabilisers.append(sum(image == combo for image in images))
    return representatives, stabilisers
