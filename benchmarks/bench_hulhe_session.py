"""A 52-card HULHE abstraction solved for a whole session (issue 33), measured against time.

``--run``: sampled CFR+ (``efgkit solve holdem --engine sampled``, float32, a checkpoint every
300 s) in chunks of ``--chunk-seconds`` until ``--hours`` have passed, each chunk a child process
resuming the solver state ``S.h5`` of the one before (bit-identical to one long run); after each
chunk the state is copied to ``snap_K.h5`` and evaluated in the background, at ``nice 5``, by
local best response (``efgkit evaluate holdem snap_K.h5 --lbr BOARDS``: a lower bound on
exploitability with a 95% interval, the same boards for every snapshot) and, with
``--sample-flops F``, by the best response after the flop over F sampled flops (``--sample-flops``:
the other lower bound, the same flops for every snapshot). Every child's CPU time and peak RSS
(``os.wait4``) go to ``rusage_*.json`` beside its JSON output (Linux counts the forking parent's
resident pages in a child's peak: this script imports nothing of efgkit, so that is a few MiB).

``--report``: the table (iterations, solving time, LBR with its interval, CPU time and peak RSS of
each step) into docs/holdem.md (section ``hulhe-session``) and the plot of LBR against solving
time into docs/img/hulhe-session.png.

    python benchmarks/bench_hulhe_session.py --run --dir D --buckets h1000.h5 --hours 2.2
    python benchmarks/bench_hulhe_session.py --report --dir D
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from markdown_sections import update_section

ROOT = Path(__file__).resolve().parent.parent


def _child(command: list[str], stdout: Path, rusage: Path, nice: int = 0) -> subprocess.Popen:
    """Start ``command`` with its stdout in ``stdout``; ``_reap`` writes its rusage."""
    with stdout.open("w") as out:  # the child holds its own copy of the descriptor
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.DEVNULL,
                                   preexec_fn=(lambda: os.nice(nice)) if nice else None)
    process.rusage_path = rusage
    return process


def _reap(process: subprocess.Popen) -> int:
    """Wait for ``process`` and write its CPU seconds and peak RSS (MiB) to its rusage file."""
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    process.rusage_path.write_text(json.dumps({
        "cpu_seconds": usage.ru_utime + usage.ru_stime, "peak_mb": usage.ru_maxrss / 1024,
        "exit": process.returncode}))
    return process.returncode


def run(directory: Path, buckets: str, hours: float, chunk_seconds: float, boards: int,
        flops: int | None) -> None:
    efgkit = [sys.executable, "-m", "efgkit"]
    end = time.time() + hours * 3600
    evaluations = []
    chunk = len(list(directory.glob("solve_*.json")))
    while (left := end - time.time()) >= 120:
        command = efgkit + ["solve", "holdem", "--engine", "sampled", "--buckets", buckets, "-a", "cfr+",
                            "-n", "100000000", "--state", "S.h5", "--checkpoint-seconds", "300",
                            "--precision", "float32", "--time", f"{min(left, chunk_seconds):.0f}", "--json"]
        command += ["--resume"] if (directory / "S.h5").exists() else []
        solve = _child(command, directory / f"solve_{chunk}.json", directory / f"rusage_solve_{chunk}.json")
        if _reap(solve):
            raise SystemExit(f"chunk {chunk} failed: {directory / f'solve_{chunk}.json'}")
        shutil.copyfile(directory / "S.h5", directory / f"snap_{chunk}.h5")
        lbr = efgkit + ["evaluate", "holdem", f"snap_{chunk}.h5", "--lbr", str(boards), "--json"]
        usage = directory / f"rusage_lbr_{chunk}.json"
        evaluations.append(_child(lbr, directory / f"lbr_{chunk}.json", usage, nice=5))
        if flops:
            post = efgkit + ["evaluate", "holdem", f"snap_{chunk}.h5", "--sample-flops", str(flops), "--json"]
            evaluations.append(_child(post, directory / f"post_{chunk}.json",
                                      directory / f"rusage_post_{chunk}.json", nice=5))
        chunk += 1
    for process in evaluations:
        _reap(process)


def _load(path: Path) -> dict:
    return json.loads(path.read_text()) if path.exists() and path.stat().st_size else {}


def steps(directory: Path) -> list[dict]:
    """Per chunk: the solve's and its snapshot's evaluations' JSON and rusage (a resumed solve's
    ``iterations`` and ``seconds`` count from the start of the run)."""
    rows = []
    for chunk in range(len(list(directory.glob("solve_*.json")))):
        solve = _load(directory / f"solve_{chunk}.json")
        if not solve:  # still running
            break
        rows.append({"chunk": chunk, "iterations": solve["iterations"], "solving_seconds": solve["seconds"],
                     "solve_usage": _load(directory / f"rusage_solve_{chunk}.json"),
                     "lbr": _load(directory / f"lbr_{chunk}.json"),
                     "lbr_usage": _load(directory / f"rusage_lbr_{chunk}.json"),
                     "post": _load(directory / f"post_{chunk}.json"),
                     "post_usage": _load(directory / f"rusage_post_{chunk}.json")})
    return rows


INTERVALS = {"lbr": ("lbr_mbb_per_game", lambda e: (e["lbr_ci95_low_mbb"], e["lbr_ci95_high_mbb"])),
             "post": ("postflop_exploitability_mbb_per_game",
                      lambda e: e["postflop_exploitability_ci95_mbb"])}
"""Per evaluation: its mean's field and its 95% interval."""


