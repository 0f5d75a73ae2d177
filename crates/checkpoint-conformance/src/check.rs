//! Assertion macros of the behaviours: they return a [`crate::Failure`] instead of panicking.

/// Fails the behaviour with a formatted message unless the condition holds.
macro_rules! ensure {
    ($cond:expr, $($fmt:tt)+) => {
        if !$cond {
            return ::std::result::Result::Err($crate::Failure::new(format!($($fmt)+)));
        }
    };
}

/// Fails the behaviour unless `got == want`, showing both.
macro_rules! ensure_eq {
    ($got:expr, $want:expr, $($fmt:tt)+) => {{
        let (got, want) = (&$got, &$want);
        if got != want {
            return ::std::result::Result::Err($crate::Failure::new(format!(
                "{}: expected {:?}, got {:?}",
                format!($($fmt)+),
                want,
                got
            )));
        }
    }};
}
