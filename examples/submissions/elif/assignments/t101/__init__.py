# Transformers 101 assignment - Elif
