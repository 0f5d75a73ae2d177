//! Parsing of the `#[state(...)]` field attributes.

use proc_macro2::Span;
use syn::{Attribute, Expr, ExprLit, ExprPath, Lit, LitInt, LitStr, Path};

/// The reducers the derive knows by name.
const KEYWORDS: &str = "add, append, merge, add_messages";

/// How a field's channel combines writes.
pub(crate) enum Reducer {
    /// A built-in reducer: the name of its constructor in `stategraph::reducers`.
    Builtin(&'static str, Span),
    /// A typed `fn(T, T) -> T`, wrapped with `stategraph::reducers::from_fn`.
    Func(Path),
}

/// Everything `#[state(...)]` says about one field.
#[derive(Default)]
pub(crate) struct FieldAttrs {
    /// `reducer = ...`: the channel is a `BinaryOperatorAggregate`.
    pub(crate) reducer: Option<Reducer>,
    /// `rename = "..."`: the channel name.
    pub(crate) rename: Option<LitStr>,
    /// `skip`: the field is not a channel.
    pub(crate) skip: Option<Span>,
    /// `delta(reducer = ..., snapshot_frequency = N)`: the channel is a `DeltaChannel`.
    pub(crate) delta: Option<Delta>,
    /// `managed = remaining_steps | is_last_step`: not a channel, a value the run computes
    /// (the `stategraph::Managed` variant's name).
    pub(crate) managed: Option<(&'static str, Span)>,
}

/// The arguments of `delta(...)`.
pub(crate) struct Delta {
    /// How writes are folded (applied to each write of a batch in turn).
    pub(crate) reducer: Reducer,
    /// Updates between two snapshots (LangGraph's default: 100).
    pub(crate) snapshot_frequency: Option<LitInt>,
}

impl FieldAttrs {
    /// Reads every `#[state(...)]` attribute of a field.
    pub(crate) fn parse(attrs: &[Attribute]) -> syn::Result<FieldAttrs> {
        let mut out = FieldAttrs::default();
        for attr in attrs.iter().filter(|a| a.path().is_ident("state")) {
            attr.parse_nested_meta(|meta| {
                if meta.path.is_ident("reducer") {
                    if out.reducer.is_some() {
                        return Err(meta.error("duplicate `reducer`"));
                    }
                    let expr: Expr = meta.value()?.parse()?;
                    out.reducer = Some(reducer_of(&expr)?);
                    Ok(())
                } else if meta.path.is_ident("rename") {
                    if out.rename.is_some() {
                        return Err(meta.error("duplicate `rename`"));
                    }
                    let name: LitStr = meta.value()?.parse()?;
                    if name.value().is_empty() {
                        return Err(syn::Error::new(name.span(), "a channel name cannot be empty"));
                    }
                    out.rename = Some(name);
                    Ok(())
                } else if meta.path.is_ident("delta") {
                    if out.delta.is_some() {
                        return Err(meta.error("duplicate `delta`"));
                    }
                    let mut reducer = None;
                    let mut snapshot_frequency: Option<LitInt> = None;
                    meta.parse_nested_meta(|inner| {
                        if inner.path.is_ident("reducer") {
                            let expr: Expr = inner.value()?.parse()?;
                            reducer = Some(reducer_of(&expr)?);
                            Ok(())
                        } else if inner.path.is_ident("snapshot_frequency") {
                            let n: LitInt = inner.value()?.parse()?;
                            if n.base10_parse::<u64>()? == 0 {
                                return Err(syn::Error::new(
                                    n.span(),
                                    "snapshot_frequency must be a positive integer",
                                ));
                            }
                            snapshot_frequency = Some(n);
                            Ok(())
                        } else {
                            Err(inner.error(
                                "unknown delta argument; expected `reducer = ...` or `snapshot_frequency = N`",
                            ))
                        }
                    })?;
                    let Some(reducer) = reducer else {
                        return Err(meta.error("`delta(...)` needs `reducer = ...`"));
                    };
                    out.delta = Some(Delta {
                        reducer,
                        snapshot_frequency,
                    });
                    Ok(())
                } else if meta.path.is_ident("managed") {
                    if out.managed.is_some() {
                        return Err(meta.error("duplicate `managed`"));
                    }
                    let ident: syn::Ident = meta.value()?.parse()?;
                    let variant = match ident.to_string().as_str() {
                        "remaining_steps" => "RemainingSteps",
                        "is_last_step" => "IsLastStep",
                        other => {
                            return Err(syn::Error::new(
                                ident.span(),
                                format!("unknown managed value `{other}`; expected `remaining_steps` or `is_last_step`"),
                            ))
                        }
                    };
                    out.managed = Some((variant, ident.span()));
                    Ok(())
                } else if meta.path.is_ident("skip") {
                    out.skip = Some(meta.path.segments[0].ident.span());
                    Ok(())
                } else {
                    Err(meta.error(
                        "unknown state attribute; expected `reducer = ...`, `delta(...)`, `rename = \"...\"`, `managed = ...` or `skip`",
                    ))
                }
            })?;
        }
        if let (Some(_), Some(delta)) = (&out.reducer, &out.delta) {
            let span = match &delta.reducer {
                Reducer::Builtin(_, span) => *span,
                Reducer::Func(path) => path.segments[0].ident.span(),
            };
            return Err(syn::Error::new(
                span,
                "`delta(...)` has its own reducer; remove the field's `reducer = ...`",
            ));
        }
        if let Some((_, span)) = out.managed {
            if out.reducer.is_some() || out.delta.is_some() || out.skip.is_some() {
                return Err(syn::Error::new(
                    span,
                    "a managed value is not a channel: `managed` cannot be combined with `reducer`, `delta` or `skip`",
                ));
            }
        }
        if let Some(span) = out.skip {
            if out.reducer.is_some() || out.rename.is_some() || out.delta.is_some() {
                return Err(syn::Error::new(
                    span,
                    "`skip` cannot be combined with `reducer` or `rename`",
                ));
            }
        }
        Ok(out)
    }
}

/// The reducer named by the right-hand side of `reducer = ...`.
fn reducer_of(expr: &Expr) -> syn::Result<Reducer> {
    match expr {
        Expr::Path(ExprPath {
            qself: None, path, ..
        }) => {
            if let Some(ident) = path.get_ident() {
                if let Some(name) = builtin(&ident.to_string()) {
                    return Ok(Reducer::Builtin(name, ident.span()));
                }
            }
            Ok(Reducer::Func(path.clone()))
        }
        Expr::Lit(ExprLit {
            lit: Lit::Str(s), ..
        }) => match builtin(&s.value()) {
            Some(name) => Ok(Reducer::Builtin(name, s.span())),
            None => Err(syn::Error::new(
                s.span(),
                format!(
                    "unknown reducer {:?}; expected one of {KEYWORDS}, or a path to a fn(T, T) -> T",
                    s.value()
                ),
            )),
        },
        other => Err(syn::Error::new_spanned(
            other,
            format!("expected a reducer keyword ({KEYWORDS}) or a path to a fn(T, T) -> T"),
        )),
    }
}

/// The `stategraph::reducers` constructor of a reducer keyword.
fn builtin(name: &str) -> Option<&'static str> {
    Some(match name {
        "add" | "append" => "add",
        "merge" => "merge",
        "add_messages" => "add_messages",
        _ => return None,
    })
}
