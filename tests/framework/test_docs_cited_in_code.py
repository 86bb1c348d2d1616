"""Every docs page (and heading) that a module cites exists, so a docstring's pointer never rots.

Module docstrings keep the contract and point to the design, a page and a heading of
docs/internals/. mkdocs checks the links of the pages, not those of the code; this test does, with
the heading ids mkdocs makes (Python-Markdown's toc slugify, or an explicit ``{#id}``).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from markdown.extensions.toc import slugify

PROJECT = Path(__file__).resolve().parents[2]
CITATION = re.compile(r"\b(docs/[\w/.-]+?\.md)(?:#([\w-]+))?")
HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*$", re.MULTILINE)
EXPLICIT_ID = re.compile(r"\{[^}]*#([\w-]+)[^}]*\}\s*$")
#: Citations a test writes on purpose as an example, not as a pointer.
EXAMPLES = {("tests/framework/test_docs_site.py", "docs/instructor/publish.md", "x")}


def heading_ids(page: Path) -> set[str]:
    """The ids mkdocs gives the headings of ``page`` (fenced code blocks aside)."""
    text = re.sub(r"^```.*?^```", "", page.read_text(), flags=re.MULTILINE | re.DOTALL)
    ids = set()
    for heading in HEADING.findall(text):
        explicit = EXPLICIT_ID.search(heading)
        ids.add(explicit.group(1) if explicit else slugify(heading, "-"))
    return ids


def citations() -> list[tuple[str, str, str]]:
    """(module, page, anchor or "") for every docs page a Python module of the project cites."""
    found = []
    for folder in ("autograder", "solutions", "tests", "benchmarks"):
        for path in sorted((PROJECT / folder).rglob("*.py")):
            module = str(path.relative_to(PROJECT))
            for page, anchor in CITATION.findall(path.read_text()):
                if (module, page, anchor) not in EXAMPLES:
                    found.append((module, page, anchor))
    return found


CITATIONS = citations()


def test_modules_cite_docs_pages() -> None:
    assert len({page for _, page, _ in CITATIONS}) >= 10


@pytest.mark.parametrize(
    ("module", "page", "anchor"), CITATIONS, ids=lambda v: v if isinstance(v, str) else ""
)
def test_a_cited_page_and_heading_exist(module: str, page: str, anchor: str) -> None:
    target = PROJECT / page
    assert target.is_file(), f"{module} cites {page}, which the repository does not have"
    if anchor:
        ids = heading_ids(target)
        assert anchor in ids, (
            f"{module} cites {page}#{anchor}, but that page has no such heading; its headings "
            f"are: {', '.join(sorted(ids))}"
        )


def test_heading_ids_are_those_mkdocs_makes(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text(
        "# The fork server\n\n## What `carry` keeps, and why\n\n### Odd {#custom-id}\n\n"
        "```text\n# not a heading\n```\n"
    )
    assert heading_ids(page) == {"the-fork-server", "what-carry-keeps-and-why", "custom-id"}
