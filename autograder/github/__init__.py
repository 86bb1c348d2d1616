"""GitHub Actions output: workflow commands, annotations, the job summary, the PR comment."""
