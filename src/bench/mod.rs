//! Benchmarks: reading a benchmark's files and grading answers as the benchmark does.
//! Pure functions over recorded answers, so grading is tested without running anything;
//! `cli::bench` runs the agent and writes what these read.

pub mod dabench;
