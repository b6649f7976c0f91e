//! Case tables for the evaluators (filled below).
