mod cli;

mod bad_input;
mod evolution;
mod fixtures;
