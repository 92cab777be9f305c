//! The `widgets-todos` binary: read the configuration, start logging, run
//! the library's server until a signal, print the start-up summary, and
//! map every failure to an exit status (2: bad flag or value; 1: bad data
//! file, cannot listen, or accepting failed). Also the `healthcheck`
//! subcommand: 0 when the server answers, 1 when not.

use std::io::Write;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use signal_hook::consts::{SIGINT, SIGTERM};
use signal_hook::iterator::Signals;
use widgets_todos::app::{App, Options};
use widgets_todos::config::{self, Command, Config};
use widgets_todos::logging::LOG;
use widgets_todos::model::{Todo, Widget};
use widgets_todos::store::Store;
use widgets_todos::transport::GRACE;
use widgets_todos::transport::capacity::{RESERVED_DESCRIPTORS, default_max, descriptor_limit};

/// How long after SIGINT/SIGTERM the process exits, whatever it is doing:
/// requests get [`GRACE`], then the final snapshot gets the rest.
const HARD_STOP: Duration = Duration::from_secs(10);

fn main() -> ExitCode {
    let config = match config::parse(std::env::args().skip(1), |name| std::env::var(name).ok()) {
        Ok(Command::Serve(config)) => *config,
        Ok(Command::Help) => {
            println!("{}", config::HELP);
            return ExitCode::SUCCESS;
        }
        Ok(Command::Version) => {
            println!("widgets-todos {}", env!("CARGO_PKG_VERSION"));
            return ExitCode::SUCCESS;
        }
        Ok(Command::Healthcheck { host, port }) => {
            return match widgets_todos::healthcheck::check(&host, port) {
                Ok(()) => ExitCode::SUCCESS,
                Err(reason) => {
                    eprintln!("widgets-todos healthcheck: {reason}");
                    ExitCode::from(1)
                }
            };
        }
        Ok(Command::Import { from, out }) => {
            return match widgets_todos::import::run(&from, &out) {
                Ok(report) => {
                    print!("{report}");
                    ExitCode::SUCCESS
                }
                Err(widgets_todos::import::Failed(why)) => {
                    eprintln!("widgets-todos import: {why}");
                    ExitCode::from(1)
                }
            };
        }
        Err(err) => {
            eprintln!("widgets-todos: {err}");
            return ExitCode::from(2);
        }
    };

    if let Err(err) = simple_logger::SimpleLogger::new()
        .with_level(config.log_level)
        .with_utc_timestamps()
        .init()
    {
        eprintln!("widgets-todos: cannot start logging: {err}");
    }

    // A panic is caught where it can happen (a handler, the HTTP library setting up
    // a connection) and the server carries on, so it is one log line, not a
    // backtrace on stderr: resolving one costs tens of megabytes of memory,
    // again at every panic in a flood of them.
    std::panic::set_hook(Box::new(|info| {
        let payload = info.payload();
        let message = payload
            .downcast_ref::<&str>()
            .copied()
            .or_else(|| payload.downcast_ref::<String>().map(String::as_str))
            .unwrap_or("(no message)");
        let place = info
            .location()
            .map(|l| format!("{}:{}", l.file(), l.line()))
            .unwrap_or_default();
        let thread = std::thread::current();
        let name = thread.name().unwrap_or("unnamed");
        log::error!(target: LOG, "thread '{name}' panicked at {place}: {message}");
    }));

    // Each connection costs a descriptor (two while a request is queued):
    // take every one the hard limit allows.
    match rlimit::increase_nofile_limit(u64::MAX) {
        Ok(limit) => log::debug!("descriptor limit: {limit}"),
        Err(err) => log::warn!(target: LOG, "cannot raise the descriptor limit: {err}"),
    }
    // Each connection holds two descriptors: a cap the limit cannot hold
    // would turn into failed accepts instead of a wait in the listen queue.
    let descriptors = descriptor_limit();
    let most = descriptors.saturating_sub(RESERVED_DESCRIPTORS) / 2;
    if let Some(asked) = config.max_connections.filter(|&n| n as u64 > most) {
        eprintln!(
            "widgets-todos: --max-connections {asked} needs {} descriptors, but this process may open {descriptors}: give at most {most}, or raise the limit (ulimit -n)",
            asked as u64 * 2 + RESERVED_DESCRIPTORS
        );
        return ExitCode::from(2);
    }

    // Looked at before the store opens it (and writes an empty snapshot
    // where there was none), for the summary. Records in the journal are
    // data, with or without a snapshot.
    let data_before = config.data.as_deref().map(|path| {
        let journal = widgets_todos::store::journal_of(path);
        let records = std::fs::metadata(&journal).is_ok_and(|meta| meta.len() > 0);
        match std::fs::metadata(path) {
            Ok(meta) if meta.len() > 0 => DataFile::Existing(path.to_path_buf()),
            _ if records => DataFile::Existing(journal),
            Ok(_) => DataFile::Empty,
            Err(_) => DataFile::New,
        }
    });
    // Generated items go only into new data: refused here, before the
    // store opens the file (or creates it), rather than mixed with what it
    // holds.
    if let (Some(DataFile::Existing(held)), Some(_)) = (&data_before, config.generate) {
        eprintln!(
            "widgets-todos: --generate fills only a new data file, and {} already holds data: \
             start without --generate to serve it, or give a new file",
            held.display()
        );
        return ExitCode::from(2);
    }
    let store = match widgets_todos::open_store(&config) {
        Ok(store) => store,
        Err(err) => {
            eprintln!("widgets-todos: {err}");
            return ExitCode::from(1);
        }
    };
    let mut options = Options::from_config(&config);
    // A subscriber to /api/events holds its connection for as long as it
    // listens: at most half the connections, so that requests find room.
    let connections = config
        .max_connections
        .unwrap_or_else(|| default_max(descriptors));
    if options.max_subscribers > connections / 2 {
        options.max_subscribers = connections / 2;
        log::warn!(
            target: LOG,
            "at most {} subscribers to /api/events: half of the {connections} connections",
            options.max_subscribers
        );
    }
    let app = Arc::new(App::with_options(store, options));

    let server = match widgets_todos::start_app(&config, Arc::clone(&app)) {
        Ok(server) => server,
        Err(err) => {
            let why = match err.kind() {
                std::io::ErrorKind::AddrInUse => "the address is already in use: stop what \
                     listens there, or choose another port with --port N or PORT=N \
                     (--port 0 picks any free one)"
                    .to_string(),
                _ => err.to_string(),
            };
            eprintln!(
                "widgets-todos: cannot listen on {}:{}: {why}",
                config.host, config.port
            );
            return ExitCode::from(1);
        }
    };

    // Before the listening line: a script that reads it and at once sends
    // SIGTERM must find the handlers in place, not the default action, which
    // kills the process without a graceful stop. A signal caught this early
    // waits for the thread below.
    let signals = Signals::new([SIGINT, SIGTERM]);
    let scheme = if config.tls.is_some() {
        "https"
    } else {
        "http"
    };
    let mut stdout = std::io::stdout();
    if let Err(err) =
        writeln!(stdout, "listening on {scheme}://{}", server.addr()).and_then(|()| stdout.flush())
    {
        log::warn!(target: LOG, "cannot print the listening address: {err}");
    }
    if config.log_level >= log::LevelFilter::Info {
        let api = api_url(scheme, server.addr());
        eprint!("{}", summary(&config, &app.store, &api, &data_before));
    }

    let stopper = server.stopper();
    match signals {
        Ok(mut signals) => {
            std::thread::spawn(move || {
                if let Some(signal) = signals.forever().next() {
                    // The requests answered before the signal come first.
                    widgets_todos::transport::access_log::flush();
                    log::info!(target: LOG, "signal {signal} received: finishing requests in flight (up to {GRACE:?}), then exiting"
                    );
                    stopper.stop();
                    std::thread::sleep(HARD_STOP);
                    log::warn!(target: LOG, "still running {HARD_STOP:?} after the signal; exiting anyway");
                    widgets_todos::transport::access_log::flush();
                    std::process::exit(0);
                }
            });
        }
        Err(err) => log::error!(target: LOG, "cannot install signal handlers: {err}"),
    }

    let outcome = server.wait();
    app.store.close();
    widgets_todos::transport::access_log::flush();
    match outcome {
        Ok(()) => {
            log::info!(target: LOG, "stopped");
            ExitCode::SUCCESS
        }
        Err(err) => {
            eprintln!("widgets-todos: {err}");
            ExitCode::from(1)
        }
    }
}

