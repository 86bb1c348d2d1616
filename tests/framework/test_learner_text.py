"""Learner text made safe for each report: control characters, caps, first sentences, Markdown
inline and block text that renders as the text itself."""

import pytest

from autograder.learner_text import (
    CUT_NOTE,
    cap,
    first_sentence,
    markdown_block,
    markdown_inline,
    strip_control,
)

HOSTILE = "A | b `c` <script>alert(1)</script> **bold** [link](x)\n\x1b[31mred\x1b[0m\x07\r\nend"


def test_strip_control_removes_escapes_and_controls():
    assert strip_control("\x1b[1;31mred\x1b[0m\x1b]0;title\x07 ok\x00\x7f\x9b") == "red ok"
    assert strip_control("a\r\nb\rc\td") == "a\nb\nc\td"
    assert strip_control("right\u202eleft") == "rightleft"
    assert strip_control("bad \ud800 value \udcff") == "bad \ufffd value \ufffd"  # lone surrogates


def test_cap_says_how_much_was_cut():
    assert cap("abc", 5) == "abc"
    assert cap("abcdefgh", 5) == "abcde" + CUT_NOTE.format(count=3)


def test_first_sentence():
    assert first_sentence("One thing. Another.") == "One thing."
    assert first_sentence("No end\nsecond line") == "No end"
    assert first_sentence("f(x) returned 1.5; expected 2.") == "f(x) returned 1.5; expected 2."


def test_markdown_inline_escapes_everything_that_could_break_a_table():
    text = markdown_inline(HOSTILE)
    assert "\n" not in text and "\x1b" not in text and "\x07" not in text
    assert "<script>" not in text and "&lt;script>" in text
    assert "A \\| b" in text and " `c` " in text and "\\*\\*bold\\*\\*" in text
    assert "[link\\](x)" in text
    assert text.endswith("<br>end")
    assert markdown_inline("x" * 50, limit=10).startswith("x" * 10 + "<br>… (40 more")


# Learner-facing sentences as graders and the runtime write them, and text a learner controls.
PLAIN = [
    "Add & Norm: LayerNorm(x + sublayer(x)) with d_k = d_model / h.",
    "softmax(x, axis=-1)[axis=0] returned shape (2, 3); expected (3, 2).",
    "AddNorm(...) is not implemented yet: it raised NotImplementedError at "
    "assignments/t101/add_norm.py:32 in __init__. Replace the `raise NotImplementedError` with "
    "your implementation.",
    "[attention/no-scale] Your scores are not scaled: divide Q K^T by sqrt(d_k) before the "
    'softmax. Read: course notes, Class 06, "Why scaling comes before softmax".',
    "Importing assignments/t101/__init__.py raised NameError: name '_helper' is not defined",
    "mask < 0 and x > 1 hold; 2 * 3 is 6; a ~ b; costs $5",
    "create a new one for each position: nn.ModuleList([EncoderLayer(...) for _ in range(n)]).",
]
MARKUP = [
    "# not a heading",
    "- not a list",
    "+ nor this",
    "* nor this",
    "> not a quote",
    "1. not an ordered list",
    "---",
    "**bold** and *em* and __strong__ and _em_ and ~~gone~~ and 2*3*4",
    "[link](http://x) ![image](x.png) [ref][1] <http://auto.link> <b>tag</b> <!-- c -->",
    "&amp; &#38; &copy; stay as typed; a \\* backslash \\\\ and \\",
    "the end #",
    "--",
    "a \\x_ backslash before a word that becomes a code span",
    "_ lone _underscores_ at a line's start, ___ between blanks, _. before a stop and (_) _",
    "___",
]


def _rendered_text(markdown_text: str, *, table: bool) -> tuple[str, set[str]]:
    """What a CommonMark + GFM-table renderer shows for the text in a table cell (or a list
    item), and the HTML tags it made."""
    from html.parser import HTMLParser

    from markdown_it import MarkdownIt

    source = f"| h |\n| --- |\n| {markdown_text} |\n" if table else f"- {markdown_text}\n"
    rendered = MarkdownIt("commonmark").enable(["table", "strikethrough"]).render(source)

    class Text(HTMLParser):
        def __init__(self) -> None:
            super().__init__(convert_charrefs=True)
            self.parts: list[str] = []
            self.tags: set[str] = set()
            self.cell = not table

        def handle_starttag(self, tag, attrs):
            self.tags.add(tag)
            self.cell = self.cell or tag == "td"

        def handle_data(self, data):
            if self.cell:
                self.parts.append(data)

    parser = Text()
    parser.feed(rendered)
    return "".join(parser.parts).strip(), parser.tags


@pytest.mark.parametrize("table", [True, False], ids=["table cell", "list item"])
@pytest.mark.parametrize("text", PLAIN + MARKUP)
def test_markdown_inline_renders_as_the_text_itself(text, table):
    shown, tags = _rendered_text(markdown_inline(text, table=table), table=table)
    # Backticks: a pair renders as a code span, and a word like __init__ becomes one.
    assert shown.replace("`", "") == text.replace("`", "")
    structure = {"table", "thead", "tbody", "tr", "th", "td"} if table else {"ul", "li"}
    assert tags <= structure | {"code"}, tags


def test_markdown_inline_leaves_plain_sentences_readable_raw():
    # What summary.md showed raw before: d\_k, \_\_init\_\_, &amp;, \[axis=0\]. Plain text
    # stays as written; identifiers that would read as emphasis become code spans.
    assert markdown_inline(PLAIN[0]) == PLAIN[0]
    assert markdown_inline(PLAIN[1]) == PLAIN[1]
    assert markdown_inline(PLAIN[2]).endswith(
        "in `__init__`. Replace the `raise NotImplementedError` with your implementation."
    )
    assert markdown_inline(PLAIN[3]) == PLAIN[3]
    assert markdown_inline(PLAIN[6]) == PLAIN[6]  # `for _ in`: a lone underscore stays plain
    assert (
        markdown_inline("a | b") == "a \\| b" and markdown_inline("a | b", table=False) == "a | b"
    )
    assert markdown_inline("costs $5 or $6") == "costs \\$5 or \\$6"  # GitHub math


@pytest.mark.parametrize("table", [True, False], ids=["table cell", "list item"])
def test_markdown_inline_keeps_paired_backticks_as_code_and_shows_an_unpaired_one(table):
    text = "a pair `a|b` and ``two `ticks` `` then one ` alone"
    shown, tags = _rendered_text(markdown_inline(text, table=table), table=table)
    assert shown == "a pair a|b and two `ticks`  then one ` alone" and "code" in tags


def test_markdown_inline_keeps_line_breaks_as_br():
    assert markdown_inline("one\ntwo  \n- three") == "one<br>two<br>- three"


def test_markdown_block_fence_cannot_be_closed_by_the_text():
    block = markdown_block("```\nbreak out\n````")
    assert block.startswith("`````text\n") and block.endswith("\n`````")
