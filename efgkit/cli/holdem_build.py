"""`efgkit build "holdem(...)"`: the hold'em main job's output — its lines, report.md and the
convergence plot (the job itself is ``efgkit.jobs.holdem_build``)."""

from __future__ import annotations

from pathlib import Path

import click

from efgkit.cli.app import save_figure
from efgkit.cli.plots import new_figure, write_report
from efgkit.jobs.holdem_build import (
    BASELINE_OPPONENTS,
    EXPORT_FILE,
    STRATEGY_FILE,
    HoldemBuild,
    run_holdem_build,
)


def build_holdem(build: HoldemBuild, as_json: bool, progress: bool, command: str) -> tuple[dict, list[str]]:
    """Run the job, write report.md and convergence.png; the JSON data and the summary lines."""
    say = (lambda text: None) if as_json else click.echo
    data = run_holdem_build(build, say, progress)
    if data["history"]:
        _write_convergence_plot(build.folder / "convergence.png", data)
    if data.get("sizes"):
        _write_sizes_plot(build.folder / "tradeoff.png", data)
    data["verdict"] = verdict(data)
    _write_report(build.folder / "report.md", data, command)
    data["files"] = sorted(path.name for path in build.folder.iterdir())
    return data, [data["verdict"]]


def _measured(data: dict) -> str:
    evaluation = data["evaluation"]
    if evaluation["kind"] == "exact":
        abstract = ("" if "abstract_exploitability_mbb_per_game" not in evaluation else
                    f"; {evaluation['abstract_exploitability_mbb_per_game']:,.1f} mbb/g in the abstract game")
        return (f"exploitability {evaluation['exploitability_mbb_per_game']:,.1f} mbb/g in the full game "
                f"(exact best response{abstract})")
    low, high = evaluation["lbr_ci95_mbb"]
    return (f"local best response {evaluation['lbr_mbb_per_game']:,.1f} mbb/g (95% CI {low:,.1f} to "
            f"{high:,.1f}, {evaluation['lbr_boards']:,} boards; a lower bound: the exact best response was "
            f"estimated at {evaluation['estimated_exact_seconds']:,.0f} s, over --eval-time)")


def _target(data: dict) -> str:
    if "target_mbb" not in data:
        return ""
    reached = "reached" if data["target_reached"] else "not reached"
    return f" (--target {data['target_mbb']:g} mbb/g {reached} at the curve's exact evaluations)"


def verdict(data: dict) -> str:
    """One line: what the device file holds, and what it costs in exploitability."""
    export = data["export"]
    matches = ", ".join(f"{data['matches'][name]['mbb_per_game']:+,.1f} mbb/g against always-{name}"
                        for name in BASELINE_OPPONENTS)
    return (f"{data['game']}: {data['iterations']:,} iterations of sampled CFR+ on {data['rows']:,} rows"
            f"{_target(data)}; {_measured(data)}; {matches}; the device files take {export['total_bytes']:,} "
            f"bytes")


