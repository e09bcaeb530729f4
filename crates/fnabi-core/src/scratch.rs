//! Scratch folders of the unit tests, removed on drop (also when a test panics).

use std::path::{Path, PathBuf};

/// A fresh, empty folder `fnabi-<name>-<pid>` under the temp dir (the pid
/// keeps parallel test processes apart), removed with its contents when
/// dropped. Bind it to a variable that lives as long as its paths are used.
#[derive(Debug)]
pub(crate) struct Scratch(PathBuf);

impl Scratch {
    /// Creates the folder (emptying what an earlier process of the same pid left).
    pub(crate) fn new(name: &str) -> Scratch {
        let d = std::env::temp_dir().join(format!("fnabi-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        Scratch(d)
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
