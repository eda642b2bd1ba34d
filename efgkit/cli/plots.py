"""The plots the commands write: a solve's convergence (``write_plot``: a history of
evaluations against iterations), and memory against exploitability (the CSV and the PNG that
`efgkit tradeoff` and `efgkit build` write).

In the latter each row is one evaluation of one run: a method (``setting``), a seed, the NashConv and
the solver memory in 32-bit words. The plot puts memory on a log x axis and NashConv on a
log y axis (better downward), per method the Pareto front of its points as a staircase,
one colour per method in every figure, a marker on each run's final point, and the
full-game solver state as a dotted vertical line under them.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path

from efgkit.cli.app import save_figure
from efgkit.errors import ParameterError
from efgkit.io.atomic import atomic_output_path


def new_figure(*args, **kwargs):
    """``matplotlib.pyplot.subplots(*args, **kwargs)`` drawn off screen (the Agg backend), for
    ``app.save_figure``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt.subplots(*args, **kwargs)


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


def write_report(path: Path, text: str, command: str) -> None:
    """Write a build's ``report.md``: ``text`` (ending in a blank line) and the command that
    reproduces it, atomically."""
    with atomic_output_path(path) as temporary:
        Path(temporary).write_text("\n".join([text, "## Reproduce", "", "```bash", command, "```", ""]))


def pareto_front(points: list[tuple[float, float]]) -> list[tuple[float, float]]:
    """(NashConv, memory) points not dominated by one with NashConv and memory both no
    larger, sorted by increasing NashConv (memory then decreases)."""
    front: list[tuple[float, float]] = []
    for nash_conv, memory in sorted(points, key=lambda p: (p[0], p[1])):
        if not front or memory < front[-1][1]:
            front.append((nash_conv, memory))
    return front


METHOD_COLOURS = (("CFR+IRA", "C0"), ("FPIRA", "C1"), ("CFR+ (full game)", "C2"), ("buckets", "C3"))
"""One colour per method in every figure (matched by a part of the label); others take C4..."""


def method_colours(labels: list[str]) -> dict[str, str]:
    """The colour of each method label: METHOD_COLOURS where one matches, else the next free."""
    colours, spare = {}, iter(f"C{k}" for k in range(4, 10))
    for label in labels:
        colours[label] = next((c for part, c in METHOD_COLOURS if part in label), None) or next(spare)
    return colours


def _log_ticks(axis) -> None:
    """Readable ticks on a log axis: 1, 2 and 5 times powers of ten, as plain numbers."""
    from matplotlib import ticker

    axis.set_major_locator(ticker.LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    axis.set_major_formatter(ticker.FuncFormatter(lambda v, _: f"{v:,.0f}" if v >= 1 else f"{v:.0e}"))
    axis.set_minor_formatter(ticker.NullFormatter())


def write_tradeoff_plot(path: str, title: str, rows: list[dict], reference_words: int | None,
                        option: str = "--plot", value: str = "nash_conv",
                        value_label: str = "NashConv (sum of best-response gains") -> None:
    """Memory (x, log) against NashConv (y, log, better downward; or another exploitability
    ``value`` of the rows, ``value_label`` its axis label without the closing parenthesis):
    per ``setting`` the Pareto front (the least NashConv reached with that memory or less) as
    a staircase, a marker at each run's final point; a NashConv of 0 is drawn at the bottom
    edge (a tenth of the least positive one) and said so in the axis label."""
    figure, axes = new_figure(figsize=(6.5, 4.5))
    positive = [r[value] for r in rows if r[value] > 0]
    floor = min(positive, default=1.0) / 10
    labels = list(dict.fromkeys(r["setting"] for r in rows))
    colours = method_colours(labels)
    if reference_words is not None:
        axes.axvline(reference_words, color="0.6", linestyle=":", linewidth=1.2, zorder=1,
                     label="full-game solver state")
    for label in labels:
        mine = [r for r in rows if r["setting"] == label]
        front = sorted(pareto_front([(max(r[value], floor), r["memory_words"]) for r in mine]),
                       key=lambda point: point[1])
        steps_x, steps_y = [], []
        for nash_conv, memory in front:  # memory increasing, NashConv decreasing
            if steps_x:
                steps_x.append(memory)
                steps_y.append(steps_y[-1])
            steps_x.append(memory)
            steps_y.append(nash_conv)
        steps_x.append(max(r["memory_words"] for r in mine))
        steps_y.append(steps_y[-1])
        axes.plot(steps_x, steps_y, color=colours[label], label=label, linewidth=1.6, zorder=2,
                  marker="." if len(front) == 1 else None)
        finals = {r["seed"]: r for r in mine}
        axes.scatter([r["memory_words"] for r in finals.values()],
                     [max(r[value], floor) for r in finals.values()], color=colours[label],
                     marker="o", edgecolor="black", zorder=3)
    axes.set_xscale("log")
    axes.set_yscale("log")
    _log_ticks(axes.xaxis)
    _log_ticks(axes.yaxis)
    axes.tick_params(axis="x", labelrotation=30)  # within a decade matplotlib labels every 1-2-5 step
    axes.set_xlabel("solver memory, 32-bit words")
    zero = f"; 0 drawn at {floor:.0e}" if any(r[value] <= 0 for r in rows) else ""
    axes.set_ylabel(f"{value_label}{zero})")
    axes.set_title(f"memory against exploitability: {title}")
    axes.grid(True, which="major", alpha=0.3)
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
    figure, axes = new_figure(figsize=(6, 4))
    points = [(h["iteration"], h[key]) for h in history if h.get(key, 0) > 0]  # a resumed run's kind only
    axes.loglog([p[0] for p in points], [p[1] for p in points], marker="o", markersize=3)
    axes.set_xlabel("iterations")
    axes.set_ylabel(PLOTTED[key])
    axes.set_title(f"{algorithm} on {spec}")
    axes.grid(True, which="both", alpha=0.3)
    figure.tight_layout()
    save_figure(figure, path, "--plot")
