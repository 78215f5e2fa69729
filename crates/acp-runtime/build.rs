//! Collects the Rust code blocks of the repository's README into `$OUT_DIR/readme_rust.md`,
//! which `lib.rs` includes as documentation under `cfg(doctest)`: `cargo test` then compiles and
//! runs every README snippet as a doctest of this crate (which can use `acp-core` and the
//! runtime), while the README's shell, TOML and output blocks stay out of it.

use std::path::Path;

fn main() {
    // The variable Cargo sets for this run, not `env!`'s value from when the script was compiled:
    // Cargo reuses a compiled build script for another checkout of the same sources (its hash
    // does not name the directory), and the README would then be looked for in the first one.
    let manifest_dir =
        std::env::var_os("CARGO_MANIFEST_DIR").expect("Cargo sets CARGO_MANIFEST_DIR");
    let readme = Path::new(&manifest_dir).join("../../README.md");
    println!("cargo:rerun-if-changed={}", readme.display());
    // Outside the repository (a packaged crate) there is no README to test.
    let text = std::fs::read_to_string(&readme).unwrap_or_default();
    let mut snippets = String::new();
    let mut inside = false;
    for line in text.lines() {
        let fence = line.trim_start().strip_prefix("```");
        if !inside {
            // "```rust" and "```rust,no_run" and the like; "```sh", "```toml" and "```" are not Rust
            // here (rustdoc would take a bare fence for Rust).
            inside = fence.is_some_and(|info| info.split(',').next() == Some("rust"));
        } else if fence.is_some() {
            inside = false;
            snippets.push_str(line);
            snippets.push_str("\n\n");
            continue;
        }
        if inside {
            snippets.push_str(line);
            snippets.push('\n');
        }
    }
    let out =
        Path::new(&std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR")).join("readme_rust.md");
    std::fs::write(out, snippets).expect("OUT_DIR is writable");
}
