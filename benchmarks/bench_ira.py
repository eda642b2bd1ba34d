"""Reproduce Čermák, Lisý & Bošanský's FPIRA / CFR+IRA experiments (results: docs/results-ira.md).

Parts (``--part``):
* ``small``  GP5, GS5, P222: B10H90 CFR+IRA (10 seeds) to NashConv 0.05 and 0.01
* ``fpira``  GP5, GS5, P222: FPIRA to 0.05 (10-minute cap per game)
* ``large``  GP6, GS6, P224: B100H900 CFR+IRA (5 seeds) to 0.05 (20-minute cap per run)
* ``curves`` NashConv against iterations and wall time for CFR+ and CFR+IRA settings
  (k_h = 0 against k_h > 0, k_h + k_b = 100 against 1000), and abstraction size against
  NashConv, as PNG plots
* ``qualitative`` final abstraction sizes on Kuhn, 5-card Kuhn and GS3
* ``overhead`` CFR+IRA's time per iteration against plain CFR+ on the same tree

``--conventions reference`` runs FPIRA and CFR+IRA as the authors' code does where it
departs from the paper's text, ``--payoffs reference`` Graph Pursuit with the code's
timeout payoff +1 (docs/conventions.md); their records go to
``ira-<part>-<conventions>[-payoffs-reference].jsonl``.

Every run happens in a fresh process (spawned), so its peak resident memory is its own.
Results are appended as JSON lines to ``benchmarks/results/ira-<part>.jsonl``;
``--report`` turns those files into docs/results-ira.md and the plots. ``--quick`` runs a seconds-long
version of each part on small games and writes nothing.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import multiprocessing
import os
import resource
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results"  # one ira-<part>.jsonl per part
DOCS = ROOT / "docs"

PAPER_PERCENT_AT_005 = {
    ("GP5", "B10H90"): 9.5, ("GS5", "B10H90"): 3.1, ("P222", "B10H90"): 14.9,
    ("GP5", "FPIRA"): 19.6, ("GS5", "FPIRA"): 15.6, ("P222", "FPIRA"): 42.9,
    ("GP6", "B100H900"): 2.0, ("GS6", "B100H900"): 2.4, ("P224", "B100H900"): 0.9,
}


def _run(job: dict) -> dict:
    """One refinement run in this (fresh) process; returns its record."""
    from efgkit.abstraction.cfr_plus_ira import CFRPlusIRA
    from efgkit.abstraction.fpira import FPIRA
    from efgkit.abstraction.refinement import run_refinement
    from efgkit.maps.infoset_map import InfosetMap
    from efgkit.solvers import BestResponse, CFRPlusSolver
    from efgkit.specs import load_game

    game = job["game"]
    if job.get("payoffs", "paper") != "paper" and game.startswith("GP"):
        game = f"pursuit(moves={game[2:]},payoffs={job['payoffs']})"
    tree = load_game(game)
    conventions = job.get("conventions", "paper")
    rss_after_build = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    setting = job["setting"]
    if setting == "FPIRA":
        solver = FPIRA(tree, conventions=conventions)
    elif setting == "CFR+":
        solver = _PlainCFRPlus(CFRPlusSolver(tree, delay=job.get("delay", 100)),
                               BestResponse(InfosetMap.identity(tree)))
    else:
        kb, kh = (int(x) for x in setting[1:].split("H"))
        solver = CFRPlusIRA(tree, k_bound=kb, k_heuristic=kh, delay=job.get("delay", 100),
                            random_state=job["seed"], conventions=conventions)
    deadline = time.perf_counter() + job["seconds_cap"]
    history = []

    def callback(record):
        history.append(vars(record))
        if time.perf_counter() > deadline:
            raise _OutOfTime

    try:
        run_refinement(solver, job["target"], max_iterations=job["max_iterations"],
                       every=job["every"], callback=callback)
    except _OutOfTime:
        pass
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {**job, "original_infosets": tree.num_infosets, "nodes": tree.num_nodes,
            "rss_after_build_mb": rss_after_build, "peak_rss_mb": peak, "history": history,
            "splits": getattr(solver, "splits", {})}


class _OutOfTime(Exception):
    pass


class _PlainCFRPlus:
    """CFR+ on the full game with the refinement driver's interface (the reference line)."""

    def __init__(self, solver, evaluator):
        self.solver, self.evaluator = solver, evaluator

    @property
    def iteration(self):
        return self.solver.iteration

    def iterate(self, n):
        self.solver.iterate(n)

    def evaluate(self):
        return self.evaluator.evaluate(self.solver.average_strategy())

    def memory(self):
        tree = self.solver.infoset_map.tree
        return {"abstract_infosets": tree.num_infosets, "memory_words":
                2 * tree.num_infoset_actions, "map_entries": 0}


