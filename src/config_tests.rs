//! The configuration's parsing rules: flags, variables, and their errors.

use super::*;

#[test]
fn origins_are_checked() {
    assert_eq!(
        parse_origin("HTTP://Localhost:3000"),
        Some("http://localhost:3000".into())
    );
    assert_eq!(
        parse_origin("https://[::1]:8443"),
        Some("https://[::1]:8443".into())
    );
    for bad in [
        "localhost:3000",
        "http://",
        "http://a.test/",
        "ftp://a",
        "*",
    ] {
        assert_eq!(parse_origin(bad), None, "{bad}");
    }
}

fn parse_with(args: &[&str], env: &[(&str, &str)]) -> Result<Command, ConfigError> {
    let env: Vec<(String, String)> = env
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    parse(args.iter().map(|a| a.to_string()), move |name| {
        env.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone())
    })
}

fn config(args: &[&str], env: &[(&str, &str)]) -> Config {
    match parse_with(args, env) {
        Ok(Command::Serve(config)) => *config,
        other => panic!("expected a config, got {other:?}"),
    }
}

#[test]
fn defaults() {
    let c = config(&[], &[]);
    assert_eq!(
        (c.host.as_str(), c.port, c.max_body_bytes, c.max_items),
        ("127.0.0.1", 8080, 65536, 100_000)
    );
    assert_eq!(c.log_level, log::LevelFilter::Info);
    assert_eq!(
        (c.read_timeout.as_secs(), c.write_timeout.as_secs()),
        (30, 30)
    );
    assert!(c.threads >= 1);
}

#[test]
fn flags_override_environment() {
    let c = config(
        &["--port", "9000", "--threads=3"],
        &[("PORT", "7000"), ("MAX_ITEMS", "5"), ("HOST", "")],
    );
    assert_eq!((c.port, c.threads, c.max_items), (9000, 3, 5));
    assert_eq!(c.host, "127.0.0.1");
    assert_eq!(
        config(&["--log-level", "warn"], &[("LOG_LEVEL", "debug")]).log_level,
        log::LevelFilter::Warn
    );
}

#[test]
fn a_flag_leaves_its_variable_unread() {
    let c = config(
        &["--port", "9000", "--log-level=warn", "--no-cors"],
        &[
            ("PORT", "abc"),
            ("LOG_LEVEL", "loud"),
            ("CORS_ORIGINS", "not-an-origin"),
        ],
    );
    assert_eq!((c.port, c.log_level), (9000, log::LevelFilter::Warn));
    assert_eq!(c.cors, Cors::Off);
    // Either token flag sets the one token: neither variable is read.
    let token = Some(Secret::new("good"));
    let env = [("AUTH_TOKEN", ""), ("AUTH_TOKEN_FILE", "/nonexistent/t")];
    assert_eq!(config(&["--auth-token", "good"], &env).auth_token, token);
    // Not read at all, not merely overridden.
    let args = ["--port", "1", "--threads", "2", "--auth-token", "t"];
    let parsed = parse(args.map(String::from), |name| {
        assert!(
            !matches!(name, "PORT" | "THREADS" | "AUTH_TOKEN" | "AUTH_TOKEN_FILE"),
            "{name} was read"
        );
        None
    });
    assert!(parsed.is_ok());
    // A bad variable for an option no flag sets still stops start-up.
    let err = parse_with(&["--port", "1"], &[("PORT", "abc"), ("MAX_ITEMS", "x")]);
    assert!(err.unwrap_err().to_string().contains("MAX_ITEMS"));
}

#[test]
fn data_file_and_its_worker_default() {
    let c = config(&["--data", "state.json"], &[]);
    assert_eq!(c.data, Some(PathBuf::from("state.json")));
    assert!(c.threads >= DURABLE_THREADS);
    let c = config(&[], &[("DATA_FILE", "env.json")]);
    assert_eq!(c.data, Some(PathBuf::from("env.json")));
    // An explicit worker count wins, from a flag or the environment.
    assert_eq!(config(&["--data", "s", "--threads", "2"], &[]).threads, 2);
    assert_eq!(config(&["--data=s"], &[("THREADS", "3")]).threads, 3);
    assert_eq!(config(&[], &[("DATA_FILE", "")]).data, None);
}

