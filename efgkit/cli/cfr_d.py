"""`efgkit cfr-d`: solve a game by decomposition (CFR-D) and recover a strategy by re-solving."""

from __future__ import annotations

import click

from efgkit.cli.app import (
    build_game,
    check_state_file,
    check_writable,
    emit,
    json_option,
    main,
    show_progress,
)
from efgkit.io.progress import progress_bar
from efgkit.resolve.cfr_d import CFRD, RESOLVE_GADGETS, VARIANTS, run_cfr_d
from efgkit.solvers.best_response import nash_conv
from efgkit.solvers.cfr import SOLVER_CLASSES
from efgkit.storage.strategy_file import save_strategy


@main.command("cfr-d")
@click.argument("game", default="leduc")
@click.option(
    "--round",
    "round_number",
    type=click.IntRange(min=2),
    default=2,
    show_default=True,
    help="Cut before this round's public chance event: the subgames are the public states "
    "right after it, the trunk everything above.",
)
@click.option(
    "--variant",
    type=click.Choice(VARIANTS),
    default="cfr+",
    show_default=True,
    help="The trunk's solver: cfr (the paper's: regret matching, simultaneous updates, uniform "
    "average) or cfr+ (regret-matching+, alternating updates, linear average).",
)
@click.option(
    "--iterations", "-n", type=click.IntRange(min=0), default=100, show_default=True, help="Trunk iterations."
)
@click.option(
    "--subgame-iterations",
    type=click.IntRange(min=1),
    default=100,
    show_default=True,
    help="Iterations of --subgame-solver that solve every subgame afresh, every trunk iteration.",
)
@click.option(
    "--subgame-solver",
    type=click.Choice(list(SOLVER_CLASSES)),
    default="cfr+",
    show_default=True,
    help="The CFR-family solver of each subgame.",
)
@click.option(
    "--gadget",
    "-g",
    type=click.Choice(RESOLVE_GADGETS),
    default="resolve",
    show_default=True,
    help="The re-solving gadget that recovers the subgames' strategy from the stored root values.",
)
@click.option(
    "--resolve-iterations",
    type=click.IntRange(min=1),
    default=1000,
    show_default=True,
    help="cfr+ iterations per re-solving gadget.",
)
@click.option(
    "--every",
    "-k",
    type=click.IntRange(min=1),
    default=None,
    help="Re-solve and evaluate every K trunk iterations [default: only at the end].",
)
@click.option(
    "--time",
    "time_limit",
    type=click.FloatRange(min=0, min_open=True),
    default=None,
    help="Stop after this many seconds of trunk iterations (checked after each chunk).",
)
@click.option(
    "--state",
    type=click.Path(dir_okay=False),
    default=None,
    metavar="FILE.h5",
    help="Checkpoint the run here (trunk and root values); with --resume continue it.",
)
@click.option(
    "--checkpoint-every",
    type=click.IntRange(min=1),
    default=None,
    metavar="K",
    help="Checkpoint every K trunk iterations.",
)
@click.option(
    "--checkpoint-seconds",
    type=click.FloatRange(min=0, min_open=True),
    default=None,
    help="Checkpoint every this many seconds.",
)
@click.option(
    "--resume", is_flag=True, help="Continue the run in --state (bit-identical to an uninterrupted one)."
)
@click.option(
    "--out",
    "-o",
    type=click.Path(dir_okay=False),
    default=None,
    help="Write the re-solved complete strategy here.",
)
@json_option
@click.pass_context
def cfr_d(
    ctx: click.Context,
    game: str,
    round_number: int,
    variant: str,
    iterations: int,
    subgame_iterations: int,
    subgame_solver: str,
    gadget: str,
    resolve_iterations: int,
    every: int | None,
    time_limit: float | None,
    state: str | None,
    checkpoint_every: int | None,
    checkpoint_seconds: float | None,
    resume: bool,
    out: str | None,
    as_json: bool,
) -> None:
    """Solve GAME by decomposition (CFR-D) and recover a complete strategy by re-solving.

    CFR-D (Burch, Johanson & Bowling 2014; Burch's thesis Algorithm 6) keeps only the trunk's
    regrets and average and both players' counterfactual values at every subgame root; each
    trunk iteration solves every subgame afresh from the trunk's reach. The complete strategy
    is recovered by re-solving every subgame with the stored values as constraints, and is
    evaluated exactly (NashConv).
    """
    check_state_file(ctx, state, resume)
    check_writable(out, "--out")
    tree, _ = build_game(game)
    solver = CFRD(
        tree,
        round_number=round_number,
        variant=variant,
        subgame_iterations=subgame_iterations,
        subgame_solver=subgame_solver,
    )
    run = run_cfr_d(
        solver,
        iterations,
        every=every or max(iterations, 1),
        resolve_iterations=resolve_iterations,
        gadget=gadget,
        state=state,
        checkpoint_every=checkpoint_every,
        checkpoint_seconds=checkpoint_seconds,
        time_limit=time_limit,
        progress=show_progress(),
    )
    evaluated = bool(run.history) and run.history[-1]["iteration"] == solver.iteration
    strategy = None
    if not evaluated or out is not None:
        with progress_bar(
            total=len(solver.subgames), unit="subgame", desc="re-solving", enabled=show_progress()
        ) as bar:
            strategy = solver.resolve(
                resolve_iterations, gadget=gadget, progress=lambda done, _: bar.update(done - bar.n)
            )
    if not evaluated:
        run.history.append({"iteration": solver.iteration, "nash_conv": nash_conv(strategy)})
    parameters = {
        "variant": variant,
        "round": round_number,
        "subgame_iterations": subgame_iterations,
        "subgame_solver": subgame_solver,
        "gadget": gadget,
        "resolve_iterations": resolve_iterations,
    }
    if out is not None:
        save_strategy(
            out,
            strategy,
            provenance={
                "algorithm": "cfr-d",
                "parameters": parameters,
                "iterations": solver.iteration,
                "nash_conv_history": [(h["iteration"], h["nash_conv"]) for h in run.history],
            },
        )
    stored = solver.stored_bytes()
    final = run.history[-1]["nash_conv"]
    data = {
        "game": tree.spec,
        **parameters,
        "iterations": solver.iteration,
        "subgames": len(solver.subgames),
        "nash_conv": final,
        "exploitability": final / 2.0,
        "history": run.history,
        "out_of_time": bool(run.end.out_of_time),
        **stored.to_dict(),
        "state": state,
        "out": out,
    }
    lines = [
        f"CFR-D ({variant} trunk) on {tree.spec}: {len(solver.subgames)} subgames after round "
        f"{round_number - 1}, {subgame_iterations} {subgame_solver} iterations per subgame solve"
    ]
    lines += [
        f"trunk iteration {h['iteration']:>6}  re-solved ({gadget}) NashConv {h['nash_conv']:.6f}"
        for h in run.history
    ]
    lines += [
        f"stored: trunk {stored.trunk:,} B + root values {stored.root_values:,} B = {stored.cfr_d:,} B "
        f"(CFR's regrets and average of the whole game: {stored.full_strategy:,} B)"
    ]
    lines += [f"solver state written to {state}"] if state else []
    lines += [f"re-solved strategy written to {out}"] if out else []
    emit(as_json, data, lines)
