"""`autograder similarity`: how alike the graded learners' code is, judged against the class.

1. sources.py      grade-class keeps each learner's graded package source (DIR/<learner>/source);
2. measure.py      copydetect's fingerprints (winnowing over normalised tokens) of each learner's
                   components and whole package, the released stubs as boilerplate, in a child
                   process with a fixed hash seed so that a rerun gives the same numbers;
3. judge.py        which pairs stand out from the class's own distribution;
4. page.py         DIR/similarity.csv and DIR/similarity.html (flagged pairs side by side).
"""
