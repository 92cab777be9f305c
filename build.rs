//! Writes `src/app/openapi.json` without the whitespace between its
//! tokens into Cargo's `OUT_DIR`, for the binary to hold (`app/openapi.rs`).
//!
//! The file in the repository is indented for people and code generators;
//! the server parses it and serves it indented again, so the layout it holds
//! is wasted space: about 34 KB, which keeps the static aarch64 binary under
//! its 2.5 MB (docs/arm.md). Only the insignificant whitespace of RFC 8259,
//! section 2 goes, never a byte inside a string: the document is the same
//! JSON value.

use std::path::Path;
use std::{env, fs};

const SOURCE: &str = "src/app/openapi.json";

fn main() {
    println!("cargo::rerun-if-changed={SOURCE}");
    let file = fs::read(SOURCE).unwrap_or_else(|error| panic!("reading {SOURCE}: {error}"));
    let out = env::var_os("OUT_DIR").unwrap_or_else(|| panic!("Cargo sets OUT_DIR"));
    let target = Path::new(&out).join("openapi.json");
    fs::write(&target, compact(&file))
        .unwrap_or_else(|error| panic!("writing {}: {error}", target.display()));
}

/// `json` without the whitespace outside its strings. Inside a string a
/// backslash escapes the next byte, so an escaped quote does not end it.
fn compact(json: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(json.len());
    let (mut in_string, mut escaped) = (false, false);
    for &byte in json {
        if in_string {
            if escaped {
                escaped = false;
            } else if byte == b'\\' {
                escaped = true;
            } else if byte == b'"' {
                in_string = false;
            }
        } else if byte == b'"' {
            in_string = true;
        } else if matches!(byte, b' ' | b'\t' | b'\n' | b'\r') {
            continue;
        }
        out.push(byte);
    }
    out
}
