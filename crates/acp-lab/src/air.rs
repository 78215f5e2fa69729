//! A scenario's `[[wifi]]` medium as the emulator plays it: the simulator's one-frame 802.11
//! DCF/EDCA [`Medium`], or, for a section with `aggregation = {…}`, its 802.11ac A-MPDU
//! [`Downlink`] (per-station AP queues, A-MPDUs, block ACKs), each built from the same
//! definition and random-stream labels as in `acp sim` (no second model).
//!
//! # Aggregation reports
//!
//! Every station of an A-MPDU downlink that hosts an ACP monitor is metered as the simulator
//! meters it ([`SlotMeter`], `acp_sim::slot_reports`): per slot of the section's
//! `aggregation.report_ms`, the A-MPDUs it received, their mean packets per frame, mean PHY rate
//! and the mean delay of its packets at the AP — what a MAC-timestamp capture at the station
//! measures. At the end of each slot the report goes to the station's monitors
//! ([`FeedbackCell`]), which put it on their ACKs (`FEEDBACK_AGGREGATION`), where
//! `--controller agg:…` reads it; a slot without a frame received is not reported. The slots
//! reported are kept for the run's results.
//!
//! With the plan's [`aggregation_estimator`](crate::plan::Plan::aggregation_estimator) the
//! monitors are not handed the measurement: each runs the frame-boundary estimator on the
//! kernel's receive timestamps of its own updates ([`SlotEstimate`], slots of the same
//! `report_ms`) and reports what it estimates, as `acp monitor --aggregation-model` does on a
//! station without MAC timestamps. The station is still metered, so the results hold the
//! measured levels beside the estimated ones.

use std::sync::Arc;
use std::time::Duration;

use acp_core::wire::FEEDBACK_AGGREGATION;
use acp_netmodel::link::Dropped;
use acp_netmodel::wifi::downlink::Downlink;
use acp_netmodel::wifi::medium::{Delivered, Medium, Outcome};
use acp_netmodel::wifi::FrameModel;
use acp_netmodel::{Parcel, Streams, Time};
use acp_runtime::server::FeedbackCell;
use acp_sim::estimator::slots::SlotEstimate;
use acp_sim::report::WifiResult;
use acp_sim::slot_reports::SlotMeter;
use acp_sim::topology::WifiDef;

use crate::emulator::MediumSpec;
use crate::plan::{FlowPlanKind, Plan};

/// Where a station's aggregation reports go: the feedback of the monitors at its host (none
/// when they estimate their levels themselves: the station is metered for the results only).
#[derive(Debug, Clone)]
pub struct ReportTo {
    /// The medium's station (1-based; the AP is 0).
    pub station: usize,
    pub monitors: Vec<Arc<FeedbackCell>>,
}

/// The feedback of a monitor at a metered station: the cell its reports go to, the interval
/// at which it answers (the section's `aggregation.feedback_ms`), and, when the monitor
/// estimates its levels itself, its estimator (the emulator's measurement then does not reach
/// the cell).
#[derive(Debug, Clone)]
pub struct MonitorFeedback {
    pub cell: Arc<FeedbackCell>,
    pub ack_interval: Option<Duration>,
    pub estimate: Option<SlotEstimate>,
}

/// The media of `plan` with their stations' report destinations, and per flow the feedback of
/// its monitor: an ACP flow ending at a station of an A-MPDU downlink gets a cell, and the
/// station reports to the cells of every such flow.
pub fn wire_reports(plan: &Plan) -> (Vec<MediumSpec>, Vec<Option<MonitorFeedback>>) {
    let mut media = plan.media.clone();
    let feedback = plan
        .flows
        .iter()
        .map(|f| {
            if !matches!(f.kind, FlowPlanKind::Acp { .. }) {
                return None;
            }
            let host = &plan.hosts[f.to];
            media.iter_mut().find_map(|m| {
                m.def.aggregation.as_ref()?;
                let station = m.nodes.iter().skip(1).position(|n| n == host)? + 1;
                let cell = Arc::new(FeedbackCell::default());
                let slot_ms = u16::try_from(m.def.reports.slot.as_millis()).unwrap_or(u16::MAX);
                let estimate = plan
                    .aggregation_estimator
                    .clone()
                    .map(|model| SlotEstimate::new(model, slot_ms));
                let measured = estimate.is_none().then(|| cell.clone());
                match m.reports.iter_mut().find(|r| r.station == station) {
                    Some(r) => r.monitors.extend(measured),
                    None => m.reports.push(ReportTo {
                        station,
                        monitors: measured.into_iter().collect(),
                    }),
                }
                Some(MonitorFeedback {
                    cell,
                    ack_interval: m.def.reports.feedback,
                    estimate,
                })
            })
        })
        .collect();
    (media, feedback)
}

/// A packet in the A-MPDU downlink, with the instant it reached its sender's MAC.
#[derive(Debug)]
struct Stamped<P> {
    item: P,
    reached: Time,
}

/// One metered station of an A-MPDU downlink.
#[derive(Debug)]
struct Meter {
    to: ReportTo,
    meter: SlotMeter,
}

/// An A-MPDU downlink and its stations' report slots.
pub struct Ampdu<P> {
    downlink: Downlink<Stamped<P>>,
    /// When the run started (reported slots are timed from it).
    start: Time,
    frames: Box<dyn FrameModel>,
    slot: Duration,
    /// When the current slot ends (`None`: no station is metered).
    slot_end: Option<Time>,
    meters: Vec<Meter>,
}

