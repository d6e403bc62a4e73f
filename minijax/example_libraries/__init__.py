"""``jax.example_libraries``: the two small libraries JAX ships as examples.

``stax`` builds networks from ``(init_fun, apply_fun)`` pairs and
``optimizers`` steps their parameters. As in JAX, importing this package
imports neither: write ``from minijax.example_libraries import stax, optimizers``.
"""
