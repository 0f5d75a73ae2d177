//! The result of a suite run: per capability, required and optional apart, and a verdict.

use std::fmt;

use crate::behaviour::{Capability, Outcome};

/// The result of one capability group.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CapabilityReport {
    /// The capability.
    pub capability: Capability,
    /// True when its behaviours ran: required, or optional and declared by the saver.
    pub detected: bool,
    /// Behaviours that held.
    pub passed: usize,
    /// Behaviours that did not.
    pub failed: usize,
    /// Behaviours that did not run.
    pub skipped: usize,
    /// `"module::name: message"` for each failed behaviour.
    pub failures: Vec<String>,
    /// Why the group did not run, if it did not.
    pub skip_reason: Option<String>,
}

impl CapabilityReport {
    /// An empty result for `capability`, not yet run.
    pub fn new(capability: Capability) -> CapabilityReport {
        CapabilityReport {
            capability,
            detected: false,
            passed: 0,
            failed: 0,
            skipped: 0,
            failures: Vec::new(),
            skip_reason: None,
        }
    }

    /// Marks `n` behaviours skipped for `reason`.
    pub fn skip(&mut self, n: usize, reason: &str) {
        self.skipped += n;
        self.skip_reason = Some(reason.to_owned());
    }

    /// Counts the outcome of the behaviour `name`.
    pub fn record(&mut self, name: &str, outcome: Outcome) {
        match outcome {
            Outcome::Passed => self.passed += 1,
            Outcome::Skipped(_) => self.skipped += 1,
            Outcome::Failed(failure) => {
                self.failed += 1;
                self.failures.push(format!("{name}: {failure}"));
            }
        }
    }

    /// `Some(true)` when behaviours ran and all held, `Some(false)` when one failed, `None`
    /// when none ran (skipped groups never count as passed).
    pub fn verdict(&self) -> Option<bool> {
        (self.passed + self.failed > 0).then_some(self.failed == 0)
    }
}

/// How far a saver conforms.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Level {
    /// Every capability, required and optional, ran and passed (the `fence` group, a
    /// property rather than an operation, is not needed: when it runs it must pass).
    Full,
    /// Every required capability passed; the optional ones that ran passed, some did not run.
    Required,
    /// Every required capability passed; a declared optional one failed.
    RequiredPartial,
    /// A required capability failed or did not run.
    Failing,
}

impl fmt::Display for Level {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Level::Full => "FULL",
            Level::Required => "REQUIRED",
            Level::RequiredPartial => "REQUIRED+PARTIAL",
            Level::Failing => "FAILING",
        })
    }
}

/// The result of a whole suite run, one [`CapabilityReport`] per capability.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Report {
    /// The capability results, in run order.
    pub results: Vec<CapabilityReport>,
}

impl Report {
    /// A report of these results.
    pub fn new(results: Vec<CapabilityReport>) -> Report {
        Report { results }
    }

    /// The result of one capability, if it was part of the run.
    pub fn capability(&self, capability: Capability) -> Option<&CapabilityReport> {
        self.results.iter().find(|r| r.capability == capability)
    }

    /// The results of the required capabilities.
    pub fn required(&self) -> impl Iterator<Item = &CapabilityReport> {
        self.results.iter().filter(|r| r.capability.is_required())
    }

    /// The results of the optional capabilities.
    pub fn optional(&self) -> impl Iterator<Item = &CapabilityReport> {
        self.results.iter().filter(|r| !r.capability.is_required())
    }

    /// Behaviours that passed, over all capabilities.
    pub fn passed(&self) -> usize {
        self.results.iter().map(|r| r.passed).sum()
    }

    /// Behaviours that failed, over all capabilities.
    pub fn failed(&self) -> usize {
        self.results.iter().map(|r| r.failed).sum()
    }

    /// Behaviours that did not run, over all capabilities.
    pub fn skipped(&self) -> usize {
        self.results.iter().map(|r| r.skipped).sum()
    }

    /// Every failure, as `"module::name: message"`.
    pub fn failures(&self) -> impl Iterator<Item = &str> {
        self.results
            .iter()
            .flat_map(|r| r.failures.iter().map(String::as_str))
    }

    /// True only when every required capability is in the report, ran, and passed. A run
    /// in which nothing ran is never a pass.
    pub fn passed_all_required(&self) -> bool {
        Capability::ALL
            .iter()
            .filter(|c| c.is_required())
            .all(|c| self.capability(*c).and_then(CapabilityReport::verdict) == Some(true))
    }

