//! Progress reporting hooks, shared by the indexer and model distillation; a leaf
//! module, so that neither depends on the other for them.

/// Progress reporting hooks (the CLI draws a bar; tests and the library pass [`NoProgress`]).
pub trait Progress: Sync {
    /// The number of files that need reading is known.
    fn start(&self, _total: u64) {}
    /// `n` more files done.
    fn inc(&self, _n: u64) {}
    /// The run is over.
    fn finish(&self) {}
}

/// Progress that reports nothing.
pub struct NoProgress;
impl Progress for NoProgress {}
