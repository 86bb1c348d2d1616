"""t101 - Hana's solutions."""
