"""What a batch command shows while it grades: the progress bar's column and plain lines."""
