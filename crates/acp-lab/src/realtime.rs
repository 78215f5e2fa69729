//! What the emulator keeps in real time: a bound, known before the run, on the frames per
//! second a scenario's stations offer its WiFi media, and the refusal of a scenario whose bound
//! exceeds what `acp bench lab` measured the emulator to keep (docs/LAB.md, "The emulator's
//! limits").
//!
//! The emulator's work on a medium is what the stations offer it: every frame is read from a TUN
//! device, queued at its station and played through the medium, delivered or not. Per medium,
//! the bound adds:
//! - **datagram flows** (`updates`, `cross`): their packet rate (while on, for an on-off
//!   process), times how many times their route crosses the medium;
//! - **ACP flows across an 802.11ac A-MPDU downlink** (`aggregation`): their updates at the
//!   source's `max_rate` and their ACKs (as many, or one per `aggregation.feedback_ms`). An
//!   A-MPDU carries up to 64 packets per channel access, so the medium bounds the packets it
//!   carries far above what the emulator keeps; only a paced source bounds them. TCP across
//!   such a downlink is refused ([`crate::plan`]);
//! - **closed-loop flows** (ACP, TCP) across a one-frame medium: together at most **twice the
//!   medium's frame ceiling**.
//!   Their packets go and their acknowledgements come back across the medium, so what they
//!   offer is clocked by what it delivers: a receiver acknowledges only data delivered to it,
//!   and a sender sends at most two packets per one acknowledged (TCP's slow start). With `D`
//!   data and `A` acknowledgement frames delivered a second (`D + A` at most the ceiling `C`),
//!   they offer at most `2A + D ≤ 2C` (initial windows and timeouts are bursts, not rates).
//!
//! The medium's **frame ceiling** is one frame per shortest exchange: the shortest AIFS of its
//! access categories, no backoff, the shortest frame the lab sends (a 28-byte IPv4 and UDP
//! header) at the fastest station's rate, SIFS and the ACK. No medium delivers more, whatever
//! its stations do; idle stations offer nothing and cost the emulator nothing.
//!
//! The emulator is one thread: the bounds of all media add up, and a scenario is refused when
//! the sum exceeds [`MAX_OFFERED_FPS`].

use std::time::Duration;

use acp_netmodel::wifi::medium::Access;
use acp_netmodel::Streams;
use acp_sim::topology::WifiDef;

/// Frames per second offered to its media the emulator keeps in real time: `acp bench lab`
/// kept 23,723 offered frames a second (8 stations) within 0.2 ms at the 99th percentile and
/// fell tens of milliseconds behind at 73,664 (docs/LAB.md, "The emulator's limits").
pub const MAX_OFFERED_FPS: f64 = 24_000.0;

/// The shortest frame the lab sends: an IPv4 and a UDP header, no payload.
const SHORTEST_FRAME: u32 = 28;

/// What a medium's stations may offer it, per second, by what is known before the run.
#[derive(Debug, Clone, PartialEq)]
pub struct MediumLoad {
    /// The medium's name.
    pub name: String,
    /// Its frame ceiling ([`frame_ceiling`]).
    pub ceiling_fps: f64,
    /// The datagram flows' frames per second across it (each crossing counted).
    pub datagram_fps: f64,
    /// Across an A-MPDU downlink: the ACP flows' updates at their `max_rate` and their ACKs.
    pub paced_fps: f64,
    /// Whether an ACP or TCP flow crosses it.
    pub closed_loop: bool,
}

impl MediumLoad {
    /// The bound: the datagrams' and the paced ACP flows' rates, plus twice the ceiling if a
    /// closed-loop flow crosses a one-frame medium.
    pub fn bound_fps(&self) -> f64 {
        self.datagram_fps
            + self.paced_fps
            + if self.closed_loop {
                2.0 * self.ceiling_fps
            } else {
                0.0
            }
    }

    /// The bound's parts, in words.
    fn describe(&self) -> String {
        let mut parts = Vec::new();
        if self.datagram_fps > 0.0 {
            parts.push(format!("{:.0} of datagrams", self.datagram_fps));
        }
        if self.paced_fps > 0.0 {
            parts.push(format!(
                "{:.0} of ACP updates at their max_rate and their ACKs",
                self.paced_fps
            ));
        }
        if self.closed_loop {
            parts.push(format!(
                "{:.0} of ACP and TCP (twice its ceiling of {:.0} frames/s)",
                2.0 * self.ceiling_fps,
                self.ceiling_fps
            ));
        }
        format!(
            "wifi {}: {:.0} frames/s ({})",
            self.name,
            self.bound_fps(),
            parts.join(" + ")
        )
    }
}

/// The most frames per second medium `def` can deliver: one per shortest exchange (see the
/// module's rule). Its frame model is built from `seed`'s streams, as the run builds it.
pub fn frame_ceiling(def: &WifiDef, seed: u64) -> f64 {
    let frames = (def.frames)(&Streams::new(seed));
    let mac = &def.mac;
    let aifsn = match &mac.access {
        Access::Dcf(p) => p.aifsn,
        Access::Edca(ps) => ps.iter().map(|p| p.aifsn).min().unwrap_or(2),
    };
    let exchange = |from: usize, to: usize| {
        frames.data_airtime(from, to, SHORTEST_FRAME) + frames.ack_airtime(from, to)
    };
    let fastest = (1..=mac.stations)
        .flat_map(|k| [exchange(k, 0), exchange(0, k)])
        .min()
        .unwrap_or(Duration::MAX);
    let shortest = mac.timing.aifs(aifsn) + fastest + mac.timing.sifs;
    1.0 / shortest.as_secs_f64()
}

