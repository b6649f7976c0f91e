mod cli;
mod cli_catalogs;
mod cli_output;
mod cli_terminal;
mod cli_writes;

mod alter;
mod bad_input;
mod catalog;
mod deletes;
mod dml;
mod evolution;
mod fixtures;
mod fuzz;
mod interop;
mod interop_writes;
/// The conformance runner's Arrow -> canonical JSON conversion, shared (the interop tests
/// compare in the same form).
#[allow(dead_code)]
#[path = "../conformance/normalize.rs"]
mod normalize;
mod read_corners;
mod v3_writes;
mod writes;
