//! The interactive shell: line editing and history (rustyline), statements spanning
//! several lines until a `;`, errors printed without leaving.
//!
//! In a terminal, each result is followed by its row count and elapsed time on standard
//! error, history is saved after every statement, and Ctrl-C cancels the running query
//! and returns to the prompt; at the prompt Ctrl-C discards the line typed, and a second
//! Ctrl-C in a row (on an empty line, or after a cancelled query) leaves the shell.
//! Lines typed ahead (while a query runs, or pasted without bracketed paste) are kept:
//! rustyline's `buffer-redux` feature carries the bytes it read past one line over to the
//! next prompt (without it, they were dropped with the reader at the end of `readline`).
//!
//! When stdin is not a terminal, rustyline reads plain lines from it without prompts,
//! so a script can be piped in: a failed statement is reported and the next one runs
//! (the next one on the same line too), and the exit status is 1 if any failed; Ctrl-C stops it (status 130); history is
//! neither loaded nor saved.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::time::Instant;

use datafusion::prelude::SessionContext;
use rustyline::error::ReadlineError;
use rustyline::{Config, DefaultEditor};

use crate::output::Output;
use crate::statements::{self, Completeness};
use crate::{run_statement, statement_location, CliError};

const PROMPT: &str = "icefloe> ";
const CONTINUATION: &str = "     -> ";
const HISTORY_FILE: &str = ".icefloe_history";

const HELP: &str = "\
End SQL statements with ';'; they may span several lines.
  \\q, quit, exit, Ctrl-D   leave (also on a continuation line; piped in: \\q only)
  \\?, help                 this help
  \\d                       list the tables
  \\d NAME                  describe a table: columns with Iceberg types and field ids,
                           partition spec, sort order, current snapshot
  Ctrl-C                   cancel the running query, or discard the line typed;
                           twice in a row: leave
  SHOW TABLES; SHOW COLUMNS FROM t; EXPLAIN SELECT ...;   look around";

/// How running some SQL ended.
#[derive(Debug, PartialEq, Eq)]
enum Outcome {
    Done,
    Failed,
    Cancelled,
}

/// Run the interactive shell until `\q`, `quit`, `exit` or end of input.
pub async fn run(ctx: &SessionContext, output: &mut Output) -> Result<(), CliError> {
    let interactive = std::io::stdin().is_terminal();
    let config = Config::builder()
        .max_history_size(1000)
        .map_err(readline_error)?
        .auto_add_history(false)
        .build();
    let mut editor = DefaultEditor::with_config(config).map_err(readline_error)?;
    let history = if interactive { history_path() } else { None };
    if let Some(path) = &history {
        // A missing history file is normal on first use.
        let _ = editor.load_history(path);
    }
    if interactive {
        eprintln!(
            "icefloe {}: end statements with ';', \\? for help, \\q to quit",
            env!("CARGO_PKG_VERSION")
        );
    }

    let shell = Shell { ctx, interactive };
    let mut buffer = String::new();
    // lines read, and the line the buffer began on (a piped script's errors name lines)
    let (mut lines_read, mut buffer_line) = (0usize, 1usize);
    let mut failed = 0;
    // a Ctrl-C now leaves the shell
    let mut exit_armed = false;
    loop {
        let prompt = if buffer.is_empty() {
            PROMPT
        } else {
            CONTINUATION
        };
        let line = match editor.readline(prompt) {
            Ok(line) => line,
            Err(ReadlineError::Interrupted) => {
                if buffer.is_empty() && exit_armed {
                    break;
                }
                if buffer.is_empty() {
                    eprintln!("(Ctrl-C again, \\q or Ctrl-D to leave)");
                    exit_armed = true;
                }
                buffer.clear();
                continue;
            }
            Err(ReadlineError::Eof) => break,
            Err(e) => return Err(readline_error(e)),
        };
        exit_armed = false;
        lines_read += 1;
        // a script piped in may begin with a byte order mark
        let line = if lines_read == 1 {
            crate::without_byte_order_mark(line)
        } else {
            line
        };
        match Command::parse(&line) {
            // leaving works on a continuation line too (typed: `exit`, `quit`, `\q`; piped:
            // `\q` only, as a bare `exit` there may be a column of the statement); the
            // unfinished statement is dropped. Not inside a string, quoted identifier or
            // comment: there the line is text (a string holding a line `exit` ended the
            // shell, status 0, the statement and the rest unrun).
            Some(Command::Quit)
                if (buffer.is_empty() || interactive || line.trim() == "\\q")
                    && !statements::in_open_quote(
                        &buffer,
                        statements::session_dialect(ctx).as_ref(),
                    ) =>
            {
                buffer.clear();
                break;
            }
            Some(command) if buffer.is_empty() => {
                if let Some(path) = &history {
                    let _ = editor.add_history_entry(line.as_str());
                    save_history(&mut editor, path);
                }
                match shell.command(command, output).await? {
                    Outcome::Done => {}
                    Outcome::Failed => failed += 1,
                    Outcome::Cancelled => exit_armed = true,
                }
                continue;
            }
            _ => {}
        }
        if buffer.is_empty() {
            buffer_line = lines_read;
        } else {
            buffer.push('\n');
        }
        buffer.push_str(&line);

        let dialect = statements::session_dialect(ctx);
        match statements::completeness(&buffer, dialect.as_ref()) {
            Completeness::Empty => buffer.clear(),
            Completeness::Incomplete => {}
            Completeness::Complete => {
                let sql = std::mem::take(&mut buffer);
                if let Some(path) = &history {
                    let _ = editor.add_history_entry(sql.as_str());
                    save_history(&mut editor, path);
                }
                let at = (!interactive).then_some(buffer_line);
                let (outcome, failures) = shell.execute(&sql, at, output).await?;
                failed += failures;
                if outcome == Outcome::Cancelled {
                    exit_armed = true;
                }
            }
        }
    }

    // Piped input may end without a final ';': run what is left.
    if !interactive && !buffer.trim().is_empty() {
        failed += shell.execute(&buffer, Some(buffer_line), output).await?.1;
    }
    if !interactive && failed > 0 {
        return Err(CliError::reported(failed));
    }
    Ok(())
}

