"""The plots the commands write: a solve's convergence (``write_plot``: a history of
evaluations against iterations), and memory against exploitability (the CSV and the PNG that
`efgkit tradeoff` and `efgkit build` write).

In the latter each row is one evaluation of one run: a method (``setting``), a seed, the NashConv and
the solver memory in 32-bit words. The plot draws, per method, the Pareto front of its
points (the least memory reached at each NashConv or better), one colour per method,
a marker on each run's final point, and NashConv 0 at the left edge of a symmetric-log
axis instead of dropping it from a log axis.
"""

from __future__ import annotations

import csv
import io
import math
from pathlib import Path

from efgkit.cli.app import save_figure
from efgkit.errors import ParameterError
from efgkit.io.atomic import atomic_output_path


def write_rows_csv(path: str, rows: list[dict], option: str) -> None:
    """Write dict rows (keys of the first row as the header) atomically."""
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=list(rows[0]))
    writer.writeheader()
    writer.writerows(rows)
    try:
        with atomic_output_path(path) as temporary:
            Path(temporary).write_text(buffer.getvalue())
    except OSError as exc:
        raise ParameterError(f"{option} {path}: cannot write ({exc})") from exc


def pareto_front(points: list[tuple[float, float]]) -> list[tuple[float, float]]:
    """(NashConv, memory) points not dominated by one with NashConv and memory both no
    larger, sorted by increasing NashConv (memory then decreases)."""
    front: list[tuple[float, float]] = []
    for nash_conv, memory in sorted(points, key=lambda p: (p[0], p[1])):
        if not front or memory < front[-1][1]:
            front.append((nash_conv, memory))
    return front


def write_tradeoff_plot(path: str, title: str, rows: list[dict], reference_words: int | None,
                        option: str = "--plot") -> None:
    """Pareto fronts of memory against NashConv per ``setting`` (see the module docstring)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(figsize=(6.5, 4.5))
    positive = [r["nash_conv"] for r in rows if r["nash_conv"] > 0]
    floor = min(positive, default=1.0) / 10
    for number, label in enumerate(dict.fromkeys(r["setting"] for r in rows)):
        color = f"C{number}"
        mine = [r for r in rows if r["setting"] == label]
        front = pareto_front([(r["nash_conv"], r["memory_words"]) for r in mine])
        # The least memory at NashConv <= x, from the method's best NashConv to its worst:
        # a staircase, memory dropping where a cheaper point becomes reachable.
        steps_x, steps_y = [front[0][0]], [front[0][1]]
        for nash_conv, memory in front[1:]:
            steps_x += [nash_conv, nash_conv]
            steps_y += [steps_y[-1], memory]
        steps_x.append(max(r["nash_conv"] for r in mine))
        steps_y.append(steps_y[-1])
        axes.plot(steps_x, steps_y, color=color, label=label)
        finals = {}
        for r in mine:
            finals[r["seed"]] = r
        axes.scatter([r["nash_conv"] for r in finals.values()],
                     [r["memory_words"] for r in finals.values()], color=color, marker="o",
                     edgecolor="black", zorder=3)
    if reference_words is not None:
        axes.axhline(reference_words, color="black", linestyle="--", linewidth=0.8,
                     label="full-game solver state")
    axes.set_xscale("symlog", linthresh=floor)
    worst = max(r["nash_conv"] for r in rows)
    axes.set_xlim(2 * worst, 0)  # inverted: better to the right, NashConv 0 at the edge
    decades = range(math.ceil(math.log10(10 * floor)), math.floor(math.log10(worst)) + 1) if (
        worst > 0) else range(0)
    axes.set_xticks([0.0] + [10.0 ** k for k in decades])
    axes.set_xticklabels(["0"] + [f"1e{k}" for k in decades])
    axes.set_yscale("log")
    axes.set_xlabel(f"NashConv (sum of both best-response gains; linear below {floor:.0e})")
    axes.set_ylabel("solver memory, 32-bit words")
    axes.set_title(f"memory against exploitability: {title}")
    axes.grid(True, which="both", alpha=0.3)
    axes.legend(fontsize=8)
    figure.tight_layout()
    save_figure(figure, path, option)


PLOTTED = {"nash_conv": "NashConv (sum of best-response gains)",
           "exploitability_mbb_per_game": "exploitability, mbb/g (NashConv/2 per big blind)",
           "lbr_mbb_per_game": "local best response, mbb/g (a lower bound on exploitability)",
           "abstract_nash_conv": "NashConv in the abstract game",
           "abstract_exploitability_mbb_per_game": "exploitability in the abstract game, mbb/g"}
"""History fields ``write_plot`` draws, and their axis labels."""


def write_plot(path: str, spec: str, algorithm: str, history: list[dict], key: str = "nash_conv") -> None:
    """Log-log PNG of ``history``'s ``key`` (``PLOTTED``) against iterations."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(figsize=(6, 4))
    points = [(h["iteration"], h[key]) for h in history if h.get(key, 0) > 0]  # a resumed run's kind only
    axes.loglog([p[0] for p in points], [p[1] for p in points], marker="o", markersize=3)
    axes.set_xlabel("iterations")
    axes.set_ylabel(PLOTTED[key])
    axes.set_title(f"{algorithm} on {spec}")
    axes.grid(True, which="both", alpha=0.3)
    figure.tight_layout()
    save_figure(figure, path, "--plot")
