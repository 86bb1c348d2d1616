"""A class graded in processes: the session that collects the graders once, its harness children.

session.py      the batch's session process: forks harness children, hands each a learner
learner_job.py  what a child does for one learner: the commit, the grade, the learner's folder
fork_server.py  the warm fork server the session process is forked from
processes.py    ending with the command, checking a process, removing scratch, --jobs
"""
