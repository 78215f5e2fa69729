//! RFC 6356's linked increases algorithm (LIA): the congestion-avoidance increase of a subflow
//! coupled to all subflows of its connection, so that the connection takes no more of a shared
//! bottleneck than one TCP on its best path would (the RFC's goals 1–2, §3).
//!
//! Windows are in bytes. For each ACK of `acked` bytes on subflow i in congestion avoidance the
//! window grows by `min(α·acked·MSS_i / cwnd_total, acked·MSS_i / cwnd_i)` (RFC 6356 §3, eq. (2)),
//! with `α = cwnd_total · max_i(cwnd_i / rtt_i²) / (Σ_i cwnd_i / rtt_i)²` (§3, eq. (1)).
//! Slow start, loss response and timeouts stay each subflow's own (the RFC changes only the
//! increase).
//!
//! [`Lia`] is the congestion control of one coupled subflow: NewReno's window
//! ([`RenoWindow`]) whose congestion-avoidance increase is eq. (2), reading the other subflows
//! through a [`Coupling`] the connection refreshes before every ACK.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use acp_core::Time;

use crate::tcp::cc::newreno::RenoWindow;
use crate::tcp::cc::{AckEvent, RenoBased};

/// What LIA reads of one subflow.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LiaPath {
    /// Congestion window, bytes.
    pub cwnd: u64,
    /// Smoothed RTT.
    pub srtt: Duration,
}

/// RFC 6356 eq. (1): the aggressiveness factor α; `None` when no subflow has both a window and
/// an RTT (nothing to couple).
pub fn alpha(paths: &[LiaPath]) -> Option<f64> {
    let usable = paths
        .iter()
        .filter(|p| p.cwnd > 0 && !p.srtt.is_zero())
        .map(|p| (p.cwnd as f64, p.srtt.as_secs_f64()));
    let (mut total, mut best, mut sum) = (0.0, 0.0_f64, 0.0);
    for (cwnd, rtt) in usable {
        total += cwnd;
        best = best.max(cwnd / (rtt * rtt));
        sum += cwnd / rtt;
    }
    (sum > 0.0).then(|| total * best / (sum * sum))
}

/// RFC 6356 eq. (2): bytes (fractional) by which subflow `index` grows on an ACK of `acked`
/// bytes with segment size `mss`. Falls back to the uncoupled increase `acked·mss/cwnd_i` when α
/// is undefined; a subflow with an empty window grows by `acked` (it cannot be in congestion
/// avoidance).
pub fn increase(paths: &[LiaPath], index: usize, acked: u64, mss: u64) -> f64 {
    let own = paths[index].cwnd;
    if own == 0 {
        return acked as f64;
    }
    let uncoupled = acked as f64 * mss as f64 / own as f64;
    let total: u64 = paths.iter().map(|p| p.cwnd).sum();
    let coupled = alpha(paths).map_or(uncoupled, |a| a * acked as f64 * mss as f64 / total as f64);
    coupled.min(uncoupled)
}

/// The subflows of one connection as LIA reads them, shared by the connection (which writes
/// every subflow's window and SRTT before an ACK is handled) and its subflows' controllers.
pub type Coupling = Arc<Mutex<Vec<LiaPath>>>;

/// A coupled subflow's congestion control: NewReno's slow start, loss and timeout response,
/// and RFC 6356's increase in congestion avoidance (fractions of a byte carried over).
#[derive(Debug)]
pub struct Lia {
    window: RenoWindow,
    smss: u64,
    index: usize,
    coupling: Coupling,
    carry: f64,
}

impl Lia {
    /// Subflow `index` of `coupling`, segments of `smss` bytes, `initial` bytes of window.
    pub fn new(smss: u64, initial: u64, index: usize, coupling: Coupling) -> Self {
        Lia {
            window: RenoWindow::new(smss, initial),
            smss,
            index,
            coupling,
            carry: 0.0,
        }
    }
}

impl RenoBased for Lia {
    fn reno(&self) -> &RenoWindow {
        &self.window
    }

    fn reno_mut(&mut self) -> &mut RenoWindow {
        &mut self.window
    }

    fn acked(&mut self, _now: Time, ack: &AckEvent) {
        if ack.in_recovery || !ack.cwnd_limited {
            return;
        }
        if self.window.in_slow_start() {
            self.window.slow_start(ack.acked);
            return;
        }
        let mut paths = match self.coupling.lock() {
            Ok(p) => p.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        };
        if self.index >= paths.len() {
            paths.resize(
                self.index + 1,
                LiaPath {
                    cwnd: 0,
                    srtt: Duration::ZERO,
                },
            );
        }
        paths[self.index].cwnd = self.window.cwnd;
        self.carry += increase(&paths, self.index, ack.acked, self.smss);
        let whole = self.carry.floor();
        self.carry -= whole;
        self.window.cwnd += whole as u64;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn path(cwnd: u64, ms: u64) -> LiaPath {
        LiaPath {
            cwnd,
            srtt: Duration::from_millis(ms),
        }
    }

    /// For n identical subflows eq. (1) reduces to α = 1/n (n·w·(w/r²) / (n·w/r)²).
    #[test]
    fn alpha_of_identical_paths_is_one_over_n() {
        for n in 1..=4 {
            let paths = vec![path(30_000, 40); n];
            let a = alpha(&paths).unwrap();
            assert!((a - 1.0 / n as f64).abs() < 1e-12, "n = {n}: α = {a}");
        }
    }

    /// The RFC's goal: a fluid model of AIMD under the same per-packet loss probability p on a
    /// shared bottleneck. One TCP's equilibrium window is sqrt(2/p) segments; LIA's subflows,
    /// summed, must not exceed it. Each round trip every subflow gains `increase` per ACKed
    /// segment and loses half its window with probability p per segment (in expectation).
    #[test]
    fn coupled_subflows_take_no_more_than_one_tcp_on_a_shared_bottleneck() {
        let mss = 1_000u64;
        let p: f64 = 0.001;
        let single = (2.0 / p).sqrt() * mss as f64;
        for n in 2..=3 {
            let mut w = vec![10.0 * mss as f64; n];
            for _ in 0..200_000 {
                let paths: Vec<LiaPath> = w.iter().map(|&c| path(c as u64, 50)).collect();
                for (i, wi) in w.iter_mut().enumerate() {
                    let segs = *wi / mss as f64;
                    let gain = increase(&paths, i, mss, mss) * segs;
                    let loss = p * segs * *wi / 2.0;
                    *wi = (*wi + (gain - loss) * 0.01).max(mss as f64);
                }
            }
            let total: f64 = w.iter().sum();
            // The Euler step and the window floor bias the total slightly; 5 % above one
            // TCP's window would mean the coupling failed.
            assert!(
                total <= single * 1.05,
                "n = {n}: total {total} vs one TCP {single}"
            );
            assert!(
                total >= single * 0.8,
                "n = {n}: total {total} vs one TCP {single}"
            );
        }
    }

    #[test]
    fn increase_never_exceeds_the_uncoupled_one() {
        let paths = [path(10_000, 10), path(50_000, 200)];
        for i in 0..2 {
            let own = paths[i].cwnd;
            assert!(increase(&paths, i, 1_500, 1_500) <= 1_500.0 * 1_500.0 / own as f64);
        }
    }
}
