"""What a grade is, and how its points are computed.

model.py        TestResult, ComponentResult, ForbiddenUse, NestedCall, GradeResult, Ungraded
commit.py       GradedCommit: which commit a batch graded, as the reports say it
build.py        the one grade builder: tests, notebook, protected files, commit -> GradeResult
points_rule.py  the course's components scored: shares by weight, forbidden calls, totals
late_penalty.py the late policy's penalty taken from a late commit's score
dependencies.py fix-first notes between components that build on each other
mistake_tags.py named mistakes ("[attention/no-scale] ...") in feedback text
same_problem.py two messages of one problem (a visible line, a call not run again)
pass_rule.py    when a learner's CI job passes ("all" or "min_score:N")
"""

from autograder.results.build import (
    NotebookPart,
    build_grade,
)
from autograder.results.commit import (
    GRADED_AT_DEADLINE,
    GRADED_COMMIT,
    LATER_COUNTED,
    LATER_NOT_GRADED,
    LEFT_OUT,
    LEFT_OUT_KEPT,
    LEFT_OUT_SHOWN,
    STALE_COPY,
    GradedCommit,
    left_out_entries,
)
from autograder.results.dependencies import (
    FIX_FIRST,
    fix_first_sentence,
    note_dependencies,
    note_for_test,
)
from autograder.results.mistake_tags import (
    MARKER,
    SENTENCE,
    named_mistake,
    named_mistake_in_full,
    named_mistakes,
    told_together,
)
from autograder.results.model import (
    PRINTED,
    REVIEW_LINE,
    SUMMARY_GRADER_ERRORS,
    SUMMARY_TOTAL,
    ComponentResult,
    ForbiddenUse,
    GradeResult,
    NestedCall,
    ReviewFlag,
    Status,
    TestResult,
    Ungraded,
    points,
)
from autograder.results.pass_rule import (
    BAD_RULE,
    FAILED_ALL,
    FAILED_MIN,
    PASS_RULE_FORMS,
    PASSED_ALL,
    PASSED_MIN,
    PassRule,
    PassRuleError,
)
from autograder.results.points_rule import (
    FORBIDDEN_AT,
    FORBIDDEN_DISGUISED,
    FORBIDDEN_NO_FILE,
    NO_TESTS_RAN,
    TAMPERING,
    THE_CALL,
    ModuleScores,
    Record,
    capitalised,
    forbidden_uses,
    score_modules,
)

__all__ = [
    "BAD_RULE",
    "ComponentResult",
    "FAILED_ALL",
    "FAILED_MIN",
    "FIX_FIRST",
    "FORBIDDEN_AT",
    "FORBIDDEN_DISGUISED",
    "FORBIDDEN_NO_FILE",
    "ForbiddenUse",
    "GRADED_AT_DEADLINE",
    "GRADED_COMMIT",
    "GradeResult",
    "GradedCommit",
    "LATER_COUNTED",
    "LATER_NOT_GRADED",
    "LEFT_OUT",
    "LEFT_OUT_KEPT",
    "LEFT_OUT_SHOWN",
    "MARKER",
    "ModuleScores",
    "NO_TESTS_RAN",
    "NestedCall",
    "NotebookPart",
    "PASSED_ALL",
    "PASSED_MIN",
    "PASS_RULE_FORMS",
    "PRINTED",
    "PassRule",
    "PassRuleError",
    "REVIEW_LINE",
    "Record",
    "ReviewFlag",
    "SENTENCE",
    "STALE_COPY",
    "SUMMARY_GRADER_ERRORS",
    "SUMMARY_TOTAL",
    "Status",
    "TAMPERING",
    "THE_CALL",
    "TestResult",
    "Ungraded",
    "build_grade",
    "capitalised",
    "fix_first_sentence",
    "forbidden_uses",
    "left_out_entries",
    "named_mistake",
    "named_mistake_in_full",
    "named_mistakes",
    "told_together",
    "note_dependencies",
    "note_for_test",
    "points",
    "score_modules",
]
