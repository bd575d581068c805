//! Sandboxed execution of generated Python.
