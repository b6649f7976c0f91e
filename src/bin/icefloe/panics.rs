//! A panic while the CLI runs a statement is that statement's error.
//!
//! A panic in icefloe, DataFusion or a crate under them (the `parquet` crate's footer
//! decoder on some corrupt files, report W67 F5) would otherwise end the run with the
//! default hook's `thread '…' panicked at …` text (and a backtrace under
//! `RUST_BACKTRACE`), and no `error:` line. [`install_hook`] replaces the default hook
//! with one that prints nothing and keeps the panic's message and location;
//! [`crate::run_statement`] catches the unwinding panic (raised on the thread running
//! the statement, or resumed there by DataFusion from a task it joined) and reports it
//! as `error: internal error: <message> (panic at <file:line:column>; please report
//! it)`, so the run continues or stops as after any other error. A panic outside any
//! statement (while the session starts) ends the run with the same line.

use std::any::Any;
use std::sync::Mutex;

/// The last panic the hook saw: its message and location (`file:line:column`).
static LAST_PANIC: Mutex<Option<(String, String)>> = Mutex::new(None);

/// Replace the default panic hook (see the module docs).
pub fn install_hook() {
    std::panic::set_hook(Box::new(|info| {
        let message = icefloe::error::panic_message(info.payload());
        let location = info
            .location()
            .map(|l| format!("{}:{}:{}", l.file(), l.line(), l.column()))
            .unwrap_or_else(|| "an unknown location".to_string());
        *LAST_PANIC.lock().unwrap_or_else(|p| p.into_inner()) = Some((message, location));
    }));
}

/// The error text of a caught panic with this `payload`: its message, and its location
/// when the hook saw a panic with that message.
pub fn described(payload: &(dyn Any + Send)) -> String {
    let message = icefloe::error::panic_message(payload);
    let seen = LAST_PANIC.lock().unwrap_or_else(|p| p.into_inner()).take();
    match seen {
        Some((seen, location)) if seen == message => {
            format!("internal error: {message} (panic at {location}; please report it)")
        }
        _ => format!("internal error: {message} (a panic; please report it)"),
    }
}
