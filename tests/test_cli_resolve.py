"""`efgkit resolve`: JSON keys, the refined file, Coin Toss through the command line, bad input."""

import numpy as np
import pytest

from efgkit.abstraction.cards.clustering import cluster_cards
from efgkit.cli import main
from efgkit.maps.infoset_map import InfosetMap
from efgkit.solvers import CFRPlusSolver, Strategy, evaluate
from efgkit.specs import load_game
from efgkit.storage.strategy_file import load_strategy, save_strategy

PROVENANCE = {"algorithm": "cfr+", "parameters": {}, "iterations": 0, "nash_conv_history": []}


@pytest.fixture(scope="module")
def leduc_blueprint(tmp_path_factory):
    """Burch's abstract Leduc equilibrium (J: Q/K, K: J/Q merged), about 0.382 chips/game."""
    tree = load_game("leduc")
    infoset_map = cluster_cards(tree.game.card_structure, "ehs", [3, 3], random_state=0).infoset_map(
        tree, "perfect")
    path = tmp_path_factory.mktemp("blueprint") / "leduc.h5"
    save_strategy(path, CFRPlusSolver(infoset_map).iterate(1000).average_strategy(), provenance=PROVENANCE)
    return path


@pytest.fixture(scope="module")
def coin_toss_trunk(tmp_path_factory):
    """Brown & Sandholm's Coin Toss trunk: play 80% with heads, 30% with tails; guess (1/2, 1/4, 1/4)."""
    tree = load_game("coin_toss")
    path = tmp_path_factory.mktemp("blueprint") / "coin_toss.h5"
    save_strategy(path, Strategy.from_behavior(tree, np.array([0.2, 0.8, 0.7, 0.3, 0.5, 0.25, 0.25])),
                  provenance=PROVENANCE)
    return path


def test_resolve_round_two_of_leduc_lowers_exploitability_and_writes_the_refined_strategy(
        runner, json_output, leduc_blueprint, tmp_path):
    out, picture = tmp_path / "refined.h5", tmp_path / "curve.png"
    data = json_output(runner.invoke(main, ["resolve", "leduc", str(leduc_blueprint), "--solver", "cfr",
                                            "-n", "200", "--out", str(out), "--plot", str(picture),
                                            "--json"]))
    assert data["num_subgames"] == 30 and len(data["subgames"]) == 60 and data["skipped"] == 0
    assert (data["gadget"], data["constraints"], data["gift_bound"]) == ("resolve", "br", "cbv")
    assert data["nash_conv_before"] == pytest.approx(2 * 0.382, abs=0.01)
    assert data["nash_conv_after"] < data["nash_conv_before"] - 0.1  # Burch: 0.33 chips/game or less
    assert data["exploitability_after"] == pytest.approx(data["nash_conv_after"] / 2)
    assert [h["iterations"] for h in data["history"]] == [10, 20, 50, 100, 200]
    assert data["seconds"] > 0 and picture.read_bytes()[:4] == b"\x89PNG"
    refined, provenance = load_strategy(out, load_game("leduc"))
    assert provenance["algorithm"] == "resolve" and provenance["parameters"]["gadget"] == "resolve"
    assert evaluate(refined).nash_conv == pytest.approx(data["nash_conv_after"], abs=1e-12)


def test_resolve_one_subgame_with_maxmargin_gives_coin_tosss_five_eighths(runner, json_output,
                                                                        coin_toss_trunk, tmp_path):
    out = tmp_path / "refined.h5"
    data = json_output(runner.invoke(main, ["resolve", "coin_toss", str(coin_toss_trunk), "--subgame",
                                            "played", "--gadget", "maxmargin", "--solver", "lp",
                                            "--player", "1", "--out", str(out), "--json"]))
    assert data["num_subgames"] == 1 and data["players"] == [1]
    guess = load_strategy(out, load_game("coin_toss"))[0].probabilities_of("P1 played")
    assert (guess["heads"], guess["tails"], guess["forfeit"]) == pytest.approx((5 / 8, 3 / 8, 0), abs=1e-7)
    # the game as every command takes it: [GAME] FILE, read from the file when left out
    again = json_output(runner.invoke(main, ["resolve", str(coin_toss_trunk), "--subgame", "played",
                                             "--gadget", "maxmargin", "--solver", "lp", "--player", "1",
                                             "--out", str(tmp_path / "again.h5"), "--json"]))
    assert again["nash_conv_after"] == data["nash_conv_after"]
    other = runner.invoke(main, ["resolve", "kuhn", str(coin_toss_trunk), "--out", str(tmp_path / "x.h5")])
    assert other.exit_code == 2 and "efgkit: error" in other.output


