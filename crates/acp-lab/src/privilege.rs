//! Whether this process may build a lab: creating network namespaces needs `CAP_SYS_ADMIN`,
//! creating and configuring TUN devices `CAP_NET_ADMIN`. Both are read from the effective
//! capability set in `/proc/self/status`, so the refusal comes before anything is created.

use std::fmt;

/// Capability numbers (`linux/capability.h`).
const CAP_NET_ADMIN: u32 = 12;
const CAP_SYS_ADMIN: u32 = 21;

/// The process lacks a capability the lab needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotPrivileged {
    missing: Vec<&'static str>,
}

impl fmt::Display for NotPrivileged {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "acp lab needs root (missing {}) to create network namespaces and TUN devices",
            self.missing.join(" and ")
        )
    }
}

impl std::error::Error for NotPrivileged {}

/// The capabilities missing from an effective set given as `/proc/PID/status` prints it (hex).
fn missing(cap_eff_hex: &str) -> Vec<&'static str> {
    let set = u64::from_str_radix(cap_eff_hex.trim(), 16).unwrap_or(0);
    [
        (CAP_SYS_ADMIN, "CAP_SYS_ADMIN"),
        (CAP_NET_ADMIN, "CAP_NET_ADMIN"),
    ]
    .into_iter()
    .filter(|(bit, _)| set & (1 << bit) == 0)
    .map(|(_, name)| name)
    .collect()
}

/// Succeeds if this process holds `CAP_SYS_ADMIN` and `CAP_NET_ADMIN` (as root normally does).
pub fn check() -> Result<(), NotPrivileged> {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let eff = status
        .lines()
        .find_map(|l| l.strip_prefix("CapEff:"))
        .unwrap_or("0");
    let missing = missing(eff);
    if missing.is_empty() {
        Ok(())
    } else {
        Err(NotPrivileged { missing })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_effective_set() {
        assert!(missing("000001ffffffffff").is_empty(), "root");
        assert_eq!(
            missing("0000000000000000"),
            ["CAP_SYS_ADMIN", "CAP_NET_ADMIN"]
        );
        assert_eq!(missing("0000000000001000"), ["CAP_SYS_ADMIN"]);
        assert_eq!(missing("garbage"), ["CAP_SYS_ADMIN", "CAP_NET_ADMIN"]);
        let msg = NotPrivileged {
            missing: missing("0"),
        }
        .to_string();
        assert_eq!(
            msg,
            "acp lab needs root (missing CAP_SYS_ADMIN and CAP_NET_ADMIN) to create network \
             namespaces and TUN devices"
        );
    }
}
