"""One module per command, each exposing `main(*, ...) -> int`; cli/ is the click layer."""
