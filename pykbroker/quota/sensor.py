"""The measurements behind client quotas, as Kafka's metrics library takes them.

`SampledRate` is Kafka's `Rate` over a `SampledStat`: values are summed in `samples` windows of
`window_ms` each (`quota.window.num` × `quota.window.size.seconds`, 11 × 1 s by default); the rate
is the sum of the live windows over the elapsed time since the oldest one began, counted as at least
`samples - 1` whole windows (so that a new client is not measured over a few milliseconds).
`TokenBucket` is Kafka's token bucket for controller mutations: it holds at most
`samples × window × quota` tokens, refills at the quota's rate and may go negative.

`QuotaSensor` records into one of them and checks the quota bound, as Kafka's `Sensor.record`
does: the value is recorded first, then the measured value is compared with the bound, and a
violation is reported (`QuotaViolation`) with what the throttle time is computed from. Everything
here runs on the event loop; times are milliseconds of the wall clock, as Kafka's.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class WindowConfig:
    """Kafka's MetricConfig of a quota sensor: how many windows of how long."""

    samples: int = 11
    window_ms: int = 1000


@dataclass(frozen=True, eq=False)  # one throttle's measure, never compared
class QuotaViolation:
    """The measured value that broke the bound, and the window it was measured over (ms)."""

    value: float
    bound: float
    window_ms: int


class _Sample:
    __slots__ = ("start_ms", "value")

    def __init__(self, start_ms: int) -> None:
        self.start_ms = start_ms
        self.value = 0.0

    def reset(self, now_ms: int) -> None:
        self.start_ms = now_ms
        self.value = 0.0


class SampledRate:
    """Kafka's `Rate` (per second) over a windowed sum."""

    def __init__(self, config: WindowConfig) -> None:
        self.config = config
        self._samples: list[_Sample] = []
        self._current = 0

    def record(self, value: float, now_ms: int) -> None:
        sample = self._current_sample(now_ms)
        if now_ms - sample.start_ms >= self.config.window_ms:
            sample = self._advance(now_ms)
        sample.value += value

    def measure(self, now_ms: int) -> float:
        """The rate per second now."""
        window_ms = self.window_size_ms(now_ms)  # purges the expired samples first
        total = sum(sample.value for sample in self._samples)
        return total / (window_ms / 1000.0)

    def window_size_ms(self, now_ms: int) -> int:
        """Kafka's `Rate.windowSize`: the time since the oldest live sample began, counted as at
        least `samples - 1` whole windows, at least 1 ms."""
        self._purge(now_ms)
        elapsed = now_ms - self._oldest(now_ms).start_ms
        full_windows = elapsed // self.config.window_ms
        min_full_windows = self.config.samples - 1
        if full_windows < min_full_windows:
            elapsed += (min_full_windows - full_windows) * self.config.window_ms
        return max(elapsed, 1)

    def _current_sample(self, now_ms: int) -> _Sample:
        if not self._samples:
            self._samples.append(_Sample(now_ms))
        return self._samples[self._current]

    def _advance(self, now_ms: int) -> _Sample:
        self._current = (self._current + 1) % self.config.samples
        if self._current >= len(self._samples):
            sample = _Sample(now_ms)
            self._samples.append(sample)
            return sample
        sample = self._samples[self._current]
        sample.reset(now_ms)
        return sample

    def _purge(self, now_ms: int) -> None:
        expire_age = self.config.samples * self.config.window_ms
        for sample in self._samples:
            if now_ms - sample.start_ms >= expire_age:
                sample.reset(now_ms)

    def _oldest(self, now_ms: int) -> _Sample:
        if not self._samples:
            self._samples.append(_Sample(now_ms))
        return min(self._samples, key=lambda sample: sample.start_ms)


class TokenBucket:
    """Kafka's `TokenBucket`: starts full; `measure` is the tokens left (negative when overdrawn)."""

    def __init__(self, config: WindowConfig) -> None:
        self.config = config
        self._tokens = 0.0
        self._last_ms = 0

    def record(self, value: float, now_ms: int, quota: float) -> None:
        self._refill(now_ms, quota)
        self._tokens = min(self._burst(quota), self._tokens - value)

    def measure(self, now_ms: int, quota: float) -> float:
        self._refill(now_ms, quota)
        return self._tokens

    def _burst(self, quota: float) -> float:
        return self.config.samples * (self.config.window_ms / 1000.0) * quota

    def _refill(self, now_ms: int, quota: float) -> None:
        elapsed_s = (now_ms - self._last_ms) / 1000.0
        self._tokens = min(self._burst(quota), self._tokens + quota * elapsed_s)
        self._last_ms = now_ms


class QuotaSensor:
    """One quota sensor (Kafka's per user/client-id `Sensor` with its quota `MetricConfig`): the
    rate it measures, its bound (None: unlimited), and the throttle-time average beside it."""

    def __init__(self, config: WindowConfig, bound: float | None, *, token_bucket: bool = False) -> None:
        self.bound = bound
        self.rate: SampledRate | None = None if token_bucket else SampledRate(config)
        self.bucket: TokenBucket | None = TokenBucket(config) if token_bucket else None
        self.throttle_time = SampledAverage(config)
        self.last_used_ms = 0

    def record(self, value: float, now_ms: int, *, check: bool = True) -> QuotaViolation | None:
        """Record `value`; then, if `check`, the violation of the bound it causes (None: none)."""
        self.last_used_ms = now_ms
        if self.bucket is not None:
            if self.bound is not None:
                self.bucket.record(value, now_ms, self.bound)
        elif self.rate is not None:
            self.rate.record(value, now_ms)
        return self.check(now_ms) if check else None

    def check(self, now_ms: int) -> QuotaViolation | None:
        """Kafka's `Sensor.checkQuotas`: a rate above its bound, or a token bucket overdrawn."""
        bound = self.bound
        if bound is None:
            return None
        if self.bucket is not None:
            tokens = self.bucket.measure(now_ms, bound)
            return QuotaViolation(tokens, bound, 0) if tokens < 0 else None
        assert self.rate is not None
        value = self.rate.measure(now_ms)
        if value <= bound:
            return None
        return QuotaViolation(value, bound, self.rate.window_size_ms(now_ms))

    def measured(self, now_ms: int) -> float:
        """The sensor's metric now: the rate, or the tokens left."""
        if self.bucket is not None:
            return self.bucket.measure(now_ms, self.bound) if self.bound is not None else 0.0
        assert self.rate is not None
        return self.rate.measure(now_ms)


class SampledAverage:
    """Kafka's `Avg` over the same windows: the mean of the values recorded in the live windows."""

    def __init__(self, config: WindowConfig) -> None:
        self.config = config
        self._samples: list[tuple[int, float, int]] = []  # (window start, sum, count)

    def record(self, value: float, now_ms: int) -> None:
        if self._samples and now_ms - self._samples[-1][0] < self.config.window_ms:
            start, total, count = self._samples[-1]
            self._samples[-1] = (start, total + value, count + 1)
        else:
            self._samples.append((now_ms, value, 1))
            del self._samples[: -self.config.samples]

    def measure(self, now_ms: int) -> float:
        expire_age = self.config.samples * self.config.window_ms
        live = [(total, count) for start, total, count in self._samples if now_ms - start < expire_age]
        count = sum(c for _, c in live)
        return sum(t for t, _ in live) / count if count else 0.0
