"""A notebook that probes its sandbox from a learner cell, and what its outputs say.

- probe_notebook: the correct example with a probe cell (after the loaders) that tries to read
  the hidden module tests, the course's source notebook, the sandbox's own copy of it and its
  own original file, to write outside its folder, to open sockets and to count processes, and
  prints the result as one `PROBE {json}` line.
- LEAK (a cell printing the kernel's input history, which holds every hidden test nbgrader ran)
  and XFORM (an input transformer that turns every test cell into a print of its own base64
  source) reach into the IPython shell: the static check refuses a notebook holding either
  before it runs (autograder/notebook/shell_reach.py).
"""

from __future__ import annotations

import json
from pathlib import Path

from autograder.notebook.course import only_assignment
from tests.notebook.conftest import EXAMPLES, LEARNER_PATH, ROOT

PROBE = """import json, os, socket

def _read(path):
    try:
        with open(path, "rb") as f:
            return f.read(100).decode(errors="replace")
    except OSError as exc:
        return type(exc).__name__

def _write(path):
    try:
        with open(path, "w") as f:
            f.write("x")
        return "written"
    except OSError as exc:
        return type(exc).__name__

def _connect(host, port):
    try:
        socket.create_connection((host, port), timeout=2).close()
        return "connected"
    except OSError as exc:
        return type(exc).__name__

print("PROBE " + json.dumps({
    "hidden_tests": _read(%(hidden)r),
    "source_notebook": _read(%(source)r),
    "private_source": _read("../../../source/contextual_vectors/contextual_vectors.ipynb"),
    "original": _read(%(original)r),
    "write_system": _write("/usr/autograder-notebook-probe"),
    "write_here": _write("probe.txt"),
    "network": _connect("1.1.1.1", 53),
    "loopback": _connect("127.0.0.1", 22),
    "processes": len([p for p in os.listdir("/proc") if p.isdigit()]),
}))
"""
LEAK = 'print("LEAK " + "\\n".join(In))  # every cell the kernel ran, hidden tests included'
XFORM = """
import base64 as _b64
def _xf(lines):
    _src = "".join(lines)
    if "Autograded" in _src:
        return ["print('HIDDEN-B64', %r)\\n" % _b64.b64encode(_src.encode()).decode()]
    return lines
get_ipython().input_transformers_cleanup.append(_xf)
"""


def probe_notebook(folder: Path) -> Path:
    """The correct notebook with the probe cell after the loaders."""
    document = json.loads((EXAMPLES / "correct" / LEARNER_PATH).read_text(encoding="utf-8"))
    path = folder / "probe.ipynb"
    source = PROBE % {
        "hidden": str(ROOT / "tests" / "graders" / "hidden" / "oracles.py"),
        "source": str(only_assignment(ROOT).source_notebook),
        "original": str(path),
    }
    cell = {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": []}
    document["cells"].insert(4, {**cell, "id": "probe4", "source": source})
    path.write_text(json.dumps(document), encoding="utf-8")
    return path


def outputs(document) -> list[str]:
    texts = []
    for cell in document["cells"]:
        for output in cell.get("outputs", []):
            texts.append("".join(output.get("text", "")) + output.get("evalue", ""))
            texts += output.get("traceback", [])
            texts += ["".join(v) for v in output.get("data", {}).values() if isinstance(v, list)]
    return texts


def probe_result(document) -> dict:
    """What the probe cell found, from the autograded notebook."""
    (line,) = [t for t in outputs(document) if t.startswith("PROBE ")]
    return json.loads(line.removeprefix("PROBE "))
