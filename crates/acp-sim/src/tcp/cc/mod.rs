//! Congestion controls behind one trait, [`CongestionControl`], each in its own module:
//! [`newreno`] (RFC 5681, RFC 6582), [`cubic`] (RFC 9438, with Linux's [`hystart`]), [`bbr`] (BBR v1,
//! draft-cardwell-iccrg-bbr-congestion-control-00), [`vegas`] (Brakmo and Peterson 1995) and
//! [`yeah`] (Baiocchi, Castellani and Vacirca 2007).
//!
//! The window counts the sender's unit ([`crate::tcp::WindowUnit`]): bytes, with `smss` the
//! segment size, or packets, with `smss` one. A controller hears about every ACK that acknowledges new data
//! ([`AckEvent`]: bytes acknowledged, the RTT sample if Karn's rule allows one, whether the
//! sender was limited by the window, a delivery-rate sample, round-trip boundaries), about loss
//! found by the sender (it sets the window fast recovery starts from), about the end of
//! fast recovery and about retransmission timeouts. Loss recovery itself (which segment to
//! resend, window inflation during recovery) is the sender's and the same for all of them.
//! Every hook receives `now`.

pub mod bbr;
pub mod cubic;
pub mod hystart;
pub mod newreno;
pub mod vegas;
pub mod yeah;

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

use acp_core::Time;

use newreno::RenoWindow;

/// A delivery-rate sample (draft-cheng-iccrg-delivery-rate-estimation).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RateSample {
    /// Bytes per second delivered over the sample's interval.
    pub delivery_rate: f64,
    /// Whether the application, not the network, limited the sending of the sampled data.
    pub app_limited: bool,
    /// Bytes delivered (cumulatively acknowledged) when the sampled segment was sent.
    pub prior_delivered: u64,
}

/// An ACK that acknowledged new data.
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub struct AckEvent {
    /// Bytes newly acknowledged.
    pub acked: u64,
    /// What this ACK newly delivered, in the window's unit: cumulatively acknowledged and not
    /// SACKed before, or newly SACKed (Linux's `acked_sacked`; each segment counts once).
    pub acked_sacked: u64,
    /// This ACK's RTT sample (none if it acknowledged a retransmitted segment).
    pub rtt: Option<Duration>,
    /// Smallest RTT sample of the connection so far.
    pub min_rtt: Option<Duration>,
    /// What the sender counts in flight, in the window's unit, before this ACK was processed
    /// (RFC 6675's `pipe`; Linux's `prior_in_flight`).
    pub prior_pipe: u64,
    /// The same after it: sent and not cumulatively acknowledged, less what is SACKed or marked
    /// lost, plus what was retransmitted (Linux's `tcp_packets_in_flight`).
    pub pipe: u64,
    /// What this ACK newly found lost, in the window's unit (Linux's `rs->losses`).
    pub losses: u64,
    /// Bytes delivered (cumulatively acknowledged) so far, this ACK included.
    pub delivered: u64,
    /// Whether the sender is in fast recovery.
    pub in_recovery: bool,
    /// Whether the window, rather than the application or the receiver, limited sending during
    /// this round trip or the one before (RFC 7661's idea, as Linux's `tcp_is_cwnd_limited`):
    /// windows grow only then.
    pub cwnd_limited: bool,
    /// Whether this ACK starts a new round trip (it acknowledges data sent after the ACK that
    /// started the previous one).
    pub round_start: bool,
    /// The delivery-rate sample of this ACK.
    pub rate: Option<RateSample>,
}

impl AckEvent {
    /// An ACK of `acked` bytes, all newly delivered, with nothing else known (no RTT sample, no
    /// rate sample, not in recovery, window-limited, mid-round): the fields are public to set the rest, e.g. when
    /// driving a controller without a sender.
    pub fn new(acked: u64) -> Self {
        AckEvent {
            acked,
            acked_sacked: acked,
            rtt: None,
            min_rtt: None,
            prior_pipe: 0,
            pipe: 0,
            losses: 0,
            delivered: 0,
            in_recovery: false,
            cwnd_limited: true,
            round_start: false,
            rate: None,
        }
    }
}

/// A loss found while no recovery was under way.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct LossEvent {
    /// What was sent and not cumulatively acknowledged (RFC 5681's FlightSize).
    pub flight: u64,
    /// What the sender counts in flight once the losses found are taken out (RFC 6675's
    /// `pipe`, Linux's `tcp_packets_in_flight`): what BBR's packet conservation starts from.
    pub pipe: u64,
}

impl LossEvent {
    /// A loss with `flight` outstanding, `pipe` of it still counted in flight.
    pub fn new(flight: u64, pipe: u64) -> Self {
        LossEvent { flight, pipe }
    }
}

