//! A server as tiny_http's own examples write one, for `baseline.rs` and
//! `minimal.rs`: our listening socket (`transport::bind`: TCP_NODELAY,
//! timeouts, backlog), tiny_http's accept loop and connection threads, and
//! `--threads` workers that each take a request, ask [`Answer`] for the
//! response's bytes and write them.

use std::borrow::Cow;
use std::io::Write;
use std::process::ExitCode;
use std::sync::Arc;

use widgets_todos::config::Config;
use widgets_todos::transport;

/// Connection threads tiny_http keeps ready. Its pool starts a thread for
/// a new connection only when it counts no idle one, and the count lags in
/// a burst; with this many ready, the benchmark's 64 connections are never
/// queued behind one another.
const CONNECTION_THREADS: usize = 64;

/// What a bare server sends for a request: a whole response, head and body.
pub trait Answer: Send + Sync + 'static {
    fn answer(&self, request: &mut tiny_http::Request) -> Cow<'_, [u8]>;
}

/// Listens as `config` says, prints `listening on http://ADDR` and serves
/// until the process is killed. `name` prefixes error messages.
pub fn serve(name: &str, config: &Config, answer: impl Answer) -> ExitCode {
    let settings = widgets_todos::transport_settings(config);
    let listener = match transport::bind(&config.host, config.port, &settings) {
        Ok(listener) => listener,
        Err(err) => {
            eprintln!("{name}: cannot listen: {err}");
            return ExitCode::from(1);
        }
    };
    let addr = match listener.local_addr() {
        Ok(addr) => addr,
        Err(err) => {
            eprintln!("{name}: {err}");
            return ExitCode::from(1);
        }
    };
    let settings = tiny_http::ServerConfig {
        addr: tiny_http::ConfigListenAddr::IP(vec![addr]),
        ssl: None,
        min_threads: Some(CONNECTION_THREADS),
        max_threads: None,
    };
    let http =
        match tiny_http::Server::from_listener(listener, tiny_http::ListenAddr::IP(addr), settings)
        {
            Ok(http) => Arc::new(http),
            Err(err) => {
                eprintln!("{name}: {err}");
                return ExitCode::from(1);
            }
        };
    println!("listening on http://{addr}");
    let _ = std::io::stdout().flush();

    let answer = Arc::new(answer);
    let workers: Vec<_> = (0..config.threads)
        .map(|_| {
            let (http, answer) = (Arc::clone(&http), Arc::clone(&answer));
            std::thread::spawn(move || {
                while let Ok(next) = http.recv() {
                    let Ok(mut request) = next else { continue };
                    let bytes = answer.answer(&mut request);
                    let mut writer = request.into_writer();
                    let _ = writer.write_all(&bytes).and_then(|()| writer.flush());
                }
            })
        })
        .collect();
    for worker in workers {
        let _ = worker.join();
    }
    ExitCode::SUCCESS
}
