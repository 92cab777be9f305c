use super::*;

#[test]
fn unspecified_hosts_mean_loopback() {
    assert_eq!(address("0.0.0.0", 80), Ok("127.0.0.1:80".parse().unwrap()));
    assert_eq!(address("::", 80), Ok("[::1]:80".parse().unwrap()));
    assert_eq!(address("10.1.2.3", 80), Ok("10.1.2.3:80".parse().unwrap()));
}
