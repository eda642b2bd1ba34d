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
@json_option
def bot(strategy: str, host: str, port: int, seed: int, spec: str | None, bucket_file: str | None,
        timeout: float, as_json: bool) -> None:
    """Play STRATEGY (.efgs or a bucket strategy .h5) against the ACPC dealer at HOST PORT.

    Sends the protocol's version line, answers every MATCHSTATE line where it is to act
    with an action drawn from the strategy's row of its seat, cards, board and betting,
    and stops when the dealer closes the connection. Limit games only; a malformed dealer
    line or one that does not fit the strategy's game is one error line (exit code 2).
    """
    import h5py

    from efgkit.interop.acpc_protocol import play_acpc
    from efgkit.storage.acpc_bot import open_policy
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
        close()
    seconds = time.perf_counter() - started
    emit(as_json, {"strategy": strategy, "host": host, "port": port, "actions": actions, "seconds": seconds},
         [f"{strategy}: {actions:,} actions sent to {host}:{port} in {seconds:.1f} s"])