#[test]
fn tester_flags() {
    let c = config(
        &[
            "--allow-reset",
            "--delay",
            "250",
            "--auth-token",
            "s3cr3t.token",
        ],
        &[],
    );
    assert!(c.allow_reset);
    assert_eq!(c.delay, Duration::from_millis(250));
    assert_eq!(c.auth_token, Some(Secret::new("s3cr3t.token")));
    assert!(
        !format!("{c:?}").contains("s3cr3t"),
        "the token is never printed"
    );
    assert_eq!(
        config(&[], &[("AUTH_TOKEN", "abc")]).auth_token,
        Some(Secret::new("abc"))
    );
    assert!(parse_with(&["--delay", "10001"], &[]).is_err());
    assert!(parse_with(&["--auth-token", "has space"], &[]).is_err());
    assert!(parse_with(&["--auth-token-file", "/nonexistent/token"], &[]).is_err());
    let path = std::env::temp_dir().join(format!("wt-token-{}", std::process::id()));
    std::fs::write(&path, "from-file\n").unwrap();
    let c = config(&["--auth-token-file", path.to_str().unwrap()], &[]);
    assert_eq!(c.auth_token, Some(Secret::new("from-file")));
    let _ = std::fs::remove_file(path);
}

#[test]
fn empty_protections_are_refused_others_count_as_unset() {
    for (variable, _) in FAIL_CLOSED {
        let err = parse_with(&[], &[(variable, "")]).unwrap_err();
        assert!(
            matches!(err, ConfigError::EmptyProtection { variable: v, .. } if v == *variable),
            "{variable}: {err:?}"
        );
        assert!(err.to_string().contains("unset it"), "{err}");
    }
    assert_eq!(
        config(&[], &[("DATA_FILE", ""), ("PORT", ""), ("DELAY", "")]),
        config(&[], &[])
    );
    assert!(parse_with(&["--auth-token", ""], &[]).is_err());
    let path = std::env::temp_dir().join(format!("wt-empty-token-{}", std::process::id()));
    std::fs::write(&path, "\r\n").unwrap();
    let err = parse_with(&["--auth-token-file", path.to_str().unwrap()], &[]).unwrap_err();
    assert!(err.to_string().contains("empty"), "{err}");
    let _ = std::fs::remove_file(path);
}

#[test]
fn tls_flags() {
    let both = parse_with(&["--tls-cert", "c.pem", "--tls-key", "k.pem"], &[]);
    if cfg!(feature = "tls") {
        assert!(both.is_ok());
        let err = parse_with(&["--tls-cert", "c.pem"], &[]).unwrap_err();
        assert!(err.to_string().contains("together"), "{err}");
    } else {
        let err = both.unwrap_err().to_string();
        assert!(err.contains("--features tls"), "{err}");
    }
}

#[test]
fn cors_flags() {
    assert_eq!(config(&[], &[]).cors, Cors::Any);
    assert_eq!(config(&["--no-cors"], &[]).cors, Cors::Off);
    let origins = |list: &[&str]| Cors::Origins(list.iter().map(|s| s.to_string()).collect());
    assert_eq!(
        config(
            &[
                "--cors-origin",
                "http://a.test",
                "--cors-origin=https://b.test:8443"
            ],
            &[]
        )
        .cors,
        origins(&["http://a.test", "https://b.test:8443"])
    );
    assert_eq!(
        config(&[], &[("CORS_ORIGINS", "http://a.test, http://B.test")]).cors,
        origins(&["http://a.test", "http://b.test"])
    );
    // Flags replace the environment's list.
    assert_eq!(
        config(
            &["--cors-origin", "http://c.test"],
            &[("CORS_ORIGINS", "http://a.test")]
        )
        .cors,
        origins(&["http://c.test"])
    );
    assert!(parse_with(&["--cors-origin", "a.test"], &[]).is_err());
    assert!(parse_with(&["--no-cors", "--cors-origin", "http://a.test"], &[]).is_err());
}

