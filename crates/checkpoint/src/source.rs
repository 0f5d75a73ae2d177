//! Injectable sources of time and randomness, and a Python-compatible random generator.
