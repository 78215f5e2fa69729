//! `type = "tcp"` flows as the lab runs them: the simulator's TCP flow (its scenario parser reads
//! them, so `acp sim` and `acp lab` run the same file) mapped onto a kernel socket's options.
//!
//! The congestion control, Nagle (`nodelay`), `notsent_lowat` and the two buffers carry over:
//! a fixed `receive_buffer` as the receiver's `SO_RCVBUF` (autotuning off), an `rmem = [default,
//! max]` as the receiving host's `net.ipv4.tcp_rmem` (per network namespace; autotuning grows
//! the buffer from the default up to the maximum, as on the ACP+ paper's hosts).
//! What only the simulator's model has — segment size, initial window, delayed ACKs, RTO bounds:
//! the kernel has its own; a window counted in bytes: the kernel counts packets, so a flow must
//! say `window = "packets"` — and updates at a fixed rate (the lab writes them at will) are
//! refused when a scenario sets them, never silently ignored.

use acp_core::wire::HEADER_LEN;
use acp_runtime::stream::{MAX_FRAME, PREFIX_LEN};
use acp_sim::tcp::{Application, TcpConfig, UpdateMode, WindowUnit};

/// What a TCP flow's application writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TcpApp {
    /// A fresh update (framed as an ACP update) whenever the socket takes one; the monitor
    /// measures its age.
    Updates,
    /// Data as fast as the socket takes it: the largest frames, back to back.
    Bulk,
}

/// A TCP flow's kernel settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TcpFlow {
    /// Congestion control (`TCP_CONGESTION`), by the kernel's name.
    pub cc: String,
    pub app: TcpApp,
    /// Payload bytes of each frame after its prefix and ACP header: a simulator update record of
    /// `payload` bytes is a frame of the same size on the wire.
    pub payload: usize,
    pub nodelay: bool,
    pub notsent_lowat: Option<u32>,
    /// `SO_SNDBUF` of the sender.
    pub send_buffer: usize,
    /// The receiver's buffer, which bounds the window.
    pub receive: ReceiveBuffer,
}

/// How the receiver's buffer is set.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReceiveBuffer {
    /// `SO_RCVBUF` on the receiving socket (bytes); autotuning off.
    Fixed(usize),
    /// The receiving host's `net.ipv4.tcp_rmem` default and maximum (bytes); autotuning on.
    Autotuned { default: usize, max: usize },
}

/// Bytes a frame spends before its payload.
pub const FRAME_OVERHEAD: usize = PREFIX_LEN + HEADER_LEN;

/// The kernel's settings for flow `name` of the simulator's `config` and `app`, or a one-line
/// reason the lab cannot run it.
pub fn from_sim(name: &str, config: &TcpConfig, app: &Application) -> Result<TcpFlow, String> {
    let model = TcpConfig::default();
    let model_only = [
        ("smss", config.smss != model.smss),
        (
            "initial_window",
            config.initial_window != model.initial_window,
        ),
        ("delayed_ack", config.delayed_ack != model.delayed_ack),
        ("gro", config.gro != model.gro),
        ("min_rto", config.min_rto != model.min_rto),
        ("initial_rto", config.initial_rto != model.initial_rto),
        ("max_rto", config.max_rto != model.max_rto),
        ("sack", config.sack != model.sack),
    ];
    if let Some((field, _)) = model_only.iter().find(|(_, set)| *set) {
        return Err(format!(
            "flow {name}: {field} is the simulator's model; in the lab the kernel chooses it \
             (remove it, or run the scenario in `acp sim`)"
        ));
    }
    if config.window != WindowUnit::Packets {
        return Err(format!(
            "flow {name}: the kernel counts its window in packets; set window = \"packets\" \
             (bytes is the simulator's model only)"
        ));
    }
    let (app, payload, notsent_lowat) = match *app {
        Application::Bulk => (TcpApp::Bulk, MAX_FRAME - HEADER_LEN, None),
        Application::Updates {
            mode: UpdateMode::Rate(_),
            ..
        } => {
            return Err(format!(
                "flow {name}: the lab writes TCP updates at will; `rate` is the simulator's only"
            ))
        }
        Application::Updates {
            payload,
            mode: UpdateMode::AtWill { notsent_lowat },
        } => {
            let payload = (payload as usize)
                .checked_sub(FRAME_OVERHEAD)
                .ok_or_else(|| {
                    format!(
                        "flow {name}: payload must be at least {FRAME_OVERHEAD} bytes in the lab \
                     (a frame's length prefix and ACP header)"
                    )
                })?;
            let lowat = notsent_lowat.map(|b| u32::try_from(b).unwrap_or(u32::MAX));
            (TcpApp::Updates, payload, lowat)
        }
    };
    Ok(TcpFlow {
        cc: kernel_name(config),
        app,
        payload,
        nodelay: config.nodelay,
        notsent_lowat,
        send_buffer: bytes(config.send_buffer),
        receive: match config.rmem {
            Some(r) => ReceiveBuffer::Autotuned {
                default: bytes(r.default),
                max: bytes(r.max),
            },
            None => ReceiveBuffer::Fixed(bytes(config.receive_buffer)),
        },
    })
}

