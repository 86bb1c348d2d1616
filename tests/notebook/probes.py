"""A notebook that probes its sandbox from a learner cell, and what its outputs say.

probe_notebook: the correct example with two cells added. The probe cell (after the loaders)
tries to read the hidden module tests, the course's source notebook, the sandbox's own copy of
it and its own original file, to write outside its folder, to open sockets and to count
processes, and prints the result as one `PROBE {json}` line. The leak cell (last) prints the
kernel's input history, which holds every hidden test nbgrader ran, as one `LEAK ...` output.
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


def probe_notebook(folder: Path) -> Path:
    """The correct notebook with the probe cell after the loaders and the leak cell last."""
    document = json.loads((EXAMPLES / "correct" / LEARNER_PATH).read_text(encoding="utf-8"))
    path = folder / "probe.ipynb"
    source = PROBE % {
        "hidden": str(ROOT / "tests" / "graders" / "hidden" / "oracles.py"),
        "source": str(only_assignment(ROOT).source_notebook),
        "original": str(path),
    }
    for index, text in ((4, source), (len(document["cells"]), LEAK)):
        cell = {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": []}
        document["cells"].insert(index, {**cell, "id": f"probe{index}", "source": text})
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
