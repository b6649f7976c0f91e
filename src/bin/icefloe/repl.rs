//! The interactive shell: line editing and history (rustyline), statements spanning
//! several lines until a `;`, errors printed without leaving.
//!
//! When stdin is not a terminal, rustyline reads plain lines from it without prompts,
//! so a script can be piped in; history is then neither loaded nor saved.

use std::io::IsTerminal;
use std::path::PathBuf;

use datafusion::prelude::SessionContext;
use rustyline::error::ReadlineError;
use rustyline::{Config, DefaultEditor};

use crate::output::Output;
use crate::statements::{self, Completeness};
use crate::{run_sql, CliError};

const PROMPT: &str = "icefloe> ";
const CONTINUATION: &str = "     -> ";
const HISTORY_FILE: &str = ".icefloe_history";

const HELP: &str = "\
End SQL statements with ';'; they may span several lines.
  \\q, quit, exit, Ctrl-D   leave
  \\?, help                 this help
  Ctrl-C                   discard the statement being typed
  SHOW TABLES; SHOW COLUMNS FROM t; EXPLAIN SELECT ...;   look around";

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

    let mut buffer = String::new();
    loop {
        let prompt = if buffer.is_empty() {
            PROMPT
        } else {
            CONTINUATION
        };
        let line = match editor.readline(prompt) {
            Ok(line) => line,
            // Ctrl-C: drop what was typed so far.
            Err(ReadlineError::Interrupted) => {
                buffer.clear();
                continue;
            }
            Err(ReadlineError::Eof) => break,
            Err(e) => return Err(readline_error(e)),
        };
        if buffer.is_empty() {
            match Command::parse(&line) {
                Some(Command::Quit) => break,
                Some(Command::Help) => {
                    eprintln!("{HELP}");
                    continue;
                }
                Some(Command::Unknown(cmd)) => {
                    eprintln!("error: unknown command {cmd} (\\? for help)");
                    continue;
                }
                None => {}
            }
        }
        if !buffer.is_empty() {
            buffer.push('\n');
        }
        buffer.push_str(&line);

        let dialect = statements::session_dialect(ctx);
        match statements::completeness(&buffer, dialect.as_ref()) {
            Completeness::Empty => buffer.clear(),
            Completeness::Incomplete => {}
            Completeness::Complete => {
                let sql = std::mem::take(&mut buffer);
                if interactive {
                    let _ = editor.add_history_entry(sql.as_str());
                }
                execute(ctx, &sql, output).await?;
            }
        }
    }

    // Piped input may end without a final ';': run what is left.
    if !interactive && !buffer.trim().is_empty() {
        execute(ctx, &buffer, output).await?;
    }
    if let Some(path) = &history {
        if let Err(e) = editor.save_history(path) {
            eprintln!("warning: cannot save history to {}: {e}", path.display());
        }
    }
    Ok(())
}

/// Run statements, printing an error instead of returning it (the shell goes on),
/// unless stdout is gone.
async fn execute(ctx: &SessionContext, sql: &str, output: &mut Output) -> Result<(), CliError> {
    match run_sql(ctx, sql, output).await {
        Ok(()) => Ok(()),
        Err(e) if e.is_broken_pipe() => Err(e),
        Err(e) => {
            // Show whatever was printed before the failing statement.
            output.flush()?;
            eprintln!("error: {e}");
            Ok(())
        }
    }
}

/// Shell commands, recognised only at the start of a statement.
#[derive(Debug, PartialEq, Eq)]
enum Command {
    Quit,
    Help,
    Unknown(String),
}

impl Command {
    fn parse(line: &str) -> Option<Self> {
        let word = line.trim();
        let word = word.strip_suffix(';').unwrap_or(word).trim_end();
        match word.to_ascii_lowercase().as_str() {
            "\\q" | "quit" | "exit" => Some(Command::Quit),
            "\\?" | "\\h" | "help" => Some(Command::Help),
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
    }
}