/// Refuses, in one line, loads whose bounds add up to more than [`MAX_OFFERED_FPS`].
pub fn check(loads: &[MediumLoad]) -> Result<(), String> {
    let total: f64 = loads.iter().map(MediumLoad::bound_fps).sum();
    if total <= MAX_OFFERED_FPS {
        return Ok(());
    }
    let parts: Vec<String> = loads
        .iter()
        .filter(|l| l.bound_fps() > 0.0)
        .map(MediumLoad::describe)
        .collect();
    Err(format!(
        "the stations may offer {total:.0} frames/s to the WiFi media ({}), more than the \
         {MAX_OFFERED_FPS:.0} the emulator keeps in real time (acp bench lab; docs/LAB.md)",
        parts.join("; ")
    ))
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::plan;

    fn file(name: &str) -> std::path::PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../..")
            .join(name)
    }

    #[test]
    fn the_ceiling_is_one_shortest_exchange() {
        // 802.11g at 12 Mbit/s: DIFS = 16 µs SIFS (10 µs and the 6 µs signal extension) +
        // 2 × 9 µs slots = 34 µs; a 28-byte packet in a 64-byte MPDU (24 B header, 8 B LLC/SNAP,
        // 4 B FCS) is 16 + 512 + 6 bits = 12 symbols of 48 bits, 48 µs + 20 µs preamble = 68 µs;
        // SIFS 16 µs; the 14-byte ACK at 12 Mbit/s 3 symbols + preamble = 32 µs: 150 µs.
        let p = plan::load(&file("scenarios/lab/wifi_cubic_bbr_g.toml")).unwrap();
        let ap = &p.loads[0];
        assert!((ap.ceiling_fps - 1e6 / 150.0).abs() < 1e-6, "{ap:?}");
        // Two TCP flows and nothing else: twice the ceiling, 13,333 frames/s: accepted.
        assert!(ap.closed_loop && ap.datagram_fps == 0.0, "{ap:?}");
        assert!((ap.bound_fps() - 2e6 / 150.0).abs() < 1e-6, "{ap:?}");
    }

    #[test]
    fn an_ampdu_downlink_is_bounded_by_its_paced_sources() {
        // agg:32 at max_rate 6000 and Seek at 2000 updates a second, each answered at most once
        // per 100 ms (10 ACKs a second): 8,020 packets a second, accepted.
        let path = file("scenarios/lab/wifi_ac_agg32_seek.toml");
        let p = plan::load(&path).unwrap();
        let ap = &p.loads[0];
        assert!(!ap.closed_loop && ap.datagram_fps == 0.0, "{ap:?}");
        assert!((ap.bound_fps() - 8_020.0).abs() < 1e-9, "{ap:?}");
        let text = std::fs::read_to_string(&path).unwrap();
        // A source left at the default max_rate (10⁶ updates a second) bounds nothing.
        let unpaced = text.replace("max_rate = 6000\n", "");
        let e = plan::parse(&unpaced)
            .and_then(|p| check(&p.loads))
            .unwrap_err();
        assert!(e.contains("of ACP updates at their max_rate"), "{e}");
        // TCP across the downlink is refused in one line, naming the flow.
        let tcp = text.replace(
            "type = \"acp\"\nname = \"seek\"\ncontroller = \"seek\"\npayload = 1428\nmax_rate = 2000",
            "type = \"tcp\"\nname = \"seek\"\ncc = \"cubic\"\nwindow = \"packets\"",
        );
        assert_ne!(tcp, text);
        let e = plan::parse(&tcp).unwrap_err();
        assert!(
            !e.contains('\n') && e.contains("flow seek: only ACP flows"),
            "{e}"
        );
    }

    #[test]
    fn a_cell_offered_more_than_the_emulator_keeps_is_refused_in_one_line() {
        let beyond = file("testdata/lab/wifi_beyond_realtime.toml");
        let e = plan::load(&beyond).unwrap_err();
        // Eight stations × 3,500 updates a second, each crossing the medium once (28,000), and
        // an ACP flow: 28,000 + 2 × the 54 Mbit/s cell's ceiling.
        assert!(!e.contains('\n'), "{e}");
        assert!(
            e.contains("frames/s to the WiFi media") && e.contains("28000 of datagrams"),
            "{e}"
        );
        assert!(e.contains("24000 the emulator keeps"), "{e}");
        // `parse` plans it (acp bench lab saturates the emulator on purpose); its bound is what
        // the rule adds up.
        let text = std::fs::read_to_string(&beyond).unwrap();
        let p = plan::parse(&text).unwrap();
        let air = &p.loads[0];
        assert_eq!(air.datagram_fps, 28_000.0, "{air:?}");
        assert!(air.closed_loop, "{air:?}");
        // Seven stations' updates alone (24,500) are still too many; six (21,000) would pass
        // were it not for the ACP flow's 2 × ceiling.
        let fewer = |k: usize| MediumLoad {
            datagram_fps: 3_500.0 * k as f64,
            closed_loop: false,
            ..air.clone()
        };
        assert!(check(&[fewer(7)]).is_err());
        assert!(check(&[fewer(6)]).is_ok());
        assert!(check(&[MediumLoad {
            closed_loop: true,
            ..fewer(6)
        }])
        .is_err());
        // Two media on the one emulator thread add up.
        assert!(check(&[fewer(4), fewer(4)]).is_err());
    }
}
