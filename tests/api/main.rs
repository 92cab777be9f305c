//! The one integration-test binary: every test talks to a real server over
//! a real socket on 127.0.0.1.
// A panic is how a test fails; unwrap and expect say so briefly.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

mod big_lists;
mod capacity;
mod cli;
mod cli_hints;
mod clients;
mod data_edits;
mod ecosystem;
mod errors;
mod event_stream;
mod events;
mod examples;
mod faults;
mod framing;
mod generate;
mod habits;
mod hardening;
mod import;
mod in_container;
mod json_server_cli;
mod keep_alive;
mod lifecycle;
mod loading;
mod logs;
mod openapi;
mod queries;
mod queries_json_server;
mod record;
mod request_ids;
mod resources;
mod shutdown;
mod simple_rest;
mod storage;
mod testers;
mod turns;
mod wire;
mod word_size;
