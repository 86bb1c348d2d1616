"""Shared paths for the notebook tests.

Every module here needs the `notebook` extra (gensim, nbgrader, matplotlib); without it the
module is skipped with that reason (`pytest.importorskip`), so a core install stays green.
.ci/run installs the extra, so CI runs them.
"""

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
COURSE_DIR = ROOT / "notebooks"
SOURCE = COURSE_DIR / "source" / "contextual_vectors" / "contextual_vectors.ipynb"
TOY_VECTORS = SOURCE.parent / "toy_vectors.txt"
EXAMPLES = ROOT / "examples" / "notebooks"
LEARNER_PATH = Path("assignments/notebooks/contextual_vectors.ipynb")
MISSING_EXTRA = "needs the notebook extra: pip install -e '.[notebook]'"
