//! Issue 24's "no allocation per ACK": a source under Seek handles 20,000 ACKs of a closed loop
//! (Seek's measurement sums, its epochs' decisions, the rate changes) without a single heap
//! allocation in `Source::handle_datagram`, counted by a global allocator that counts only while
//! the thread under test asks it to. (The send path is not covered: as the rate climbs, it grows
//! its buffers a few times in 20,000 updates.)

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::collections::VecDeque;
use std::net::SocketAddr;
use std::time::Duration;

use acp_core::controller::Seek;
use acp_core::{AppMode, Monitor, MonitorConfig, Source, SourceConfig, Time};

thread_local! {
    /// Whether this thread's allocations are being counted, and how many there were.
    static COUNTING: Cell<bool> = const { Cell::new(false) };
    static ALLOCATIONS: Cell<u64> = const { Cell::new(0) };
}

/// The system allocator, counting the allocations of a thread that asked for it.
struct Counting;

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // `try_with`: the thread-locals may be gone while a thread shuts down.
        if COUNTING.try_with(Cell::get).unwrap_or(false) {
            let _ = ALLOCATIONS.try_with(|n| n.set(n.get() + 1));
        }
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

#[test]
fn seek_handles_acks_without_allocating() {
    let mode = AppMode::GenerateAtWill(Box::new(|_, out: &mut Vec<u8>| {
        out.extend_from_slice(&[0x5A; 64])
    }));
    let mut src = Source::new(
        SourceConfig::default(),
        Box::new(Seek::new()),
        mode,
        1,
        Time::ZERO,
    );
    let mut mon = Monitor::new(MonitorConfig::default(), Time::ZERO);
    let peer = SocketAddr::from(([127, 0, 0, 1], 1));
    let (mut buf, mut ack) = (Vec::with_capacity(256), vec![0u8; 128]);
    let mut now = Time::ZERO;
    let rtt = Duration::from_millis(5);
    // A closed loop: each datagram's ACK comes back one RTT after it left. After 2,000 ACKs of
    // warm-up, uncounted (the initialisation probes, Seek's fast start, the monitor's session),
    // 20,000 more are counted: they span many Seek epochs, so its decisions and the rate changes
    // run on the counted path too.
    let mut in_flight: VecDeque<(Time, Vec<u8>)> = (0..4096)
        .map(|_| (Time::ZERO, Vec::with_capacity(128)))
        .collect();
    let mut free: Vec<Vec<u8>> = in_flight.drain(..).map(|(_, b)| b).collect();
    let mut run =
        |src: &mut Source, mon: &mut Monitor, now: &mut Time, acks: usize, count: bool| {
            let mut handled = 0;
            while handled < acks {
                while src.poll_transmit(*now, &mut buf).is_some() {
                    let h = mon
                        .handle_datagram(*now, peer, &buf, &mut ack)
                        .expect("ack");
                    let mut b = free.pop().expect("a free buffer");
                    b.clear();
                    b.extend_from_slice(&ack[..h.ack_len]);
                    in_flight.push_back((*now + rtt, b));
                }
                let next_ack = in_flight.front().map(|(t, _)| *t);
                let deadline = src.poll_timeout();
                let ack_first = match (next_ack, deadline) {
                    (Some(t), Some(d)) => t <= d,
                    (Some(_), None) => true,
                    (None, Some(_)) => false,
                    (None, None) => panic!("nothing to wait for"),
                };
                if ack_first {
                    let (t, b) = in_flight.pop_front().expect("in flight");
                    *now = t.max(*now);
                    COUNTING.with(|c| c.set(count));
                    src.handle_datagram(*now, &b);
                    COUNTING.with(|c| c.set(false));
                    free.push(b);
                    handled += 1;
                } else if let Some(d) = deadline {
                    *now = d.max(*now);
                }
            }
        };
    run(&mut src, &mut mon, &mut now, 2_000, false);
    let epochs_before = src.stats(now).epochs;
    run(&mut src, &mut mon, &mut now, 20_000, true);
    let allocations = ALLOCATIONS.with(Cell::get);
    assert_eq!(allocations, 0, "{allocations} allocations over 20,000 ACKs");
    let epochs = src.stats(now).epochs - epochs_before;
    assert!(epochs >= 10, "the ACKs crossed {epochs} epochs");
}
