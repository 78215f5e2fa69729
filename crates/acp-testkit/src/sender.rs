//! UPDATE datagrams made by hand, and [`Sender`], a hand-driven ACP source socket for the tests
//! that play a source (or an attacker) against a monitor: it sends the updates it is told to,
//! sealed or not, echoes COOKIEs as a source does and keeps what it sent.

use std::net::{SocketAddr, UdpSocket};
use std::time::Duration;

use acp_core::seal::SessionCipher;
use acp_core::wire::{Packet, Update, TAG_LEN};

/// An unsealed update of `session` with sequence `seq` (at least 1), generated at `seq` ns,
/// acknowledging `seq − 1`.
pub fn update(session: u64, seq: u64, payload: &[u8]) -> Update<'_> {
    Update {
        flags: 0,
        session,
        seq,
        gen_ts: seq,
        acked_seq: seq - 1,
        hold_ns: 0,
        cookie: None,
        payload,
    }
}

/// [`update`] encoded: the datagram a source would send.
pub fn update_datagram(session: u64, seq: u64, payload: &[u8]) -> Vec<u8> {
    let u = update(session, seq, payload);
    let mut buf = vec![0u8; u.encoded_len()];
    let n = u
        .encode(&mut buf)
        .expect("the buffer has the encoded length");
    buf.truncate(n);
    buf
}

/// One source's socket; it seals with `cipher` when given and echoes the cookie it was sent.
pub struct Sender {
    socket: UdpSocket,
    session: u64,
    to: SocketAddr,
    cipher: Option<SessionCipher>,
    cookie: Option<[u8; 12]>,
    /// Every datagram sent, as sent (what an on-path attacker captures).
    pub sent: Vec<Vec<u8>>,
}

impl Sender {
    /// A socket on loopback sending `session`'s updates to `to`.
    pub fn new(to: SocketAddr, session: u64, cipher: Option<SessionCipher>) -> Self {
        let socket = UdpSocket::bind("127.0.0.1:0").unwrap();
        // Generous: a loaded machine may hold the server thread back; nothing is lost on loopback.
        socket
            .set_read_timeout(Some(Duration::from_secs(10)))
            .unwrap();
        Sender {
            socket,
            session,
            to,
            cipher,
            cookie: None,
            sent: Vec::new(),
        }
    }

    /// Sends update `seq`, sealed with `cipher` if any, without waiting for a reply.
    pub fn send_with(&mut self, seq: u64, cipher: Option<&SessionCipher>) {
        let u = Update {
            cookie: self.cookie,
            ..update(self.session, seq, b"t=21")
        };
        let mut buf = vec![0u8; u.encoded_len() + TAG_LEN];
        let mut len = u.encode(&mut buf).unwrap();
        if let Some(c) = cipher {
            len = c.seal(&mut buf, len).unwrap();
        }
        self.socket.send_to(&buf[..len], self.to).unwrap();
        self.sent.push(buf[..len].to_vec());
    }

    /// Sends update `seq` as the source does and waits for its ACK (echoing a COOKIE first if
    /// the monitor asks for one), ignoring ACKs of other sequences (the forged update's).
    pub fn send(&mut self, seq: u64) {
        let cipher = self.cipher.clone();
        self.send_with(seq, cipher.as_ref());
        loop {
            let mut buf = [0u8; 256];
            let n = self
                .socket
                .recv(&mut buf)
                .expect("every update is answered");
            match Packet::decode(&buf[..n]).unwrap() {
                Packet::Ack(a) if a.seq == seq => return,
                Packet::Ack(_) => {}
                Packet::Cookie(c) => {
                    self.cookie = Some(c.cookie);
                    self.send_with(seq, cipher.as_ref());
                }
                Packet::Update(_) => panic!("the monitor sent an update"),
            }
        }
    }
}