fn save_history(editor: &mut DefaultEditor, path: &PathBuf) {
    if let Err(e) = editor.save_history(path) {
        eprintln!("warning: cannot save history to {}: {e}", path.display());
    }
}

struct Shell<'a> {
    ctx: &'a SessionContext,
    interactive: bool,
}

impl Shell<'_> {
    /// Run the statements in `sql` one by one, printing an error instead of returning it
    /// (the shell goes on), unless stdout is gone or (reading a script) Ctrl-C was
    /// pressed. A failed statement is reported and the next one of `sql` runs (several
    /// statements on one line each run and each report its own error, as the README's
    /// "the shell reports it and runs the rest" says; the rest were skipped without a
    /// word); a cancelled one stops the rest. `first_line`: the line of a piped script
    /// `sql` begins on, which the error of a statement then names (`<stdin>:LINE (first
    /// characters)`).
    ///
    /// Returns how it ended ([`Outcome::Cancelled`] when a statement was cancelled) and
    /// how many of its statements failed.
    async fn execute(
        &self,
        sql: &str,
        first_line: Option<usize>,
        output: &mut Output,
    ) -> Result<(Outcome, usize), CliError> {
        let dialect = statements::session_dialect(self.ctx);
        let mut failed = 0;
        for statement in statements::split(sql, dialect.as_ref()) {
            crate::interrupt::arm();
            let started = Instant::now();
            let result = tokio::select! {
                r = run_statement(self.ctx, &statement.text, output) => Some(r),
                _ = crate::interrupt::ctrl_c() => None,
            };
            // parser positions counted in the input, not the statement's text
            let offset = first_line.map_or(0, |line| line - 1);
            let result = result.map(|r| r.map_err(|e| e.in_script(&statement, offset)));
            // reading a script: the error names the statement by its line in the input
            let result = match (result, first_line) {
                (Some(Err(e)), Some(line)) => Some(Err(e.context(statement_location(
                    crate::STDIN_NAME,
                    &statement,
                    line - 1,
                )))),
                (result, _) => result,
            };
            match self.report(result.map(|r| r.map(|w| w.rows)), started, output)? {
                Outcome::Done => {}
                Outcome::Failed => failed += 1,
                Outcome::Cancelled => return Ok((Outcome::Cancelled, failed)),
            }
        }
        Ok((Outcome::Done, failed))
    }

    /// Run a shell command.
    async fn command(&self, command: Command, output: &mut Output) -> Result<Outcome, CliError> {
        crate::interrupt::arm();
        let started = Instant::now();
        let work = async {
            match &command {
                Command::Help => {
                    eprintln!("{HELP}");
                    Ok(())
                }
                Command::ListTables => crate::describe::list_tables(self.ctx, output).await,
                Command::Describe(name) => {
                    crate::describe::describe_table(self.ctx, name, output).await
                }
                Command::Unknown(cmd) => Err(CliError::new(format!(
                    "unknown command {cmd} (\\? for help)"
                ))),
                Command::Quit => Ok(()),
            }
        };
        let result = tokio::select! {
            r = work => Some(r.map(|()| None)),
            _ = crate::interrupt::ctrl_c() => None,
        };
        self.report(result, started, output)
    }

    /// Print what running a statement gave: its row count and time (in a terminal), its
    /// error, or that it was cancelled.
    fn report(
        &self,
        result: Option<Result<Option<usize>, CliError>>,
        started: Instant,
        output: &mut Output,
    ) -> Result<Outcome, CliError> {
        let elapsed = started.elapsed().as_secs_f64();
        match result {
            None if self.interactive => {
                output.flush()?;
                eprintln!("query cancelled after {elapsed:.3} s");
                Ok(Outcome::Cancelled)
            }
            None => Err(CliError::interrupted()),
            Some(Ok(rows)) => {
                if self.interactive {
                    match rows {
                        Some(1) => eprintln!("1 row in {elapsed:.3} s"),
                        Some(n) => {
                            eprintln!("{} rows in {elapsed:.3} s", crate::pruning::thousands(n))
                        }
                        None => eprintln!("done in {elapsed:.3} s"),
                    }
                }
                Ok(Outcome::Done)
            }
            Some(Err(e)) if e.is_broken_pipe() || e.is_interrupted() => Err(e),
            Some(Err(e)) => {
                // Show whatever was printed before the failing statement.
                output.flush()?;
                eprintln!("error: {e}");
                Ok(Outcome::Failed)
            }
        }
    }
}

