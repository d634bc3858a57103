"""Lowering of the xla dialect to linalg / tensor / scf / arith / math / complex."""
