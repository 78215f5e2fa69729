//! The result store: every run's result kept as it finishes, keyed by [`Run::key`], so that a
//! study run again (after an interruption, or a repeat) computes only the runs it lacks.
//!
//! A store is a directory holding one SQLite database, `runs.sqlite`. SQLite, not Parquet,
//! because a store is appended to run by run and looked up by key: each result is committed in
//! its own transaction, so a process killed at any instant (SIGKILL included) leaves every
//! result it had committed and no partial one, and several processes may write one store
//! (SQLite serialises them; a writer waits up to a minute for the lock). Python reads it with
//! its standard library (`sqlite3`, `pandas.read_sql`), DuckDB with its `sqlite` extension.
//! Parquet files are written once and whole: a store of them would be a file per run, or lose
//! the batch in memory when killed, and would have no index to look keys up in.
//!
//! Table `runs`, one row per run: `key` (hex SHA-256), `scenario` (its name), `seed`,
//! `controllers` (the controllers of its flows, comma-separated, as `acp sim` names them),
//! `rate_hz` (the fixed rate an oracle or a sweep gave it, else NULL), `result_json` (the result
//! as `acp sim --json` prints it, for queries) and `result` (CBOR that keeps every value bit for
//! bit, [`runs::encode`], which a study reads back). Table `meta` holds the simulator's
//! [`VERSION`] that wrote the store: a store of another version is refused, never reused.
//!
//! Only the process that drives a study writes its store (a cluster's workers send results
//! back to it), so the store sits on that machine's disk: SQLite's locks are not to be trusted on
//! network file systems.

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

use rusqlite::{params, Connection, OptionalExtension};
use thiserror::Error;

use crate::report::SimResult;
use crate::runs::{self, Run, Runner, VERSION};
use crate::sweep::Cancel;

/// The database file in a store's directory.
pub const FILE: &str = "runs.sqlite";

/// Why a store cannot be used.
#[derive(Debug, Error)]
pub enum StoreError {
    /// The directory or the database cannot be opened, read or written.
    #[error("result store {path}: {why}")]
    Io {
        /// The database.
        path: PathBuf,
        /// What failed.
        why: String,
    },
    /// Another version of the simulator wrote it.
    #[error(
        "result store {path} holds results of simulator version {found}, not of this one \
         ({VERSION}): give another --store directory (or delete this one)"
    )]
    Version {
        /// The database.
        path: PathBuf,
        /// The version that wrote it.
        found: String,
    },
}

/// An open result store.
#[derive(Debug)]
pub struct Store {
    path: PathBuf,
    db: Mutex<Connection>,
}

impl Store {
    /// Opens the store in `dir` (created if missing) for this simulator version.
    pub fn open(dir: &Path) -> Result<Store, StoreError> {
        let path = dir.join(FILE);
        let io = |why: String| StoreError::Io {
            path: path.clone(),
            why,
        };
        std::fs::create_dir_all(dir).map_err(|e| io(e.to_string()))?;
        let db = Connection::open(&path).map_err(|e| io(e.to_string()))?;
        db.busy_timeout(Duration::from_secs(60))
            .map_err(|e| io(e.to_string()))?;
        // WAL: readers never block the writer; NORMAL: a commit survives the process being
        // killed (only a power cut may lose the last ones).
        db.execute_batch(
            "PRAGMA journal_mode = WAL;
             PRAGMA synchronous = NORMAL;
             CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT NOT NULL);
             CREATE TABLE IF NOT EXISTS runs (
                 key TEXT PRIMARY KEY,
                 scenario TEXT NOT NULL,
                 seed INTEGER NOT NULL,
                 controllers TEXT NOT NULL,
                 rate_hz REAL,
                 result_json TEXT NOT NULL,
                 result BLOB NOT NULL
             );",
        )
        .map_err(|e| io(e.to_string()))?;
        db.execute(
            "INSERT OR IGNORE INTO meta (name, value) VALUES ('version', ?1)",
            params![VERSION],
        )
        .map_err(|e| io(e.to_string()))?;
        let found: String = db
            .query_row("SELECT value FROM meta WHERE name = 'version'", [], |r| {
                r.get(0)
            })
            .map_err(|e| io(e.to_string()))?;
        if found != VERSION {
            return Err(StoreError::Version { path, found });
        }
        Ok(Store {
            path,
            db: Mutex::new(db),
        })
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn io(&self, e: impl std::fmt::Display) -> StoreError {
        StoreError::Io {
            path: self.path.clone(),
            why: e.to_string(),
        }
    }

    /// The stored result of the run keyed `key`, if any.
    pub fn get(&self, key: &str) -> Result<Option<SimResult>, StoreError> {
        let db = self.db.lock().unwrap_or_else(|e| e.into_inner());
        let bytes: Option<Vec<u8>> = db
            .query_row(
                "SELECT result FROM runs WHERE key = ?1",
                params![key],
                |r| r.get(0),
            )
            .optional()
            .map_err(|e| self.io(e))?;
        bytes
            .map(|b| runs::decode(&b))
            .transpose()
            .map_err(|e| self.io(e))
    }