#[test]
fn errors_name_the_flag_or_variable() {
    let err = |args: &[&str], env: &[(&str, &str)]| parse_with(args, env).unwrap_err().to_string();
    assert!(err(&["--port", "70000"], &[]).contains("--port"));
    assert!(err(&["--threads", "0"], &[]).contains("--threads"));
    assert!(err(&["--bogus"], &[]).contains("--bogus"));
    assert!(err(&["--port"], &[]).contains("--port"));
    assert!(err(&[], &[("MAX_BODY_BYTES", "-1")]).contains("MAX_BODY_BYTES"));
    assert!(err(&["--log-level", "loud"], &[]).contains("--log-level"));
    assert!(err(&["--read-timeout", "0"], &[]).contains("--read-timeout"));
    assert!(err(&[], &[("WRITE_TIMEOUT", "1.5")]).contains("WRITE_TIMEOUT"));
}

#[test]
fn a_positional_argument_is_the_data_file() {
    let c = config(&["db.json", "--port", "1"], &[]);
    assert_eq!(c.data, Some(PathBuf::from("db.json")));
    assert!(c.threads >= DURABLE_THREADS);
    // Given twice with the same name is harmless; DATA_FILE is not read.
    let c = config(&["--data", "db.json", "db.json"], &[("DATA_FILE", "")]);
    assert_eq!(c.data, Some(PathBuf::from("db.json")));
    let c = config(&["db.json"], &[("DATA_FILE", "db.json")]);
    assert_eq!(c.data, Some(PathBuf::from("db.json")));
    // A flag's value is not an argument.
    assert_eq!(config(&["--host", "localhost"], &[]).data, None);
    let err = |args: &[&str], env: &[(&str, &str)]| parse_with(args, env).unwrap_err();
    let twice = err(&["a.json", "--data=b.json"], &[]);
    assert!(matches!(
        twice,
        ConfigError::DataTwice {
            source: "--data",
            ..
        }
    ));
    assert!(twice.to_string().contains("give it once"), "{twice}");
    let twice = err(&["a.json"], &[("DATA_FILE", "b.json")]);
    assert!(matches!(
        twice,
        ConfigError::DataTwice {
            source: "DATA_FILE",
            ..
        }
    ));
    let extra = err(&["a.json", "b.json"], &[]).to_string();
    assert!(
        extra.contains("'b.json'") && extra.contains("one data file"),
        "{extra}"
    );
}

#[test]
fn switches_have_variables() {
    for on in ["1", "true", "YES", "True"] {
        let c = config(&[], &[("ALLOW_RESET", on), ("NO_CORS", on)]);
        assert!(c.allow_reset, "{on}");
        assert_eq!(c.cors, Cors::Off, "{on}");
    }
    for off in ["0", "false", "No"] {
        let c = config(&[], &[("ALLOW_RESET", off), ("NO_CORS", off)]);
        assert_eq!((c.allow_reset, c.cors), (false, Cors::Any), "{off}");
    }
    for bad in ["", "on", "2", "y"] {
        let err = parse_with(&[], &[("ALLOW_RESET", bad)])
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("ALLOW_RESET") && err.contains("1, true or yes"),
            "{bad}: {err}"
        );
    }
    // The flag wins, and its variable is not read.
    assert!(config(&["--allow-reset"], &[("ALLOW_RESET", "bogus")]).allow_reset);
    assert!(config(&["--allow-reset"], &[("ALLOW_RESET", "0")]).allow_reset);
    let err = parse_with(&["--allow-reset=yes"], &[]).unwrap_err();
    assert_eq!(err, ConfigError::UnexpectedValue("--allow-reset"));
    // NO_CORS=0 leaves an origin list alone.
    let c = config(&[], &[("NO_CORS", "0"), ("CORS_ORIGINS", "http://a.test")]);
    assert_eq!(c.cors, Cors::Origins(vec!["http://a.test".into()]));
}

