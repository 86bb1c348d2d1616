"""Instructor batch grading: roster, commit selection, per-learner records, gradebook, report.

The pipeline of `autograder grade-class`, one small module per step:

1. roster.py    the learners to grade (a folder of repositories or a roster CSV), sharded;
2. snapshot.py  each learner's commit (HEAD, or the last one at or before a deadline), exported
                from git history without touching the clone;
3. ../batch/    one pytest session collects the graders once; its harness children (forks of
                it, `jobs` at a time) grade one learner after another (settings.py: what a
                run grades with; tamper.py: the learner's changes to protected files);
4. store.py     per-learner records and the gradebook CSV rebuilt from them, in learner order;
5. report.py    the class report (report.md, report.html, the score figure).
"""