def _size_points(data: dict) -> list[dict]:
    """This build and each --sizes run as trade-off rows: memory in 32-bit words against the
    exploitability in mbb/g, the exact ones and the LBR lower bounds as two settings."""
    def row(label: str, evaluation: dict, words: int) -> dict:
        exact = evaluation["kind"] == "exact"
        value = evaluation["exploitability_mbb_per_game"] if exact else evaluation["lbr_mbb_per_game"]
        setting = "buckets, exact best response" if exact else "buckets, LBR (a lower bound)"
        return {"setting": setting, "seed": label, "exploitability_mbb_per_game": value,
                "memory_words": words}

    rows = [row("this build", data["evaluation"], data["solver_bytes"] // 4)]
    rows += [row(str(point["size"]), point["evaluation"], point["memory_words"]) for point in data["sizes"]]
    return rows


def _write_sizes_plot(path: Path, data: dict) -> None:
    from efgkit.cli.plots import write_tradeoff_plot

    write_tradeoff_plot(str(path), f"{data['game']}, bucket counts", _size_points(data), None, "--out",
                        value="exploitability_mbb_per_game",
                        value_label="exploitability, mbb/g (NashConv/2")


def _sizes_section(data: dict) -> list[str]:
    if not data.get("sizes"):
        return []
    lines = ["## Memory against exploitability across bucket counts", "",
             "![memory against exploitability](tradeoff.png)", "",
             "Each count is the flop, turn and river buckets (the preflop keeps its classes), solved for "
             f"--time ({data['solve_seconds_budget']:g} s) and evaluated as above; the staircase is the "
             "Pareto front (least exploitability at that memory or less).", "",
             "| buckets | rows | solver memory, 32-bit words | iterations | exploitability, mbb/g |",
             "|---|---:|---:|---:|---|"]
    points = [("this build", data["buckets"], data["rows"], data["solver_bytes"] // 4, data["iterations"],
               data["evaluation"])]
    points += [(str(p["size"]), p["buckets"], p["rows"], p["memory_words"], p["iterations"], p["evaluation"])
               for p in data["sizes"]]
    for _, buckets, rows, words, iterations, evaluation in points:
        value = (f"{evaluation['exploitability_mbb_per_game']:,.1f} (exact)" if evaluation["kind"] == "exact"
                 else f"{evaluation['lbr_mbb_per_game']:,.1f} (LBR, a lower bound)")
        lines.append(f"| {'-'.join(map(str, buckets))} | {rows:,} | {words:,} | {iterations:,} | {value} |")
    return [*lines, ""]


def _write_convergence_plot(path: Path, data: dict) -> None:
    points = [(h["cpu_seconds"], h["exploitability_mbb_per_game"]) for h in data["history"]
              if h["cpu_seconds"] > 0 and h["exploitability_mbb_per_game"] > 0]
    figure, axes = new_figure(figsize=(6, 4))
    axes.loglog([p[0] for p in points], [p[1] for p in points], marker="o", markersize=3, color="C0",
                label="sampled CFR+, exact best response")
    axes.set_xlabel("solver CPU time, seconds")
    axes.set_ylabel("exploitability, mbb/g (NashConv/2 per big blind)")
    axes.set_title(f"convergence on {data['game']}")
    axes.grid(True, which="both", alpha=0.3)
    axes.legend(fontsize=8)
    figure.tight_layout()
    save_figure(figure, str(path), "--out")


def _write_report(path: Path, data: dict, command: str) -> None:
    export, abstraction = data["export"], data["abstraction"]
    streets = "\n".join(f"| {street} | {facts['canonical_hands']:,} | {facts['buckets']:,} | "
                        f"{facts['method']} |" for street, facts in abstraction["streets"].items())
    matches = "\n".join(f"| always-{name} | {m['mbb_per_game']:+,.1f} | {m['ci95_mbb'][0]:+,.1f} to "
                        f"{m['ci95_mbb'][1]:+,.1f} | {m['boards']:,} |"
                        for name, m in data["matches"].items())
    if data["history"]:
        curve = ("![exploitability against CPU time](convergence.png)\n\nExact full-game best response at "
                 "1/32, 1/16, .. 1 of the time budget, as many as half of --eval-time pays for (against the "
                 "solver's CPU time only).")
    else:
        curve = (f"No convergence curve: one exact evaluation (estimated at "
                 f"{data['estimated_exact_seconds_at_start']:,.0f} CPU s) costs more than half of "
                 f"--eval-time ({data['eval_seconds_budget']:g} s), so the solve ran without stopping to "
                 f"measure.")
    played = ""
    if "exploitability_mbb_per_game" in export:
        played = (f" What the device plays ({data['bits']}-bit probabilities): "
                  f"{export['exploitability_mbb_per_game']:,.1f} mbb/g.")
    text = "\n".join([
        f"# {data['game']}: a card abstraction solved, measured and exported",
        "",
        f"**Verdict.** {data['verdict']}.",
        "",
        "## Card buckets",
        "",
        f"Bucket file `{abstraction['file']}` in {abstraction['seconds']:.1f} s:",
        "",
        "| street | canonical hands | buckets | method |",
        "|---|---:|---:|---|",
        streets,
        "",
        "## Solve",
        "",
        f"Sampled CFR+ (public chance sampling) for {data['solve_seconds_budget']:g} s: "
        f"{data['iterations']:,} iterations, {data['solve_cpu_seconds']:.1f} CPU s, {data['rows']:,} rows, "
        f"{data['solver_bytes']:,} bytes of solver arrays. The strategy and its solver state are in "
        f"`{STRATEGY_FILE}` (`efgkit solve {data['game']!r} --engine sampled --buckets "
        f"{abstraction['file']} --state {STRATEGY_FILE} --resume -n N` in this folder continues it).",
        "",
        curve,
        "",
        "## Exploitability",
        "",
        f"{_measured(data)}.{played}",
        "",
        "## Duplicate matches (each board in both seats, every pair of hands)",
        "",
        "| opponent | mbb/g | 95% interval | boards |",
        "|---|---:|---|---:|",
        matches,
        "",
        "## Export",
        "",
        f"`{EXPORT_FILE}`: {export['bytes']:,} bytes"
        + (f", with its bucket tables in `{export['bucket_tables_file']}` ({export['bucket_tables_bytes']:,} "
           f"bytes)" if export["bucket_tables_file"] else " (bucket tables inline)")
        + f"; largest rounding error of a probability {export['max_abs_error']:.2e}.",
        "",
        *_sizes_section(data),
    ])
    write_report(path, text, command)
