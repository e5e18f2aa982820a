//! xterm.js, vendored in `web/vendor/` and embedded once, for the web view ([`crate::people::web`]
//! serves it) and the MCP App ([`crate::people::app`] inlines it).
//!
//! `web/vendor.mjs` (`npm ci && npm run vendor` in `web/`) copies it from the package that
//! `web/package-lock.json` pins and writes `web/vendor/manifest.json`: the version and
//! integrity the lock has, and each file's source and sha256. The tests below hold the
//! embedded files to that manifest and the manifest to the lock, so a hand edit of a
//! vendored file, or a new pin without a refresh, fails.

/// The terminal, `lib/xterm.js` of the pinned package (without its source map comment).
pub(crate) const XTERM_JS: &str = include_str!("../../web/vendor/xterm.js");

/// The terminal's stylesheet, `css/xterm.css` of the pinned package.
pub(crate) const XTERM_CSS: &str = include_str!("../../web/vendor/xterm.css");

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;
    use std::path::Path;

    use serde_json::Value;
    use sha2::{Digest as _, Sha256};

    use super::*;

    fn web() -> &'static Path {
        Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/web"))
    }

    fn json(path: &Path) -> Value {
        let text =
            std::fs::read_to_string(path).unwrap_or_else(|err| panic!("{}: {err}", path.display()));
        serde_json::from_str(&text).unwrap_or_else(|err| panic!("{}: {err}", path.display()))
    }

    fn sha256(bytes: &[u8]) -> String {
        Sha256::digest(bytes)
            .iter()
            .map(|byte| format!("{byte:02x}"))
            .collect()
    }

    /// Every file in `web/vendor/` is the one the manifest names, by sha256, and the
    /// manifest's package is the one `package.json` and `package-lock.json` pin.
    #[test]
    fn vendored_files_match_the_manifest_and_the_lock() {
        let manifest = json(&web().join("vendor/manifest.json"));
        let package = manifest["package"].as_str().expect("manifest: package");
        let version = &manifest["version"];
        let pinned = &json(&web().join("package.json"))["dependencies"][package];
        assert_eq!(pinned, version, "package.json pins {package} {pinned}");
        let locked =
            &json(&web().join("package-lock.json"))["packages"][format!("node_modules/{package}")];
        assert_eq!(&locked["version"], version, "the lock has {locked}");
        assert_eq!(
            locked["integrity"], manifest["integrity"],
            "the lock has {locked}"
        );

        let listed: BTreeSet<String> = manifest["files"]
            .as_array()
            .expect("manifest: files")
            .iter()
            .map(|entry| {
                let file = entry["file"].as_str().expect("manifest: file");
                let bytes = std::fs::read(web().join("vendor").join(file))
                    .unwrap_or_else(|err| panic!("vendor/{file}: {err}"));
                assert_eq!(
                    sha256(&bytes),
                    entry["sha256"].as_str().expect("manifest: sha256"),
                    "vendor/{file} is not the file the manifest names: \
                     refresh it with `npm ci && npm run vendor` in web/"
                );
                file.to_owned()
            })
            .collect();
        let present: BTreeSet<String> = std::fs::read_dir(web().join("vendor"))
            .unwrap()
            .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|name| name != "manifest.json")
            .collect();
        assert_eq!(present, listed, "files in web/vendor/ and in its manifest");
    }

    /// What is embedded is what was checked above.
    #[test]
    fn the_embedded_files_are_the_vendored_ones() {
        for (file, embedded) in [("xterm.js", XTERM_JS), ("xterm.css", XTERM_CSS)] {
            let on_disk = std::fs::read_to_string(web().join("vendor").join(file)).unwrap();
            assert!(
                on_disk == embedded,
                "vendor/{file} differs from the embedded copy"
            );
        }
    }
}
