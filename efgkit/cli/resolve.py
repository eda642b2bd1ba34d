"""`efgkit resolve`: safe (or unsafe) re-solving of a stored blueprint's subgames."""

from __future__ import annotations

import click

from efgkit.cli.app import build_game, check_writable, emit, json_option, main, save_figure, show_progress
from efgkit.cli.game_argument import GameAndFile, game_then_file, recorded_game
from efgkit.cli.plots import new_figure
from efgkit.errors import ParameterError
from efgkit.io.progress import progress_bar
from efgkit.resolve import GADGETS, GIFT_BOUNDS, Resolver, round_subgames, subgame_at
from efgkit.solvers.cfr import CFRPlusSolver, CFRSolver, DCFRSolver
from efgkit.solvers.sequence_form_lp import SequenceFormLP
from efgkit.storage.strategy_file import load_strategy, save_strategy

GADGET_SOLVERS = {"cfr": CFRSolver, "cfr+": CFRPlusSolver, "dcfr": DCFRSolver, "lp": SequenceFormLP}

PLOT_CHECKPOINTS = (10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000, 20000, 50000)


def plot_checkpoints(iterations: int) -> list[int]:
    """Log-spaced iteration counts below ``iterations`` at which a plotted run is evaluated."""
    return [c for c in PLOT_CHECKPOINTS if c < iterations]


@main.command()
@game_then_file("BLUEPRINT.h5")
@click.option("--gadget", "-g", type=click.Choice(GADGETS), default="resolve", show_default=True,
              help="unsafe: both players free under the blueprint's reach; resolve: Burch's "
                   "terminate/follow gadget; maxmargin: maximise the minimum margin; reach-maxmargin: "
                   "maxmargin with the opponent's gifts; coinflip: resolve, but with probability p the "
                   "opponent enters with its blueprint reach; distributional / distributional-hedge: "
                   "resolve with Normal alternative payoffs (Brown & Sandholm §6.1; not safe), the "
                   "opponent entering by Theorem 4's threshold rule or by Hedge (App. B); "
                   "reach-distributional / reach-distributional-hedge: the same with the opponent's "
                   "gifts added (with selfplay constraints: 'Reach-Estimated + Distributional').")
@click.option("--p", "p", type=click.FloatRange(0.0, 1.0), default=0.5, show_default=True,
              help="coinflip: probability that the opponent is forced to follow its blueprint.")
@click.option("--spread", type=click.FloatRange(min=0.0), default=1.0, show_default=True,
              help="distributional gadgets: standard deviation of each alternative payoff as a multiple "
                   "of |blueprint value - best-response value| at that infoset (0: a point mass).")
@click.option("--constraints", "-c", type=click.Choice(["br", "selfplay", "deepstack"]), default="br",
              show_default=True,
              help="The opponent's values at the subgame roots: br (counterfactual best response to "
                   "the blueprint, safe), selfplay (the blueprint's own values, Brown & Sandholm's "
                   "'Estimated'; with a distributional gadget, 'Estimated + Distributional'), deepstack "
                   "(br plus the gift of the opponent's last action).")
@click.option("--round", "round_number", type=click.IntRange(min=2), default=None,
              help="Re-solve every subgame of this round (those after its public chance event) "
                   "[default: 2].")
@click.option("--subgame", "subgame_key", default=None,
              help="Re-solve only the subgame at this public state (key as in the game's public "
                   "states, e.g. 'board=Qs bets=cc/' in Leduc).")
@click.option("--solver", "-s", type=click.Choice(list(GADGET_SOLVERS)), default="cfr+", show_default=True,
              help="Solver of every gadget (lp: an exact equilibrium; small games).")
@click.option("--iterations", "-n", type=click.IntRange(min=1), default=1000, show_default=True,
              help="Solver iterations per gadget.")
@click.option("--player", type=click.Choice(["both", "0", "1"]), default="both", show_default=True,
              help="Which player's strategy is re-solved.")
@click.option("--split-gifts/--no-split-gifts", default=True, show_default=True,
              help="reach gadgets: share each gift by reach (safe) or give it whole to every subgame.")
