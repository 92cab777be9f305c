use super::*;

#[test]
fn a_refused_permission_names_the_user_and_the_chown() {
    let err = io::Error::from(io::ErrorKind::PermissionDenied);
    let message = cannot("open", Path::new("/data/db.json.journal"), &err);
    use std::os::unix::fs::MetadataExt;
    let meta = fs::metadata("/proc/self").unwrap();
    let (uid, gid) = (meta.uid(), meta.gid());
    assert!(
        message.starts_with("cannot open /data/db.json.journal: "),
        "{message}"
    );
    assert!(
        message.contains(&format!("the server runs as uid {uid}, gid {gid}")),
        "{message}"
    );
    let fix = permission_fix(uid, gid, Path::new("/data"), in_container());
    assert!(message.ends_with(&format!("\n{fix}")), "{message}");
    let other = cannot(
        "open",
        Path::new("db.json"),
        &io::Error::from(io::ErrorKind::NotFound),
    );
    assert!(!other.contains("uid"), "{other}");
    let here = cannot("create", Path::new("db.json"), &err);
    let fix = permission_fix(uid, gid, Path::new("."), in_container());
    assert!(here.ends_with(&format!("\n{fix}")), "{here}");
    let outside = permission_fix(uid, gid, Path::new("."), false);
    assert!(
        outside.contains(&format!("chown -R {uid}:{gid} .;")),
        "{outside}"
    );
}

#[test]
fn in_a_container_the_fix_names_the_host_directory() {
    let fix = permission_fix(65534, 65534, Path::new("/data"), true);
    for said in [
        "/data is a path inside the container",
        "on the host, give it the directory mounted there",
        "docker run -v HOST_DIR:/data",
        "chown -R 65534:65534 HOST_DIR;",
        "docker run --user",
    ] {
        assert!(fix.contains(said), "{said}: {fix}");
    }
    assert!(!fix.contains("chown -R 65534:65534 /data"), "{fix}");
    let outside = permission_fix(1000, 1000, Path::new("/srv/data"), false);
    assert!(
        outside.contains("chown -R 1000:1000 /srv/data;"),
        "{outside}"
    );
    assert!(!outside.contains("docker"), "{outside}");
}
