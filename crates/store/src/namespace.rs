//! Namespaces: the hierarchical paths items live under, and LangGraph 1.2's label rules.
//!
//! A namespace is a tuple of labels (`("users", "42", "prefs")`). SQL backends store it as
//! the labels joined by `.`, which is why a label may not contain `.`: `("a.b",)` would
//! otherwise address `("a", "b")`.

use crate::error::{Result, StoreError};
use std::fmt;

/// A namespace: a sequence of labels, outermost first.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Namespace(pub Vec<String>);

impl Namespace {
    /// The labels.
    pub fn labels(&self) -> &[String] {
        &self.0
    }

    /// Number of labels.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether there are no labels (valid only as a search prefix or match path).
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The labels joined by `.`: the `prefix` column of the SQL backends.
    pub fn to_text(&self) -> String {
        self.0.join(".")
    }

    /// Splits a `prefix` column back into labels.
    pub fn from_text(text: &str) -> Self {
        Namespace(text.split('.').map(str::to_owned).collect())
    }

    /// Whether `self` starts with `prefix`, label by label.
    pub fn starts_with(&self, prefix: &Namespace) -> bool {
        self.0.len() >= prefix.0.len() && self.0.iter().zip(&prefix.0).all(|(a, b)| a == b)
    }

    /// Checks the labels as LangGraph's `validate_op_namespace` does: every label non-empty,
    /// without `.` and without NUL. Applies to every op's namespace (also search prefixes and
    /// match paths, where `*` is an ordinary label here).
    pub fn validate_labels(&self) -> Result<()> {
        for label in &self.0 {
            let reason = if label.is_empty() {
                "namespace labels cannot be empty strings"
            } else if label.contains('.') {
                "namespace labels cannot contain periods ('.')"
            } else if label.contains('\0') {
                "namespace labels cannot contain NUL bytes"
            } else {
                continue;
            };
            return Err(self.invalid(reason));
        }
        Ok(())
    }

    /// The rules for a namespace written by `put`: valid labels, at least one, and a root
    /// label other than `"langgraph"` (reserved by LangGraph).
    pub fn validate_for_put(&self) -> Result<()> {
        if self.0.is_empty() {
            return Err(self.invalid("namespace cannot be empty"));
        }
        self.validate_labels()?;
        if self.0[0] == "langgraph" {
            return Err(self.invalid("root label for namespace cannot be \"langgraph\""));
        }
        Ok(())
    }

    fn invalid(&self, reason: &str) -> StoreError {
        StoreError::InvalidNamespace {
            namespace: self.0.clone(),
            reason: reason.to_owned(),
        }
    }
}

impl fmt::Display for Namespace {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}", self.0)
    }
}

impl From<Vec<String>> for Namespace {
    fn from(v: Vec<String>) -> Self {
        Namespace(v)
    }
}

impl From<Vec<&str>> for Namespace {
    fn from(v: Vec<&str>) -> Self {
        Namespace(v.into_iter().map(str::to_owned).collect())
    }
}

impl From<&[&str]> for Namespace {
    fn from(v: &[&str]) -> Self {
        Namespace(v.iter().map(|s| (*s).to_owned()).collect())
    }
}

impl From<&[String]> for Namespace {
    fn from(v: &[String]) -> Self {
        Namespace(v.to_vec())
    }
}

impl<const N: usize> From<[&str; N]> for Namespace {
    fn from(v: [&str; N]) -> Self {
        Namespace(v.iter().map(|s| (*s).to_owned()).collect())
    }
}

/// Whether a namespace matches a prefix or suffix pattern whose `"*"` labels match any one
/// label (LangGraph's `_does_match`).
pub(crate) fn pattern_matches(ns: &Namespace, path: &Namespace, suffix: bool) -> bool {
    if ns.len() < path.len() {
        return false;
    }
    let eq = |a: &String, p: &String| p == "*" || a == p;
    if suffix {
        ns.0.iter()
            .rev()
            .zip(path.0.iter().rev())
            .all(|(a, p)| eq(a, p))
    } else {
        ns.0.iter().zip(&path.0).all(|(a, p)| eq(a, p))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_follow_langgraph_rules() {
        assert!(Namespace::from(["users", "1"]).validate_for_put().is_ok());
        for bad in [
            vec![],
            vec![""],
            vec!["a.b"],
            vec!["a\0"],
            vec!["langgraph", "x"],
        ] {
            assert!(
                Namespace::from(bad.clone()).validate_for_put().is_err(),
                "{bad:?} must be refused"
            );
        }
        assert!(Namespace::from(Vec::<&str>::new())
            .validate_labels()
            .is_ok());
        assert!(Namespace::from(["langgraph"]).validate_labels().is_ok());
    }

    #[test]
    fn wildcards_match_one_label() {
        let ns = Namespace::from(["uid", "x", "alice"]);
        assert!(pattern_matches(&ns, &Namespace::from(["uid", "*"]), false));
        assert!(pattern_matches(&ns, &Namespace::from(["*", "alice"]), true));
        assert!(!pattern_matches(&ns, &Namespace::from(["x"]), false));
        assert!(!pattern_matches(
            &ns,
            &Namespace::from(["a", "b", "c", "d"]),
            false
        ));
    }
}
