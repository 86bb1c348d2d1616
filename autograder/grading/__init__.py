"""Grading submissions: the one path `grade`, `grade-class` and `check` grade a learner by.

graders_session.py  one pytest session over the course's graders, collected once, then handed
                    to a driver (pytest's command line for grading, its console)
one_submission.py   grade_in_session: one submission in that session, into its reports
console.py          each submission's own pytest console, its grader.log
in_process.py       `autograder grade`: submissions one after another in this process
package_dir.py      where a submission's package and the grader folders are
bytecode.py         where compiled grader modules are cached

A batch drives the same session from forked harness children (autograder/batch/).
"""