@click.option("--gift-bound", type=click.Choice(GIFT_BOUNDS), default="cbv", show_default=True,
              help="reach gadgets: value the opponent's best alternative by its best-response value "
                   "against the blueprint (cbv) or by its minimum reachable payoff (min-payoff, a bound "
                   "no re-solving can take away; Brown & Sandholm's choice; on the poker engines each "
                   "pair of hands' least showdown outcome over every completion of the board).")
@click.option("--out", "-o", type=click.Path(dir_okay=False), default=None,
              help="Write the refined strategy (blueprint with the re-solved subgames) here (required for "
                   "a GameTree strategy; for a bucket strategy re-solved on the poker engine, a bucket "
                   "strategy on lossless cards).")
@click.option("--plot", type=click.Path(dir_okay=False), default=None,
              help="Write a PNG of exploitability against gadget iterations (evaluated at "
                   "10, 20, 50, ... iterations).")
@click.option("--engine", type=click.Choice(["auto", "poker", "streamed"]), default="auto", show_default=True,
              help="Bucket strategies: poker (the whole public tree materialised), streamed (one flop at a "
                   "time, any --round, evaluated by the streamed best response; 52-card games) or auto "
                   "(streamed where the public tree does not fit the memory budget, or with --workers / "
                   "--scheduler).")
@click.option("--isomorphic", is_flag=True, default=False,
              help="Bucket strategies: re-solve one board per suit-isomorphism class and give its "
                   "strategy to the others (the blueprint must be suit-symmetric).")
@click.option("--workers", type=click.IntRange(min=0), default=0, show_default=True,
              help="Bucket strategies: re-solve and evaluate the flops on a Dask LocalCluster of this many "
                   "worker processes (the streamed engine; 0: this process).")
@click.option("--scheduler", default=None, metavar="ADDRESS",
              help="Bucket strategies: run the flops on this dask.distributed scheduler (tcp://host:8786; "
                   "the streamed engine).")
