//! Samples of durations and their percentiles (nearest rank), in milliseconds.

use std::time::Duration;

/// A set of timings of one kind.
#[derive(Debug, Clone, Default)]
pub struct Samples {
    ms: Vec<f64>,
}

impl Samples {
    /// Adds one timing.
    pub fn push(&mut self, elapsed: Duration) {
        self.ms.push(elapsed.as_secs_f64() * 1000.0);
    }

    /// Timings in ms, from [`values`](Self::values) of another process.
    pub fn from_ms(ms: Vec<f64>) -> Samples {
        Samples { ms }
    }

    /// The timings in ms, in the order they were taken.
    pub fn values(&self) -> Vec<f64> {
        self.ms.clone()
    }

    /// How many timings there are.
    pub fn len(&self) -> usize {
        self.ms.len()
    }

    /// The `p`-th percentile (0..=100) in ms, by nearest rank; 0 when empty.
    pub fn percentile(&self, p: f64) -> f64 {
        if self.ms.is_empty() {
            return 0.0;
        }
        let mut sorted = self.ms.clone();
        sorted.sort_by(f64::total_cmp);
        let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
        sorted[rank.clamp(1, sorted.len()) - 1]
    }

    /// The median in ms.
    pub fn p50(&self) -> f64 {
        self.percentile(50.0)
    }

    /// `p50 0.81 · p90 1.02 · p99 1.90 ms`.
    pub fn summary(&self) -> String {
        format!(
            "p50 {} · p90 {} · p99 {} ms",
            ms(self.p50()),
            ms(self.percentile(90.0)),
            ms(self.percentile(99.0))
        )
    }
}

impl Samples {
    /// `p50 11.2 · p90 13.0 · p99 20.1 µs`, for timings well under a millisecond.
    pub fn summary_us(&self) -> String {
        format!(
            "p50 {:.1} · p90 {:.1} · p99 {:.1} µs",
            self.p50() * 1000.0,
            self.percentile(90.0) * 1000.0,
            self.percentile(99.0) * 1000.0
        )
    }
}

/// A duration in ms with sensible precision.
pub fn ms(value: f64) -> String {
    if value.abs() >= 100.0 {
        format!("{value:.0}")
    } else if value.abs() >= 10.0 {
        format!("{value:.1}")
    } else {
        format!("{value:.2}")
    }
}

/// The median of plain numbers (throughputs of repeated runs).
pub fn median(values: &[f64]) -> f64 {
    if values.is_empty() {
        return 0.0;
    }
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    sorted[(sorted.len() - 1) / 2]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank() {
        let mut samples = Samples::default();
        for ms in 1..=100 {
            samples.push(Duration::from_millis(ms));
        }
        assert_eq!(samples.p50(), 50.0);
        assert_eq!(samples.percentile(90.0), 90.0);
        assert_eq!(samples.percentile(99.0), 99.0);
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
    }
}
