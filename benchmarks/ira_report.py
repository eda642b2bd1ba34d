"""Turn benchmarks/results/ira-*.jsonl (written by bench_ira.py) into docs/results-ira.md and PNGs.

Only the part between the ``<!-- generated:start -->`` and ``<!-- generated:end -->``
markers is rewritten, so the hand-written discussion around it survives.
"""

from __future__ import annotations

import json
import math
from collections import defaultdict
from pathlib import Path

START, END = "<!-- generated:start -->", "<!-- generated:end -->"
PAPER_FINAL_SIZES = {("kuhn", "FPIRA"): 12, ("kuhn(cards=5)", "FPIRA"): 17, ("GS3", "FPIRA"): 20,
                     ("kuhn", "B10H90"): 11, ("kuhn(cards=5)", "B10H90"): 16, ("GS3", "B10H90"): 16}


VARIANTS = ("paper", "reference", "reference, first-action start", "paper, GP payoffs reference",
            "reference, GP payoffs reference", "reference, first-action start, GP payoffs reference")
ISSUE_ROWS = (  # docs/results-ira.md "Both conventions": (game, setting, quantity, paper's value)
    ("GP5", "B10H90", "percent", 9.5), ("GP5", "B10H90", "map entries", 10.7),
    ("GP6", "B100H900", "percent", 2.0), ("GP5", "FPIRA", "percent", 19.6),
    ("GS5", "FPIRA", "percent", 15.6), ("P222", "FPIRA", "percent", 42.9),
    ("GS5", "B10H90", "percent", 3.1), ("P222", "B10H90", "percent", 14.9),
    ("GS6", "B100H900", "percent", 2.4), ("P224", "B100H900", "percent", 0.9),
    ("GS3", "B10H90", "final", 16), ("kuhn(cards=5)", "B10H90", "final", 16),
    ("kuhn", "B10H90", "final", 11), ("GS3", "FPIRA", "final", 20),
    ("kuhn(cards=5)", "FPIRA", "final", 17), ("kuhn", "FPIRA", "final", 12),
)


def _variant(record: dict) -> str:
    """Which conventions a record ran under (bench_ira --conventions, --payoffs). CFR+IRA
    runs that started every set on its first action, as the reference code's ``IRCFRData``
    does (measured in issue 34's second pass, not part of "reference"), carry
    ``"first_action_start": true``."""
    name = record.get("conventions", "paper")
    if record.get("first_action_start"):
        name += ", first-action start"
    if record.get("payoffs", "paper") != "paper":
        name += ", GP payoffs reference"
    return name


def _issue_cell(runs: list[dict], quantity: str) -> str:
    if not runs:
        return "-"
    infosets = runs[0]["original_infosets"]
    if quantity == "final":
        sizes = [r["history"][-1]["abstract_infosets"] for r in runs]
        return f"{sum(sizes) / len(sizes):.1f} ({min(sizes)}-{max(sizes)}, {len(runs)} runs)"
    reached = [h for h in (_first_below(r["history"], 0.05) for r in runs) if h]
    if not reached:
        last = min(runs, key=lambda r: r["history"][-1]["nash_conv"])["history"][-1]
        return (f"not reached ({len(runs)} runs): NashConv {last['nash_conv']:.3g} at "
                f"{100 * last['abstract_infosets'] / infosets:.1f}% after {last['iteration']:,} it")
    field = "abstract_infosets" if quantity == "percent" else "map_entries"
    return f"{_mean_se([100 * h[field] / infosets for h in reached])} ({len(reached)}/{len(runs)})"


def _issue_table(records: list[dict]) -> list[str]:
    groups = defaultdict(list)
    for record in records:
        groups[(record["game"], record["setting"], _variant(record))].append(record)
    used = [v for v in VARIANTS if any(key[2] == v for key in groups)]
    rows = ["| game | algorithm | quantity | paper | " + " | ".join(f"ours: {v}" for v in used) + " |",
            "|---|---|---|---|" + "---|" * len(used)]
    for game, setting, quantity, paper in ISSUE_ROWS:
        label = {"percent": "% infosets at 0.05", "map entries": "map entries % at 0.05",
                 "final": "final abstract infosets at 0.001"}[quantity]
        cells = [_issue_cell(groups.get((game, setting, v), []), quantity) for v in used]
        rows.append(f"| {game} | {setting} | {label} | {paper} | " + " | ".join(cells) + " |")
    return rows


