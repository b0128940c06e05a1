"""Measured false-positive rates against each filter's model.

Each filter holds N keys and answers M keys that were never inserted. The number of positives X
among them is Binomial(M, p) for the filter's true rate p, so X lies within 5 standard deviations
of M·p except with probability below 1e-6: that is the tolerance, plus a relative slack for the
models that are approximations (cuckoo tables; the classic filter's (1 - e^(-kn/m))^k). The model
is the rate each filter estimates from its actual contents (``fpr()``), which must in turn be at
most the target the filter was sized for (scalable cuckoo filters excepted: their rate rises as
they grow, by design).
"""

import math

import pytest

import bloomery
from conftest import kind_id

N = 20_000
M = 200_000
INSERTED = [f"https://example.com/in/{i}" for i in range(N)]
ABSENT = [f"https://example.org/out/{i}" for i in range(M)]

# (class, fpr, relative slack of its model)
CASES = [
    (bloomery.BloomFilter, 0.01, 0.05),
    (bloomery.BlockedBloomFilter, 0.01, 0.05),
    (bloomery.CountingBloomFilter, 0.01, 0.05),
    (bloomery.CuckooFilter, 0.01, 0.25),
    (bloomery.ScalableBloomFilter, 0.01, 0.05),
    (bloomery.ScalableCuckooFilter, 0.01, 0.25),
    (bloomery.StaticFilter, 1 / 256, 0.02),
    (bloomery.StaticFilter, 0.01, 0.02),
    (bloomery.StaticFilter, 0.05, 0.02),
    (bloomery.StaticFilter, 0.001, 0.02),
]


def binomial_band(p, trials, relative_slack):
    """The interval M·p ± (5σ + slack·M·p) for X ~ Binomial(M, p)."""
    mean = trials * p
    half = 5 * math.sqrt(trials * p * (1 - p)) + relative_slack * mean
    return mean - half, mean + half


@pytest.mark.parametrize("cls,fpr,slack", CASES, ids=[f"{kind_id(c)}-{p:g}" for c, p, _ in CASES])
def test_measured_fpr_matches_the_model(cls, fpr, slack):
    if cls is bloomery.StaticFilter:
        f = cls.build(INSERTED, fpr)
    else:
        # Scalable filters start small, so the compound rate of several sub-filters is tested.
        growing = cls in (bloomery.ScalableBloomFilter, bloomery.ScalableCuckooFilter)
        f = cls(N // 8 if growing else N, fpr)
        f.update(INSERTED)
    assert all(f.contains_many(INSERTED))
    positives = sum(f.contains_many(ABSENT))
    model = f.fpr()
    low, high = binomial_band(model, M, slack)
    assert low <= positives <= high, (
        f"{cls.__name__}: {positives} false positives in {M} ({positives / M:.4%}), model "
        f"{model:.4%} allows [{low:.0f}, {high:.0f}]"
    )
    if cls is not bloomery.ScalableCuckooFilter:
        assert model <= fpr * 1.02, f"{cls.__name__}: model rate {model} above target {fpr}"
