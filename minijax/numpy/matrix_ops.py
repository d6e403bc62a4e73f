"""diag, diagonal, trace, tril, triu, kron, meshgrid, roll, histogram, convolve ... (issue 7)."""

__all__: list[str] = []
