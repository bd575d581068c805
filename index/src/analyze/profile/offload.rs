//! Long columns are profiled on other threads while the caller goes on reading.
//!
//! Every tabular analyzer pushes cells one by one into a [`ColumnBuilder`]. Past
//! [`OFFLOAD_AFTER`] cells, a builder copies its cells into a batch and hands full batches
//! to a small pool of profiling threads, at most one batch per column at a time, so that
//! batches are profiled in file order and the profile is the same as profiled inline. The
//! reading thread (CSV parsing, decoding) and the profiling threads then share the cores.
//! Dedicated threads rather than rayon's: a caller running on rayon (the indexer) waits
//! for its column's batch, and that wait must not need a free rayon worker.

use super::column::Column;
use super::ColumnProfile;
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock};

/// Cells a column profiles inline before it hands batches to the pool: small tables
/// never pay for a copy.
const OFFLOAD_AFTER: u64 = 16_384;
/// Bytes of cells per batch (a column holds at most two batches).
const BATCH_BYTES: usize = 16 * 1024;
/// Most profiling threads.
const THREADS_MAX: usize = 8;

/// Cells copied for a profiling thread.
#[derive(Default)]
struct Batch {
    text: String,
    ends: Vec<u32>,
}

impl Batch {
    fn profile_into(&mut self, col: &mut Column) {
        let mut start = 0;
        for &end in &self.ends {
            col.push(&self.text[start..end as usize]);
            start = end as usize;
        }
        self.text.clear();
        self.ends.clear();
    }
}

/// A column's state while a pool thread may hold a batch of it.
struct Slot {
    column: Box<Column>,
    in_flight: bool,
    /// The emptied batch, for reuse.
    spare: Option<Batch>,
    /// A pool thread panicked on this column.
    panicked: bool,
}

struct Shared {
    slot: Mutex<Slot>,
    idle: Condvar,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, Slot> {
        self.slot.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Wait until no batch of this column is being profiled.
    fn wait_idle(&self) -> MutexGuard<'_, Slot> {
        let mut slot = self.lock();
        while slot.in_flight {
            slot = self.idle.wait(slot).unwrap_or_else(|e| e.into_inner());
        }
        slot
    }
}

type Job = (Arc<Shared>, Batch);

/// The pool's queue; None on a single core (nothing to gain).
fn pool() -> Option<&'static Sender<Job>> {
    static POOL: OnceLock<Option<Sender<Job>>> = OnceLock::new();
    POOL.get_or_init(|| {
        let n = std::thread::available_parallelism().map_or(1, |n| n.get());
        if n < 2 {
            return None;
        }
        let (tx, rx) = channel::<Job>();
        let rx = Arc::new(Mutex::new(rx));
        let mut started = 0;
        for i in 0..n.min(THREADS_MAX) {
            let rx = rx.clone();
            let spawned = std::thread::Builder::new()
                .name(format!("lakestar-profile-{i}"))
                .spawn(move || work(&rx));
            started += usize::from(spawned.is_ok());
        }
        (started > 0).then_some(tx)
    })
    .as_ref()
}

fn work(rx: &Mutex<Receiver<Job>>) {
    loop {
        let job = rx.lock().unwrap_or_else(|e| e.into_inner()).recv();
        let Ok((shared, mut batch)) = job else { return };
        let mut slot = shared.lock();
        let column = &mut slot.column;
        let ok = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            batch.profile_into(column);
        }))
        .is_ok();
        batch.text.clear();
        batch.ends.clear();
        slot.panicked |= !ok;
        slot.spare = Some(batch);
        slot.in_flight = false;
        drop(slot);
        shared.idle.notify_all();
    }
}

enum State {
    Inline(Box<Column>),
    Offloaded {
        shared: Arc<Shared>,
        batch: Batch,
        pool: &'static Sender<Job>,
    },
}

/// Accumulates one column's values (see the module doc).
pub(crate) struct ColumnBuilder {
    cells: u64,
    state: State,
}

impl ColumnBuilder {
    pub(crate) fn new(name: impl Into<String>) -> Self {
        ColumnBuilder {
            cells: 0,
            state: State::Inline(Box::new(Column::new(name))),
        }
    }

    /// Add one raw cell value.
    #[inline]
    pub(crate) fn push(&mut self, raw: &str) {
        self.cells += 1;
        match &mut self.state {
            State::Inline(col) => {
                col.push(raw);
                if self.cells == OFFLOAD_AFTER {
                    self.offload();
                }
            }
            State::Offloaded { batch, .. } => {
                batch.text.push_str(raw);
                batch.ends.push(batch.text.len() as u32);
                if batch.text.len() >= BATCH_BYTES || batch.text.len() > (u32::MAX / 2) as usize {
                    self.submit();
                }
            }
        }
    }

    fn offload(&mut self) {
        let Some(pool) = pool() else { return };
        let placeholder = State::Inline(Box::new(Column::new(String::new())));
        let State::Inline(column) = std::mem::replace(&mut self.state, placeholder) else {
            return;
        };
        self.state = State::Offloaded {
            shared: Arc::new(Shared {
                slot: Mutex::new(Slot {
                    column,
                    in_flight: false,
                    spare: None,
                    panicked: false,
                }),
                idle: Condvar::new(),
            }),
            batch: Batch::default(),
            pool,
        };
    }

    /// Hand the full batch to the pool (once the column's previous one is done).
    fn submit(&mut self) {
        let State::Offloaded {
            shared,
            batch,
            pool,
        } = &mut self.state
        else {
            return;
        };
        let mut slot = shared.wait_idle();
        let next = slot.spare.take().unwrap_or_default();
        let full = std::mem::replace(batch, next);
        slot.in_flight = true;
        drop(slot);
        if let Err(e) = pool.send((shared.clone(), full)) {
            // The pool is gone: profile here.
            let (_, mut full) = e.0;
            let mut slot = shared.lock();
            full.profile_into(&mut slot.column);
            slot.in_flight = false;
        }
    }

    /// The finished profile.
    pub(crate) fn finish(self) -> ColumnProfile {
        match self.state {
            State::Inline(col) => col.finish(),
            State::Offloaded {
                shared, mut batch, ..
            } => {
                let mut slot = shared.wait_idle();
                assert!(!slot.panicked, "a profiling thread panicked");
                batch.profile_into(&mut slot.column);
                let column =
                    std::mem::replace(&mut slot.column, Box::new(Column::new(String::new())));
                drop(slot);
                column.finish()
            }
        }
    }
}
