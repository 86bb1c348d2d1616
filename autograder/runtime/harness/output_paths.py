"""Paths in what learner code printed, named as the learner can read them.

A warning printed in the worker names the file it comes from. Two kinds of path would mean
nothing to the learner, or tell them about the grading machine:

* the worker's private copy of the package (``/tmp/autograder-x/root/t101/softmax.py:38``)
  reads as the learner's repository names it (``assignments/t101/softmax.py:38``), as the
  failure messages do;
* the grading Python's own libraries (``/srv/course/.venv/lib/python3.11/site-packages/scipy/
  special/_logsumexp.py:346``) read from the library's own folder on
  (``scipy/special/_logsumexp.py:346``), as ``pip show`` names a package's files.
"""

from __future__ import annotations

import os
import re
import site
import sysconfig
from functools import lru_cache


def shown(text: str, private_root: str, display_dir: str) -> str:
    """``text`` with the private copy's paths under ``private_root`` named under
    ``display_dir``, and the library folders' paths cut to what follows them."""
    root = f"{private_root.rstrip('/')}/"
    if root in text:
        folder = f"{display_dir.rstrip('/')}/"
        text = re.sub(re.escape(root) + r"[^/\s]+/", lambda _: folder, text)
    pattern = _library_folders()
    return pattern.sub("", text) if pattern is not None else text


@lru_cache(maxsize=1)
def _library_folders() -> re.Pattern[str] | None:
    """The folders of the grading Python's standard library and installed packages, as given
    and resolved, longest first (a site-packages inside the standard library's folder), each
    where a path starts (not inside a longer one)."""
    paths = sysconfig.get_paths()
    found = [
        paths[name] for name in ("purelib", "platlib", "stdlib", "platstdlib") if name in paths
    ]
    found += site.getsitepackages()
    folders = {f"{p.rstrip('/')}/" for path in found for p in (path, os.path.realpath(path)) if p}
    if not folders:
        return None
    ordered = sorted((folder for folder in folders if folder != "/"), key=len, reverse=True)
    return re.compile(r"(?<![\w./-])(?:" + "|".join(map(re.escape, ordered)) + ")")