/// What a congestion control does.
pub trait CongestionControl: fmt::Debug + Send {
    /// New data was acknowledged.
    fn on_ack(&mut self, now: Time, ack: &AckEvent);
    /// An ACK that acknowledged nothing new cumulatively SACKed data for the first time
    /// (`acked` is 0, `acked_sacked` what it SACKed). Only BBR hears of it: Linux runs BBR on
    /// every ACK that delivers, window-based controls grow on cumulative ACKs only.
    fn on_sack(&mut self, _now: Time, _ack: &AckEvent) {}
    /// A segment was lost (RACK, or three duplicate ACKs without SACK). The window set here
    /// is the one fast recovery starts from (the sender adds NewReno's inflation).
    fn on_loss(&mut self, now: Time, loss: &LossEvent);
    /// Fast recovery ended (an ACK covered everything sent before it started).
    fn on_recovery_end(&mut self, now: Time);
    /// The retransmission timer expired with `flight` bytes in flight.
    fn on_timeout(&mut self, now: Time, flight: u64);
    /// The congestion window (bytes).
    fn window(&self) -> u64;
    /// The slow-start threshold (bytes; `u64::MAX` before the first loss).
    fn ssthresh(&self) -> u64;
    /// Pacing rate (bytes/s), if the controller paces.
    fn pacing_rate(&self) -> Option<f64> {
        None
    }
    /// The controller's phase, for reports and tests (e.g. `slow start`, `startup`).
    fn phase(&self) -> &'static str;
}

/// A controller built on a [`RenoWindow`] (NewReno, CUBIC, Vegas, YeAH): implementing this
/// gives it [`CongestionControl`], its window, threshold and phase the Reno window's, its loss
/// and timeout hooks Reno's unless it says otherwise, and nothing to do when recovery ends.
pub trait RenoBased: fmt::Debug + Send {
    /// The window.
    fn reno(&self) -> &RenoWindow;
    /// The window, to change it.
    fn reno_mut(&mut self) -> &mut RenoWindow;
    /// New data was acknowledged ([`CongestionControl::on_ack`]).
    fn acked(&mut self, now: Time, ack: &AckEvent);
    /// Three duplicate ACKs ([`CongestionControl::on_loss`]): Reno halves.
    fn lost(&mut self, _now: Time, flight: u64) {
        self.reno_mut().halve(flight);
    }
    /// A timeout ([`CongestionControl::on_timeout`]): Reno's threshold and loss window.
    fn timed_out(&mut self, _now: Time, flight: u64) {
        self.reno_mut().collapse(flight);
    }
    /// The phase ([`CongestionControl::phase`]): Reno's.
    fn reno_phase(&self) -> &'static str {
        self.reno().phase()
    }
}

impl<T: RenoBased> CongestionControl for T {
    fn on_ack(&mut self, now: Time, ack: &AckEvent) {
        self.acked(now, ack);
    }

    fn on_loss(&mut self, now: Time, loss: &LossEvent) {
        self.lost(now, loss.flight);
    }

    fn on_recovery_end(&mut self, _now: Time) {}

    fn on_timeout(&mut self, now: Time, flight: u64) {
        self.timed_out(now, flight);
    }

    fn window(&self) -> u64 {
        self.reno().cwnd
    }

    fn ssthresh(&self) -> u64 {
        self.reno().ssthresh
    }

    fn phase(&self) -> &'static str {
        self.reno_phase()
    }
}

/// Which congestion control a connection runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CcKind {
    /// NewReno (RFC 5681 windows, RFC 6582 recovery).
    NewReno,
    /// CUBIC (RFC 9438).
    Cubic,
    /// BBR v1.
    Bbr,
    /// Vegas.
    Vegas,
    /// YeAH.
    Yeah,
}

impl CcKind {
    /// Every kind, in the order the paper lists them.
    pub const ALL: [CcKind; 5] = [
        CcKind::NewReno,
        CcKind::Cubic,
        CcKind::Vegas,
        CcKind::Yeah,
        CcKind::Bbr,
    ];

    /// A controller of this kind for segments of `smss` bytes and an initial window of
    /// `initial_window` segments; `seed` drives its random choices (BBR's first gain phase).
    pub fn build(self, smss: u32, initial_window: u32, seed: u64) -> Box<dyn CongestionControl> {
        let (smss, iw) = (u64::from(smss), u64::from(initial_window) * u64::from(smss));
        match self {
            CcKind::NewReno => Box::new(newreno::NewReno::new(smss, iw)),
            CcKind::Cubic => Box::new(cubic::Cubic::new(smss, iw)),
            CcKind::Bbr => Box::new(bbr::Bbr::new(smss, iw, seed)),
            CcKind::Vegas => Box::new(vegas::Vegas::new(smss, iw)),
            CcKind::Yeah => Box::new(yeah::Yeah::new(smss, iw)),
        }
    }
}

impl fmt::Display for CcKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            CcKind::NewReno => "newreno",
            CcKind::Cubic => "cubic",
            CcKind::Bbr => "bbr",
            CcKind::Vegas => "vegas",
            CcKind::Yeah => "yeah",
        })
    }
}

impl FromStr for CcKind {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        match s.to_ascii_lowercase().as_str() {
            "newreno" | "reno" => Ok(CcKind::NewReno),
            "cubic" => Ok(CcKind::Cubic),
            "bbr" => Ok(CcKind::Bbr),
            "vegas" => Ok(CcKind::Vegas),
            "yeah" => Ok(CcKind::Yeah),
            _ => Err(format!(
                "unknown congestion control {s:?} (expected newreno, cubic, bbr, vegas or yeah)"
            )),
        }
    }
}
