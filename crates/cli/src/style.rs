//! Output for people: colours (only on a terminal, never with `NO_COLOR`), aligned tables
//! and progress bars (on stderr, hidden when stderr is not a terminal).

use std::io::IsTerminal;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// Whether and how to colour text.
#[derive(Clone, Copy, Debug)]
pub struct Style {
    color: bool,
}

impl Style {
    /// Colours on when stdout is a terminal, `NO_COLOR` is unset or empty, and the user
    /// did not pass `--no-color`.
    pub fn detect(no_color_flag: bool) -> Style {
        let env_off = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
        Style {
            color: !no_color_flag && !env_off && std::io::stdout().is_terminal(),
        }
    }

    /// No colours at all.
    pub fn plain() -> Style {
        Style { color: false }
    }

    fn paint(&self, code: &str, s: &str) -> String {
        if self.color {
            format!("\x1b[{code}m{s}\x1b[0m")
        } else {
            s.to_owned()
        }
    }

    /// Bold text.
    pub fn bold(&self, s: &str) -> String {
        self.paint("1", s)
    }
    /// Dimmed text.
    pub fn dim(&self, s: &str) -> String {
        self.paint("2", s)
    }
    /// Green text.
    pub fn green(&self, s: &str) -> String {
        self.paint("32", s)
    }
    /// Yellow text.
    pub fn yellow(&self, s: &str) -> String {
        self.paint("33", s)
    }
    /// Red text.
    pub fn red(&self, s: &str) -> String {
        self.paint("31", s)
    }
    /// Cyan text.
    pub fn cyan(&self, s: &str) -> String {
        self.paint("36", s)
    }
}

/// A table whose columns are padded to their widest cell.
#[derive(Debug, Default)]
pub struct Table {
    rows: Vec<Vec<String>>,
    right: Vec<bool>,
}

impl Table {
    /// A table with a header row; columns listed in `right` are right-aligned.
    pub fn new(headers: &[&str], right: &[usize]) -> Table {
        Table {
            rows: vec![headers.iter().map(|h| (*h).to_owned()).collect()],
            right: (0..headers.len()).map(|i| right.contains(&i)).collect(),
        }
    }

    /// Adds a row.
    pub fn row(&mut self, cells: Vec<String>) {
        self.rows.push(cells);
    }

    /// The table as text, the header in bold.
    pub fn render(&self, style: &Style) -> String {
        let cols = self.right.len();
        let mut width = vec![0usize; cols];
        for row in &self.rows {
            for (i, cell) in row.iter().enumerate().take(cols) {
                width[i] = width[i].max(cell.chars().count());
            }
        }
        let mut out = String::new();
        for (r, row) in self.rows.iter().enumerate() {
            let mut line = String::new();
            for (i, cell) in row.iter().enumerate().take(cols) {
                let pad = width[i] - cell.chars().count();
                let last = i + 1 == cols;
                let padded = if self.right[i] {
                    format!("{}{cell}", " ".repeat(pad))
                } else if last {
                    cell.clone()
                } else {
                    format!("{cell}{}", " ".repeat(pad))
                };
                if i > 0 {
                    line.push_str("  ");
                }
                line.push_str(&padded);
            }
            let line = line.trim_end().to_owned();
            out.push_str(&if r == 0 { style.bold(&line) } else { line });
            out.push('\n');
        }
        out
    }
}

/// A progress bar on stderr for `len` items, hidden when stderr is not a terminal.
pub fn progress(len: u64, message: &'static str) -> ProgressBar {
    let bar = ProgressBar::with_draw_target(Some(len), ProgressDrawTarget::stderr());
    if let Ok(style) =
        ProgressStyle::with_template("{msg} {bar:30} {pos}/{len} ({per_sec}, eta {eta})")
    {
        bar.set_style(style);
    }
    bar.set_message(message);
    bar.enable_steady_tick(Duration::from_millis(200));
    bar
}
