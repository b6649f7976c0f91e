mod cli;

mod bad_input;
mod catalog;
mod evolution;
mod fixtures;
