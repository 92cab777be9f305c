//! The OpenAPI document served at `/api/openapi.json`: the full one,
//! `openapi.json`, less what the running configuration does not offer, so
//! that a client generated from it, or a fuzzer fed it, meets exactly the
//! server it talks to.
//!
//! `openapi.json`, kept in the repository for code generators, describes
//! the server with every feature on. What a feature that is off by default
//! adds is marked there with `"x-feature": "<name>"`: a path item, an
//! operation, a parameter (inline, or an entry of `components.parameters`
//! that operations refer to), or any other entry of `components`. The
//! served document drops each one whose feature is off, and then a path
//! item left with nothing to call but `OPTIONS`. The bearer token
//! (RFC 6750) is spread too wide to mark, so it is a special case:
//! without `--auth-token` the document has no `securitySchemes`, no
//! `security` requirement and no `401` response. `--read-only`, which
//! takes away what is there by default, is the other: the collections and
//! items lose their writes. The `x-feature` keys stay
//! in the served document: vendor extensions, which tools ignore, and with
//! every feature on the served document is the file itself.
//!
//! The document is made once, at its first request ([`Served::new`]:
//! about a millisecond, which would double the server's start-up); the
//! requests after it only share its bytes and entity tag.

use std::sync::Arc;

use serde_json::{Map, Value};

use super::Options;
use crate::store::entity_tag;

/// The OpenAPI 3.1 document describing this API with every feature on, as
/// the repository holds it; [`Served::new`] makes the one served, from a
/// compact copy, so the binary holds only that one.
pub const OPENAPI: &[u8] = include_bytes!("openapi.json");

/// `openapi.json` as the binary holds it: without the whitespace between
/// its tokens (build.rs), a third smaller. It is parsed and indented again
/// before it is served, so the served document is laid out as the file is.
const COMPACT: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/openapi.json"));

/// The served document: its bytes and its `ETag`.
pub(super) struct Served {
    pub body: Arc<Vec<u8>>,
    pub etag: String,
}

impl Served {
    /// The document for a server with these options.
    pub(super) fn new(options: &Options) -> Served {
        let offered = |feature: &str| offers(options, feature) == Some(true);
        let body = document(&offered, options.read_only);
        let etag = entity_tag(&body);
        let body = Arc::new(body);
        Served { body, etag }
    }
}

/// Whether the server offers `feature`, as an `x-feature` names it; `None`
/// for a name it does not know, which counts as off (a unit test checks
/// that `openapi.json` names none).
fn offers(options: &Options, feature: &str) -> Option<bool> {
    match feature {
        "allow-reset" => Some(options.allow_reset),
        "auth-token" => Some(options.auth_token.is_some()),
        "faults" => Some(options.faults.on),
        "record" => Some(options.record.is_some()),
        _ => None,
    }
}

/// The methods a path item may hold (OpenAPI 3.1, the Path Item Object).
const METHODS: &[&str] = &[
    "get", "put", "post", "delete", "options", "head", "patch", "trace",
];

/// `openapi.json` without what `offered` says is off, and with
/// `read_only` without the writes, as JSON in the file's own order and
/// layout.
fn document(offered: &dyn Fn(&str) -> bool, read_only: bool) -> Vec<u8> {
    // The file is part of the binary, and a unit test parses it: should it
    // ever fail to parse, it is served as it is.
    let Ok(mut document) = serde_json::from_slice::<Value>(COMPACT) else {
        return COMPACT.to_vec();
    };
    prune(&mut document, offered);
    if read_only {
        drop_writes(&mut document);
    }
    // Indented with tabs, as the file is: a third smaller than spaces.
    let mut body = Vec::with_capacity(OPENAPI.len());
    let tabs = serde_json::ser::PrettyFormatter::with_indent(b"\t");
    let mut serializer = serde_json::Serializer::with_formatter(&mut body, tabs);
    if serde::Serialize::serialize(&document, &mut serializer).is_err() {
        return COMPACT.to_vec();
    }
    body.push(b'\n');
    body
}

