"""The similarity check's output files: similarity.csv and similarity.html.

The similarity check's files: DIR/similarity.csv (every pair compared) and
DIR/similarity.html (the flagged pairs, their code side by side with the shared parts marked).

The page is self-contained (no file from elsewhere) and escapes every learner text. A high
similarity is a reason to look, not a verdict: the page says so, and shows what is shared.
"""

from __future__ import annotations

import html
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from autograder.atomic_files import atomic_write_text
from autograder.copies import judge
from autograder.copies.judge import Pair
from autograder.copies.measure import MIN_TOKENS
from autograder.copies.similarity_file import (
    CSV_COLUMNS,
    CSV_FILE,
    FLAGGED,
    HTML_FILE,
    STAMP_FILE,
    WHOLE,
)
from autograder.learner_text import csv_text

PAGE_INTRO = (
    "Each pair of graded learners was compared with copydetect (winnowing over normalised "
    "tokens: names, comments and layout do not count), component by component and on the whole "
    "package ({whole}), with the released stubs left out. A pair is flagged when it stands far "
    "above what the class's learners share anyway (its component's cut, below). A flag is a "
    "reason to read the code, not a verdict: the shared parts are marked below."
)
SKIPPED = "Not compared ({why}): {who}."
CONVERGED = (
    "Components whose independent solutions converge (their pairs' median similarity is "
    "{median:g} or more), so that their pairs are flagged only with the same pair flagged on the "
    "whole package: {components}."
)
NO_SOURCE = "graded before grade-class kept their source; grade them again with --regrade"
TOO_LITTLE = (
    f"too little code of their own on the whole package: fewer than {MIN_TOKENS} tokens beyond "
    "the released stubs"
)
NOT_GRADED = "no grade, so no graded code: an error, nothing to grade, or not graded yet"
NO_CUT = (
    "no pair: its pairs are so alike that the cut ({value:.2f}) is above 1, the highest "
    "similarity there is"
)
COMPARED = (
    "A learner is compared in a component only with {tokens} tokens or more of their own code "
    "in its module (the stubs left out), so a component can count fewer learners than the "
    "whole package."
)
STYLE = """
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;max-width:90rem;
margin:1.5rem auto;padding:0 1rem;color:#1f2328;line-height:1.45}
table{border-collapse:collapse;font-size:.92rem}td,th{border:1px solid #d0d7de;padding:.2rem .5rem}
th{background:#f6f8fa;text-align:left}.pair{display:grid;grid-template-columns:1fr 1fr;gap:1rem}
.pair>div{min-width:0}
pre{background:#f6f8fa;padding:.5rem;overflow:auto;font-size:.8rem;max-height:40rem}
.shared{background:#ffd8b5}h2{border-bottom:1px solid #d0d7de;margin-top:2rem}
"""


@dataclass
class Check:
    """One similarity check: the judged pairs, each component's cut, the documents compared
    ({learner: {component: text}}), the copied slices of the whole package's pairs ("a b":
    [slices of a, slices of b]) and the learners left out, by why."""

    course: str
    pairs: list[Pair]
    cuts: dict[str, float]
    documents: dict[str, dict[str, str]]
    slices: dict[str, list]
    skipped: dict[str, list[str]] = field(default_factory=dict)
    stamp: dict[str, str] = field(default_factory=dict)  # learner: graded_at of the record read
    converged: list[str] = field(default_factory=list)  # judge.converged components


def write(out: Path, check: Check) -> None:
    """similarity.csv, similarity.html and the stamp the class report compares records with."""
    atomic_write_text(Path(out) / CSV_FILE, render_csv(check.pairs))
    atomic_write_text(Path(out) / HTML_FILE, render_html(check))
    atomic_write_text(Path(out) / STAMP_FILE, json.dumps(check.stamp, sort_keys=True) + "\n")


def render_csv(pairs: Sequence[Pair]) -> str:
    """similarity.csv's text: a row per pair (csv_text: no cell a spreadsheet would run)."""
    rows = [
        [
            p.learner_a,
            p.learner_b,
            p.component,
            f"{p.similarity:.4f}",
            FLAGGED if p.flagged else "no",
        ]
        for p in pairs
    ]
    return csv_text([CSV_COLUMNS, *rows])


def _e(text: object) -> str:
    return html.escape(str(text))