#[test]
fn no_cors_and_an_origin_list_contradict() {
    let err = parse_with(&["--no-cors", "--cors-origin", "http://a.test"], &[]).unwrap_err();
    let text = err.to_string();
    assert!(
        text.contains("--no-cors and --cors-origin contradict") && text.contains("only one"),
        "{text}"
    );
    let err = parse_with(&[], &[("NO_CORS", "1"), ("CORS_ORIGINS", "http://a.test")]);
    assert!(
        err.unwrap_err()
            .to_string()
            .contains("NO_CORS and CORS_ORIGINS")
    );
    // A flag of either leaves both variables unread.
    let c = config(&["--cors-origin=http://a.test"], &[("NO_CORS", "1")]);
    assert_eq!(c.cors, Cors::Origins(vec!["http://a.test".into()]));
}

#[test]
fn hosts_must_be_addresses_or_resolve() {
    for good in ["127.0.0.1", "0.0.0.0", "::", "::1", "localhost"] {
        assert_eq!(config(&["--host", good], &[]).host, good);
    }
    for bad in ["999.1.1.1", "1.2.3", "256.0.0.1", " ", "[::1]"] {
        let err = parse_with(&["--host", bad], &[]).unwrap_err().to_string();
        assert!(
            err.contains("--host") && err.contains("IP address"),
            "{bad}: {err}"
        );
    }
    let err = parse_with(&[], &[("HOST", "999.1.1.1")]).unwrap_err();
    assert!(err.to_string().contains("HOST"), "{err}");
}

#[test]
fn healthcheck_takes_host_and_port() {
    let check = |host: &str, port| {
        Ok(Command::Healthcheck {
            host: host.into(),
            port,
        })
    };
    assert_eq!(parse_with(&["healthcheck"], &[]), check("127.0.0.1", 8080));
    assert_eq!(
        parse_with(&["healthcheck"], &[("HOST", "0.0.0.0"), ("PORT", "9000")]),
        check("0.0.0.0", 9000)
    );
    assert_eq!(
        parse_with(&["healthcheck", "--port=81"], &[("PORT", "x")]),
        check("127.0.0.1", 81)
    );
    // Only the server's address: other options, or variables, are not
    // its business (AUTH_TOKEN="" stops a server, not its check).
    assert_eq!(
        parse_with(&["healthcheck"], &[("AUTH_TOKEN", ""), ("MAX_ITEMS", "x")]),
        check("127.0.0.1", 8080)
    );
    let err = parse_with(&["healthcheck", "--data", "x"], &[]).unwrap_err();
    assert!(err.to_string().contains("only --host and --port"), "{err}");
    assert!(parse_with(&["healthcheck", "--port", "0"], &[]).is_err());
    assert!(parse_with(&["healthcheck", "extra"], &[]).is_err());
}

/// `Opt::set` matches on the flag: an option of `OPTS` without its arm
/// would reach the match's `unreachable!` at start-up.
#[test]
fn every_option_has_its_arm_in_set() {
    for opt in OPTS {
        let set = std::panic::catch_unwind(|| opt.set(&mut Config::default(), "0").is_ok());
        assert!(set.is_ok(), "{} has no arm in Opt::set", opt.flag);
    }
}

#[test]
fn help_lists_every_option_and_spelling_in_80_columns() {
    for opt in OPTS {
        assert!(HELP.contains(opt.flag), "--help lacks {}", opt.flag);
        assert!(HELP.contains(opt.env), "--help lacks {}", opt.env);
    }
    for (alias, flag) in options::ALIASES {
        let listed = format!("{alias}, {flag}");
        assert!(HELP.contains(&listed), "--help lacks {listed}");
    }
    for line in HELP.lines() {
        assert!(line.chars().count() <= 80, "too wide: {line}");
    }
}