@json_option
def resolve(game_and_file: GameAndFile, gadget: str, p: float, spread: float, constraints: str,
            round_number: int | None, subgame_key: str | None, solver: str, iterations: int,
            player: str, split_gifts: bool, gift_bound: str, out: str, plot: str | None,
            engine: str, isomorphic: bool, workers: int, scheduler: str | None, as_json: bool) -> None:
    """Re-solve subgames of the strategy in BLUEPRINT.h5 for GAME and splice them back.

    GAME may be left out: the game BLUEPRINT.h5 records is used.

    A bucket strategy of the poker engines is re-solved on the poker engine instead: every
    subgame after the round's board deal, both players' hands unabstracted as vectors (unsafe,
    resolve, maxmargin, reach-maxmargin, distributional gadgets; br or selfplay constraints), the
    combined strategy evaluated exactly. Where the public tree does not fit (52-card hold'em), or
    with --workers / --scheduler, the streamed engine re-solves one flop at a time (the subgames
    after the flop, or with --round 3 after the turn, below it) and evaluates by the streamed best
    response, never storing the unabstracted strategy.

    Every subgame is re-solved once per player against the original blueprint with the
    chosen gadget, its solution replaces the blueprint there, and the result is evaluated
    exactly in the full game (NashConv before and after). With --constraints br the
    resolve, maxmargin and reach-maxmargin (split gifts) gadgets never make the strategy
    more exploitable, up to the gadget solver's error.
    """
    game, blueprint_file = game_and_file
    game = game or recorded_game(blueprint_file)
    if round_number is not None and subgame_key is not None:
        raise ParameterError("give either --round or --subgame, not both")
    from efgkit.storage.bucket_strategy import is_bucket_strategy_file

    if is_bucket_strategy_file(blueprint_file):
        if subgame_key is not None or plot is not None:
            used = "--subgame" if subgame_key is not None else "--plot"
            raise ParameterError(f"{used} is not available for a bucket-strategy blueprint (the poker "
                                 f"engine re-solves every subgame of a round and reports NashConv)")
        check_writable(out, "--out")
        _resolve_bucket_strategy(game, blueprint_file, out, gadget=gadget, constraints=constraints,
                                 spread=spread, round_number=2 if round_number is None else round_number,
                                 solver=solver, iterations=iterations, player=player, split_gifts=split_gifts,
                                 gift_bound=gift_bound, engine=engine, isomorphic=isomorphic, workers=workers,
                                 scheduler=scheduler, as_json=as_json)
        return
    if isomorphic or workers or scheduler is not None or engine != "auto":
        raise ParameterError("--engine, --isomorphic, --workers and --scheduler go with a bucket-strategy "
                             "blueprint")
    if out is None:
        raise ParameterError("give --out REFINED.h5: where the refined strategy is written")
    check_writable(out, "--out")
    check_writable(plot, "--plot")
    tree, _ = build_game(game)
    blueprint, provenance = load_strategy(blueprint_file, tree)
    if subgame_key is not None:
        if subgame_key not in tree.public_state_keys:
            examples = ", ".join(repr(k) for k in tree.public_state_keys[-3:]) or "none"
            raise ParameterError(f"--subgame: game {tree.spec!r} has no public state {subgame_key!r} "
                                 f"(some of its public states: {examples})")
        subgames = [subgame_at(tree, subgame_key)]
        which = f"subgame {subgame_key!r}"
    else:
        round_number = 2 if round_number is None else round_number
        subgames = round_subgames(tree, round_number)
        which = f"round {round_number}"
    players = (0, 1) if player == "both" else (int(player),)
    checkpoints = plot_checkpoints(iterations) if plot is not None and solver != "lp" else []
    total = len(subgames) * (1 if gadget == "unsafe" else len(players))
    with progress_bar(total=total, unit="gadget", desc="re-solving", enabled=show_progress()) as bar:
        result = Resolver(blueprint, gadget=gadget, constraints=constraints, solver=GADGET_SOLVERS[solver],
                          iterations=iterations, p=p, split_gifts=split_gifts, gift_bound=gift_bound,
                          spread=spread, checkpoints=checkpoints,
                          players=players, progress=lambda done, _: bar.update(done - bar.n)
                          ).resolve(subgames)
    parameters = {"gadget": gadget, "constraints": constraints, "solver": solver, "p": p, "spread": spread,
                  "split_gifts": split_gifts, "gift_bound": gift_bound, "players": list(players),
                  "subgames": which, "blueprint_algorithm": provenance["algorithm"]}
    history = [{"iteration": n, "nash_conv": e.nash_conv} for n, e in result.history]
    save_strategy(out, result.strategy, provenance={
        "algorithm": "resolve", "parameters": parameters, "iterations": iterations,
        "nash_conv_history": history})
    if plot is not None:
        _write_plot(plot, tree.spec, gadget, constraints, result)
    summary = result.to_dict()
    data = {
        "game": tree.spec, "blueprint": blueprint_file, **parameters, "iterations": iterations,
        **summary, "num_subgames": len(subgames),
        "skipped": sum(r.skipped for r in result.subgames),
        "abstract_infosets": result.strategy.infoset_map.num_abstract, "out": out, "plot": plot,
    }
    before, after = result.before, result.after
    change = 100.0 * (after.nash_conv - before.nash_conv) / before.nash_conv if before.nash_conv > 0 else 0.0
    lines = [
        f"{gadget} re-solving ({constraints} constraints) of {which} of {tree.spec}: {len(subgames)} "
        f"subgame{'s' * (len(subgames) != 1)} x player{'s' * (len(players) > 1)} "
        f"{', '.join(map(str, players))}, {iterations} {solver} iterations each, {result.seconds:.2f} s",
        f"before: NashConv {before.nash_conv:.6f}  (NashConv/2, exploitability: {before.exploitability:.6f})",
        f"after:  NashConv {after.nash_conv:.6f}  (NashConv/2, exploitability: {after.exploitability:.6f}); "
        f"{change:+.1f}%",
        f"refined strategy written to {out}",
    ]
    lines += [f"plot written to {plot}"] if plot else []
    emit(as_json, data, lines)


