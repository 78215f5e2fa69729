//! The estimators' input features, computed the same way in training and in `acp monitor`.
//!
//! - Frame boundaries (thesis (4.3)): for packet i, the last m inter-arrival times
//!   `t_{i−m+1} … t_i` (µs, from receive timestamps) and, optionally, their standard deviation
//!   σ_i ([`BoundaryWindow`]). Gaps above a cap count as the cap: the trainer sets it at the
//!   top of its training set's gaps, so a receiver whose frames lie further apart than any
//!   in training (an idle or shared medium, another MCS) is not extrapolated to.
//! - Bottleneck location (thesis (4.6)): for frame i, the aggregation levels of the last n
//!   frames and the fraction of packets lost among the last p received, losses being holes in
//!   the sequence numbers ([`BottleneckWindow`]).
//!
//! [`Frames`] turns per-packet "first of a frame" decisions into frames and their levels.

use std::collections::VecDeque;

/// The last m inter-arrival times of a packet stream.
#[derive(Debug, Clone)]
pub struct BoundaryWindow {
    m: usize,
    sigma: bool,
    cap_us: f64,
    last_ns: Option<u64>,
    gaps_us: VecDeque<f64>,
}

impl BoundaryWindow {
    /// A window of `m` ≥ 1 inter-arrival times, with their standard deviation if `sigma`, each
    /// capped at `cap_us` (`f64::INFINITY`: none).
    pub fn new(m: usize, sigma: bool, cap_us: f64) -> Self {
        BoundaryWindow {
            m,
            sigma,
            cap_us,
            last_ns: None,
            gaps_us: VecDeque::with_capacity(m + 1),
        }
    }

    /// Features per packet: m, plus one with σ.
    pub fn width(&self) -> usize {
        self.m + usize::from(self.sigma)
    }

    /// The next packet's receive timestamp (ns; an earlier one than the last counts as a gap of
    /// zero); its features once m inter-arrival times are known.
    pub fn push(&mut self, stamp_ns: u64) -> Option<Vec<f64>> {
        let last = self
            .last_ns
            .replace(stamp_ns.max(self.last_ns.unwrap_or(0)));
        let gap = (stamp_ns.saturating_sub(last?) as f64 / 1e3).min(self.cap_us);
        if self.gaps_us.len() == self.m {
            self.gaps_us.pop_front();
        }
        self.gaps_us.push_back(gap);
        (self.gaps_us.len() == self.m).then(|| {
            let mut x: Vec<f64> = self.gaps_us.iter().copied().collect();
            if self.sigma {
                let mean = x.iter().sum::<f64>() / self.m as f64;
                let var = x.iter().map(|g| (g - mean).powi(2)).sum::<f64>() / self.m as f64;
                x.push(var.sqrt());
            }
            x
        })
    }
}

/// Frames and their aggregation levels from per-packet "first of a frame" marks.
#[derive(Debug, Clone, Default)]
pub struct Frames {
    max_level: usize,
    /// A frame's first packet has been seen (packets before it belong to a frame whose start
    /// was missed, and are not counted).
    started: bool,
    current: usize,
    closed: usize,
    level_sum: f64,
}

impl Frames {
    /// Levels are capped at `max_level` packets (the thesis: "capped at N_max", §4.4.1).
    pub fn new(max_level: usize) -> Self {
        Frames {
            max_level,
            ..Frames::default()
        }
    }

    /// One more packet; `first`: it starts a new frame. Returns the level of the frame this
    /// closes, if any.
    pub fn packet(&mut self, first: bool) -> Option<usize> {
        let closed = (first && self.started).then(|| self.current.min(self.max_level));
        self.started |= first;
        if let Some(level) = closed {
            self.closed += 1;
            self.level_sum += level as f64;
        }
        if first {
            self.current = 0;
        }
        self.current += 1;
        closed
    }

