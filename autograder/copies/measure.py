"""Pairwise similarity of the learners' code with copydetect (winnowing over normalised tokens).

copydetect (https://github.com/blingenf/copydetect) tokenises each document with pygments,
replaces every name with one letter per kind (variable, function, class) and every string with
one, drops comments and white space, then keeps a winnowed set of k-gram fingerprints: renamed
variables, stripped comments and reformatting leave them unchanged. The released stubs are its
boilerplate: their fingerprints (docstrings, signatures, the NotImplementedError lines) are
removed from every learner's, so untouched stubs share nothing.

A pair's similarity is the mean of the two documents' shares of tokens found in the other
(copydetect's pair of similarities). A document with fewer than MIN_TOKENS tokens of its own
(after the boilerplate) is not compared: there is too little to tell.

copydetect hashes k-grams with Python's hash(), which is salted per process: the comparison
runs in a child process with PYTHONHASHSEED=0 (measure()), so that the same class gives the
same numbers on every run.
"""

from __future__ import annotations

import io
import itertools
import json
import os
import subprocess
import sys
from typing import Any

NOISE = 25  # copydetect's k: the shortest match of normalised tokens that counts
GUARANTEE = 30  # the shortest match it is guaranteed to find (window = GUARANTEE - NOISE + 1)
MIN_TOKENS = 100  # tokens of one's own a document needs to be compared
LANGUAGE = "python"  # pygments' lexer by name: finding it from a file name costs more than lexing
HIGHLIGHT_ABOVE = 0.5  # pairs of the whole package above this keep the copied slices
CHILD_FAILED = "The similarity measure stopped before it finished (exit status {code}): {detail}"


def measure(spec: dict[str, Any]) -> dict[str, Any]:
    """compare(spec) in a child process with a fixed hash seed; RuntimeError with a sentence
    when the child fails (copydetect missing, say)."""
    done = subprocess.run(
        [sys.executable, "-m", "autograder.copies.measure"],
        input=json.dumps(spec),
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONHASHSEED": "0"},
    )
    if done.returncode != 0:
        detail = (done.stderr.strip().splitlines() or ["no message"])[-1]
        raise RuntimeError(CHILD_FAILED.format(code=done.returncode, detail=detail))
    return json.loads(done.stdout)


def compare(spec: dict[str, Any]) -> dict[str, Any]:
    """Every pair of ``spec["documents"]`` ({learner: {component: text}}), component by
    component, with ``spec["boilerplate"]`` ({component: text}) removed: {"pairs": [[a, b,
    component, similarity]], "tokens": {learner: {component: tokens}}, "slices": {"a b":
    [slices of a, slices of b]} for the pairs of ``spec["whole"]`` above HIGHLIGHT_ABOVE}."""
    from copydetect import CodeFingerprint

    window = GUARANTEE - NOISE + 1
    documents, whole = spec["documents"], spec["whole"]
    pairs, tokens, slices = [], {}, {}
    for component, stub in spec["boilerplate"].items():
        boilerplate = _hashes(CodeFingerprint, stub)
        prints = {}
        for learner in sorted(documents):
            text = documents[learner].get(component)
            if text is None:
                continue
            fingerprint = CodeFingerprint(
                f"{component}.py",
                NOISE,
                window,
                boilerplate,
                language=LANGUAGE,
                fp=io.StringIO(text),
            )
            tokens.setdefault(learner, {})[component] = int(fingerprint.token_coverage)
            if fingerprint.token_coverage >= MIN_TOKENS:
                prints[learner] = fingerprint
        for a, b in itertools.combinations(sorted(prints), 2):
            similarity, cut = _pair(prints[a], prints[b])
            pairs.append([a, b, component, round(similarity, 4)])
            if component == whole and similarity > HIGHLIGHT_ABOVE:
                slices[f"{a} {b}"] = cut
    return {"pairs": pairs, "tokens": tokens, "slices": slices}


def _hashes(fingerprint_class: Any, text: str) -> Any:
    """Every k-gram fingerprint of the boilerplate (a window of 1: all of them), as the sorted
    array copydetect takes."""
    import numpy as np

    hashes = fingerprint_class("stub.py", NOISE, 1, language=LANGUAGE, fp=io.StringIO(text)).hashes
    return np.array(sorted(hashes), dtype=np.int64)


def _pair(first: Any, second: Any) -> tuple[float, list[list[list[int]]]]:
    """The pair's similarity and the copied slices of each document ([starts, ends])."""
    from copydetect import compare_files

    _, (one, two), (cut_one, cut_two) = compare_files(first, second)
    cut = [
        [list(map(int, row)) for row in part] if len(part) else [[], []]
        for part in (cut_one, cut_two)
    ]
    return (float(one) + float(two)) / 2, cut


if __name__ == "__main__":  # the child of measure(): a spec on stdin, the result on stdout
    json.dump(compare(json.load(sys.stdin)), sys.stdout)
