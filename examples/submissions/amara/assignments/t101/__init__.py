"""My Transformers 101 package (Amara)."""
