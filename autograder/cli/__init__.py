"""The `autograder` command line: a thin click layer over autograder.commands.*.main.

group.py                 the command group, and how a command line ends
shared.py                options several commands share; the warm fork servers
repository_commands.py   grade, release
class_commands.py        grade-class, merge, publish
check_command.py         check
term_commands.py         export, similarity

A new command is a module commands/NAME.py with `main(*, ...) -> int`, its click wrapper in
one of the *_commands.py modules (a new one is imported below) and its line in
group.SHORT_HELP; docs/architecture.md lists what else the tests ask of it.
"""

from autograder.grading.bytecode import cache_own_modules

cache_own_modules()  # before the rest of the project is imported

from autograder.cli import (  # noqa: E402, F401
    check_command,
    class_commands,
    repository_commands,
    term_commands,
)
from autograder.cli.group import SHORT_HELP, cli  # noqa: E402

__all__ = ["SHORT_HELP", "cli"]
