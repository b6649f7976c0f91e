mod bad_input;
