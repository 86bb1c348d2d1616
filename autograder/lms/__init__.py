"""`autograder export`: the gradebook's totals into an LMS's own gradebook file.

1. template.py     the instructor's export from the LMS, read and written back as it came;
2. lms_format.py   what differs between LMSs (canvas.py, moodle.py): the column to match
                   learners on by default, how an assignment column is named, a points row;
3. fill.py         learners matched between the gradebook and the template, one column filled.
"""
