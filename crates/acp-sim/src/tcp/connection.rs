//! One TCP connection: the application at both ends, the [`Sender`] and the [`Receiver`].
//!
//! The engine drives it like any sans-IO endpoint: it passes in what arrives
//! ([`Connection::on_data`] at the receiving end, [`Connection::on_ack`] at the sending end) and
//! wakes it at [`Connection::poll_timeout`] ([`Connection::on_timer`]); every call reports what
//! happened through [`Output`]s — packets to put on the path, updates written and read, bytes
//! read, RTT samples. Both ends live in one value because the simulator holds both; they share
//! nothing but the record of which update ends where in the stream, which stands in for the
//! length prefixes the receiving application would parse.

use std::collections::VecDeque;
use std::time::Duration;

use acp_core::Time;

use super::app::{Application, UpdateMode};
use super::receiver::Receiver;
use super::sender::Sender;
use super::{Ack, Segment, TcpConfig, Wire};

/// Something a call on a [`Connection`] did.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Output {
    /// Put this on the path (data forward, ACKs back).
    Transmit(Wire),
    /// The sending application wrote an update generated at `now`.
    Written,
    /// The sending application had to skip an update: the send buffer was full.
    Skipped,
    /// An update reached the receiving application, in order.
    Delivered {
        /// When it was generated (written).
        generated: Time,
        /// Its size.
        bytes: u32,
    },
    /// Bytes reached the receiving application, in order.
    Read(u64),
    /// The sender's smoothed RTT, read when an ACK acknowledged new data (as the lab reads
    /// `TCP_INFO`).
    Rtt(Duration),
}

/// A TCP connection and the applications at its ends.
#[derive(Debug)]
pub struct Connection {
    sender: Sender,
    receiver: Receiver,
    app: Application,
    /// Updates written and not yet read: where each ends in the stream and when it was
    /// generated.
    records: VecDeque<(u64, Time)>,
    /// End of the bytes written.
    written: u64,
    /// When the connection first sends (the flow's start), until it has.
    start: Option<Time>,
    /// The next fixed-rate update.
    next_write: Option<Time>,
    stopped: bool,
}

impl Connection {
    /// A connection under `cfg` carrying `app`'s data from `start` on; `seed` drives the
    /// congestion control's random choices.
    pub fn new(cfg: &TcpConfig, app: Application, start: Time, seed: u64) -> Self {
        let cc = cfg.controller(seed);
        let next_write = match app {
            Application::Updates {
                mode: UpdateMode::Rate(_),
                ..
            } => Some(start),
            _ => None,
        };
        Connection {
            sender: Sender::new(cfg, cc, start),
            receiver: Receiver::new(cfg),
            app,
            records: VecDeque::new(),
            written: 0,
            start: Some(start),
            next_write,
            stopped: false,
        }
    }

    /// The sending half.
    pub fn sender(&self) -> &Sender {
        &self.sender
    }

    /// The receiving half.
    pub fn receiver(&self) -> &Receiver {
        &self.receiver
    }

    /// The sending application stops writing (data already written still goes).
    pub fn stop(&mut self) {
        self.stopped = true;
        self.next_write = None;
    }

    /// When the connection needs waking.
    pub fn poll_timeout(&self, now: Time) -> Option<Time> {
        [
            self.start,
            self.next_write,
            self.sender.poll_timeout(now),
            self.receiver.poll_timeout(),
        ]
        .into_iter()
        .flatten()
        .min()
    }

    /// Runs whatever is due at `now`.
    pub fn on_timer(&mut self, now: Time, out: &mut dyn FnMut(Output)) {
        if self.start.is_some_and(|t| t <= now) {
            self.start = None;
        }
        if let (Some(t), Application::Updates { payload, mode }) = (self.next_write, self.app) {
            if t <= now {
                if self.sender.send_space() >= u64::from(payload) {
                    self.write_update(now, payload, out);
                } else {
                    out(Output::Skipped);
                }
                if let UpdateMode::Rate(rate) = mode {
                    self.next_write = Some(t + Duration::from_secs_f64(1.0 / rate));
                }
            }
        }
        self.sender.handle_timeout(now);
        self.receiver.handle_timeout(now);
        self.flush(now, out);
    }

    /// A data segment reached the receiver.
    pub fn on_data(&mut self, now: Time, seg: Segment, out: &mut dyn FnMut(Output)) {
        let read = self.receiver.handle_segment(now, seg);
        if read > 0 {
            out(Output::Read(read));
            let upto = self.receiver.rcv_nxt();
            while let Some(&(end, generated)) = self.records.front() {
                if end > upto {
                    break;
                }
                self.records.pop_front();
                if let Application::Updates { payload, .. } = self.app {
                    out(Output::Delivered {
                        generated,
                        bytes: payload,
                    });
                }
            }
        }
        self.flush(now, out);
    }

    /// An ACK reached the sender.
    pub fn on_ack(&mut self, now: Time, ack: Ack, out: &mut dyn FnMut(Output)) {
        if let Some(rtt) = self.sender.handle_ack(now, ack) {
            out(Output::Rtt(rtt));
        }
        self.flush(now, out);
    }

    fn write_update(&mut self, now: Time, payload: u32, out: &mut dyn FnMut(Output)) {
        self.sender.write(u64::from(payload));
        self.written += u64::from(payload);
        self.records.push_back((self.written, now));
        out(Output::Written);
    }

    /// The sending application writes what it may.
    fn write(&mut self, now: Time, out: &mut dyn FnMut(Output)) {
        if self.stopped || self.start.is_some() {
            return;
        }
        match self.app {
            Application::Bulk => {
                let space = self.sender.send_space();
                self.sender.write(space);
                self.written += space;
            }
            Application::Updates {
                payload,
                mode: UpdateMode::AtWill { notsent_lowat },
            } => {
                while self.sender.send_space() >= u64::from(payload)
                    && notsent_lowat.is_none_or(|l| 2 * self.sender.not_sent() < l)
                {
                    self.write_update(now, payload, out);
                }
            }
            Application::Updates {
                mode: UpdateMode::Rate(_),
                ..
            } => {}
        }
    }

    /// Writes what the application may, sends what the sender may, and the ACK if one is due.
    fn flush(&mut self, now: Time, out: &mut dyn FnMut(Output)) {
        loop {
            self.write(now, out);
            match self.sender.poll_transmit(now) {
                Some(seg) => out(Output::Transmit(Wire::Data(seg))),
                None => break,
            }
        }
        while let Some(ack) = self.receiver.poll_ack() {
            out(Output::Transmit(Wire::Ack(ack)));
        }
    }
}
