"""A class graded in processes: the session that collects the graders once, its harness children.

launch.py          the command's side: starts the session process, shows progress
session_process.py the batch's session process: pytest over the graders, collected once
harness_pool.py    its harness children: forked, each given learners in turn, reaped
learner_job.py     what a child does for one learner: the commit, the grade, the learner's folder
fork_server.py     the warm fork server the session process is forked from
warm_heap.py       the fork server's last import: its heap frozen
processes.py       ending with the command, checking a process, removing scratch, --jobs
"""
