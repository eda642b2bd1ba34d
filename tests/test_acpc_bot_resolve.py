"""``efgkit bot --resolve``: a bot that re-solves at decision time over the ACPC protocol.

A match through the Python dealer between the re-solving bot and a plain bot of its blueprint
has no invalid action, and its every row is ``VectorResolver``'s combined strategy for the
player to act: replaying the match with the same seeds by a policy that reads the combined
strategies gives the same hands and the same chips. Compact files and games whose public tree
the player cannot hold are refused in one line (exit code 2) before any connection.
"""

import json
import threading

import numpy as np
import pytest

from efgkit.cli import main
from efgkit.interop.acpc import game_definition
from efgkit.interop.acpc_protocol import AcpcDealer, play_acpc, serve_in_thread
from efgkit.poker.betting_tree import BettingTree
from efgkit.poker.buckets.bucket_layout import BucketLayout
from efgkit.poker.buckets.card_abstraction import CardIndependent
from efgkit.resolve.vector_resolver import VectorResolver
from efgkit.specs import make_game
from efgkit.storage.acpc_bot import open_policy, open_resolving_policy
from efgkit.storage.bucket_strategy import save_bucket_strategy
from efgkit.storage.compact_holdem import export_bucket_strategy

ITERATIONS = 20


@pytest.fixture(scope="module", params=["leduc", "holdem(ranks=2,rounds=2,caps=1-1)"])
def blueprint(tmp_path_factory, request):
    """A card-blind abstraction with a random strategy, as .h5 and as its .efgs export: Leduc,
    and a hold'em whose flop the dealer deals in any order."""
    folder = tmp_path_factory.mktemp("resolving-bot")
    game = make_game(request.param)
    layout = BucketLayout(BettingTree(game), CardIndependent())
    strategy = layout.random(3)
    save_bucket_strategy(folder / "blind.h5", layout, strategy, {"algorithm": "random", "iterations": 0})
    export_bucket_strategy(layout, strategy, folder / "blind.efgs", bits=8)
    return {"game": game, "h5": folder / "blind.h5", "efgs": folder / "blind.efgs"}


def _match(definition, hands, resolving_policy, plain_policy, seed=4):
    """Seat 0 the re-solving policy, seat 1 the plain one; the MatchResult."""
    dealer = AcpcDealer(definition, hands, seed=seed, timeout=60)
    thread, outcome = serve_in_thread(dealer)
    players = [threading.Thread(target=play_acpc, args=("127.0.0.1", port, definition, policy),
                                kwargs={"seed": bot_seed, "timeout": 60}, daemon=True)
               for port, policy, bot_seed in zip(dealer.ports, (resolving_policy, plain_policy), (11, 12),
                                                 strict=True)]
    for player in players:
        player.start()
    thread.join()
    for player in players:
        player.join()
    assert "error" not in outcome, outcome.get("error")
    return outcome["result"]


def test_resolving_bot_plays_the_combined_strategy_with_no_invalid_action(blueprint):
    game = blueprint["game"]
    policy, definition, resolver = open_resolving_policy(blueprint["h5"], game, gadget="resolve",
                                                         iterations=ITERATIONS)
    plain, _, _ = open_policy(blueprint["h5"], game)
    rows = []

    def recording(state):
        row = policy(state)
        rows.append((state, row))
        return row

    played = _match(definition, 300, recording, plain)
    assert played.invalid_actions == (0, 0) and played.hands == 300
    assert played.totals[0] == -played.totals[1]

    tree, lossless = resolver.tree, resolver.lossless
    combined = {p: VectorResolver(tree, resolver.layout, resolver.strategy, gadget="resolve",
                                  iterations=ITERATIONS, players=(p,)).resolve().strategy for p in (0, 1)}
    hand_index = {tuple(c): h for h, c in enumerate(tree.hand_cards.tolist())}

    def combined_row(state):
        history = policy.history_of[state.betting.text() or "-"]
        flop = game.card_structure.public_cards_per_round[1]
        board = (*sorted(state.board[:flop]), *state.board[flop:])
        node = resolver.public_node(board, history)
        player = int(tree.kind[node])
        assert player == state.position
        hand = hand_index[tuple(sorted(state.hole[player]))]
        offset = lossless.slot_offset[tree.decision_index[node], hand]
        return combined[player][offset:offset + int(tree.num_children[node])].tolist()

    after_deal = [state for state, _ in rows if state.betting.round > 0]
    assert len(after_deal) > 50 and resolver.resolves > 5
    assert any(state.board != sorted(state.board) for state in after_deal) or len(after_deal[0].board) == 1
    for state, row in rows:
        assert np.allclose(row, combined_row(state), atol=1e-12), state.line
    replayed = _match(definition, 300, combined_row, plain)
    assert np.array_equal(replayed.values, played.values)
    timing = resolver.timing()
    assert timing["decisions"] == len(rows) == timing["blueprint_decisions"] + timing["resolved_decisions"] \
        + timing["cached_decisions"]
    assert timing["resolved_decisions"] == resolver.resolves


def test_efgkit_bot_resolve_reports_time_per_decision(blueprint, capsys):
    game = blueprint["game"]
    definition = game_definition(game)
    dealer = AcpcDealer(definition, 30, seed=1, timeout=60)
    thread, outcome = serve_in_thread(dealer)
    plain, _, _ = open_policy(blueprint["h5"], game)
    threading.Thread(target=play_acpc, args=("127.0.0.1", dealer.ports[1], definition, plain),
                     kwargs={"timeout": 60}, daemon=True).start()
    main(["bot", str(blueprint["h5"]), "127.0.0.1", str(dealer.ports[0]), "--resolve", "maxmargin",
          "--resolve-iterations", "10", "--json"], standalone_mode=False)
    thread.join()
    assert outcome["result"].invalid_actions == (0, 0)
    data = json.loads(capsys.readouterr().out)
    assert data["resolve"] == "maxmargin" and data["decisions"] == data["actions"] > 0
    assert data["resolved_decisions"] == data["resolves"] > 0 and data["resolved_seconds_median"] > 0


@pytest.mark.parametrize("case", ["compact", "too many nodes", "over the budget"])
def test_efgkit_bot_resolve_refuses_what_it_cannot_hold_in_one_line(blueprint, tmp_path, monkeypatch,
                                                                   capsys, case):
    path = blueprint["efgs"] if case == "compact" else blueprint["h5"]
    if case == "too many nodes":
        game = make_game("holdem(rounds=3)")
        layout = BucketLayout(BettingTree(game), CardIndependent())
        path = tmp_path / "big.h5"
        save_bucket_strategy(path, layout, layout.uniform(), {"algorithm": "uniform", "iterations": 0})
    if case == "over the budget":
        monkeypatch.setenv("EFGKIT_MEMORY_BUDGET", "100KB")
    with pytest.raises(SystemExit) as exited:
        main(["bot", str(path), "127.0.0.1", "9", "--resolve", "resolve", "--timeout", "1"])
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("efgkit: error:"), err
    assert {"compact": "bucket strategy", "too many nodes": "public tree",
            "over the budget": "budget"}[case] in err