def _resolve_bucket_strategy(spec: str, path: str, out: str | None, *, gadget: str, constraints: str,
                             spread: float,
                             round_number: int, solver: str, iterations: int, player: str, split_gifts: bool,
                             gift_bound: str, engine: str, isomorphic: bool, workers: int,
                             scheduler: str | None, as_json: bool) -> None:
    """Re-solve a bucket strategy on the poker engine (``resolve.vector_resolver``) or, where its
    public tree does not fit or on Dask, streamed (``resolve.streamed_resolver``), and report."""
    from efgkit.cli.app import poker_game
    from efgkit.cli.big_blinds import big_blind_fields
    from efgkit.io.budget import memory_budget
    from efgkit.poker.size import poker_game_size
    from efgkit.resolve.vector_gadgets import VECTOR_GADGETS
    from efgkit.storage.bucket_strategy import load_bucket_strategy

    if gadget not in VECTOR_GADGETS:
        raise ParameterError(f"the poker engine cannot run the {gadget} gadget (it runs "
                             f"{', '.join(sorted(VECTOR_GADGETS))})")
    if constraints not in ("br", "selfplay"):
        raise ParameterError(f"--constraints {constraints}: the poker engine takes br or selfplay")
    if solver == "lp":
        raise ParameterError("--solver lp: the poker engine solves gadgets by cfr, cfr+ or dcfr")
    game = poker_game(spec)
    buckets, strategy, provenance, _ = load_bucket_strategy(path, game)
    players = (0, 1) if player == "both" else (int(player),)
    size = poker_game_size(game)
    if engine == "poker" and (workers or scheduler is not None):
        raise ParameterError("--workers and --scheduler go with --engine streamed (or auto)")
    too_big = 4 * 8 * size["public_tree_nodes"] * size["hands"] > memory_budget()  # reach x 2, values, ...
    on_dask = bool(workers) or scheduler is not None
    streamed = engine == "streamed" or (engine == "auto" and (on_dask or too_big))
    if streamed and out is not None:
        why = "--engine streamed" if engine == "streamed" else \
            "--workers / --scheduler" if on_dask else "its public tree is over the memory budget"
        raise ParameterError(f"--out: {game.spec} is re-solved streamed ({why}), which never holds the "
                             f"unabstracted strategy; re-solve with --engine poker where the tree fits")
    options = {"gadget": gadget, "constraints": constraints, "iterations": iterations,
               "split_gifts": split_gifts, "variant": solver, "players": players, "spread": spread,
               "isomorphic": isomorphic, "gift_bound": gift_bound}
    data = {"game": game.spec, "blueprint": path, "engine": "streamed" if streamed else "poker",
            "gadget": gadget, "constraints": constraints, "solver": solver, "spread": spread,
            "split_gifts": split_gifts, "gift_bound": gift_bound,
            "players": list(players), "isomorphic": isomorphic, "subgames": f"round {round_number}",
            "iterations": iterations, "blueprint_algorithm": provenance["algorithm"],
            "abstraction": buckets.abstraction.description}
    if streamed:
        result, extra = _streamed(buckets, strategy, options, round_number, workers, scheduler)
    else:
        result, extra = _materialised(buckets, strategy, options, round_number)
        if out is not None:
            _write_lossless(out, result, {"algorithm": f"resolve ({gadget}, {constraints})",
                                          "iterations": iterations, "engine": "poker",
                                          "parameters": dict(data),
                                          "seconds": result.seconds})
            data["out"] = out
    data.update(extra)
    before, after = result.before, result.after
    before_mbb, _ = big_blind_fields(game, before.exploitability)
    after_mbb, _ = big_blind_fields(game, after.exploitability)
    data.update({"nash_conv_before": before.nash_conv, "nash_conv_after": after.nash_conv,
                 "exploitability_before": before.exploitability, "exploitability_after": after.exploitability,
                 "exploitability_mbb_per_game_before": before_mbb.get("exploitability_mbb_per_game"),
                 "exploitability_mbb_per_game_after": after_mbb.get("exploitability_mbb_per_game"),
                 "seconds": result.seconds})
    unit = " mbb/g" if before_mbb else ""
    shown = [data["exploitability_mbb_per_game_before"], data["exploitability_mbb_per_game_after"]] if unit \
        else [before.exploitability, after.exploitability]
    engine = "streamed engine, one flop at a time" if streamed else "poker engine"
    lines = [f"{gadget} re-solving ({constraints} constraints) of round {round_number} of {game.spec} on the "
             f"{engine}: {data['num_subgames']:,} subgames x player{'s' * (len(players) > 1)} "
             f"{', '.join(map(str, players))}, {iterations} {solver} iterations each, {result.seconds:.2f} s",
             f"before: NashConv {before.nash_conv:.6f}  (exploitability {shown[0]:.3f}{unit})",
             f"after:  NashConv {after.nash_conv:.6f}  (exploitability {shown[1]:.3f}{unit})"]
    if streamed:
        lines.append(f"peak RSS {data['peak_rss_bytes'] / 2**20:,.0f} MiB (workers' largest "
                     f"{data['worker_peak_rss_bytes'] / 2**20:,.0f} MiB); the unabstracted strategy it never "
                     f"stores: {data['unabstracted_strategy_bytes'] / 2**20:,.0f} MiB")
    emit(as_json, data, lines)