def _load(folder: Path) -> list[dict]:
    return [json.loads(line) for path in sorted(folder.glob("ira-*.jsonl"))
            for line in path.read_text().splitlines() if line.strip()]


def _first_below(history: list[dict], target: float) -> dict | None:
    return next((h for h in history if h["nash_conv"] <= target), None)


def _number(value: float) -> str:
    return f"{value:,.0f}" if abs(value) >= 1000 else f"{value:.3g}"


def _mean_se(values: list[float]) -> str:
    if not values:
        return "-"
    mean = sum(values) / len(values)
    if len(values) == 1:
        return _number(mean)
    variance = sum((v - mean) ** 2 for v in values) / (len(values) - 1)
    return f"{_number(mean)} ± {_number(math.sqrt(variance / len(values)))}"


def _reach_table(records: list[dict], paper: dict) -> list[str]:
    groups = defaultdict(list)
    for record in records:
        groups[(record["game"], record["setting"])].append(record)
    rows = ["| game | algorithm | runs | % infosets at 0.05 (paper) | iterations to 0.05 | "
            "seconds to 0.05 | words at 0.05 | map entries at 0.05 (% of infosets) | "
            "seconds to 0.01 | % infosets at 0.01 | peak RSS MB (after tree build) |",
            "|---|---|---|---|---|---|---|---|---|---|---|"]
    for (game, setting), runs in sorted(groups.items()):
        infosets = runs[0]["original_infosets"]
        at_05 = [_first_below(r["history"], 0.05) for r in runs]
        at_01 = [_first_below(r["history"], 0.01) for r in runs]
        reached = [h for h in at_05 if h]
        reached_01 = [h for h in at_01 if h]
        paper_value = paper.get((game, setting))
        rows.append(
            f"| {game} | {setting} | {len(reached)}/{len(runs)} reached | "
            f"{_mean_se([100 * h['abstract_infosets'] / infosets for h in reached])} "
            f"({paper_value if paper_value is not None else '-'}) | "
            f"{_mean_se([h['iteration'] for h in reached])} | "
            f"{_mean_se([h['seconds'] for h in reached])} | "
            f"{_mean_se([h['memory_words'] for h in reached])} | "
            f"{_mean_se([100 * h['map_entries'] / infosets for h in reached])} | "
            f"{_mean_se([h['seconds'] for h in reached_01])} ({len(reached_01)}/{len(runs)}) | "
            f"{_mean_se([100 * h['abstract_infosets'] / infosets for h in reached_01])} | "
            f"{_mean_se([r['peak_rss_mb'] for r in runs])} "
            f"({_mean_se([r['rss_after_build_mb'] for r in runs])}) |"
        )
    return rows


def _curves(records: list[dict], docs: Path) -> list[str]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    lines = []
    games = sorted({r["game"] for r in records})
    for game in games:
        runs = [r for r in records if r["game"] == game]
        figure, axes = plt.subplots(1, 3, figsize=(15, 4))
        for run in runs:
            history = [h for h in run["history"] if h["nash_conv"] > 0 and h["iteration"] > 0]
            label = run["setting"]
            axes[0].loglog([h["iteration"] for h in history], [h["nash_conv"] for h in history],
                           label=label)
            axes[1].loglog([max(h["seconds"], 1e-3) for h in history],
                           [h["nash_conv"] for h in history], label=label)
            axes[2].loglog([h["nash_conv"] for h in history],
                           [100 * h["abstract_infosets"] / run["original_infosets"]
                            for h in history], label=label)
        axes[0].set_xlabel("iterations")
        axes[1].set_xlabel("seconds (iterating, one core)")
        for ax in axes[:2]:
            ax.set_ylabel("NashConv")
        axes[2].invert_xaxis()
        axes[2].set_xlabel("NashConv")
        axes[2].set_ylabel("abstract infosets, % of original")
        for ax in axes:
            ax.grid(True, which="both", alpha=0.3)
        axes[0].legend(fontsize=8)
        figure.suptitle(f"CFR+ and CFR+IRA (BxHy: k_b = x, k_h = y) on {game}")
        figure.tight_layout()
        name = f"img/ira-curves-{game}.png"
        (docs / "img").mkdir(exist_ok=True)
        figure.savefig(docs / name, dpi=110)
        plt.close(figure)
        lines.append(f"![{game} curves]({name})")
    return lines


