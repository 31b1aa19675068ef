//! Progress of long commands on stderr: a bar when stderr is a terminal, otherwise (batch jobs,
//! logs) one plain line every `TRACKGEN_PROGRESS_SECS` seconds (default 10; 0 = every update).

use std::io::{IsTerminal, Write};
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressStyle};

use crate::output::grouped;

/// A progress display over `total` items of `unit` (e.g. `envs`).
pub struct Progress {
    total: u64,
    unit: &'static str,
    started: Instant,
    bar: Option<ProgressBar>,
    /// Plain lines: the interval and when the last line was printed.
    every: Duration,
    last_line: Instant,
}

impl Progress {
    /// A display of `total` items of `unit`, starting now.
    pub fn new(total: u64, unit: &'static str) -> Self {
        let bar = std::io::stderr().is_terminal().then(|| {
            let bar = ProgressBar::new(total);
            bar.set_style(
                ProgressStyle::with_template(
                    "{spinner} [{elapsed_precise}] {wide_bar} {pos}/{len} {msg}",
                )
                .expect("the progress template is valid"),
            );
            bar.set_message(unit.to_string());
            bar
        });
        let every = std::env::var("TRACKGEN_PROGRESS_SECS")
            .ok()
            .and_then(|s| s.parse::<f64>().ok())
            .filter(|s| s.is_finite() && *s >= 0.0)
            .map_or(Duration::from_secs(10), Duration::from_secs_f64);
        let now = Instant::now();
        Self {
            total,
            unit,
            started: now,
            bar,
            every,
            last_line: now,
        }
    }

    /// `done` of the items are finished.
    pub fn update(&mut self, done: u64) {
        let elapsed = self.started.elapsed().as_secs_f64().max(1e-9);
        let rate = done as f64 / elapsed;
        let eta = if done > 0 {
            (self.total.saturating_sub(done)) as f64 / rate
        } else {
            f64::NAN
        };
        match &self.bar {
            Some(bar) => {
                bar.set_position(done);
                bar.set_message(format!(
                    "{} ({}/s, eta {})",
                    self.unit,
                    grouped(rate),
                    seconds(eta)
                ));
            }
            None => {
                if self.last_line.elapsed() >= self.every {
                    self.last_line = Instant::now();
                    // Best effort: progress must never fail the command.
                    let _ = writeln!(
                        std::io::stderr().lock(),
                        "progress: {}/{} {} ({:.1}%), {}/s, {} elapsed, eta {}",
                        done,
                        self.total,
                        self.unit,
                        100.0 * done as f64 / self.total.max(1) as f64,
                        grouped(rate),
                        seconds(elapsed),
                        seconds(eta)
                    );
                }
            }
        }
    }

    /// Removes the bar (plain lines stay).
    pub fn finish(self) {
        if let Some(bar) = self.bar {
            bar.finish_and_clear();
        }
    }
}

/// `75 s`, `12 min`, `3.5 h`; `?` when unknown.
fn seconds(s: f64) -> String {
    if !s.is_finite() {
        "?".into()
    } else if s < 120.0 {
        format!("{s:.0} s")
    } else if s < 7200.0 {
        format!("{:.0} min", s / 60.0)
    } else {
        format!("{:.1} h", s / 3600.0)
    }
}