#[test]
fn modes_name_what_differs_from_the_defaults() {
    assert!(config(&[], &[]).modes().is_empty());
    assert!(config(&["--data", "x.json"], &[]).modes().is_empty());
    let args = [
        "--allow-reset",
        "--no-cors",
        "--delay=250",
        "--max-items=10",
        "--auth-token=t",
        "--threads=1000",
    ];
    let modes = config(&args, &[]).modes().join("; ");
    for mode in [
        "bearer token",
        "reset allowed",
        "CORS off",
        "delay 250 ms",
        "at most 10 items",
        "1000 requests handled at once",
    ] {
        assert!(modes.contains(mode), "{mode}: {modes}");
    }
}

#[test]
fn help_and_version() {
    assert_eq!(parse_with(&["--help"], &[]), Ok(Command::Help));
    assert_eq!(
        parse_with(&["--port", "1", "-V"], &[]),
        Ok(Command::Version)
    );
}

#[test]
fn generate_and_seed() {
    use crate::model::generate::Spec;
    let spec = |todos, widgets| Some(Spec { todos, widgets });
    let c = config(&["--generate", "todos=3", "--seed", "7"], &[]);
    assert_eq!((c.generate, c.seed), (spec(3, 0), 7));
    let c = config(&[], &[("GENERATE", "widgets=2,todos=1"), ("SEED", "9")]);
    assert_eq!((c.generate, c.seed), (spec(1, 2), 9));
    // --seed alone is accepted: it will also seed --fail-rate.
    assert_eq!(config(&["--seed", "1"], &[]).generate, None);
    assert_eq!(
        parse_with(&["--generate=todos=5", "--max-items=4"], &[]),
        Err(ConfigError::TooManyToGenerate {
            collection: "todos",
            count: 5,
            max_items: 4
        })
    );
    for bad in [
        &["--seed", "-1"][..],
        &["--seed", "1.5"],
        &["--generate", ""],
    ] {
        assert!(
            matches!(parse_with(bad, &[]), Err(ConfigError::BadValue { .. })),
            "{bad:?}"
        );
    }
}

#[test]
fn record_keeps_1_to_100000_requests() {
    assert_eq!(config(&[], &[]).record, None);
    assert_eq!(config(&["--record", "1"], &[]).record, Some(1));
    assert_eq!(config(&["--record=100000"], &[]).record, Some(100_000));
    assert_eq!(config(&[], &[("RECORD", "50")]).record, Some(50));
    assert_eq!(
        config(&["--record", "7"], &[("RECORD", "x")]).record,
        Some(7)
    );
    for bad in ["0", "100001", "-1", "ten", ""] {
        let err = parse_with(&["--record", bad], &[]).unwrap_err();
        assert!(err.to_string().contains("from 1 to 100000"), "{bad}: {err}");
    }
    let modes = config(&["--record", "5"], &[]).modes().join("; ");
    assert!(modes.contains("recording the last 5 requests"), "{modes}");
}

/// The words of `text` made of `--` and lower-case letters and dashes
/// (flags), or of capitals and underscores (variables).
fn words(text: &str, flag: bool) -> std::collections::BTreeSet<String> {
    text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '-' || c == '_'))
        .filter(|w| {
            if flag {
                w.starts_with("--") && w.len() > 2
            } else {
                w.len() > 1 && w.chars().all(|c| c.is_ascii_uppercase() || c == '_')
            }
        })
        .map(str::to_string)
        .collect()
}