def test_resolve_text_output_names_both_exploitabilities(runner, coin_toss_trunk, tmp_path):
    result = runner.invoke(main, ["resolve", "coin_toss", str(coin_toss_trunk), "--subgame", "played",
                                  "--gadget", "unsafe", "-n", "50", "--out", str(tmp_path / "r.h5")])
    assert result.exit_code == 0, result.stderr
    assert "before: NashConv" in result.stdout and "NashConv/2" in result.stdout


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["kuhn", "LEDUC"], "not 'kuhn'"),                                   # blueprint for another game
        (["leduc", "LEDUC", "--subgame", "board=Qs bets=zz"], "no public state"),
        (["leduc", "LEDUC", "--round", "3"], "no public chance event before round 3"),
        (["leduc", "LEDUC", "--round", "1"], "--round"),
        (["leduc", "LEDUC", "--gadget", "coinflip", "--p", "1.5"], "--p"),
        (["leduc", "LEDUC", "--round", "2", "--subgame", "board=Qs bets=cc/"], "either --round or --subgame"),
        (["kuhn", "KUHN"], "no public chance event"),                        # no rounds to re-solve
        (["coin_toss", "COIN", "--subgame", "sold"], "must not be a terminal history"),
    ],
)
def test_resolve_rejects_bad_input_in_one_line_and_leaves_the_output_alone(
        runner, leduc_blueprint, coin_toss_trunk, tmp_path, arguments, message):
    kuhn = tmp_path / "kuhn.h5"
    save_strategy(kuhn, Strategy.uniform(InfosetMap.identity(load_game("kuhn"))), provenance=PROVENANCE)
    files = {"LEDUC": str(leduc_blueprint), "KUHN": str(kuhn), "COIN": str(coin_toss_trunk)}
    out = tmp_path / "existing.h5"
    out.write_bytes(b"precious")
    result = runner.invoke(main, ["resolve", *[files.get(a, a) for a in arguments], "--out", str(out)])
    assert result.exit_code == 2 and len(result.stderr.splitlines()) == 1
    assert result.stderr.startswith("efgkit: error: ") and message in result.stderr
    assert out.read_bytes() == b"precious"


@pytest.fixture(scope="module")
def holdem_blueprint(tmp_path_factory):
    """A random card-blind bucket strategy of holdem(ranks=3,rounds=2) (the poker engines' file)."""
    from efgkit.poker.betting_tree import BettingTree
    from efgkit.poker.buckets.bucket_layout import BucketLayout
    from efgkit.poker.buckets.card_abstraction import CardIndependent
    from efgkit.specs import make_game
    from efgkit.storage.bucket_strategy import save_bucket_strategy

    layout = BucketLayout(BettingTree(make_game("holdem(ranks=3,rounds=2)")), CardIndependent())
    path = tmp_path_factory.mktemp("holdem") / "blind.h5"
    save_bucket_strategy(path, layout, layout.random(0), {"algorithm": "random", "iterations": 0})
    return path


