"""Brown & Sandholm's gifts split and not split: gadget iterations, the gift bound, gift sizes.

Why not splitting gifts is worse here while the paper finds it better (docs/results-resolve-holdem.md,
"Not splitting gifts"). Two studies, each exact, each row printed as one JSON line:

* ``--study gametree``: ``resolve.Resolver`` on a GameTree (default leduc(ranks=13)), a card
  abstraction blueprint (E[HS] buckets, CFR+), every round-2 subgame re-solved by Reach-Maxmargin
  and Reach-Estimated + Distributional with gifts split and not split, bounded by the trunk's
  best-response values (``cbv``) or the minimum reachable payoff (``min-payoff``, the paper's
  experiments), NashConv after ``--checkpoints`` gadget iterations; then the normalised gift sizes
  against the margins plain Maxmargin reaches.
* ``--study poker``: ``VectorResolver`` on holdem(ranks=5,rounds=2,caps=1-1) with a ``--buckets``
  flop-bucket blueprint (300 vector CFR+ iterations, as bench_resolve_holdem.py): the normalised
  gift sizes against the opponent's best-response values at the roots, then Maxmargin and the two
  reach techniques split and not split at each checkpoint's iteration count (mbb/g).

    python benchmarks/bench_resolve_gifts.py --study gametree --checkpoints 30,100,300
    python benchmarks/bench_resolve_gifts.py --study poker --buckets 100 --checkpoints 30,100,300
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path

import numpy as np
from bench_resolve_holdem import lossless_before_last_round


def _emit(row: dict) -> dict:
    print(json.dumps(row), flush=True)
    return row


def gametree_study(spec: str, buckets: int, checkpoints: list[int]) -> list[dict]:
    from efgkit.abstraction.cards.clustering import cluster_cards
    from efgkit.resolve import BlueprintValues, Resolver, round_subgames
    from efgkit.solvers.cfr import CFRPlusSolver
    from efgkit.specs import load_game

    tree = load_game(spec)
    infoset_map = cluster_cards(tree.game.card_structure, "ehs", [buckets, buckets],
                                random_state=0).infoset_map(tree, "perfect")
    blueprint = CFRPlusSolver(infoset_map).iterate(1000).average_strategy()
    subgames = round_subgames(tree, 2)
    rows = []
    for gadget, constraints in (("maxmargin", "br"), ("reach-maxmargin", "br"),
                                ("reach-distributional-hedge", "selfplay")):
        for bound in ("cbv", "min-payoff"):
            for split in (True, False):
                if gadget == "maxmargin" and (bound != "cbv" or not split):
                    continue
                result = Resolver(blueprint, gadget=gadget, constraints=constraints,
                                  iterations=checkpoints[-1], split_gifts=split, gift_bound=bound,
                                  checkpoints=checkpoints[:-1]).resolve(subgames)
                rows.append(_emit({"gadget": gadget, "bound": bound, "split": split,
                                   "before": result.before.nash_conv,
                                   "after": {c: e.nash_conv for c, e in result.history}}))
    values = BlueprintValues(blueprint)
    after = BlueprintValues(Resolver(blueprint, gadget="maxmargin", iterations=checkpoints[-1]
                                     ).resolve(subgames).strategy)
    for player in (0, 1):
        old = values.constraints_for(subgames, player)
        new = after.constraints_for(subgames, player)
        live = np.concatenate([c.element_reach > 0 for c in old])
        margin = np.concatenate([c.normalized() - n.normalized()
                                 for c, n in zip(old, new, strict=True)])[live]
        rows.append(_emit({"player": player, "margin_median": float(np.median(margin))}))
        for bound in ("cbv", "min-payoff"):
            for split in (True, False):
                gifts = values.gifts(old, split=split, lower_bound=bound == "min-payoff")
                gift = np.concatenate([np.divide(g, c.element_reach, out=np.zeros_like(g),
                                                 where=c.element_reach > 0)
                                       for g, c in zip(gifts, old, strict=True)])[live]
                positive = gift > 0
                rows.append(_emit({"player": player, "bound": bound, "split": split,
                                   "share_with_gift": float(positive.mean()),
                                   "gift_median": float(np.median(gift[positive])) if positive.any() else 0.0,
                                   "gift_over_margin_median": float(np.median(
                                       gift[positive] / np.maximum(np.abs(margin[positive]), 1e-12)))
                                   if positive.any() else 0.0}))
    return rows


def poker_study(count: int, checkpoints: list[int]) -> list[dict]:
    from efgkit.poker.betting_tree import BettingTree
    from efgkit.poker.buckets.bucket_layout import BucketLayout
    from efgkit.poker.materialised.best_response import evaluate_strategy
    from efgkit.poker.materialised.layout import StrategyLayout
    from efgkit.poker.materialised.public_tree import PublicTree
    from efgkit.poker.materialised.vector_cfr import VectorCFR
    from efgkit.resolve.constraints import normalized_values
    from efgkit.resolve.vector_resolver import VectorResolver
    from efgkit.specs import make_game

    game = make_game("holdem(ranks=5,rounds=2,caps=1-1)")
    big_blind, tree = max(game.blinds), PublicTree(game)
    with tempfile.TemporaryDirectory() as scratch:
        cards = lossless_before_last_round(game, Path(scratch) / "buckets.h5", count, 0)
    layout = StrategyLayout.from_bucket_layout(tree, BucketLayout(BettingTree(game), cards))
    blueprint = VectorCFR(tree, layout, variant="cfr+").iterate(300).average_strategy()
    rows = [_emit({"blueprint_mbb": evaluate_strategy(layout, blueprint).exploitability / big_blind * 1000})]
    for split in (True, False):
        resolver = VectorResolver(tree, layout, blueprint, gadget="reach-maxmargin", split_gifts=split,
                                  iterations=1, isomorphic=True)
        for player in (0, 1):
            base = resolver.values.ranges(resolver.roots, player, "br")
            live = base.element_reach > 0
            gift = normalized_values(resolver.gifts(base), base.element_reach)[live] / big_blind
            value = np.abs(normalized_values(base.values, base.element_reach)[live]) / big_blind
            positive = gift > 0
            rows.append(_emit({"split": split, "player": player, "share_with_gift": float(positive.mean()),
                               "gift_bb_median": float(np.median(gift[positive])) if positive.any() else 0.0,
                               "gift_bb_max": float(gift.max()), "value_bb_median": float(np.median(value))}))
    for gadget, constraints, split in (("maxmargin", "br", True), ("reach-maxmargin", "br", True),
                                       ("reach-maxmargin", "br", False),
                                       ("reach-distributional-hedge", "selfplay", True),
                                       ("reach-distributional-hedge", "selfplay", False)):
        for iterations in checkpoints:
            result = VectorResolver(tree, layout, blueprint, gadget=gadget, constraints=constraints,
                                    split_gifts=split, iterations=iterations, isomorphic=True).resolve()
            rows.append(_emit({"gadget": gadget, "split": split, "iterations": iterations,
                               "mbb": result.after.exploitability / big_blind * 1000}))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--study", choices=("gametree", "poker"), default="gametree")
    parser.add_argument("--game", default="leduc(ranks=13)", help="the GameTree study's game")
    parser.add_argument("--buckets", type=int, default=None,
                        help="card buckets per round (gametree, default 3) or flop buckets "
                             "(poker, default 100)")
    parser.add_argument("--checkpoints", default="30,100,300", help="gadget iterations, ascending")
    parser.add_argument("--out", default=None, help="write the rows as JSON here too")
    args = parser.parse_args()
    checkpoints = sorted(int(c) for c in args.checkpoints.split(","))
    if args.study == "gametree":
        rows = gametree_study(args.game, args.buckets or 3, checkpoints)
    else:
        rows = poker_study(args.buckets or 100, checkpoints)
    if args.out:
        Path(args.out).write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