/// What the `--data` file was before the store opened it.
enum DataFile {
    New,
    Empty,
    /// Holding data: the snapshot, or else the journal, named.
    Existing(std::path::PathBuf),
}

/// The start-up summary, on stderr below the listening line (which stays
/// alone on stdout, for scripts): where the API is, where its data lives
/// and how much there was, and every setting that is not the default.
fn summary(config: &Config, store: &Store, api: &str, data: &Option<DataFile>) -> String {
    let items = format!(
        "{}, {}",
        counted(store.count::<Widget>(), "widget"),
        counted(store.count::<Todo>(), "todo")
    );
    let data = match (&config.data, data) {
        (Some(path), Some(DataFile::New)) => format!("{} (a new file): {items}", path.display()),
        (Some(path), Some(DataFile::Empty)) => {
            format!("{} (was empty: 0 bytes): {items}", path.display())
        }
        (Some(path), _) => format!("{}: {items}", path.display()),
        // In a container (the server is PID 1, or DATA_FILE is set but
        // empty, as `-e DATA_FILE=` leaves it in the image) the way to keep
        // the data is the variable; elsewhere, the file on the command line.
        (None, _) if std::process::id() == 1 || std::env::var_os("DATA_FILE").is_some() => {
            "in memory only, lost at exit (to keep it: set DATA_FILE to a file on a volume, \
             such as /data/db.json)"
                .into()
        }
        (None, _) => "in memory only, lost at exit (to keep it: widgets-todos db.json)".into(),
    };
    let mut text = format!(
        "widgets-todos {}: the API is at {api}\ndata: {data}\n",
        env!("CARGO_PKG_VERSION")
    );
    if let Some(spec) = config.generate {
        text.push_str(&format!(
            "generated: {}, {} (seed {})\n",
            counted(spec.todos, "todo"),
            counted(spec.widgets, "widget"),
            config.seed
        ));
    }
    let modes = config.modes();
    if !modes.is_empty() {
        text.push_str(&format!("modes: {}\n", modes.join("; ")));
    }
    text
}

/// The server's URL as a browser on this machine opens it: an address of
/// every interface (`0.0.0.0`, `::`) is none a client can connect to, so
/// the summary names the loopback address instead, and says the rest.
fn api_url(scheme: &str, addr: std::net::SocketAddr) -> String {
    use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
    let loopback = match addr.ip() {
        IpAddr::V4(ip) if ip.is_unspecified() => IpAddr::V4(Ipv4Addr::LOCALHOST),
        IpAddr::V6(ip) if ip.is_unspecified() => IpAddr::V6(Ipv6Addr::LOCALHOST),
        _ => return format!("{scheme}://{addr}/api"),
    };
    let here = std::net::SocketAddr::new(loopback, addr.port());
    format!(
        "{scheme}://{here}/api (listening on all interfaces: from another machine, \
         this one's address instead of {loopback})"
    )
}

/// `1 widget`, `2 widgets`.
fn counted(n: usize, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}
