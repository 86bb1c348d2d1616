"""The [notebook] table of course.toml: the nbgrader notebook's run (autograder/notebook/)."""

from __future__ import annotations

from pydantic import ConfigDict, Field, field_validator

from autograder.config.limit_rules import MAX_MB, MAX_SECONDS
from autograder.config.sections import DottedName, Section


class NotebookSection(Section):
    """The [notebook] table. ``memory_mb``: the address-space limit of nbgrader and the
    learner's kernel (a cell that needs more gets MemoryError, or ends the kernel);
    ``cell_timeout``: seconds a cell may run before nbgrader interrupts it; ``grader_only``:
    files beside the source notebook that the release leaves out, for the grader alone (the toy
    vectors: learners use the real ones); ``data_name`` and ``data_modules``: the real data and
    the modules that read it. Strict, as [limits]."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    memory_mb: int = Field(default=4096, gt=0, le=MAX_MB)
    cell_timeout: float = Field(default=60.0, gt=0, le=MAX_SECONDS, allow_inf_nan=False)
    grader_only: tuple[str, ...] = Field(default=(), strict=False)  # a TOML list
    #: The notebook's real data: what it is called, and the Python modules it is read with. A
    #: grader that lacks one grades on the notebook's fallback, and the grade says so.
    data_name: str = ""
    data_modules: tuple[DottedName, ...] = Field(default=(), strict=False)

    @field_validator("grader_only")
    @classmethod
    def _file_names(cls, names: tuple[str, ...]) -> tuple[str, ...]:
        for name in names:
            if not name or "/" in name or "\\" in name or name in (".", ".."):
                raise ValueError("a list of file names beside the source notebook, without '/'")
        return names
