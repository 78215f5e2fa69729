//! What the shared-vector tests have in common: reading a file of `testdata/` and its hex.

use serde::de::DeserializeOwned;

/// Parses `testdata/<name>`.
pub fn load<T: DeserializeOwned>(name: &str) -> T {
    let path = format!("{}/../../testdata/{name}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("reading {path}: {e}"));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("parsing {path}: {e}"))
}

/// Bytes from lowercase hex (the vectors' only spelling).
pub fn unhex(s: &str) -> Vec<u8> {
    assert!(s.len() % 2 == 0, "odd-length hex {s:?}");
    assert!(
        s.bytes().all(|c| matches!(c, b'0'..=b'9' | b'a'..=b'f')),
        "hex must be lowercase digits: {s:?}"
    );
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}
