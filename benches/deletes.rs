//! Placeholder: filled in by the benchmark commits (see benches/README.md).

fn main() {}
