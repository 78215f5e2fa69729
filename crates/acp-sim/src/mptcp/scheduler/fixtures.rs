//! Hand-built subflow states for the schedulers' tests: segment counts of a fixed MSS.

use std::time::Duration;

use super::{ConnectionView, SubflowView};

/// Segment size of every fixture, bytes.
pub const MSS: u64 = 1_000;

/// A subflow with RTT `ms`, a window of `cwnd_segs` segments and `out_segs` in flight.
pub fn flow(ms: u64, cwnd_segs: u64, out_segs: u64) -> SubflowView {
    SubflowView::new(
        Duration::from_millis(ms),
        cwnd_segs * MSS,
        out_segs * MSS,
        MSS,
    )
}

/// A connection with `segs` segments unassigned and an ample window.
pub fn backlog(segs: u64) -> ConnectionView {
    ConnectionView::new(segs * MSS, 1 << 30)
}