def _materialised(buckets, strategy, options: dict, round_number: int):
    """``VectorResolver`` on the whole public tree, with a progress bar."""
    from efgkit.poker.materialised.layout import StrategyLayout
    from efgkit.poker.materialised.public_tree import PublicTree
    from efgkit.resolve.vector_resolver import VectorResolver

    tree = PublicTree(buckets.betting.game)
    resolver = VectorResolver(tree, StrategyLayout.from_bucket_layout(tree, buckets), strategy,
                              round_number=round_number, **options)
    classes = resolver.classes
    solved = resolver.roots.shape[0] if classes is None else classes.representatives.shape[0]
    total = solved * (1 if options["gadget"] == "unsafe" else len(options["players"]))
    with progress_bar(total=total, unit="gadget", desc="re-solving", enabled=show_progress()) as bar:
        result = resolver.resolve(lambda done, _: bar.update(done - bar.n))
    return result, {"num_subgames": int(resolver.roots.shape[0])}


def _write_lossless(path: str, result, provenance: dict) -> None:
    """The combined strategy of a ``VectorResolveResult`` (lossless public-tree layout) as a bucket
    strategy on ``LosslessCards``, which every reader of bucket strategies takes (rows of cards
    that meet the board, never played, uniform)."""
    from efgkit.poker.betting_tree import BettingTree
    from efgkit.poker.buckets.bucket_layout import BucketLayout
    from efgkit.poker.buckets.card_abstraction import LosslessCards
    from efgkit.poker.materialised.layout import StrategyLayout
    from efgkit.storage.bucket_strategy import save_bucket_strategy

    tree = result.layout.tree
    buckets = BucketLayout(BettingTree(tree.game), LosslessCards(tree.game))
    target = StrategyLayout.from_bucket_layout(tree, buckets)
    save_bucket_strategy(path, buckets, target.rows_from(result.layout, result.strategy, buckets.uniform()),
                         provenance)


def _streamed(buckets, strategy, options: dict, round_number: int, workers: int, scheduler: str | None):
    """``StreamedResolver`` over every flop (or suit class), on Dask if asked, with a progress bar."""
    from efgkit.io.chunk_runner import ChunkRunner
    from efgkit.resolve.gadgets import REACH_GADGETS
    from efgkit.resolve.streamed_resolver import StreamedResolver

    resolver = StreamedResolver(buckets, strategy, round_number=round_number, **options)
    passes = 3 + (options["gadget"] in REACH_GADGETS) + 1
    with ChunkRunner(scheduler=scheduler, workers=0 if scheduler else workers) as runner, \
            progress_bar(total=passes * len(resolver.items), unit="flop", desc="re-solving",
                         enabled=show_progress()) as bar:
        result = resolver.resolve(runner, progress=bar.update)
        where = runner.description
    return result, {"num_subgames": result.gadgets // (1 if options["gadget"] == "unsafe"
                                                       else len(options["players"])),
                    "flops": result.flops, "gadgets": result.gadgets, "ran_on": where,
                    "peak_rss_bytes": result.peak_rss,
                    "worker_peak_rss_bytes": max(result.worker_peak_rss, default=0),
                    "unabstracted_strategy_bytes": result.unabstracted_bytes}


def _write_plot(path: str, spec: str, gadget: str, constraints: str, result) -> None:
    figure, axes = new_figure(figsize=(6, 4))
    iterations = [n for n, _ in result.history]
    axes.semilogx(iterations, [e.exploitability for _, e in result.history], marker="o", markersize=3,
                  label=f"{gadget} ({constraints})")
    axes.axhline(result.before.exploitability, color="grey", linestyle="--", label="blueprint")
    axes.set_xlabel("gadget solver iterations")
    axes.set_ylabel("exploitability (NashConv / 2)")
    axes.set_title(f"re-solving {spec}")
    axes.grid(True, which="both", alpha=0.3)
    axes.legend()
    figure.tight_layout()
    save_figure(figure, path, "--plot")