    /// The frames closed since the last call and their mean level (`None`: none closed).
    pub fn take(&mut self) -> Option<(usize, f64)> {
        let out = (self.closed > 0).then(|| (self.closed, self.level_sum / self.closed as f64));
        self.closed = 0;
        self.level_sum = 0.0;
        out
    }
}

/// The last n frames' levels and the loss among the last p packets.
#[derive(Debug, Clone)]
pub struct BottleneckWindow {
    n: usize,
    p: usize,
    levels: VecDeque<f64>,
    /// Per received packet: holes it opened (a jump in sequence) or −1 if it filled one (late).
    holes: VecDeque<i64>,
    highest: Option<u64>,
}

impl BottleneckWindow {
    /// Windows of `n` ≥ 1 frames and `p` ≥ 1 packets.
    pub fn new(n: usize, p: usize) -> Self {
        BottleneckWindow {
            n,
            p,
            levels: VecDeque::with_capacity(n + 1),
            holes: VecDeque::with_capacity(p + 1),
            highest: None,
        }
    }

    /// A received packet's sequence number.
    pub fn packet(&mut self, seq: u64) {
        let change = match self.highest {
            None => 0,
            Some(h) if seq > h => (seq - h - 1) as i64,
            Some(_) => -1,
        };
        self.highest = Some(self.highest.map_or(seq, |h| h.max(seq)));
        if self.holes.len() == self.p {
            self.holes.pop_front();
        }
        self.holes.push_back(change);
    }

    /// A frame of `level` packets ended; the features once n frames and p packets are known.
    pub fn frame(&mut self, level: usize) -> Option<Vec<f64>> {
        if self.levels.len() == self.n {
            self.levels.pop_front();
        }
        self.levels.push_back(level as f64);
        (self.levels.len() == self.n && self.holes.len() == self.p).then(|| {
            let lost = self.holes.iter().sum::<i64>().max(0) as f64;
            let mut x: Vec<f64> = self.levels.iter().copied().collect();
            x.push(lost / (self.p as f64 + lost));
            x
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn boundary_features_are_the_last_gaps_and_their_deviation() {
        let mut w = BoundaryWindow::new(2, true, f64::INFINITY);
        assert_eq!(w.push(0), None);
        assert_eq!(w.push(10_000), None);
        assert_eq!(w.push(40_000), Some(vec![10.0, 30.0, 10.0]));
        assert_eq!(w.push(40_000), Some(vec![30.0, 0.0, 15.0]));
        // Out of order: a gap of zero, and the clock does not run backwards.
        assert_eq!(w.push(39_000), Some(vec![0.0, 0.0, 0.0]));
        assert_eq!(w.push(41_000), Some(vec![0.0, 1.0, 0.5]));
    }

    #[test]
    fn gaps_above_the_cap_count_as_the_cap() {
        let mut w = BoundaryWindow::new(2, false, 20.0);
        w.push(0);
        w.push(10_000);
        assert_eq!(w.push(5_010_000), Some(vec![10.0, 20.0]));
    }

    #[test]
    fn frames_close_on_the_next_first_packet_and_are_capped() {
        let mut f = Frames::new(3);
        let marks = [false, true, false, true, false, false, false, false, true];
        let closed: Vec<Option<usize>> = marks.iter().map(|m| f.packet(*m)).collect();
        assert_eq!(
            closed[1], None,
            "the frame whose start was not seen is not counted"
        );
        assert_eq!(closed[3], Some(2));
        assert_eq!(closed[8], Some(3), "five packets capped at 3");
        assert_eq!(f.take(), Some((2, 2.5)));
        assert_eq!(f.take(), None);
    }

    #[test]
    fn losses_are_holes_net_of_late_packets() {
        let mut w = BottleneckWindow::new(1, 4);
        for seq in [0, 1, 4, 2] {
            w.packet(seq);
        }
        // 4 opened two holes (2, 3); 2 arrived late and filled one: one lost of five.
        assert_eq!(w.frame(4), Some(vec![4.0, 0.2]));
    }
}
