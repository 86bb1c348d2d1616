"""`autograder similarity` on a class built from the example learners' code, the reference
solution (written independently of them) and one planted copy: amara's package with every
local variable renamed and every comment and docstring stripped. Only the copy is flagged."""

from __future__ import annotations

import ast
import csv
import shutil
from pathlib import Path

import pytest

from autograder.commands import similarity
from autograder.copies import judge, page, sources
from autograder.copies.similarity_file import CSV_FILE, HTML_FILE, STAMP_FILE, WHOLE
from autograder.gradebook import report, store

ROOT = Path(__file__).resolve().parents[2]
COURSE = ROOT / "course.toml"
EXAMPLES = ROOT / "examples" / "submissions"
pytest.importorskip("copydetect", reason="needs the similarity extra")


class _Disguise(ast.NodeTransformer):
    """Renames every argument and local variable of a function and drops its docstring."""

    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.FunctionDef:
        names = {a.arg for a in node.args.args + node.args.kwonlyargs if a.arg != "self"}
        names |= {
            n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
        }
        renamed = {name: f"value_{index}" for index, name in enumerate(sorted(names))}
        for child in ast.walk(node):
            if isinstance(child, ast.Name) and child.id in renamed:
                child.id = renamed[child.id]
            elif isinstance(child, ast.arg) and child.arg in renamed:
                child.arg = renamed[child.arg]
        first = node.body[0]
        if (
            len(node.body) > 1
            and isinstance(first, ast.Expr)
            and isinstance(first.value, ast.Constant)
        ):
            node.body = node.body[1:]
        return node


def disguised(source: str) -> str:
    """The source with renamed locals, no comments, no docstrings, laid out by ast.unparse."""
    return ast.unparse(_Disguise().visit(ast.parse(source))) + "\n"


def _learner(out: Path, name: str, package: Path, transform=lambda text: text) -> None:
    folder = out / name / sources.SOURCE_DIR
    folder.mkdir(parents=True)
    for module in sorted(package.glob("*.py")):
        (folder / module.name).write_text(transform(module.read_text(encoding="utf-8")))
    record = store.LearnerRecord(
        name, total=50.0, max_score=100.0, graded_at="2026-12-01T10:00:00+00:00"
    )
    (out / name / store.RECORD_FILE).write_text(record.to_json())


@pytest.fixture(scope="module")
def checked(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, int]:
    out = tmp_path_factory.mktemp("similarity") / "class"
    for example in sorted(p for p in EXAMPLES.iterdir() if p.is_dir()):
        _learner(out, example.name, example / "assignments" / "t101")
    _learner(out, "reference", ROOT / "solutions" / "t101")
    _learner(out, "planted", EXAMPLES / "amara" / "assignments" / "t101", disguised)
    (out / "zoe").mkdir()
    errored = store.LearnerRecord("zoe", error="Could not find assignments/t101 in zoe.")
    (out / "zoe" / store.RECORD_FILE).write_text(errored.to_json())
    store.write_gradebook(out, ["softmax"])
    return out, similarity.main(out_dir=out, course=COURSE, quiet=True)


def _rows(out: Path) -> list[dict[str, str]]:
    with (out / CSV_FILE).open(newline="", encoding="utf-8") as stream:
        return list(csv.DictReader(stream))


def test_the_planted_copy_is_flagged_and_nothing_else_is(checked) -> None:
    out, status = checked
    assert status == similarity.EXIT_FLAGGED
    flagged = [
        (r["learner_a"], r["learner_b"], r["component"])
        for r in _rows(out)
        if r["flagged"] == "yes"
    ]
    assert ("amara", "planted", WHOLE) in flagged
    assert {(a, b) for a, b, _ in flagged} == {("amara", "planted")}
    whole = {
        (r["learner_a"], r["learner_b"]): float(r["similarity"])
        for r in _rows(out)
        if r["component"] == WHOLE
    }
    assert whole[("amara", "planted")] > 0.9
    others = sorted(value for pair, value in whole.items() if pair != ("amara", "planted"))
    assert others[-1] < judge.FLOOR_WHOLE  # the reference and the examples: written apart


def test_untouched_stubs_are_not_compared(checked) -> None:
    out, _ = checked
    assert not any(
        "ben" in (r["learner_a"], r["learner_b"]) for r in _rows(out) if r["component"] == WHOLE
    )
    page = (out / HTML_FILE).read_text(encoding="utf-8")
    assert (
        "Not compared (too little code of their own on the whole package: fewer than 100 tokens "
        "beyond the released stubs): ben." in page
    )
    assert (
        "Not compared (no grade, so no graded code: an error, nothing to grade, or not graded "
        "yet): zoe." in page
    )


def test_the_page_shows_the_flagged_pair_side_by_side(checked) -> None:
    out, _ = checked
    page = (out / HTML_FILE).read_text(encoding="utf-8")
    assert '<h2 id="amara-planted">amara and planted:' in page
    assert page.count('<span class="shared">') > 10
    assert "value_0" in page  # the disguised code itself, as it was graded


def test_the_class_report_links_the_page_and_names_the_pair(checked) -> None:
    out, _ = checked
    markdown = (out / report.MARKDOWN_FILE).read_text(encoding="utf-8")
    assert "1 of 78 pairs of learners stand out from the class on the whole package" in markdown
    assert "| Most similar (whole package) |" in markdown
    assert "with planted (flagged) |" in markdown
    html = (out / report.HTML_FILE).read_text(encoding="utf-8")
    assert f'<a href="{HTML_FILE}">' in html and '<tr class="flagged">' in html