def test_resolve_takes_a_bucket_strategy_and_reports_nash_conv_and_mbb(holdem_blueprint):
    """A hold'em bucket strategy is re-solved on the poker engine; the report is the
    VectorResolver's, in NashConv and mbb/g (big blind 10)."""
    import json

    from click.testing import CliRunner

    from efgkit.poker.materialised.layout import StrategyLayout
    from efgkit.poker.materialised.public_tree import PublicTree
    from efgkit.resolve.vector_resolver import VectorResolver
    from efgkit.specs import make_game
    from efgkit.storage.bucket_strategy import load_bucket_strategy

    result = CliRunner().invoke(main, ["resolve", str(holdem_blueprint), "--gadget", "reach-maxmargin",
                                       "--no-split-gifts", "-n", "5", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    game = make_game("holdem(ranks=3,rounds=2)")
    buckets, strategy, _, _ = load_bucket_strategy(holdem_blueprint, game)
    tree = PublicTree(game)
    expected = VectorResolver(tree, StrategyLayout.from_bucket_layout(tree, buckets), strategy,
                              gadget="reach-maxmargin", split_gifts=False, iterations=5).resolve()
    assert data["nash_conv_before"] == pytest.approx(expected.before.nash_conv, abs=1e-12)
    assert data["nash_conv_after"] == pytest.approx(expected.after.nash_conv, abs=1e-12)
    assert data["nash_conv_after"] < data["nash_conv_before"]
    assert data["exploitability_mbb_per_game_after"] == pytest.approx(
        expected.after.exploitability / 10 * 1000, rel=1e-12)
    assert data["engine"] == "poker" and data["num_subgames"] > 0


@pytest.mark.parametrize("args, words", [
    (["--gadget", "coinflip"], "cannot run the coinflip gadget"),
    (["--constraints", "deepstack"], "takes br or selfplay"),
    (["--round", "3"], "no public deal before round 3"),
    (["--solver", "lp"], "--solver lp"),
])
def test_bad_bucket_strategy_resolving_is_one_line_exit_2(holdem_blueprint, args, words):
    from click.testing import CliRunner

    result = CliRunner().invoke(main, ["resolve", str(holdem_blueprint), *args])
    assert result.exit_code == 2 and words in result.output, result.output
    assert len(result.output.strip().splitlines()) == 1


def test_a_bucket_strategy_for_another_game_is_one_line_exit_2(holdem_blueprint):
    from click.testing import CliRunner

    result = CliRunner().invoke(main, ["resolve", "holdem(ranks=4,rounds=2)", str(holdem_blueprint)])
    assert result.exit_code == 2 and "not 'holdem(ranks=4,rounds=2)'" in result.output, result.output


@pytest.fixture(scope="module")
def symmetric_blueprint(tmp_path_factory):
    """A random bucket strategy of holdem(ranks=2,rounds=2) on its canonical (suit-isomorphic) buckets."""
    from efgkit.poker.betting_tree import BettingTree
    from efgkit.poker.buckets.bucket_layout import BucketLayout
    from efgkit.poker.buckets.card_abstraction import IsomorphicCards
    from efgkit.specs import make_game
    from efgkit.storage.bucket_strategy import save_bucket_strategy

    game = make_game("holdem(ranks=2,rounds=2)")
    layout = BucketLayout(BettingTree(game), IsomorphicCards.canonical(game))
    path = tmp_path_factory.mktemp("holdem") / "canonical.h5"
    save_bucket_strategy(path, layout, layout.random(2), {"algorithm": "random", "iterations": 0})
    return path


def test_streamed_engine_reports_the_poker_engines_numbers_and_its_memory(symmetric_blueprint):
    """--engine streamed --isomorphic: NashConv before and after equal the poker engine's
    (--engine poker --isomorphic) to 1e-9; the report names the flops, peak RSS and the bytes of
    the unabstracted strategy it never stores."""
    import json

    from click.testing import CliRunner

    common = ["resolve", str(symmetric_blueprint), "--gadget", "reach-distributional-hedge",
              "-c", "selfplay", "-n", "6", "--isomorphic", "--json"]
    streamed, poker = (CliRunner().invoke(main, [*common, "--engine", engine])
                       for engine in ("streamed", "poker"))
    assert streamed.exit_code == 0 and poker.exit_code == 0, streamed.output + poker.output
    ours, theirs = json.loads(streamed.output), json.loads(poker.output)
    assert (ours["engine"], theirs["engine"]) == ("streamed", "poker")
    for key in ("nash_conv_before", "nash_conv_after", "exploitability_mbb_per_game_after"):
        assert ours[key] == pytest.approx(theirs[key], abs=1e-9)
    assert ours["flops"] == 6 and ours["num_subgames"] == 6 * 7  # 7 pre-flop sequences reach the flop
    assert ours["peak_rss_bytes"] > 0 and ours["unabstracted_strategy_bytes"] > 0


def test_out_writes_the_combined_strategy_as_a_lossless_bucket_strategy(symmetric_blueprint, tmp_path):
    """--out on the poker engine: the combined strategy, as a bucket strategy on lossless cards,
    evaluates (efgkit evaluate, the streamed best response) to the NashConv the report gives."""
    import json

    from click.testing import CliRunner

    out = tmp_path / "refined.h5"
    resolved = CliRunner().invoke(main, ["resolve", str(symmetric_blueprint), "--gadget", "maxmargin",
                                         "-n", "6", "--engine", "poker", "--out", str(out), "--json"])
    assert resolved.exit_code == 0, resolved.output
    report = json.loads(resolved.output)
    evaluated = CliRunner().invoke(main, ["evaluate", str(out), "--json"])
    assert evaluated.exit_code == 0, evaluated.output
    assert json.loads(evaluated.output)["nash_conv"] == pytest.approx(report["nash_conv_after"], abs=1e-9)
    assert report["nash_conv_after"] < report["nash_conv_before"]


@pytest.mark.parametrize("args, words", [
    (["--engine", "streamed", "--round", "3"], "no public deal before round 3"),
    (["--engine", "streamed", "--gadget", "coinflip"], "cannot run the coinflip gadget"),
    (["--engine", "poker", "--workers", "2"], "go with --engine streamed"),
    (["--engine", "streamed", "--out", "never.h5"], "never holds the unabstracted strategy"),
])
def test_bad_streamed_resolving_is_one_line_exit_2(symmetric_blueprint, args, words):
    from click.testing import CliRunner

    result = CliRunner().invoke(main, ["resolve", str(symmetric_blueprint), *args])
    assert result.exit_code == 2 and words in result.output, result.output
    assert len(result.output.strip().splitlines()) == 1


def test_isomorphic_needs_a_suit_symmetric_blueprint(tmp_path):
    from click.testing import CliRunner

    from efgkit.poker.betting_tree import BettingTree
    from efgkit.poker.buckets.bucket_layout import BucketLayout
    from efgkit.poker.buckets.card_abstraction import LosslessCards
    from efgkit.specs import make_game
    from efgkit.storage.bucket_strategy import save_bucket_strategy

    game = make_game("holdem(ranks=2,rounds=2)")
    layout = BucketLayout(BettingTree(game), LosslessCards(game))
    path = tmp_path / "lossless.h5"
    save_bucket_strategy(path, layout, layout.random(0), {"algorithm": "random", "iterations": 0})
    result = CliRunner().invoke(main, ["resolve", str(path), "--engine", "streamed", "--isomorphic"])
    assert result.exit_code == 2 and "not suit-symmetric" in result.output, result.output


def test_min_payoff_gift_bound_runs_on_both_poker_engines(symmetric_blueprint):
    """--gift-bound min-payoff on the poker engine and the streamed one: the same NashConv as
    ``VectorResolver(gift_bound="min-payoff")`` (to 1e-9), reported as the bound used."""
    import json

    from click.testing import CliRunner

    from efgkit.poker.materialised.layout import StrategyLayout
    from efgkit.poker.materialised.public_tree import PublicTree
    from efgkit.resolve.vector_resolver import VectorResolver
    from efgkit.specs import make_game
    from efgkit.storage.bucket_strategy import load_bucket_strategy

    common = ["resolve", str(symmetric_blueprint), "--gadget", "reach-maxmargin", "--no-split-gifts",
              "--gift-bound", "min-payoff", "-n", "5", "--isomorphic", "--json"]
    game = make_game("holdem(ranks=2,rounds=2)")
    buckets, strategy, _, _ = load_bucket_strategy(symmetric_blueprint, game)
    tree = PublicTree(game)
    expected = VectorResolver(tree, StrategyLayout.from_bucket_layout(tree, buckets), strategy,
                              gadget="reach-maxmargin", split_gifts=False, iterations=5, isomorphic=True,
                              gift_bound="min-payoff").resolve()
    for engine in ("poker", "streamed"):
        result = CliRunner().invoke(main, [*common, "--engine", engine])
        assert result.exit_code == 0, result.output
        data = json.loads(result.output)
        assert data["gift_bound"] == "min-payoff" and data["engine"] == engine
        assert data["nash_conv_after"] == pytest.approx(expected.after.nash_conv, abs=1e-9)
