mod cli;

mod bad_input;
mod catalog;
mod deletes;
mod evolution;
mod fixtures;
mod read_corners;