/// The one configuration table, in docs/configuration.md, names exactly
/// the flags and variables that `--help` names, so neither can drift.
#[test]
fn the_configuration_page_lists_what_help_lists() {
    let page = include_str!("../docs/configuration.md");
    let rows: Vec<&str> = page
        .lines()
        .skip_while(|l| !l.starts_with("| flag | env |"))
        .skip(2)
        .take_while(|l| l.starts_with('|'))
        .collect();
    assert!(
        rows.len() > 20,
        "no configuration table in docs/configuration.md"
    );
    let column = |i: usize| {
        rows.iter()
            .map(|r| r.split('|').nth(i).unwrap_or(""))
            .collect::<Vec<_>>()
            .join(" ")
    };
    let mut help_flags = words(HELP, true);
    // `--features tls` is cargo's; `--out` is the import's (docs/json-server.md).
    help_flags.remove("--features");
    help_flags.remove("--out");
    // The variables: in brackets on the option lines and their
    // continuations, which are indented (not the usage's `[--port N]`).
    let bracketed: String = HELP
        .lines()
        .filter(|l| l.starts_with("  "))
        .flat_map(|l| l.split('[').skip(1))
        .filter_map(|s| s.split(']').next())
        .filter(|s| !s.contains('-'))
        .collect::<Vec<_>>()
        .join(" ");
    assert_eq!(words(&column(1), true), help_flags, "flags");
    assert_eq!(
        words(&column(2), false),
        words(&bracketed, false),
        "variables"
    );
}

/// json-server's spellings set the same options as the long flags.
#[test]
fn json_server_spellings_are_the_same_options() {
    let short = config(
        &[
            "-p", "3000", "-H", "0.0.0.0", "-w", "-d", "200", "--ro", "--nc", "-q",
        ],
        &[],
    );
    let long = config(
        &[
            "--port",
            "3000",
            "--host",
            "0.0.0.0",
            "--watch",
            "--delay",
            "200",
            "--read-only",
            "--no-cors",
            "--quiet",
        ],
        &[],
    );
    assert_eq!(short, long);
    assert!(short.watch && short.read_only && short.quiet && short.cors == Cors::Off);
    assert_eq!(
        (short.port, short.delay),
        (3000, Duration::from_millis(200))
    );
    assert_eq!(config(&["-p=4000"], &[]).port, 4000);
    let env = config(
        &[],
        &[("READ_ONLY", "1"), ("QUIET", "yes"), ("WATCH", "true")],
    );
    assert!(env.read_only && env.quiet && env.watch);
    let err = parse_with(&["-p"], &[]).unwrap_err();
    assert_eq!(err, ConfigError::MissingValue("--port"));
    let err = parse_with(&["--ro=1"], &[]).unwrap_err();
    assert_eq!(err, ConfigError::UnexpectedValue("--read-only"));
}

/// A `--config` file: its keys, in json-server's camelCase or kebab-case,
/// are options; a flag wins over it, and it over the environment.
#[test]
fn a_config_file_gives_options() {
    let dir = std::env::temp_dir().join(format!("widgets-todos-config-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("json-server.json");
    std::fs::write(
        &file,
        r#"{"port": 3000, "host": "127.0.0.1", "watch": true, "delay": 50, "readOnly": true,
            "noCors": true, "quiet": true, "max-items": 7, "logLevel": "warn", "p": 3001}"#,
    )
    .unwrap();
    let path = file.to_str().unwrap();
    let from_file = config(&["-c", path], &[("PORT", "9"), ("MAX_ITEMS", "9")]);
    assert_eq!((from_file.port, from_file.max_items), (3001, 7));
    assert!(from_file.watch && from_file.read_only && from_file.quiet);
    assert_eq!(from_file.cors, Cors::Off);
    assert_eq!(from_file.log_level, log::LevelFilter::Warn);
    assert_eq!(from_file.delay, Duration::from_millis(50));
    assert_eq!(config(&["-c", path, "-p", "4000"], &[]).port, 4000);
    assert_eq!(config(&[], &[("CONFIG_FILE", path)]).port, 3001);
    std::fs::write(&file, r#"{"authToken": "not a token"}"#).unwrap();
    let err = parse_with(&["--config", path], &[])
        .unwrap_err()
        .to_string();
    assert!(err.contains("'(hidden)' for \"authToken\""), "{err}");
    std::fs::write(&file, r#"{"config": "other.json"}"#).unwrap();
    let err = parse_with(&["--config", path], &[])
        .unwrap_err()
        .to_string();
    assert!(err.contains("unknown key \"config\""), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}
