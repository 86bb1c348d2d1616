"""``python -m autograder.runtime.worker``: the untrusted worker (serve.py)."""

import sys

from autograder.runtime.worker.serve import main

sys.exit(main())
