//! The application and its options: what [`App`] holds, and how it is
//! made from the configuration. What it does with a request is `app.rs`'s.

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use super::{events, faults, openapi, record};
use crate::config::{self, Config, Cors, Secret};
use crate::health::Health;
use crate::store::Store;

/// The application: the store, and the options that change what it does.
pub struct App {
    pub store: Store,
    /// What the transport reports for `/healthz`.
    pub health: Arc<Health>,
    pub(super) options: Options,
    /// With `--faults`: its settings and its count of requests.
    pub(super) faults: Option<faults::Faults>,
    /// `--record N`: the request log; `None` when off.
    pub(super) recorder: Option<record::Recorder>,
    /// The OpenAPI document this configuration serves (`openapi.rs`),
    /// made at its first request: making it takes longer than the rest of
    /// the start-up together.
    pub(super) openapi: OnceLock<openapi::Served>,
}

/// The options of [`App`]: `--allow-reset`, `--read-only`, `--delay`, `--auth-token`, CORS, `--faults`,
/// `--seed`, `--record`, `--max-subscribers`, `--events-kept`.
#[derive(Debug, Clone)]
pub struct Options {
    pub allow_reset: bool,
    pub read_only: bool,
    pub delay: Duration,
    pub auth_token: Option<Secret>,
    pub cors: Cors,
    pub faults: config::fault_settings::FaultSettings,
    pub seed: u64,
    pub record: Option<usize>,
    pub max_subscribers: usize,
    pub events_kept: Option<usize>,
}

impl Default for Options {
    fn default() -> Options {
        Options::from_config(&Config::default())
    }
}

impl Options {
    pub fn from_config(config: &Config) -> Options {
        Options {
            allow_reset: config.allow_reset,
            read_only: config.read_only,
            delay: config.delay,
            auth_token: config.auth_token.clone(),
            cors: config.cors.clone(),
            faults: config.faults.clone(),
            seed: config.seed,
            record: config.record,
            max_subscribers: config.max_subscribers,
            events_kept: config.events_kept,
        }
    }
}

impl App {
    /// The application with every option off.
    pub fn new(store: Store) -> App {
        App::with_options(store, Options::default())
    }

    pub fn with_options(store: Store, options: Options) -> App {
        let health = Arc::default();
        let recorder = options.record.map(record::Recorder::new);
        if let Some(kept) = options.events_kept {
            store.feed().keep(kept);
        }
        store.feed().encode_with(events::encode);
        App {
            store,
            health,
            faults: faults::Faults::new(&options.faults, options.seed),
            options,
            recorder,
            openapi: OnceLock::new(),
        }
    }
}