def _jobs(part: str, quick: bool, seeds: int | None = None, first_seed: int = 0,
          conventions: str = "paper", payoffs: str = "paper") -> list[dict]:
    def job(game, setting, seed=0, target=0.01, every=25, max_iterations=100_000,
            seconds_cap=600.0, **extra):
        chosen = {} if conventions == "paper" else {"conventions": conventions}
        if payoffs != "paper":
            chosen["payoffs"] = payoffs
        return {"part": part, "game": game, "setting": setting, "seed": seed,
                "target": target, "every": every, "max_iterations": max_iterations,
                "seconds_cap": seconds_cap, **chosen, **extra}

    if quick:
        return [job("GS3", "B10H90", target=0.05, max_iterations=300, every=10),
                job("kuhn", "FPIRA", target=0.05, max_iterations=300, every=10)]
    if part == "small":
        return [job(g, "B10H90", seed, seconds_cap=900)
                for g in ("GP5", "GS5", "P222") for seed in range(first_seed, seeds or 10)]
    if part == "fpira":
        return [job(g, "FPIRA", target=0.05, every=100, seconds_cap=600)
                for g in ("GP5", "GS5", "P222")]
    if part == "large":
        return [job(g, "B100H900", seed, target=0.05, every=50, seconds_cap=1200)
                for g in ("GP6", "GS6", "P224") for seed in range(first_seed, seeds or 5)]
    if part == "curves":
        settings = ("CFR+", "B100H0", "B10H90", "B50H50", "B1000H0", "B100H900", "B500H500")
        return [job(g, s, 0, target=0.0, every=25, max_iterations=3000, seconds_cap=600)
                for g in ("GP5", "GS5", "P222") for s in settings]
    if part == "qualitative":
        return [job(g, s, seed, target=0.001, every=10, max_iterations=20_000, seconds_cap=300)
                for g in ("kuhn", "kuhn(cards=5)", "GS3")
                for s, seeds in (("FPIRA", 1), ("B10H90", 10)) for seed in range(seeds)]
    if part == "overhead":
        return [job(g, s, 0, target=0.0, every=10**9, max_iterations=300, delay=0)
                for g in ("GP5", "GS5", "P222", "P224") for s in ("CFR+", "B10H90", "B100H900")]
    raise SystemExit(f"unknown part {part!r}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--part", action="append", default=[],
                        choices=["small", "fpira", "large", "curves", "qualitative", "overhead"])
    parser.add_argument("--games", help="only these games (comma-separated)")
    parser.add_argument("--seeds", type=int, help="run seeds below this number (default: the "
                        "paper's 10 small, 5 large)")
    parser.add_argument("--first-seed", type=int, default=0,
                        help="start at this seed (to add seeds to an earlier run)")
    parser.add_argument("--conventions", choices=["paper", "reference"], default="paper",
                        help="FPIRA / CFR+IRA as the paper's text or the authors' code runs them")
    parser.add_argument("--payoffs", choices=["paper", "reference"], default="paper",
                        help="Graph Pursuit's timeout payoff: paper 0, reference +1")
    parser.add_argument("--settings", help="only these settings (comma-separated, e.g. FPIRA)")
    parser.add_argument("--seconds-cap", type=float, help="override each run's time cap")
    parser.add_argument("--target", type=float, help="override each run's NashConv target "
                        "(e.g. 0.05 for the paper's tables only)")
    parser.add_argument("--cpu", type=int, help="pin to this CPU (default: the last one; -1: "
                        "do not pin, for a machine whose cores others share)")
    parser.add_argument("--report", action="store_true", help="write docs/results-ira.md")
    parser.add_argument("--quick", action="store_true", help="seconds-long smoke run")
    args = parser.parse_args()
    if hasattr(os, "sched_setaffinity") and not args.quick and args.cpu != -1:
        cpu = args.cpu if args.cpu is not None else sorted(os.sched_getaffinity(0))[-1]
        os.sched_setaffinity(0, {cpu})
    context = multiprocessing.get_context("spawn")
    for part in args.part or (["small"] if args.quick else []):
        for job in _jobs(part, args.quick, args.seeds, args.first_seed, args.conventions,
                         args.payoffs):
            if args.games and job["game"] not in args.games.split(","):
                continue
            if args.settings and job["setting"] not in args.settings.split(","):
                continue
            if args.seconds_cap is not None:
                job["seconds_cap"] = args.seconds_cap
            if args.target is not None:
                job["target"] = args.target
            with concurrent.futures.ProcessPoolExecutor(1, mp_context=context) as pool:
                record = pool.submit(_run, job).result()
            final = record["history"][-1]
            print(f"{record['game']:>14} {record['setting']:>9} seed {record['seed']}: "
                  f"NashConv {final['nash_conv']:.4f} after {final['iteration']} it, "
                  f"{final['abstract_infosets']} abstract "
                  f"({100 * final['abstract_infosets'] / record['original_infosets']:.1f}%), "
                  f"{final['seconds']:.1f} s, peak {record['peak_rss_mb']:.0f} MB", flush=True)
            if not args.quick:
                RESULTS.mkdir(exist_ok=True)
                suffix = "" if args.conventions == "paper" else f"-{args.conventions}"
                suffix += "" if args.payoffs == "paper" else f"-payoffs-{args.payoffs}"
                with (RESULTS / f"ira-{part}{suffix}.jsonl").open("a") as handle:
                    handle.write(json.dumps(record) + "\n")
    if args.report:
        from ira_report import write_report

        write_report(RESULTS, DOCS, PAPER_PERCENT_AT_005)


if __name__ == "__main__":
    main()
