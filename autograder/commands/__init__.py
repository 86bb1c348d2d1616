"""One module per command, each exposing `main(*, ...) -> int`; cli.py is the click layer."""