    /// True when every required capability passed and no optional one that ran failed.
    pub fn passed_all(&self) -> bool {
        self.passed_all_required() && self.optional().all(|r| r.verdict() != Some(false))
    }

    /// The conformance level.
    pub fn level(&self) -> Level {
        if !self.passed_all_required() {
            Level::Failing
        } else if !self.passed_all() {
            Level::RequiredPartial
        } else if Capability::ALL
            .iter()
            .filter(|c| **c != Capability::Fence)
            .all(|c| self.capability(*c).and_then(CapabilityReport::verdict) == Some(true))
        {
            Level::Full
        } else {
            Level::Required
        }
    }
}

/// Writes one line per capability of a section.
fn section<'a>(
    f: &mut fmt::Formatter<'_>,
    title: &str,
    results: impl Iterator<Item = &'a CapabilityReport>,
) -> fmt::Result {
    writeln!(f, "{title}:")?;
    for r in results {
        let name = r.capability.name();
        match r.verdict() {
            None => {
                let reason = r.skip_reason.as_deref().unwrap_or("nothing ran");
                writeln!(
                    f,
                    "  {name:<16} SKIPPED ({} behaviours): {reason}",
                    r.skipped
                )?
            }
            Some(ok) => {
                let word = if ok { "PASS" } else { "FAIL" };
                let ran = r.passed + r.failed;
                write!(f, "  {name:<16} {word} {}/{ran} passed", r.passed)?;
                if r.skipped > 0 {
                    write!(f, ", {} skipped", r.skipped)?;
                }
                writeln!(f)?;
            }
        }
    }
    Ok(())
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "checkpoint saver conformance")?;
        section(f, "required", self.required())?;
        section(f, "optional", self.optional())?;
        let mut failures = self.failures().peekable();
        if failures.peek().is_some() {
            writeln!(f, "failures:")?;
            for failure in failures {
                writeln!(f, "  {failure}")?;
            }
        }
        write!(
            f,
            "result: {} ({} passed, {} failed, {} skipped)",
            self.level(),
            self.passed(),
            self.failed(),
            self.skipped()
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ran(capability: Capability, passed: usize, failed: usize) -> CapabilityReport {
        CapabilityReport {
            detected: true,
            passed,
            failed,
            ..CapabilityReport::new(capability)
        }
    }

    fn skipped(capability: Capability) -> CapabilityReport {
        let mut r = CapabilityReport::new(capability);
        r.skip(3, "not declared by the saver");
        r
    }

    fn required_passing() -> Vec<CapabilityReport> {
        Capability::ALL
            .iter()
            .filter(|c| c.is_required())
            .map(|c| ran(*c, 2, 0))
            .collect()
    }

    #[test]
    fn an_empty_run_never_passes() {
        let empty = Report::new(Vec::new());
        assert!(!empty.passed_all_required());
        assert!(!empty.passed_all());
        assert_eq!(empty.level(), Level::Failing);
        let all_skipped = Report::new(Capability::ALL.iter().map(|c| skipped(*c)).collect());
        assert!(!all_skipped.passed_all_required());
        assert_eq!(all_skipped.level(), Level::Failing);
    }

    #[test]
    fn levels_follow_required_then_optional() {
        let mut results = required_passing();
        results.push(skipped(Capability::Prune));
        assert_eq!(Report::new(results.clone()).level(), Level::Required);
        results.push(ran(Capability::CopyThread, 1, 1));
        let partial = Report::new(results);
        assert!(partial.passed_all_required());
        assert!(!partial.passed_all());
        assert_eq!(partial.level(), Level::RequiredPartial);
        let mut full = required_passing();
        full.extend(
            Capability::ALL
                .iter()
                .filter(|c| !c.is_required())
                .map(|c| ran(*c, 1, 0)),
        );
        assert_eq!(Report::new(full).level(), Level::Full);
    }

    #[test]
    fn a_missing_or_failing_required_group_fails() {
        let mut results = required_passing();
        results.retain(|r| r.capability != Capability::List);
        assert!(!Report::new(results).passed_all_required());
        let mut results = required_passing();
        results[0] = ran(Capability::Put, 5, 1);
        assert_eq!(Report::new(results).level(), Level::Failing);
    }
}
