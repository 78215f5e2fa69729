//! `include/acp.h` is what cbindgen makes of the crate today.
//!
//! The header is checked in, rather than written by a build script, so that C programmers get it
//! from the repository without running cargo, reviewers see every change to the C API in a diff,
//! and ordinary builds neither compile cbindgen nor write into the source tree. This test keeps
//! it honest: it fails when the header and the code disagree, and `ACP_BLESS=1` rewrites it.

use std::path::Path;

#[test]
fn the_checked_in_header_matches_cbindgen() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let config = cbindgen::Config::from_file(dir.join("cbindgen.toml")).unwrap();
    let mut generated = Vec::new();
    cbindgen::Builder::new()
        .with_crate(dir)
        .with_config(config)
        .generate()
        .expect("cbindgen reads the crate")
        .write(&mut generated);
    let generated = String::from_utf8(generated).unwrap();
    let path = dir.join("include/acp.h");
    if std::env::var_os("ACP_BLESS").is_some() {
        std::fs::write(&path, &generated).unwrap();
    }
    let checked_in = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        checked_in == generated,
        "include/acp.h is out of date: run `ACP_BLESS=1 cargo test -p acp-ffi --test header`\n\
         generated:\n{generated}"
    );
}
