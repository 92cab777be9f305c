//! The one integration-test binary: every test talks to a real server over
//! a real socket on 127.0.0.1.
// A panic is how a test fails; unwrap and expect say so briefly.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

mod big_lists;
mod capacity;
mod cli;
mod clients;
mod ecosystem;
mod errors;
mod faults;
mod generate;
mod habits;
mod hardening;
mod lifecycle;
mod openapi;
mod queries;
mod record;
mod request_ids;
mod resources;
mod shutdown;
mod simple_rest;
mod storage;
mod testers;
mod wire;