/// Shell commands, recognised only at the start of a statement.
#[derive(Debug, PartialEq, Eq)]
enum Command {
    Quit,
    Help,
    ListTables,
    Describe(String),
    Unknown(String),
}

impl Command {
    fn parse(line: &str) -> Option<Self> {
        let word = line.trim();
        let word = word.strip_suffix(';').unwrap_or(word).trim_end();
        if let Some(name) = word.strip_prefix("\\d ") {
            return Some(Command::Describe(name.trim().to_string()));
        }
        match word.to_ascii_lowercase().as_str() {
            "\\q" | "quit" | "exit" => Some(Command::Quit),
            "\\?" | "\\h" | "help" => Some(Command::Help),
            "\\d" => Some(Command::ListTables),
            w if w.starts_with('\\') => Some(Command::Unknown(word.to_string())),
            _ => None,
        }
    }
}

fn history_path() -> Option<PathBuf> {
    let home = std::env::var_os("HOME")
        .or_else(|| std::env::var_os("USERPROFILE"))
        .filter(|h| !h.is_empty())?;
    Some(PathBuf::from(home).join(HISTORY_FILE))
}

fn readline_error(e: ReadlineError) -> CliError {
    CliError::new(format!("line editor: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shell_commands() {
        assert_eq!(Command::parse(" \\q "), Some(Command::Quit));
        assert_eq!(Command::parse("QUIT;"), Some(Command::Quit));
        assert_eq!(Command::parse("exit"), Some(Command::Quit));
        assert_eq!(Command::parse("\\?"), Some(Command::Help));
        assert_eq!(Command::parse("\\x"), Some(Command::Unknown("\\x".into())));
        assert_eq!(Command::parse("SELECT 1;"), None);
        assert_eq!(Command::parse("exit_code"), None);
        assert_eq!(Command::parse("\\d"), Some(Command::ListTables));
        assert_eq!(
            Command::parse("\\d ns.\"t@v1\";"),
            Some(Command::Describe("ns.\"t@v1\"".into()))
        );
    }
}
