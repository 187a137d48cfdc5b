"""Layer tables behind data/operators.csv; run tools/derive_operators.py."""
