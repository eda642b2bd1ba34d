"""`efgkit bot`: play a strategy file against an ACPC dealer (docs/compact-format.md, "Playing
over the ACPC protocol")."""

from __future__ import annotations

import time

import click

from efgkit.cli.app import emit, json_option, main, poker_game, show_progress
from efgkit.errors import ParameterError
from efgkit.io.progress import progress_bar


@main.command()
@click.argument("strategy", type=click.Path(exists=True, dir_okay=False))
@click.argument("host")
@click.argument("port", type=click.IntRange(1, 65535))
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the actions drawn.")
@click.option("--game", "spec", default=None,
              help="A bucket strategy's game (default: the one the file records); a compact .efgs "
                   "file carries its ACPC game definition.")
@click.option("--buckets", "bucket_file", type=click.Path(exists=True, dir_okay=False), default=None,
              help="A bucket strategy's bucket file, if it is not beside it under its recorded name.")
@click.option("--timeout", type=float, default=60.0, show_default=True,
              help="Seconds to wait for the dealer's next line.")
@click.option("--resolve", "resolve_gadget", type=click.Choice(["resolve", "maxmargin", "unsafe"]),
              default=None,
              help="A bucket strategy re-solves, at each decision after a board deal, the subgame after "
                   "that deal with this gadget (public-tree engine; resolve and maxmargin are safe) and "
                   "plays the re-solved strategy; reports the time per decision.")
@click.option("--resolve-iterations", type=click.IntRange(min=1), default=200, show_default=True,
              help="CFR+ iterations of each decision-time re-solve.")
@json_option
def bot(strategy: str, host: str, port: int, seed: int, spec: str | None, bucket_file: str | None,
        timeout: float, resolve_gadget: str | None, resolve_iterations: int, as_json: bool) -> None:
    """Play STRATEGY (.efgs or a bucket strategy .h5) against the ACPC dealer at HOST PORT.

    Sends the protocol's version line, answers every MATCHSTATE line where it is to act
    with an action drawn from the strategy's row of its seat, cards, board and betting,
    and stops when the dealer closes the connection. Limit games only; a malformed dealer
    line or one that does not fit the strategy's game is one error line (exit code 2).

    With --resolve the bucket strategy is the blueprint of a player that re-solves, at each
    decision after a board deal, the subgame after that deal (games whose public tree fits
    this machine; a compact file or a larger game is one error line).
    """
    import h5py

    from efgkit.interop.acpc_protocol import play_acpc
    from efgkit.storage.acpc_bot import open_policy, open_resolving_policy
    from efgkit.storage.bucket_strategy import is_bucket_strategy_file

    game = None
    if is_bucket_strategy_file(strategy):
        if spec is None:
            with h5py.File(strategy, "r") as handle:
                spec = str(handle.attrs.get("game", ""))
        game = poker_game(spec)
    elif spec is not None or bucket_file is not None:
        raise ParameterError("--game and --buckets go with a bucket strategy (.h5); a compact file "
                             "carries its game")
    resolver = None
    if resolve_gadget is not None:
        if game is None:
            raise ParameterError(f"--resolve: {strategy} is a compact file; re-solving needs a bucket "
                                 f"strategy (.h5 of efgkit solve --engine sampled) as its blueprint")
        policy, definition, resolver = open_resolving_policy(
            strategy, game, bucket_file, gadget=resolve_gadget, iterations=resolve_iterations)
        close = None
    else:
        policy, definition, close = open_policy(strategy, game, bucket_file)
    started = time.perf_counter()
    try:
        with progress_bar(total=None, unit="action", desc="playing", enabled=show_progress()) as bar:
            def counted(state):
                bar.update(1)
                return policy(state)

            actions = play_acpc(host, port, definition, counted, seed=seed, timeout=timeout)
    except OSError as exc:
        raise ParameterError(f"dealer {host}:{port}: {exc.strerror or exc}") from None
    finally:
        if close is not None:
            close()
    seconds = time.perf_counter() - started
    data = {"strategy": strategy, "host": host, "port": port, "actions": actions, "seconds": seconds}
    lines = [f"{strategy}: {actions:,} actions sent to {host}:{port} in {seconds:.1f} s"]
    if resolver is not None:
        timing = resolver.timing()
        data |= {"resolve": resolve_gadget, "resolve_iterations": resolve_iterations, **timing}
        lines.append(f"re-solving ({resolve_gadget}, {resolve_iterations} iterations): {timing['resolves']} "
                     f"re-solves; time per decision median {_ms(timing['all_seconds_median'])}, p95 "
                     f"{_ms(timing['all_seconds_p95'])}; a decision that re-solves "
                     f"{_ms(timing['resolved_seconds_median'])}, one that reads a kept re-solve "
                     f"{_ms(timing['cached_seconds_median'])} (medians)")
    emit(as_json, data, lines)


def _ms(seconds: float | None) -> str:
    return "-" if seconds is None else f"{seconds * 1e3:.1f} ms"