/// A WiFi medium.
pub enum Air<P> {
    Dcf(Box<Medium<P>>),
    Ampdu(Box<Ampdu<P>>),
}

impl<P> Air<P> {
    /// Medium `def` starting at `start`, its randomness from `streams`; an A-MPDU downlink's
    /// stations in `reports` are metered.
    pub fn new(
        def: &WifiDef,
        streams: &Streams,
        start: Time,
        reports: Vec<ReportTo>,
    ) -> Result<Self, String> {
        let frames = (def.frames)(streams);
        let Some(template) = &def.aggregation else {
            return Ok(Air::Dcf(Box::new(Medium::new(
                def.mac.clone(),
                frames,
                streams,
                &def.name,
                start,
            ))));
        };
        let downlink = def.downlink(template, frames.as_ref(), streams, start)?;
        let slot = def.reports.slot;
        Ok(Air::Ampdu(Box::new(Ampdu {
            downlink,
            start,
            frames,
            slot,
            slot_end: (!reports.is_empty()).then(|| start + slot),
            meters: reports
                .into_iter()
                .map(|to| Meter {
                    to,
                    meter: SlotMeter::default(),
                })
                .collect(),
        })))
    }

    /// A packet from station `from` to `to` reaches `from`'s MAC at `now`.
    pub fn enqueue(
        &mut self,
        now: Time,
        from: usize,
        to: usize,
        parcel: Parcel<P>,
    ) -> Result<(), Dropped<P>> {
        match self {
            Air::Dcf(m) => m.enqueue(now, from, to, parcel),
            Air::Ampdu(a) => {
                let parcel = Parcel {
                    item: Stamped {
                        item: parcel.item,
                        reached: now,
                    },
                    bytes: parcel.bytes,
                    dscp: parcel.dscp,
                    source: parcel.source,
                };
                a.downlink
                    .enqueue(now, from, to, parcel)
                    .map_err(unstamp_dropped)
            }
        }
    }

    /// Its next event: the model's, or the end of a report slot.
    pub fn poll_timeout(&self) -> Option<Time> {
        match self {
            Air::Dcf(m) => m.poll_timeout(),
            Air::Ampdu(a) => a
                .downlink
                .poll_timeout()
                .into_iter()
                .chain(a.slot_end)
                .min(),
        }
    }

    /// Plays the medium to `now`, ending the report slots due by then.
    pub fn handle_timeout(&mut self, now: Time) {
        match self {
            Air::Dcf(m) => m.handle_timeout(now),
            Air::Ampdu(a) => {
                a.downlink.handle_timeout(now);
                while let Some(end) = a.slot_end.filter(|&end| end <= now) {
                    a.end_slot(end);
                }
            }
        }
    }

    /// The next frame received or dropped by `now`.
    pub fn poll_delivery(&mut self, now: Time) -> Option<Outcome<P>> {
        match self {
            Air::Dcf(m) => m.poll_delivery(now),
            Air::Ampdu(a) => Some(match a.downlink.poll_delivery(now)? {
                Ok(d) => {
                    if d.from == 0 {
                        let delay = d.at.saturating_since(d.parcel.item.reached);
                        if let Some(m) = a.meters.iter_mut().find(|m| m.to.station == d.to) {
                            m.meter.delivered(delay);
                        }
                    }
                    Ok(Delivered {
                        at: d.at,
                        from: d.from,
                        to: d.to,
                        parcel: unstamp(d.parcel),
                    })
                }
                Err(d) => Err(unstamp_dropped(d)),
            }),
        }
    }

    /// The medium's counters over `elapsed`, as `acp sim` reports them; `nodes` are its
    /// stations' names, the AP first.
    pub fn result(&self, name: &str, nodes: &[String], elapsed: Duration) -> WifiResult {
        match self {
            Air::Dcf(m) => WifiResult::of(name, m, nodes, elapsed),
            Air::Ampdu(a) => {
                WifiResult::of_downlink(name, &a.downlink, a.frames.as_ref(), nodes, elapsed, |k| {
                    a.meters
                        .iter()
                        .find(|m| m.to.station == k)
                        .map(|m| m.meter.reported.clone())
                        .unwrap_or_default()
                })
            }
        }
    }
}

impl<P> Ampdu<P> {
    /// The slot ending at `end`: each metered station takes its frames and reports.
    fn end_slot(&mut self, end: Time) {
        let frames = self.downlink.take_frames();
        for m in &mut self.meters {
            for f in frames.iter().filter(|f| f.station == m.to.station) {
                m.meter.frame(f);
            }
            let since_start = Time::from_nanos(end.nanos_since(self.start));
            if let Some(report) = m.meter.close(since_start, self.slot) {
                let value = report.encode().to_vec();
                for cell in &m.to.monitors {
                    cell.set(FEEDBACK_AGGREGATION, value.clone());
                }
            }
        }
        self.slot_end = Some(end + self.slot);
    }
}

fn unstamp_dropped<P>(d: Dropped<Stamped<P>>) -> Dropped<P> {
    Dropped {
        reason: d.reason,
        parcel: unstamp(d.parcel),
        served_at: d.served_at,
    }
}

fn unstamp<P>(p: Parcel<Stamped<P>>) -> Parcel<P> {
    Parcel {
        item: p.item.item,
        bytes: p.bytes,
        dscp: p.dscp,
        source: p.source,
    }
}
