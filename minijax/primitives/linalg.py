"""Linear-algebra primitives: cholesky, triangular_solve, lu, qr, eigh, svd (issue 7)."""
