//! Scratch folders of the tests, removed on drop (also when a test panics):
//! one file, included by fnabi-core's unit tests and by the integration
//! tests' `common` modules of fnabi, fnabi-iree and fnabi-cli.

#![allow(dead_code)] // Not every test binary writes files.

use std::path::{Path, PathBuf};

/// A fresh, empty folder `fnabi-<name>-<pid>` under the temp dir (the pid
/// keeps parallel test processes apart), removed with its contents when
/// dropped, so a failing (panicking) test leaves nothing behind either.
/// Bind it to a variable that lives as long as its paths are used:
/// `Scratch::new("x").join("f")` drops the folder at the end of the statement.
#[derive(Debug)]
pub struct Scratch(PathBuf);

impl Scratch {
    /// Creates the folder (emptying what an earlier process of the same pid left).
    pub fn new(name: &str) -> Scratch {
        let d = std::env::temp_dir().join(format!("fnabi-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        Scratch(d)
    }

    /// Writes `contents` to the file `name` in this folder; its path.
    pub fn file(&self, name: &str, contents: impl AsRef<[u8]>) -> PathBuf {
        let p = self.0.join(name);
        std::fs::write(&p, contents).unwrap();
        p
    }
}

impl std::ops::Deref for Scratch {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.0
    }
}

impl AsRef<Path> for Scratch {
    fn as_ref(&self) -> &Path {
        &self.0
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
