"""``jax.scipy.stats``: JAX's 28 distributions, ``gaussian_kde``, ``mode``, ``rankdata`` and ``sem``.

Each distribution is a module of functions (``norm.logpdf(x, loc, scale)``),
computed as JAX computes them so that float32 results round alike.
"""

# stats part (issue 21): the whole module.
from minijax.scipy.stats import (
    bernoulli as bernoulli,
    beta as beta,
    betabinom as betabinom,
    binom as binom,
    cauchy as cauchy,
    chi2 as chi2,
    dirichlet as dirichlet,
    expon as expon,
    gamma as gamma,
    gennorm as gennorm,
    geom as geom,
    gumbel_l as gumbel_l,
    gumbel_r as gumbel_r,
    laplace as laplace,
    logistic as logistic,
    multinomial as multinomial,
    multivariate_normal as multivariate_normal,
    nbinom as nbinom,
    norm as norm,
    pareto as pareto,
    poisson as poisson,
    t as t,
    truncnorm as truncnorm,
    uniform as uniform,
    vonmises as vonmises,
    wrapcauchy as wrapcauchy,
)
from minijax.scipy.stats._core import mode as mode, rankdata as rankdata, sem as sem
from minijax.scipy.stats.kde import gaussian_kde as gaussian_kde

__all__ = [
    "bernoulli", "beta", "betabinom", "binom", "cauchy", "chi2", "dirichlet", "expon", "gamma", "gaussian_kde",
    "gennorm", "geom", "gumbel_l", "gumbel_r", "laplace", "logistic", "mode", "multinomial", "multivariate_normal",
    "nbinom", "norm", "pareto", "poisson", "rankdata", "sem", "t", "truncnorm", "uniform", "vonmises", "wrapcauchy",
]
