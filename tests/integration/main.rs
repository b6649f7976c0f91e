mod cli;

mod bad_input;
mod deletes;
mod catalog;
mod evolution;
mod fixtures;
