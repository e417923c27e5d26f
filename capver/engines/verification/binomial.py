"""The binomial proportion's exact (Clopper–Pearson) interval and the Beta function it
needs, without scipy: the per-pair outcome intervals of :mod:`.sampling` and the
two-sided bounds of :mod:`.confidence` (section 3.1's guarantees, proved in
``proofs/``) both rest on it, so it sits below both."""

from __future__ import annotations

import math


def _betacf(a: float, b: float, x: float) -> float:
    """The continued fraction of the incomplete beta function (modified Lentz)."""
    tiny = 1e-300
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 10_000):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        step = d * c
        h *= step
        if abs(step - 1.0) < 1e-15:
            break
    return h


def betainc(a: float, b: float, x: float) -> float:
    """The regularized incomplete beta function I_x(a, b) (a, b > 0), by its
    continued fraction (with the symmetry I_x(a, b) = 1 − I_{1−x}(b, a) where the
    fraction converges slowly)."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    log_front = math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    if x < (a + 1.0) / (a + b + 2.0):
        return math.exp(log_front) * _betacf(a, b, x) / a
    return 1.0 - math.exp(log_front) * _betacf(b, a, 1.0 - x) / b


def beta_ppf(q: float, a: float, b: float) -> float:
    """The q-quantile of Beta(a, b): the x with I_x(a, b) = q, by bisection (I_x is
    increasing in x) to double precision."""
    lo, hi = 0.0, 1.0
    for _ in range(200):
        mid = (lo + hi) / 2
        if mid in (lo, hi):
            break
        if betainc(a, b, mid) < q:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


def clopper_pearson(k: int, n: int, alpha: float) -> tuple[float, float]:
    """The two-sided Clopper–Pearson ("exact") interval of a binomial proportion
    with k successes in n trials at level α (coverage ≥ 1 − α):
    lo = Beta⁻¹(α/2; k, n − k + 1) (0 when k = 0), hi = Beta⁻¹(1 − α/2; k + 1, n − k)
    (1 when k = n).  Computed without scipy (:func:`betainc`, :func:`beta_ppf`)."""
    if n < 1 or not 0 <= k <= n:
        raise ValueError(f"need 0 ≤ k ≤ n and n ≥ 1, got k={k}, n={n}")
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")
    lo = 0.0 if k == 0 else beta_ppf(alpha / 2, k, n - k + 1)
    hi = 1.0 if k == n else beta_ppf(1 - alpha / 2, k + 1, n - k)
    return lo, hi
