use super::*;
use crate::config::{Command, parse};

/// The faults `args` and `env` configure, or the error.
fn faults(args: &[&str], env: &[(&str, &str)]) -> Result<FaultSettings, ConfigError> {
    let env: Vec<(String, String)> = env
        .iter()
        .map(|(name, value)| (name.to_string(), value.to_string()))
        .collect();
    let args = args.iter().map(|arg| arg.to_string());
    match parse(args, |name| {
        env.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone())
    })? {
        Command::Serve(config) => Ok(config.faults),
        other => panic!("{other:?}"),
    }
}

#[test]
fn flags_and_variables_set_the_faults() {
    assert_eq!(faults(&[], &[]), Ok(FaultSettings::default()));
    let all = FaultSettings {
        on: true,
        rate: Some(Rate(0.2)),
        status: Some(Failure::Close),
    };
    let flags = ["--faults", "--fail-rate", "0.2", "--fail-status", "close"];
    assert_eq!(faults(&flags, &[]), Ok(all.clone()));
    let env = [
        ("FAULTS", "yes"),
        ("FAIL_RATE", "0.2"),
        ("FAIL_STATUS", "close"),
    ];
    assert_eq!(faults(&[], &env), Ok(all));
    // Off, the others are refused, named as given.
    let refused = faults(&["--fail-status", "500"], &[("FAULTS", "no")]);
    let Err(ConfigError::BadValue { source, .. }) = refused else {
        panic!("{refused:?}");
    };
    assert_eq!(source, "--fail-status");
}

#[test]
fn statuses_are_the_defined_errors_but_three() {
    for good in ["400", "401", "429", "451", "500", "503", "511"] {
        assert!(status(good).is_ok(), "{good}");
    }
    let bad = [
        "abc", "200", "304", "399", "600", "999", "405", "407", "426", "418", "499", "510", "0503",
        "+503", "50", " 503", "",
    ];
    for bad in bad {
        assert_eq!(status(bad), Err(STATUSES), "{bad:?}");
    }
}

#[test]
fn a_failure_is_a_status_or_close() {
    assert_eq!(failure("500"), Ok(Failure::Status(500)));
    assert_eq!(failure("close"), Ok(Failure::Close));
    for bad in ["Close", "200", "reset", ""] {
        assert!(failure(bad).is_err(), "{bad:?}");
    }
}

#[test]
fn a_rate_is_a_decimal_from_0_to_1() {
    for (text, value) in [
        ("0", 0.0),
        ("1", 1.0),
        ("0.2", 0.2),
        ("1.0", 1.0),
        (".5", 0.5),
    ] {
        assert_eq!(rate(text), Ok(Rate(value)), "{text}");
    }
    for bad in [
        "-1", "1.5", "x", "", ".", "1e-1", "NaN", "inf", "0.2.1", "+0.5",
    ] {
        assert!(rate(bad).is_err(), "{bad:?}");
    }
}
