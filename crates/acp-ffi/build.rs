//! Gives the shared library its SONAME, `libacp.so.<ABI>`: the ABI is the major version, or
//! `0.<minor>` while the major version is 0 (a minor release may then change the ABI), the
//! convention of cargo-c. `make install` (Makefile beside this file) reads the SONAME back from the
//! library and names the installed files and links after it.

fn main() {
    let major = std::env::var("CARGO_PKG_VERSION_MAJOR").unwrap_or_default();
    let minor = std::env::var("CARGO_PKG_VERSION_MINOR").unwrap_or_default();
    let abi = if major == "0" {
        format!("0.{minor}")
    } else {
        major
    };
    println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libacp.so.{abi}");
    println!("cargo:rerun-if-changed=build.rs");
}
