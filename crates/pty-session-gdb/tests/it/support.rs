//! Helpers shared by the integration tests: the test program, gdb, and `/proc`.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::Duration;

use pty_session::{Config, Owner, PtyService};
use pty_session_gdb::{Gdb, GdbOptions, Record};

/// `test_data/prog.c` compiled with `gcc -g -O0`, once per test binary, into cargo's
/// temp dir for integration tests.
pub fn prog() -> &'static Path {
    static PROG: OnceLock<PathBuf> = OnceLock::new();
    PROG.get_or_init(|| {
        for tool in ["gcc", "gdb"] {
            let found = std::process::Command::new(tool)
                .arg("--version")
                .output()
                .is_ok_and(|out| out.status.success());
            assert!(
                found,
                "{tool} must be installed for these tests (.ci/run installs it)"
            );
        }
        let dir =
            Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("gdb-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("create temp dir");
        let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("test_data/prog.c");
        let binary = dir.join("prog");
        let out = std::process::Command::new("gcc")
            .args(["-g", "-O0", "-o"])
            .arg(&binary)
            .arg(&source)
            .output()
            .expect("run gcc");
        assert!(
            out.status.success(),
            "gcc failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        binary
    })
}

/// A service with default config (replies of 200 lines, as a consumer would have).
pub fn service() -> PtyService {
    PtyService::new(Config::default())
}

/// gdb on the test program with `args`, for owner `owner`; panics if it does not start.
pub async fn start(pty: &PtyService, owner: &str, options: GdbOptions) -> Gdb {
    let options = options.program(prog()).timeout(Duration::from_secs(30));
    match Gdb::start(pty, Owner::new(owner), options).await {
        Ok(gdb) => gdb,
        Err(err) => panic!("gdb did not start: {err}"),
    }
}

/// The inferior's pid, from `=thread-group-started`.
pub fn inferior_pid(records: &[Record]) -> Option<i32> {
    records.iter().find_map(|record| match record {
        Record::Async(r) if r.class == "thread-group-started" => {
            r.results.str("pid").and_then(|pid| pid.parse().ok())
        }
        _ => None,
    })
}

pub use pty_session_testkit::{alive, eventually};
