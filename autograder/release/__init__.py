"""Building the learner release (`autograder release`).

* pipeline.py: the ordered pipeline of small steps;
* manifest.py: the manifest of protected files;
* leaks.py: the checks that no reference, hidden test or instructor path ships.
"""