def _qualitative(records: list[dict]) -> list[str]:
    groups = defaultdict(list)
    for record in records:
        groups[(record["game"], record["setting"])].append(record["history"][-1])
    rows = ["| game | algorithm | final abstract infosets (mean, min-max over runs) | paper | "
            "final NashConv |", "|---|---|---|---|---|"]
    for (game, setting), finals in sorted(groups.items()):
        sizes = [f["abstract_infosets"] for f in finals]
        rows.append(f"| {game} | {setting} | {sum(sizes) / len(sizes):.1f} ({min(sizes)}-"
                    f"{max(sizes)}) | {PAPER_FINAL_SIZES.get((game, setting), '-')} | "
                    f"{max(f['nash_conv'] for f in finals):.2g} |")
    return rows


def _overhead(records: list[dict]) -> list[str]:
    per_iteration = {(r["game"], r["setting"]): r["history"][-1]["seconds"]
                     / max(r["history"][-1]["iteration"], 1) for r in records}
    rows = ["| game | CFR+ ms/iteration | B10H90 ms/it (ratio) | B100H900 ms/it (ratio) |",
            "|---|---|---|---|"]
    for game in sorted({g for g, _ in per_iteration}):
        base = per_iteration.get((game, "CFR+"))
        cells = []
        for setting in ("B10H90", "B100H900"):
            value = per_iteration.get((game, setting))
            cells.append("-" if value is None or base is None
                         else f"{1e3 * value:.2f} ({value / base:.2f}x)")
        rows.append(f"| {game} | {1e3 * base:.2f} | {cells[0]} | {cells[1]} |" if base else
                    f"| {game} | - | {cells[0]} | {cells[1]} |")
    return rows


def write_report(results: Path, docs: Path, paper: dict) -> None:
    everything = _load(results)
    records = [r for r in everything if _variant(r) == "paper"]
    by_part = defaultdict(list)
    for record in records:
        by_part[record["part"]].append(record)
    body = [START, ""]
    if len(records) < len(everything):
        body += ["### The issue's rows under both conventions (paper's text, reference code)", "",
                 "Mean ± standard error over the runs that reached NashConv 0.05 (reached/runs); "
                 "conventions as in `docs/conventions.md`, \"FPIRA and CFR+IRA\".", "",
                 *_issue_table([r for r in everything if r["part"] in ("small", "fpira", "large",
                                                                        "qualitative")]), ""]
    if by_part["small"] or by_part["fpira"] or by_part["large"]:
        body += ["### Abstraction size, time and memory at NashConv 0.05 and 0.01", "",
                 *_reach_table(by_part["small"] + by_part["fpira"] + by_part["large"], paper), ""]
    if by_part["qualitative"]:
        body += ["### Final abstraction sizes (NashConv target 0.001)", "",
                 *_qualitative(by_part["qualitative"]), ""]
    if by_part["overhead"]:
        body += ["### Time per iteration against plain CFR+ (same tree, 300 iterations)", "",
                 *_overhead(by_part["overhead"]), ""]
    if by_part["curves"]:
        body += ["### Convergence curves", "", *_curves(by_part["curves"], docs), ""]
    body.append(END)
    target = docs / "results-ira.md"
    text = target.read_text() if target.exists() else f"# FPIRA and CFR+IRA results\n\n{START}\n{END}\n"
    head, _, rest = text.partition(START)
    _, _, tail = rest.partition(END)
    target.write_text(head + "\n".join(body) + tail)
