//! The data files on disk: where the journal and temporary files go, the
//! symbolic links a name may be, and how a file is replaced whole, keeping
//! its mode, so that a crash at any moment leaves the old file or the new.

use std::fs::{self, File, OpenOptions};
use std::io::{self, BufWriter};
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

pub(super) fn journal_path(path: &Path) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(".journal");
    PathBuf::from(name)
}

pub(super) fn tmp_path(path: &Path) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(".tmp");
    PathBuf::from(name)
}

/// The file `path` names once symbolic links are followed (only the last
/// component needs it: the directories are the same whatever their path).
/// A file is replaced by renaming a new one over it, and a rename replaces
/// whatever has the name, link or file: so the target is what must be
/// replaced, by a new file beside it (a rename cannot cross file systems).
/// The target need not exist yet. The links are read once, at start-up.
pub(super) fn resolve(path: &Path) -> io::Result<PathBuf> {
    let mut path = path.to_path_buf();
    // As many links in a row as Linux follows before ELOOP.
    for _ in 0..40 {
        match fs::symlink_metadata(&path) {
            Ok(meta) if meta.file_type().is_symlink() => {
                let target = fs::read_link(&path)?;
                path = match path.parent() {
                    Some(dir) => dir.join(target),
                    None => target,
                };
            }
            Ok(_) => return Ok(path),
            Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(path),
            Err(err) => return Err(err),
        }
    }
    Err(io::Error::other("too many levels of symbolic links"))
}

/// Creates `path.tmp`, empty, to be renamed over `path`: with `path`'s
/// permissions when it exists, so that a rewritten file keeps its mode (a
/// private file stays private, and the umask narrows nothing). It is
/// created no wider than that and set exactly before anything is written.
pub(super) fn create_replacement(path: &Path) -> io::Result<(PathBuf, File)> {
    let tmp = tmp_path(path);
    let kept = match fs::metadata(path) {
        Ok(meta) => Some(meta.permissions()),
        Err(err) if err.kind() == io::ErrorKind::NotFound => None,
        Err(err) => return Err(err),
    };
    let mut options = OpenOptions::new();
    options.read(true).write(true).create(true).truncate(true);
    if let Some(permissions) = &kept {
        options.mode(permissions.mode() & 0o7777);
    }
    let file = options.open(&tmp)?;
    if let Some(permissions) = kept {
        // `mode` above applies only to a new file, less the umask.
        file.set_permissions(permissions)?;
    }
    Ok((tmp, file))
}

/// Fsyncs the directory holding `path`, which makes a file created or
/// renamed there durable (the file's own fsync does not cover its name).
pub(super) fn sync_dir(path: &Path) -> io::Result<()> {
    let dir = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    File::open(dir)?.sync_all()
}

/// Writes `path` whole or not at all: to `path.tmp`, fsync, rename over
/// `path`, fsync the directory.
pub(super) fn write_atomically(
    path: &Path,
    write: impl FnOnce(&mut BufWriter<File>) -> io::Result<()>,
) -> io::Result<()> {
    let (tmp, file) = create_replacement(path)?;
    let mut out = BufWriter::new(file);
    write(&mut out)?;
    let file = out.into_inner().map_err(io::IntoInnerError::into_error)?;
    file.sync_all()?;
    fs::rename(&tmp, path)?;
    sync_dir(path)
}

/// `cannot DO PATH: ERROR`, and, when the error is a permission refused,
/// who the server runs as and the two ways out: a data directory is most
/// often refused to a container's user (65534 in the image), whose uid a
/// bare "Permission denied" does not name.
pub(super) fn cannot(what: &str, path: &Path, err: &io::Error) -> String {
    let mut message = format!("cannot {what} {}: {err}", path.display());
    if err.kind() == io::ErrorKind::PermissionDenied {
        // The owner of /proc/self is the process's effective user.
        let (uid, gid) = fs::metadata("/proc/self").map_or((None, None), |meta| {
            use std::os::unix::fs::MetadataExt;
            (Some(meta.uid()), Some(meta.gid()))
        });
        let dir = match path.parent() {
            Some(dir) if !dir.as_os_str().is_empty() => dir,
            _ => Path::new("."),
        };
        if let (Some(uid), Some(gid)) = (uid, gid) {
            message.push('\n');
            message.push_str(&permission_fix(uid, gid, dir, in_container()));
        }
    }
    message
}

/// Whether the server runs as a container's first process, as the image
/// runs it (`scripts/container/Dockerfile`); the start-up summary reads it
/// so too (`main.rs`). A server started inside a development container
/// is not: its directories may well be the container's own.
fn in_container() -> bool {
    std::process::id() == 1
}

/// What to do about a directory `dir` the user `uid:gid` may not write.
/// In a container, `dir` is a path of the container's own: the fix is on
/// the host, to the directory mounted there, which the server cannot see.
fn permission_fix(uid: u32, gid: u32, dir: &Path, in_container: bool) -> String {
    let dir = dir.display();
    if in_container {
        format!(
            "the server runs as uid {uid}, gid {gid}, which may not write there; {dir} is a path \
             inside the container: on the host, give it the directory mounted there (HOST_DIR in \
             docker run -v HOST_DIR:{dir}), as root: chown -R {uid}:{gid} HOST_DIR; or run the \
             container as that directory's owner: docker run --user \"$(id -u):$(id -g)\" ..."
        )
    } else {
        format!(
            "the server runs as uid {uid}, gid {gid}, which may not write there: give it the \
             directory, as root: chown -R {uid}:{gid} {dir}; or run the server as the \
             directory's owner"
        )
    }
}

#[cfg(test)]
mod tests {
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
}
