//! [`Scratch`]: a test's own directory under the system's temporary directory, removed when its
//! owner goes out of scope — when the test fails and unwinds too, so that failing runs leave
//! nothing behind either.

use std::ffi::OsStr;
use std::fmt;
use std::ops::Deref;
use std::path::{Path, PathBuf};

/// A fresh, uniquely named directory (`<tmp>/<prefix>-XXXXXX`) that is removed with everything in
/// it on drop. It reads as a [`Path`]: `dir.join("file")`, `Command::arg(&dir)`.
pub struct Scratch(tempfile::TempDir);

impl Scratch {
    /// A new directory whose name starts with `prefix` (the test's name, to tell whose it is).
    ///
    /// # Panics
    /// If the directory cannot be created: the test cannot run.
    pub fn new(prefix: &str) -> Scratch {
        let dir = tempfile::Builder::new()
            .prefix(&format!("{prefix}-"))
            .tempdir()
            .unwrap_or_else(|e| panic!("a scratch directory for {prefix}: {e}"));
        Scratch(dir)
    }

    /// Writes `text` to the file `name` in the directory: its path.
    ///
    /// # Panics
    /// If the file cannot be written.
    pub fn file(&self, name: &str, text: &str) -> PathBuf {
        let path = self.join(name);
        std::fs::write(&path, text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        path
    }
}

impl Deref for Scratch {
    type Target = Path;

    fn deref(&self) -> &Path {
        self.0.path()
    }
}

impl AsRef<Path> for Scratch {
    fn as_ref(&self) -> &Path {
        self.0.path()
    }
}

impl AsRef<OsStr> for Scratch {
    fn as_ref(&self) -> &OsStr {
        self.0.path().as_os_str()
    }
}

impl fmt::Debug for Scratch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.path().fmt(f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_directory_and_its_files_go_when_dropped_even_by_a_panic() {
        let kept = Scratch::new("scratch-test");
        let path = kept.to_path_buf();
        assert_eq!(kept.file("f", "x"), path.join("f"));
        assert_eq!(std::fs::read_to_string(path.join("f")).unwrap(), "x");
        assert!(path
            .file_name()
            .unwrap()
            .to_str()
            .unwrap()
            .starts_with("scratch-test-"));
        drop(kept);
        assert!(!path.exists());

        let unwound = std::panic::catch_unwind(|| {
            let dir = Scratch::new("scratch-test");
            std::fs::write(dir.join("f"), "x").unwrap();
            panic!("{}", dir.display());
        });
        let message = *unwound.unwrap_err().downcast::<String>().unwrap();
        assert!(!Path::new(&message).exists(), "{message} left behind");
    }
}