def test_the_numbers_are_the_same_on_a_rerun(checked, tmp_path) -> None:
    out, _ = checked
    again = tmp_path / "again"
    shutil.copytree(out, again)
    (again / CSV_FILE).unlink()
    assert similarity.main(out_dir=again, course=COURSE, quiet=True) == similarity.EXIT_FLAGGED
    assert (again / CSV_FILE).read_bytes() == (out / CSV_FILE).read_bytes()


def test_a_learner_graded_after_the_check_is_named_in_the_report(checked, tmp_path) -> None:
    out, _ = checked
    again = tmp_path / "later"
    shutil.copytree(out, again)
    record = store.read_record(again, "kofi")
    record.graded_at = "2026-12-02T10:00:00+00:00"
    (again / "kofi" / store.RECORD_FILE).write_text(record.to_json())
    assert (again / STAMP_FILE).is_file()
    report.write_report(again, store.read_records(again), [], "Course")
    markdown = (again / report.MARKDOWN_FILE).read_text(encoding="utf-8")
    assert (
        "Learners graded after the similarity check, so not in it or not as graded now: kofi;"
        in markdown
    )


def test_a_class_without_kept_source_is_refused_with_a_sentence(tmp_path, capsys) -> None:
    out = tmp_path / "class"
    (out / "amara").mkdir(parents=True)
    (out / "amara" / store.RECORD_FILE).write_text(
        store.LearnerRecord("amara", total=1.0).to_json()
    )
    assert similarity.main(out_dir=out, course=COURSE) == similarity.EXIT_BAD
    assert similarity.TOO_FEW.format(count=0, s="s", dir=out.resolve()) in capsys.readouterr().err


def test_judging_flags_only_pairs_far_above_the_class() -> None:
    pairs = [judge.Pair(f"a{i}", f"b{i}", WHOLE, 0.4 + i / 100) for i in range(20)]
    pairs.append(judge.Pair("x", "y", WHOLE, 0.85))
    judged, cuts, _ = judge.judge(pairs, WHOLE)
    assert [p.learner_a for p in judged if p.flagged] == ["x"]
    assert cuts[WHOLE] == pytest.approx(max(0.8, 0.5 + 1.5 * 0.1), abs=0.02)


def test_the_page_counts_each_components_learners_and_says_a_cut_above_1_plainly() -> None:
    """A learner with too little code in one module (the stubs of an unfinished component) is
    compared on the whole package but not in that component: the page counts both and names
    them; a cut above 1 (a component whose pairs are all alike) reads as no pair, not 1.02."""
    pairs = [
        judge.Pair("ada", "bo", WHOLE, 0.4),
        judge.Pair("ada", "cy", WHOLE, 0.5),
        judge.Pair("bo", "cy", WHOLE, 0.3),
        judge.Pair("ada", "bo", "add_norm", 1.0),
    ]
    documents = {name: {WHOLE: "x"} for name in ("ada", "bo", "cy", "dee")}
    check = page.Check(
        "T101", pairs, {WHOLE: 0.9, "add_norm": 1.02}, documents, slices={}, skipped={}
    )
    html = page.render_html(check)
    assert "<tr><td>all</td><td>3</td><td>dee</td><td>3</td><td>0.90</td><td>0</td></tr>" in html
    assert (
        "<tr><td>add_norm</td><td>2</td><td>cy, dee</td><td>1</td><td>no pair: its pairs are so "
        "alike that the cut (1.02) is above 1, the highest similarity there is</td><td>0</td></tr>"
    ) in html
    assert "1.02 (no pair can reach it)" not in html


def test_the_terminal_names_who_was_left_out_and_why(tmp_path, capsys) -> None:
    """What the page says of the learners left out, the terminal says too: ben (untouched
    stubs) on the whole package, and chidi in the components he has not written."""
    pairs = [
        judge.Pair("amara", "chidi", WHOLE, 0.4),
        judge.Pair("amara", "chidi", "softmax", 0.5),
    ]
    documents = {name: {WHOLE: "x"} for name in ("amara", "ben", "chidi")}
    skipped = {page.TOO_LITTLE: ["ben"], page.NO_SOURCE: [], page.NOT_GRADED: ["zoe"]}
    cuts = {WHOLE: 0.9, "softmax": 0.9, "encoder": 0.9}
    check = page.Check("T101", pairs, cuts, documents, slices={}, skipped=skipped)
    assert similarity._say(check, tmp_path, quiet=False) == similarity.EXIT_OK
    lines = capsys.readouterr().out.splitlines()
    assert lines[1:] == [
        "Not compared (too little code of their own on the whole package: fewer than 100 tokens "
        "beyond the released stubs): ben.",
        "Not compared (no grade, so no graded code: an error, nothing to grade, or not graded "
        "yet): zoe.",
        "Not compared in some components (too little code of their own there): amara (encoder); "
        "chidi (encoder).",
        "No pair stands out from the class.",
    ]
    assert similarity._say(check, tmp_path, quiet=True) == similarity.EXIT_OK
    assert capsys.readouterr().out == ""
