//! What strict mode refuses ([`UnsafeObject`]): its own file below both the strict check
//! and the crate's error type, which carries it ([`crate::Error::Unsafe`]).

use std::fmt;

/// An object record strict mode refuses: where it is and what it would construct.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnsafeObject {
    /// Where in the value: `$`, `$.key`, `$.list[2]`, `$.obj<args>[0]`, ...
    pub path: String,
    /// The module Python would import.
    pub module: String,
    /// The class (or, for a method call, the class whose method) Python would use.
    pub class: String,
    /// The method Python would call (code 3 records), if any.
    pub method: Option<String>,
}

impl UnsafeObject {
    /// What is refused, without the path: `module.class[.method] is outside ...`.
    pub fn reason(&self) -> String {
        let method = self
            .method
            .as_deref()
            .map(|m| format!(".{m}"))
            .unwrap_or_default();
        format!(
            "{}.{}{method} is outside LangGraph's safe types and the allowlist",
            self.module, self.class
        )
    }
}

impl fmt::Display for UnsafeObject {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} (at {})", self.reason(), self.path)
    }
}

impl std::error::Error for UnsafeObject {}