def _series(axis, rows: list[dict], key: str, label: str, marker: str) -> None:
    """One lower bound against solving time, with its 95% intervals and iteration labels."""
    done = [r for r in rows if r[key]]
    if not done:
        return
    field, interval = INTERVALS[key]
    hours = [r["solving_seconds"] / 3600 for r in done]
    mean = [r[key][field] for r in done]
    low, high = zip(*(interval(r[key]) for r in done), strict=True)
    axis.errorbar(hours, mean, yerr=[[m - lo for m, lo in zip(mean, low, strict=True)],
                                     [hi - m for m, hi in zip(mean, high, strict=True)]],
                  marker=marker, capsize=3, label=label)
    for h, m, r in zip(hours, mean, done, strict=True):
        axis.annotate(f"{r['iterations']:,} it.", (h, m), textcoords="offset points", xytext=(4, 6),
                      fontsize=8)


def plot(rows: list[dict], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axis = plt.subplots(figsize=(6.4, 4.2))
    boards = next((r["lbr"]["boards"] for r in rows if r["lbr"]), 0)
    flops = next((r["post"]["sampled_flops"] for r in rows if r["post"]), 0)
    _series(axis, rows, "lbr", f"local best response, {boards} boards", "o")
    _series(axis, rows, "post", f"best response after the flop, {flops} flops", "s")
    axis.axhline(0, color="grey", linewidth=0.8)
    axis.set_xlabel("solving time (hours, one core)")
    axis.set_ylabel("mbb/g (lower bounds on exploitability, 95% CI)")
    axis.set_title("52-card HULHE, 169-1000-1000-1000 buckets, sampled CFR+", fontsize=10)
    axis.legend(fontsize=8)
    figure.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=120)
    plt.close(figure)


def report(directory: Path, buckets: str) -> None:
    rows = steps(directory)
    lines = ["| chunk | iterations | solving time (s) | it/s | solve: CPU s, peak MiB "
             "| LBR mbb/g (95% interval) | LBR seats 0 / 1 | LBR: CPU s, peak MiB "
             "| post-flop bound mbb/g (95% interval; flops) | post-flop: CPU s, peak MiB |",
             "|---:|---:|---:|---:|---|---|---|---|---|---|"]
    previous = (0, 0.0)
    for r in rows:
        usage, lbr, lbr_usage = r["solve_usage"], r["lbr"], r["lbr_usage"]
        rate = (r["iterations"] - previous[0]) / (r["solving_seconds"] - previous[1])
        previous = (r["iterations"], r["solving_seconds"])
        cells = [str(r["chunk"]), f"{r['iterations']:,}", f"{r['solving_seconds']:,.0f}", f"{rate:.2f}",
                 f"{usage.get('cpu_seconds', 0):,.0f}, {usage.get('peak_mb', 0):,.0f}"]
        if lbr:
            cells += [f"{lbr['lbr_mbb_per_game']:.1f} ({lbr['lbr_ci95_low_mbb']:.1f} to "
                      f"{lbr['lbr_ci95_high_mbb']:.1f})",
                      " / ".join(f"{s:.1f}" for s in lbr["lbr_seat_mbb_per_game"]),
                      f"{lbr_usage.get('cpu_seconds', 0):,.0f}, {lbr_usage.get('peak_mb', 0):,.0f}"]
        else:
            cells += ["not run", "", ""]
        post, post_usage = r["post"], r["post_usage"]
        if post:
            low, high = post["postflop_exploitability_ci95_mbb"]
            cells += [f"{post['postflop_exploitability_mbb_per_game']:.1f} ({low:.1f} to {high:.1f}; "
                      f"{post['sampled_flops']})",
                      f"{post_usage.get('cpu_seconds', 0):,.0f}, {post_usage.get('peak_mb', 0):,.0f}"]
        else:
            cells += ["not run", ""]
        lines.append("| " + " | ".join(cells) + " |")
    figure = ROOT / "docs" / "img" / "hulhe-session.png"
    plot(rows, figure)
    text = "\n".join([
        "### A session-long solve (`benchmarks/bench_hulhe_session.py`)",
        "",
        f"`bench_hulhe_session.py --run --buckets {buckets}`: sampled CFR+ in chunks, each chunk's state "
        "evaluated by LBR (every action, 100 rollouts, seed 0: the same boards for every snapshot) "
        "beside the next chunk. Solving time is the solver's own (checkpoints included); CPU seconds "
        "and peak RSS are each child process's.",
        "",
        *lines,
        "",
        "![LBR against solving time](img/hulhe-session.png)",
    ])
    update_section(ROOT / "docs" / "holdem.md", "hulhe-session", text)
    print(text)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dir", type=Path, required=True)
    parser.add_argument("--buckets", default="h1000.h5", help="the bucket file, relative to --dir")
    parser.add_argument("--hours", type=float, default=2.0)
    parser.add_argument("--chunk-seconds", type=float, default=1800)
    parser.add_argument("--lbr", type=int, default=300, help="boards per LBR evaluation")
    parser.add_argument("--sample-flops", type=int, default=None,
                        help="flops per post-flop best-response evaluation (default: none)")
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--run", action="store_true")
    mode.add_argument("--report", action="store_true")
    args = parser.parse_args()
    if args.run:
        os.chdir(args.dir)
        run(Path("."), args.buckets, args.hours, args.chunk_seconds, args.lbr, args.sample_flops)
    else:
        report(args.dir, args.buckets)


if __name__ == "__main__":
    main()
