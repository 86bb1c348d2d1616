"""A local rehearsal of a workflow's jobs: each `run` step as the runner runs it (bash -eo
pipefail, its env with every ${{ }} resolved from a table the test gives, $GITHUB_OUTPUT read
back), the actions it uses played by the rehearsal (checkout: a fresh clone of the repository
at the same workspace path, as a new runner has; upload and download-artifact: folder copies;
setup-python and the install steps: this interpreter, already installed).

Every `${{ }}` and every `if:` must be in the test's table: a workflow that changes one fails
the rehearsal until the test says what it means.
"""

from __future__ import annotations

import fnmatch
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import yaml

EXPRESSION = re.compile(r"\$\{\{.*?\}\}", re.DOTALL)


class Rehearsal:
    """The workflow at ``path`` rehearsed against ``origin`` (a bare repository standing for
    GitHub's copy of the instructor's repository) in ``root`` (workspace, artifacts, home)."""

    def __init__(self, path: Path, origin: Path, root: Path, env: dict[str, str]) -> None:
        self.workflow = yaml.safe_load(path.read_text(encoding="utf-8"))
        self.origin, self.root, self.env = origin, root, env
        self.workspace = root / "work" / "repo"
        self.artifacts = root / "artifacts"
        self.home = root / "home"
        self.bin = root / "bin"
        shutil.rmtree(self.artifacts, ignore_errors=True)  # a run sees its own artifacts only
        for folder in (self.artifacts, self.home, self.bin):
            folder.mkdir(parents=True, exist_ok=True)
        for name, prefix in (("autograder", "-m autograder "), ("python", "")):
            shim = self.bin / name  # this interpreter (a link would lose its virtualenv)
            shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" {prefix}"$@"\n')
            shim.chmod(0o755)
        self.logs: list[str] = []

    def run_job(self, name: str, values: dict[str, str], conditions: dict) -> dict:
        """Run job ``name``'s steps; its step outputs by step id. ``values``: each ${{ }}
        text to its value (a step's outputs, ${{ steps.ID.outputs.NAME }}, are added as the
        job goes); ``conditions``: each step's `if:` text to whether it holds (a bool, or a
        function of the step outputs so far)."""
        job = self.workflow["jobs"][name]
        outputs: dict[str, dict[str, str]] = {}
        for step in job["steps"]:
            values = {**values, **_step_values(outputs)}
            if "if" in step and not _holds(conditions[step["if"]], outputs):
                continue
            if "uses" in step:
                self._action(step, values)
                continue
            if step["name"].startswith("Install "):
                continue  # this interpreter has the grader installed
            found = self._run(step, {**self.workflow["env"], **step.get("env", {})}, values)
            if "id" in step:
                outputs[step["id"]] = found
        return outputs

    def _run(self, step: dict, env: dict[str, str], values: dict[str, str]) -> dict[str, str]:
        output = self.root / "github_output"
        output.write_text("")
        resolved = {name: _resolve(str(value), values) for name, value in env.items()}
        full = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "PYTEST_"))}
        full.update({**self.env, **resolved, "GITHUB_OUTPUT": str(output), "HOME": str(self.home)})
        full["PATH"] = f"{self.bin}{os.pathsep}{full['PATH']}"
        script = self.root / "step.sh"
        script.write_text(step["run"])
        done = subprocess.run(
            ["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)],
            cwd=self.workspace,
            env=full,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            timeout=900,
        )
        self.logs.append(f"## {step['name']}\n{done.stdout}")
        assert done.returncode == 0, f"step {step['name']!r} failed:\n{done.stdout}"
        lines = output.read_text().splitlines()
        return dict(line.split("=", 1) for line in lines if "=" in line)

    def _action(self, step: dict, values: dict[str, str]) -> None:
        action = step["uses"].split("@")[0]
        given = {k: _resolve(str(v), values) for k, v in (step.get("with") or {}).items()}
        if action == "actions/checkout":
            shutil.rmtree(self.workspace.parent, ignore_errors=True)
            self.workspace.parent.mkdir(parents=True)
            subprocess.run(
                ["git", "clone", "-q", "--depth=1", f"file://{self.origin}", str(self.workspace)],
                check=True,
            )
        elif action == "actions/upload-artifact":
            target = self.artifacts / given["name"]
            shutil.rmtree(target, ignore_errors=True)
            shutil.copytree(
                self.workspace / given["path"], target, ignore=shutil.ignore_patterns(".*")
            )
        elif action == "actions/download-artifact":
            into = self.workspace / given["path"]
            for artifact in sorted(self.artifacts.iterdir()):
                if fnmatch.fnmatch(artifact.name, given["pattern"]):
                    shutil.copytree(artifact, into / artifact.name)
        elif action != "actions/setup-python":
            raise AssertionError(f"the rehearsal does not know the action {action}")


def _step_values(outputs: dict[str, dict[str, str]]) -> dict[str, str]:
    return {
        f"${{{{ steps.{step}.outputs.{name} }}}}": value
        for step, found in outputs.items()
        for name, value in found.items()
    }


def _holds(condition, outputs: dict[str, dict[str, str]]) -> bool:
    return bool(condition(outputs) if callable(condition) else condition)


def _resolve(text: str, values: dict[str, str]) -> str:
    """text with each ${{ }} replaced by its value in ``values`` (KeyError when unknown)."""
    return EXPRESSION.sub(lambda match: values[match.group(0)], text)