fn bytes(v: u64) -> usize {
    usize::try_from(v).unwrap_or(usize::MAX)
}

/// The kernel's name of the congestion control (`newreno` is `reno` there).
fn kernel_name(config: &TcpConfig) -> String {
    match config.cc.to_string().as_str() {
        "newreno" => "reno".into(),
        other => other.into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use acp_sim::tcp::{CcKind, DelayedAck, Rmem};

    fn updates(payload: u32, mode: UpdateMode) -> Application {
        Application::Updates { payload, mode }
    }

    const AT_WILL: UpdateMode = UpdateMode::AtWill {
        notsent_lowat: Some(2000),
    };

    #[test]
    fn kernel_settings_follow_the_simulators_flow() {
        let config = TcpConfig {
            cc: CcKind::NewReno,
            nodelay: true,
            window: WindowUnit::Packets,
            receive_buffer: 65_536,
            ..TcpConfig::default()
        };
        let f = from_sim("t", &config, &updates(536, AT_WILL)).unwrap();
        assert_eq!(
            f,
            TcpFlow {
                cc: "reno".into(),
                app: TcpApp::Updates,
                payload: 536 - FRAME_OVERHEAD,
                nodelay: true,
                notsent_lowat: Some(2000),
                send_buffer: 1 << 20,
                receive: ReceiveBuffer::Fixed(65_536),
            }
        );
        let autotuned = TcpConfig {
            rmem: Some(Rmem {
                default: 100_000,
                max: 300_000,
            }),
            window: WindowUnit::Packets,
            ..TcpConfig::default()
        };
        let f = from_sim("a", &autotuned, &Application::Bulk).unwrap();
        assert_eq!(
            f.receive,
            ReceiveBuffer::Autotuned {
                default: 100_000,
                max: 300_000
            }
        );
        let bulk = TcpConfig {
            cc: CcKind::Bbr,
            window: WindowUnit::Packets,
            ..TcpConfig::default()
        };
        let f = from_sim("b", &bulk, &Application::Bulk).unwrap();
        assert_eq!((f.cc.as_str(), f.app), ("bbr", TcpApp::Bulk));
    }

    #[test]
    fn what_only_the_model_has_is_refused_in_one_line() {
        let d = TcpConfig {
            window: WindowUnit::Packets,
            ..TcpConfig::default()
        };
        let cases = [
            (
                TcpConfig::default(),
                updates(536, AT_WILL),
                "window = \"packets\"",
            ),
            (
                TcpConfig {
                    smss: 536,
                    ..d.clone()
                },
                updates(536, AT_WILL),
                "smss",
            ),
            (
                TcpConfig {
                    delayed_ack: Some(DelayedAck {
                        every: 3,
                        ..DelayedAck::default()
                    }),
                    ..d.clone()
                },
                updates(536, AT_WILL),
                "delayed_ack",
            ),
            (d.clone(), updates(536, UpdateMode::Rate(40.0)), "at will"),
            (d.clone(), updates(20, AT_WILL), "at least 48 bytes"),
        ];
        for (config, app, needle) in cases {
            let e = from_sim("t", &config, &app).unwrap_err();
            assert!(
                e.contains(needle) && !e.contains('\n'),
                "{e:?} lacks {needle:?}"
            );
        }
    }
}
