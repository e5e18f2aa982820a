//! Where the addon finds its spawner executable.
//!
//! A service starts its spawner (the process that forks each session's shim) from an
//! executable that links the library. Inside node the current executable is `node`, so
//! the addon names another through `Config::spawner`: the first of
//! 1. the `spawner` option of `new PtyService({ spawner })`,
//! 2. the environment variable [`PATH_VAR`],
//! 3. `pty-session-spawner` in the directory of the loaded addon file, where
//!    `npm run build` puts it: the package carries its own, built from the same sources,
//!    so the two always speak the same version of the spawner's request format.

use std::ffi::{CStr, OsStr};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// The environment variable naming the spawner executable, for a layout where it does
/// not sit beside the addon.
pub const PATH_VAR: &str = "PTY_SESSION_SPAWNER_PATH";

/// The spawner's file name beside the addon.
pub const FILE_NAME: &str = "pty-session-spawner";

/// The spawner to use given the option `given`: the option, else the environment
/// variable, else the file beside the addon. `Err` says where it looked.
pub fn locate(given: Option<PathBuf>) -> Result<PathBuf, String> {
    if let Some(path) = given {
        return Ok(path);
    }
    if let Some(path) = std::env::var_os(PATH_VAR).filter(|v| !v.is_empty()) {
        return Ok(PathBuf::from(path));
    }
    let beside = addon_dir().map(|dir| dir.join(FILE_NAME));
    match beside {
        Some(path) if path.is_file() => Ok(path),
        Some(path) => Err(format!(
            "no spawner executable: the option `spawner` is not given, {PATH_VAR} is not set, \
             and {} does not exist (npm run build puts it there)",
            path.display()
        )),
        None => Err(format!(
            "no spawner executable: give the option `spawner` or set {PATH_VAR} (the \
             addon's own file cannot be found)"
        )),
    }
}

/// The directory of the shared object this code was loaded from (the `.node` file).
fn addon_dir() -> Option<PathBuf> {
    let mut info = std::mem::MaybeUninit::<libc::Dl_info>::zeroed();
    let anchor = addon_dir as *const ();
    // SAFETY: `dladdr` reads the address of a function of this object and fills `info`,
    // which lives for the call; it returns 0 if the address is in no loaded object.
    let found = unsafe { libc::dladdr(anchor.cast(), info.as_mut_ptr()) };
    if found == 0 {
        return None;
    }
    // SAFETY: `dladdr` succeeded, so it initialised `info`.
    let info = unsafe { info.assume_init() };
    if info.dli_fname.is_null() {
        return None;
    }
    // SAFETY: a non-null `dli_fname` is a NUL-terminated path owned by the loader, valid
    // while the object stays loaded (it is: this code runs from it).
    let name = unsafe { CStr::from_ptr(info.dli_fname) };
    let path = Path::new(OsStr::from_bytes(name.to_bytes()));
    let path = path.canonicalize().ok()?;
    path.parent().map(Path::to_path_buf)
}
