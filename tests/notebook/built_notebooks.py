"""Example notebooks test_pipeline.py builds from the correct or the untouched one, each planting
one thing: a memory hog, a duplicated grade id, edited cells, a kernel crash, valid plot
variants, a softmax over the wrong axis, lowercased words, a forged grade database."""

from __future__ import annotations

import json
from pathlib import Path

from tests.notebook.conftest import EXAMPLES, LEARNER_PATH

CRASH = (
    'import ctypes, time\nprint("about to crash", flush=True)\ntime.sleep(2)\nctypes.string_at(0)'
)
VARIANT_PLOTS = """
def plot_attention(A, words):
    fig, ax = plt.subplots()
    mesh = ax.pcolormesh(A, cmap="plasma")
    ax.set_xticks([i + 0.5 for i in range(len(words))], labels=words)
    ax.set_yticks([i + 0.5 for i in range(len(words))], labels=words)
    fig.colorbar(mesh, ax=ax)
    return fig


def plot_cosines(cosines):
    fig, ax = plt.subplots()
    ax.barh(list(cosines), list(cosines.values()))
    return fig
"""
FORGE = """import os, sqlite3
db = sqlite3.connect(os.path.abspath("../../../gradebook.db"))
db.executescript(
    "CREATE TRIGGER forge_i AFTER INSERT ON grade BEGIN "
    "UPDATE grade SET auto_score = 1000 WHERE id = NEW.id; END;"
    "CREATE TRIGGER forge_u AFTER UPDATE OF auto_score ON grade "
    "WHEN NEW.auto_score IS NOT 1000 BEGIN "
    "UPDATE grade SET auto_score = 1000 WHERE id = NEW.id; END;"
)
db.commit()
print("FORGED")
"""


def hog_notebook(folder: Path) -> Path:
    document = json.loads((EXAMPLES / "correct" / LEARNER_PATH).read_text(encoding="utf-8"))
    hog = {
        "cell_type": "code",
        "execution_count": None,
        "id": "hog",
        "metadata": {},
        "outputs": [],
        "source": "hoard = bytearray(8 * 1024**3)",
    }
    document["cells"].insert(3, hog)
    path = folder / "hog.ipynb"
    path.write_text(json.dumps(document), encoding="utf-8")
    return path


def duplicate_notebook(folder: Path) -> Path:
    """The correct notebook with its lookup cell twice, as Jupyter's copy and paste leaves it."""
    document = json.loads((EXAMPLES / "correct" / LEARNER_PATH).read_text(encoding="utf-8"))
    (index,) = [
        i
        for i, cell in enumerate(document["cells"])
        if cell.get("metadata", {}).get("nbgrader", {}).get("grade_id") == "lookup"
    ]
    document["cells"].insert(index + 1, {**document["cells"][index], "id": "pasted"})
    path = folder / "duplicate.ipynb"
    path.write_text(json.dumps(document), encoding="utf-8")
    return path


def edited_notebook(folder: Path, name: str, change) -> Path:
    """The correct notebook with `change` applied to its list of cells."""
    document = json.loads((EXAMPLES / "correct" / LEARNER_PATH).read_text(encoding="utf-8"))
    document["cells"] = change(document["cells"])
    path = folder / f"{name}.ipynb"
    path.write_text(json.dumps(document), encoding="utf-8")
    return path


def own_cell(source: str) -> dict:
    return {"cell_type": "code", "execution_count": None, "id": "own", "metadata": {},
            "outputs": [], "source": source}  # fmt: skip


def index_of(cells: list, wanted: str) -> int:
    return next(i for i, c in enumerate(cells) if grade_id(c) == wanted)


def crash_notebook(folder: Path) -> Path:
    """A cell of the learner's own, after test_lookup, that ends the kernel (a segfault)."""

    def change(cells):
        at = index_of(cells, "test_lookup") + 1
        return [*cells[:at], own_cell(CRASH), *cells[at:]]

    return edited_notebook(folder, "crash", change)


def variants_notebook(folder: Path) -> Path:
    """Horizontal bars and a pcolormesh heat map: what the instructions allow."""

    def change(cells):
        cells[index_of(cells, "plots")]["source"] = VARIANT_PLOTS
        return cells

    return edited_notebook(folder, "variants", change)


def axis_notebook(folder: Path) -> Path:
    """softmax over the queries (axis 0) instead of the keys."""

    def change(cells):
        cell = cells[index_of(cells, "attention")]
        text = "".join(cell["source"])
        assert text.count("axis=axis") == 2, text
        cell["source"] = text.replace("axis=axis", "axis=0")
        return cells

    return edited_notebook(folder, "axis", change)


def lowercased_notebook(folder: Path) -> Path:
    """The correct notebook whose lookup lists the missing words lowercased."""
    text = (EXAMPLES / "correct" / LEARNER_PATH).read_text(encoding="utf-8")
    assert text.count("missing.append(word)") == 1
    path = folder / "lowercased.ipynb"
    path.write_text(text.replace("missing.append(word)", "missing.append(word.lower())"))
    return path


def forge_notebook(folder: Path) -> Path:
    """The untouched notebook with the gradebook-forging cell after the setup cell."""
    document = json.loads((EXAMPLES / "untouched" / LEARNER_PATH).read_text(encoding="utf-8"))
    forge = {"cell_type": "code", "execution_count": None, "id": "forge", "metadata": {}}
    document["cells"].insert(3, {**forge, "outputs": [], "source": FORGE})
    path = folder / "forge.ipynb"
    path.write_text(json.dumps(document), encoding="utf-8")
    return path


def grade_id(cell: dict) -> str | None:
    """A notebook cell's nbgrader grade id (None for a cell nbgrader does not grade)."""
    return cell["metadata"].get("nbgrader", {}).get("grade_id")
