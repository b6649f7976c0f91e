mod cli;

mod bad_input;