    /// Keeps `result` of `run` (committed before this returns; a result already there stays).
    pub fn put(&self, run: &Run, result: &SimResult) -> Result<(), StoreError> {
        let mut controllers: Vec<&str> = result
            .flows
            .iter()
            .filter_map(|f| f.controller.as_deref())
            .collect();
        controllers.dedup();
        let db = self.db.lock().unwrap_or_else(|e| e.into_inner());
        db.execute(
            "INSERT OR IGNORE INTO runs (key, scenario, seed, controllers, rate_hz, result_json, \
             result) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            params![
                run.key(),
                run.scenario.name,
                // SQLite's integers are signed: a seed beyond i64 is kept as its bits.
                result.seed as i64,
                controllers.join(","),
                run.origin.fixed.map(|(rate, _)| rate),
                serde_json::to_string(result).unwrap_or_default(),
                runs::encode(result),
            ],
        )
        .map_err(|e| self.io(e))?;
        Ok(())
    }

    /// Runs stored.
    pub fn len(&self) -> Result<usize, StoreError> {
        let db = self.db.lock().unwrap_or_else(|e| e.into_inner());
        db.query_row("SELECT COUNT(*) FROM runs", [], |r| r.get::<_, i64>(0))
            .map(|n| n as usize)
            .map_err(|e| self.io(e))
    }

    /// Whether it holds no run.
    pub fn is_empty(&self) -> Result<bool, StoreError> {
        self.len().map(|n| n == 0)
    }
}

/// A runner that takes what `store` holds and runs only the rest with `inner`, keeping each
/// result in the store as it comes back.
pub struct Stored<'a> {
    /// The store.
    pub store: &'a Store,
    /// What runs the runs the store lacks.
    pub inner: &'a dyn Runner,
}

impl Runner for Stored<'_> {
    fn run(
        &self,
        runs: &[Run],
        cancel: &Cancel,
        done: &(dyn Fn(usize, Option<SimResult>) + Sync),
    ) -> Result<(), String> {
        let mut missing = Vec::new();
        for (i, run) in runs.iter().enumerate() {
            match self.store.get(&run.key()).map_err(|e| e.to_string())? {
                Some(r) => {
                    cancel.finished(1);
                    done(i, Some(r));
                }
                None => missing.push(i),
            }
        }
        let todo: Vec<Run> = missing.iter().map(|&i| runs[i].clone()).collect();
        let failed: Mutex<Option<String>> = Mutex::new(None);
        self.inner.run(&todo, cancel, &|j, r| {
            if let Some(r) = &r {
                if let Err(e) = self.store.put(&todo[j], r) {
                    failed
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .get_or_insert(e.to_string());
                }
            }
            done(missing[j], r);
        })?;
        match failed.into_inner().unwrap_or_else(|e| e.into_inner()) {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use acp_core::controller::ControllerKind;

    use super::*;
    use crate::reproduce::dd1::dd1_scenario;
    use crate::runs::{run_all, Local};

    fn runs() -> Vec<Run> {
        let base = dd1_scenario(
            Duration::from_millis(2),
            Duration::from_millis(5),
            ControllerKind::Fixed(1.0),
            3,
        );
        [50.0, 100.0, 150.0]
            .iter()
            .map(|&r| Run::fixed(0, &base, r, 1))
            .collect()
    }

    /// A runner that counts what it is asked to run.
    struct Counting(std::sync::atomic::AtomicUsize);

    impl Runner for Counting {
        fn run(
            &self,
            runs: &[Run],
            cancel: &Cancel,
            done: &(dyn Fn(usize, Option<SimResult>) + Sync),
        ) -> Result<(), String> {
            self.0
                .fetch_add(runs.len(), std::sync::atomic::Ordering::Relaxed);
            Local { threads: 1 }.run(runs, cancel, done)
        }
    }

    #[test]
    fn a_second_pass_runs_only_what_is_missing_and_gives_the_same_results() {
        let dir = acp_testkit::Scratch::new("acp-store-test");
        let all = runs();
        let store = Store::open(&dir).unwrap();
        let counting = Counting(Default::default());
        let stored = Stored {
            store: &store,
            inner: &counting,
        };
        let first = run_all(&stored, &all[..2], &Cancel::new(), &|| {}).unwrap();
        assert_eq!(store.len().unwrap(), 2);
        // Reopened (another process would do the same): only the third run is computed.
        drop(store);
        let store = Store::open(&dir).unwrap();
        let stored = Stored {
            store: &store,
            inner: &counting,
        };
        let cancel = Cancel::new();
        let second = run_all(&stored, &all, &cancel, &|| {}).unwrap();
        assert_eq!(counting.0.load(std::sync::atomic::Ordering::Relaxed), 3);
        assert_eq!(second[..2], first[..]);
        let here = run_all(&Local { threads: 1 }, &all, &Cancel::new(), &|| {}).unwrap();
        assert_eq!(second, here);
        assert_eq!(cancel.tally().done, 3);
        // The queryable columns.
        let db = Connection::open(dir.join(FILE)).unwrap();
        let (controllers, rate): (String, f64) = db
            .query_row(
                "SELECT controllers, rate_hz FROM runs ORDER BY rate_hz LIMIT 1",
                [],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .unwrap();
        assert_eq!((controllers.as_str(), rate), ("fixed:50", 50.0));
        // Another version's store is refused.
        db.execute("UPDATE meta SET value = 'other' WHERE name = 'version'", [])
            .unwrap();
        drop((db, store));
        let err = Store::open(&dir).unwrap_err().to_string();
        assert!(err.contains("version other"), "{err}");
    }
}
