"""The benchmark's results as the Markdown table between the markers of benchmarks/README.md."""

from __future__ import annotations

import os
from datetime import UTC, datetime
from pathlib import Path

README = Path(__file__).resolve().parent / "README.md"
START, END = "<!-- results:start -->", "<!-- results:end -->"


def table(rows: list[dict], torch_s: float, cold_s: float, versions: str = "") -> str:
    """The results: the torch import and cold grade, then one row per class size."""
    load = ", ".join(f"{v:.1f}" for v in os.getloadavg())
    lines = [
        f"Measured {datetime.now(UTC).isoformat(timespec='minutes')} on {os.cpu_count()} cores "
        f"(load average before the run: {rows[0]['load'] if rows else load}){versions}.",
        "",
        f'* `python -c "import torch"`: {torch_s:.1f} s; cold `autograder grade` of one '
        f"submission: {cold_s:.1f} s ({cold_s / torch_s:.1f}x the torch import; target 1.5x).",
        "",
        "| N | ours: wall s | ours: s / submission | ours: peak MB "
        "| nbgrader: wall s | nbgrader: s / submission | nbgrader: peak MB | nbgrader / ours "
        "| otter: wall s | otter: s / submission | otter: peak MB | otter / ours |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        ours = r["ours"]
        per_ours = ours.seconds / r["n"]
        cells = [f"{r['n']}", f"{ours.seconds:.1f}", f"{per_ours:.2f}", f"{ours.peak_mb:.0f}"]
        for other in (r["nbgrader"], r["otter"]):
            if other.ok:
                per = other.seconds / r["n"]
                cells += [
                    f"{other.seconds:.1f}",
                    f"{per:.2f}",
                    f"{other.peak_mb:.0f}",
                    f"{per / per_ours:.1f}x",
                ]
            else:
                cells += ["n/a", "n/a", "n/a", f"not run: {other.note}"]
        lines.append("| " + " | ".join(cells) + " |")
    lines += marginal(rows)
    return "\n".join(lines)


def marginal(rows: list[dict]) -> list[str]:
    """Per pair of consecutive sizes measured by a system: (wall(N2) - wall(N1)) / (N2 - N1),
    the time one more submission costs once the start-up (imports, fork servers, collection)
    and the class report are paid; with the ratios to ours over the same pair."""
    lines = []
    for before, after in zip(rows, rows[1:], strict=False):
        span = after["n"] - before["n"]
        ours = (after["ours"].seconds - before["ours"].seconds) / span
        parts = [f"ours {ours:.2f} s"]
        for name in ("nbgrader", "otter"):
            if before[name].ok and after[name].ok:
                other = (after[name].seconds - before[name].seconds) / span
                parts.append(f"{name} {other:.2f} s ({other / ours:.1f}x ours)")
        lines.append(
            f"* Marginal time per submission from N = {before['n']} to {after['n']}: "
            + "; ".join(parts)
            + "."
        )
    return [""] + lines if lines else []


def write_readme(text: str) -> None:
    """Put text between the README's result markers, leaving the rest of it as it was."""
    readme = README.read_text(encoding="utf-8")
    head, _, rest = readme.partition(START)
    _, _, tail = rest.partition(END)
    README.write_text(f"{head}{START}\n{text}\n{END}{tail}", encoding="utf-8")