def _summary(check: Check) -> list[str]:
    whole = [p for p in check.pairs if p.component == WHOLE]
    learners = {p.learner_a for p in whole} | {p.learner_b for p in whole}
    parts = [f"<p>{_e(PAGE_INTRO.format(whole=WHOLE))}</p>"]
    parts.append(f"<p>{len(learners)} learners, {len(whole)} pairs on the whole package.</p>")
    for why, who in check.skipped.items():
        if who:
            parts.append(f"<p>{_e(SKIPPED.format(why=why, who=', '.join(who)))}</p>")
    if check.converged:
        line = CONVERGED.format(median=judge.CONVERGED, components=", ".join(check.converged))
        parts.append(f"<p>{_e(line)}</p>")
    parts.append(_cut_table(check))
    return parts


def _cut_table(check: Check) -> str:
    """Each component's learners compared (and who not), pairs, cut and pairs flagged."""
    rows = []
    for component, value in check.cuts.items():
        among = [p for p in check.pairs if p.component == component]
        learners = {p.learner_a for p in among} | {p.learner_b for p in among}
        left_out = ", ".join(sorted(set(check.documents) - learners)) or "none"
        cells = (
            component,
            len(learners),
            left_out,
            len(among),
            _cut_text(value),
            sum(p.flagged for p in among),
        )
        rows.append("<tr>" + "".join(f"<td>{_e(cell)}</td>" for cell in cells) + "</tr>")
    heads = ("Component", "Learners compared", "Not compared", "Pairs", "Flagged from", "Flagged")
    head = "".join(f"<th>{h}</th>" for h in heads)
    return (
        f"<h2>Cut per component</h2><p>{_e(COMPARED.format(tokens=MIN_TOKENS))}</p>"
        f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>"
    )


def _cut_text(value: float) -> str:
    return f"{value:.2f}" if value <= 1 else NO_CUT.format(value=value)


def _flagged_table(check: Check) -> str:
    flagged = sorted(
        (p for p in check.pairs if p.flagged), key=lambda p: (-p.similarity, p.component)
    )
    if not flagged:
        return "<h2>Flagged pairs</h2><p>None.</p>"
    rows = "".join(
        f"<tr><td>{_e(p.learner_a)}</td><td>{_e(p.learner_b)}</td><td>{_e(p.component)}</td>"
        f"<td>{p.similarity:.2f}</td></tr>"
        for p in flagged
    )
    return (
        "<h2>Flagged pairs</h2><table><thead><tr><th>Learner</th><th>Learner</th>"
        f"<th>Component</th><th>Similarity</th></tr></thead><tbody>{rows}</tbody></table>"
    )


def _marked(text: str, slices: list) -> str:
    """The text, HTML-escaped, with the shared slices in <span class="shared">."""
    import numpy as np
    from copydetect.utils import highlight_overlap

    cut = np.array(slices, dtype=int)
    if cut.size == 0:
        return _e(text)
    marked, _ = highlight_overlap(text, cut, '<span class="shared">', "</span>", escape_html=True)
    return marked


def _side_by_side(check: Check) -> list[str]:
    parts = []
    for p in sorted(check.pairs, key=lambda p: -p.similarity):
        if p.component != WHOLE or not p.flagged:
            continue
        a, b = check.documents[p.learner_a][WHOLE], check.documents[p.learner_b][WHOLE]
        cut_a, cut_b = check.slices.get(f"{p.learner_a} {p.learner_b}", [[[], []], [[], []]])
        others = ", ".join(
            f"{q.component} {q.similarity:.2f}"
            for q in check.pairs
            if (q.learner_a, q.learner_b) == (p.learner_a, p.learner_b) and q.component != WHOLE
        )
        a_id, b_id = _e(p.learner_a), _e(p.learner_b)
        parts += [
            f'<h2 id="{a_id}-{b_id}">{a_id} and {b_id}: {p.similarity:.2f} on the whole '
            f"package</h2><p>Per component: {_e(others) or 'none'}.</p>",
            f'<div class="pair"><div><h3>{a_id}</h3><pre>{_marked(a, cut_a)}</pre></div>',
            f"<div><h3>{b_id}</h3><pre>{_marked(b, cut_b)}</pre></div></div>",
        ]
    return parts


def render_html(check: Check) -> str:
    title = _e(f"{check.course}: similarity check")
    return (
        "\n".join(
            [
                "<!doctype html>",
                f'<html lang="en"><head><meta charset="utf-8"><title>{title}</title>',
                f"<style>{STYLE}</style></head><body><h1>{title}</h1>",
                *_summary(check),
                _flagged_table(check),
                *_side_by_side(check),
                "</body></html>",
            ]
        )
        + "\n"
    )
