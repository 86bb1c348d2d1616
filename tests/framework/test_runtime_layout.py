"""The runtime package shows the trust boundary: the worker side imports nothing of the harness.

autograder/runtime/ is split by where each module runs: harness/ (trusted), worker/ (the
untrusted worker and its fork server), shared/ (both). These tests read every import statement
(at module level or inside a function) and also import the worker's entry points in a fresh
interpreter, so a harness module pulled into the worker, even lazily, fails here.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

from autograder.runtime.harness.worker_launch import RUNTIME_DIR, WORKER_SIDE, write_framework

RUNTIME = "autograder.runtime"
#: What worker-side code may import of ours: the worker side, what is shared, the stand-ins.
WORKER_MAY_IMPORT = (f"{RUNTIME}.worker", f"{RUNTIME}.shared")
WORKER_ENTRY_POINTS = ("confine", "handler", "serve", "zygote")


def module_name(path: Path) -> str:
    parts = path.relative_to(RUNTIME_DIR.parent.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports_of(path: Path) -> set[str]:
    """Every module an import statement in ``path`` names (relative ones resolved), except those
    under ``if TYPE_CHECKING:``, which never run."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skipped: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skipped.update(id(child) for stmt in node.body for child in ast.walk(stmt))
    package = module_name(path).rpartition(".")[0] if path.name != "__init__.py" else None
    package = package if package is not None else module_name(path)
    found: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names)
    return found


def ours(imported: set[str]) -> set[str]:
    return {name for name in imported if name == "autograder" or name.startswith("autograder.")}


def runtime_modules(side: str) -> list[Path]:
    return sorted((RUNTIME_DIR / side).rglob("*.py"))


def allowed_in_worker(name: str) -> bool:
    if name in ("autograder", RUNTIME):
        return True
    return any(name == home or name.startswith(home + ".") for home in WORKER_MAY_IMPORT)


def test_the_worker_side_imports_nothing_from_the_harness_side():
    offending = {
        f"{path.relative_to(RUNTIME_DIR)} imports {name}"
        for path in runtime_modules("worker")
        for name in ours(imports_of(path))
        if not allowed_in_worker(name)
    }
    assert not offending, sorted(offending)


def test_the_shared_modules_import_only_shared_modules():
    offending = {
        f"{path.relative_to(RUNTIME_DIR)} imports {name}"
        for path in runtime_modules("shared")
        for name in ours(imports_of(path))
        if not name.startswith(f"{RUNTIME}.shared") and name not in ("autograder", RUNTIME)
    }
    assert not offending, sorted(offending)


def test_the_runtime_has_no_import_cycle():
    """Module-level or lazy, no runtime module reaches itself again through its imports
    (the fresh worker's start and the fork server's client once did)."""
    paths = [p for p in RUNTIME_DIR.rglob("*.py") if p.name != "__init__.py"]
    names = {module_name(p) for p in paths}
    graph = {
        module_name(p): {n for n in ours(imports_of(p)) if n in names and n != module_name(p)}
        for p in paths
    }
    done: set[str] = set()

    def visit(node: str, trail: list[str]) -> None:
        if node in trail:
            raise AssertionError(" -> ".join([*trail[trail.index(node) :], node]))
        if node in done:
            return
        for following in sorted(graph[node]):
            visit(following, [*trail, node])
        done.add(node)

    for node in sorted(graph):
        visit(node, [])
    assert f"{RUNTIME}.harness.worker_handle" in done  # the walk saw the modules it checks


IMPORT_THE_WORKER = """
import json, sys
from autograder.runtime.worker import confine, handler, serve, zygote
zygote._warm_up()  # what the fork server imports before its first fork
print(json.dumps(sorted(m for m in sys.modules if m.split(".")[0] == "autograder")))
"""


def test_the_worker_entry_points_load_no_harness_module(tmp_path):
    """Run where the worker runs: from its framework copy (only WORKER_SIDE is there), with the
    interpreter flags of a worker, the fork server's warm-up included."""
    framework = write_framework(tmp_path)
    copied = sorted(p.name for p in (framework / "autograder" / "runtime").iterdir())
    assert copied == sorted(WORKER_SIDE)
    done = subprocess.run(
        [sys.executable, "-s", "-P", "-B", "-c", IMPORT_THE_WORKER],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
        env={"PYTHONPATH": str(framework), "PATH": "/usr/bin:/bin"},
        check=False,
    )
    assert done.returncode == 0, done.stderr
    loaded = json.loads(done.stdout)
    assert {f"{RUNTIME}.worker.{name}" for name in WORKER_ENTRY_POINTS} <= set(loaded)
    assert [name for name in loaded if not allowed_in_worker(name)] == []