/// Drops from `document` what `offered` says is off (see the module
/// comment).
fn prune(document: &mut Value, offered: &dyn Fn(&str) -> bool) {
    let off = |object: &Value| {
        let feature = object.get("x-feature").and_then(Value::as_str);
        feature.is_some_and(|feature| !offered(feature))
    };
    let mut dropped = Vec::new();
    if let Some(Value::Object(components)) = document.get_mut("components") {
        for (section, entries) in components.iter_mut() {
            let Value::Object(entries) = entries else {
                continue;
            };
            entries.retain(|name, entry| {
                let keep = !off(entry);
                if !keep {
                    dropped.push(format!("#/components/{section}/{name}"));
                }
                keep
            });
        }
    }
    // A parameter is gone when it is off, or refers to an entry dropped.
    let gone = |parameter: &Value| {
        let target = parameter.get("$ref").and_then(Value::as_str);
        off(parameter) || target.is_some_and(|target| dropped.iter().any(|d| d == target))
    };
    if let Some(Value::Object(paths)) = document.get_mut("paths") {
        paths.retain(|_, item| match item {
            _ if off(item) => false,
            Value::Object(item) => keep_path_item(item, &off, &gone),
            _ => true,
        });
    }
    if !offered("auth-token") {
        drop_bearer_token(document);
    }
}

/// Drops the operations and parameters of a path item that are off;
/// `false` when nothing is left to call but `OPTIONS`.
fn keep_path_item(
    item: &mut Map<String, Value>,
    off: &dyn Fn(&Value) -> bool,
    gone: &dyn Fn(&Value) -> bool,
) -> bool {
    item.retain(|key, operation| !(METHODS.contains(&key.as_str()) && off(operation)));
    for (key, value) in item.iter_mut() {
        let parameters = match key.as_str() {
            "parameters" => Some(value),
            method if METHODS.contains(&method) => value.get_mut("parameters"),
            _ => None,
        };
        if let Some(Value::Array(parameters)) = parameters {
            parameters.retain(|parameter| !gone(parameter));
        }
    }
    // OPTIONS only tells what else a path takes.
    item.keys()
        .any(|key| key != "options" && METHODS.contains(&key.as_str()))
}

/// With `--read-only`: the collections and items without their writes,
/// which the file describes as a server that writes, so no `x-feature`
/// marks them.
fn drop_writes(document: &mut Value) {
    let Some(Value::Object(paths)) = document.get_mut("paths") else {
        return;
    };
    for (path, item) in paths.iter_mut() {
        if let (true, Value::Object(item)) = (path.starts_with("/api/"), item) {
            item.retain(|key, _| !matches!(key.as_str(), "post" | "put" | "patch" | "delete"));
        }
    }
}

/// Without `--auth-token`: no bearer scheme, no `security` requirement,
/// no `401` response.
fn drop_bearer_token(document: &mut Value) {
    if let Value::Object(root) = document {
        root.shift_remove("security");
    }
    if let Some(Value::Object(components)) = document.get_mut("components") {
        components.shift_remove("securitySchemes");
        if let Some(Value::Object(responses)) = components.get_mut("responses") {
            responses.shift_remove("Unauthorized");
        }
    }
    let Some(Value::Object(paths)) = document.get_mut("paths") else {
        return;
    };
    for item in paths.values_mut() {
        let Value::Object(item) = item else {
            continue;
        };
        for (key, operation) in item.iter_mut() {
            let Value::Object(operation) = operation else {
                continue;
            };
            if !METHODS.contains(&key.as_str()) {
                continue;
            }
            operation.shift_remove("security");
            if let Some(Value::Object(responses)) = operation.get_mut("responses") {
                responses.shift_remove("401");
            }
        }
    }
}

#[cfg(test)]
#[path = "openapi_tests.rs"]
mod tests;
