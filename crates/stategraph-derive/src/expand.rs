//! Code generation: the `State` impl and the `<Name>Update` struct.

use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use syn::ext::IdentExt;
use syn::{Data, DeriveInput, Fields, Ident, Type};

use crate::attrs::{Delta, FieldAttrs, Reducer};

/// One field of the state struct.
struct Field<'a> {
    ident: &'a Ident,
    ty: &'a Type,
    /// The channel name; `None` for a skipped field.
    channel: Option<String>,
    reducer: Option<Reducer>,
    delta: Option<Delta>,
    /// `managed = ...`: the `stategraph::Managed` variant; the field is read under its
    /// key but is no channel and no write.
    managed: Option<&'static str>,
}

/// Expands `#[derive(State)]` on `input`.
pub(crate) fn expand(input: &DeriveInput) -> syn::Result<TokenStream> {
    let name = &input.ident;
    let named = match &input.data {
        Data::Struct(s) => match &s.fields {
            Fields::Named(named) => named,
            Fields::Unnamed(_) | Fields::Unit => {
                return Err(syn::Error::new_spanned(
                    name,
                    "#[derive(State)] needs a struct with named fields (a tuple or unit struct has no channel names)",
                ))
            }
        },
        Data::Enum(e) => {
            return Err(syn::Error::new(
                e.enum_token.span,
                "#[derive(State)] supports structs with named fields, not enums",
            ))
        }
        Data::Union(u) => {
            return Err(syn::Error::new(
                u.union_token.span,
                "#[derive(State)] supports structs with named fields, not unions",
            ))
        }
    };
    if !input.generics.params.is_empty() {
        return Err(syn::Error::new_spanned(
            &input.generics,
            "#[derive(State)] does not support generic parameters",
        ));
    }

    let mut fields = Vec::with_capacity(named.named.len());
    let mut seen: Vec<(String, &Ident)> = Vec::new();
    for f in &named.named {
        let Some(ident) = f.ident.as_ref() else {
            continue;
        };
        let attrs = FieldAttrs::parse(&f.attrs)?;
        let channel = match (&attrs.skip, &attrs.rename) {
            (Some(_), _) => None,
            (None, Some(lit)) => Some(lit.value()),
            (None, None) => Some(ident.unraw().to_string()),
        };
        if let Some(ch) = &channel {
            if let Some((_, first)) = seen.iter().find(|(n, _)| n == ch) {
                let msg = format!("channel name {ch:?} is already used by field `{first}`");
                return Err(match &attrs.rename {
                    Some(lit) => syn::Error::new(lit.span(), msg),
                    None => syn::Error::new(ident.span(), msg),
                });
            }
            seen.push((ch.clone(), ident));
        }
        fields.push(Field {
            ident,
            ty: &f.ty,
            channel,
            reducer: attrs.reducer,
            delta: attrs.delta,
            managed: attrs.managed.map(|(variant, _)| variant),
        });
    }

    let state_impl = state_impl(name, &fields);
    let update = update_struct(input, &fields);
    Ok(quote! {
        #state_impl
        #update
    })
}

/// `impl ::stategraph::State for S`.
fn state_impl(name: &Ident, fields: &[Field<'_>]) -> TokenStream {
    let update_name = format_ident!("{}Update", name);
    let channels = fields.iter().filter_map(channel_entry);
    let reads = fields.iter().map(|f| {
        let ident = f.ident;
        let ty = f.ty;
        match &f.channel {
            Some(ch) => quote! {
                #ident: match values.get(#ch) {
                    ::std::option::Option::Some(v) => {
                        ::stategraph::derive_support::field_from_value::<#ty>(#ch, v)?
                    }
                    ::std::option::Option::None => <#ty as ::std::default::Default>::default(),
                }
            },
            None => quote! { #ident: <#ty as ::std::default::Default>::default() },
        }
    });
    let managed = fields.iter().filter_map(|f| {
        let key = f.channel.as_ref()?;
        let variant = Ident::new(f.managed?, proc_macro2::Span::call_site());
        Some(quote! {
            (::std::string::String::from(#key), ::stategraph::Managed::#variant)
        })
    });
    let writes = fields
        .iter()
        .filter(|f| f.managed.is_none())
        .filter_map(|f| {
            let ch = f.channel.as_ref()?;
            let ident = f.ident;
            Some(quote! {
                (
                    ::std::string::String::from(#ch),
                    ::stategraph::derive_support::field_to_value(#ch, &self.#ident)?,
                )
            })
        });
    quote! {
        impl ::stategraph::State for #name {
            type Update = #update_name;

            fn channels() -> ::std::vec::Vec<(
                ::std::string::String,
                ::std::boxed::Box<dyn ::stategraph::channels::Channel>,
            )> {
                ::std::vec![#(#channels),*]
            }

            fn from_values(
                values: &::stategraph::derive_support::IndexMap<
                    ::std::string::String,
                    ::stategraph::Value,
                >,
            ) -> ::stategraph::Result<Self> {
                let _ = values;
                ::std::result::Result::Ok(#name { #(#reads),* })
            }

            fn to_values(
                &self,
            ) -> ::stategraph::Result<::std::vec::Vec<(::std::string::String, ::stategraph::Value)>> {
                ::std::result::Result::Ok(::std::vec![#(#writes),*])
            }

            fn managed() -> ::std::vec::Vec<(::std::string::String, ::stategraph::Managed)> {
                ::std::vec![#(#managed),*]
            }
        }
    }
}

/// The `(key, channel)` entry of a field in `State::channels` (`None` for a field that
/// is not a channel): a `DeltaChannel`, a `LastValue`, or a reducer's
/// `BinaryOperatorAggregate`.
fn channel_entry(f: &Field<'_>) -> Option<TokenStream> {
    if f.managed.is_some() {
        return None;
    }
    let ch = f.channel.as_ref()?;
    let ty = f.ty;
    let reducer_tokens = |r: &Reducer| match r {
        Reducer::Builtin(func, span) => {
            let func = Ident::new(func, *span);
            quote_spanned! {*span=> ::stategraph::reducers::#func() }
        }
        Reducer::Func(path) => {
            quote! { ::stategraph::reducers::from_fn::<#ty>(#path) }
        }
    };
    let channel = match (&f.reducer, &f.delta) {
        (_, Some(delta)) => {
            let reducer = reducer_tokens(&delta.reducer);
            let freq = match &delta.snapshot_frequency {
                Some(n) => quote! { #n },
                None => quote! { 100 },
            };
            quote! {
                ::stategraph::channels::DeltaChannel::from_pairwise(#reducer, #freq)
                    .with_initial(
                        ::stategraph::derive_support::initial::<#ty>()
                            .unwrap_or_else(|| ::stategraph::checkpoint::Value::list(::std::vec::Vec::new())),
                    )
            }
        }
        (None, None) => quote! { ::stategraph::channels::LastValue::new() },
        (Some(r), None) => {
            let reducer = reducer_tokens(r);
            quote! {
                ::stategraph::channels::BinaryOperatorAggregate::new(
                    #reducer,
                    ::stategraph::derive_support::initial::<#ty>(),
                )
            }
        }
    };
    Some(quote! {
        (
            ::std::string::String::from(#ch),
            ::std::boxed::Box::new(#channel) as ::std::boxed::Box<dyn ::stategraph::channels::Channel>,
        )
    })
}

/// The `<Name>Update` struct, its builder methods and its `IntoUpdate` impl.
fn update_struct(input: &DeriveInput, fields: &[Field<'_>]) -> TokenStream {
    let name = &input.ident;
    let vis = &input.vis;
    let update_name = format_ident!("{}Update", name);
    let doc = format!(
        "A partial update of [`{name}`]: only the fields that are set become channel writes, in field order."
    );
    let channel_fields: Vec<&Field<'_>> = fields
        .iter()
        .filter(|f| f.channel.is_some() && f.managed.is_none())
        .collect();
    let decls = channel_fields.iter().map(|f| {
        let ident = f.ident;
        let ty = f.ty;
        let doc = format!(
            "The new value of `{}`, if this update sets it.",
            ident.unraw()
        );
        quote! {
            #[doc = #doc]
            pub #ident: ::std::option::Option<#ty>
        }
    });
    let builders = channel_fields.iter().map(|f| {
        let ident = f.ident;
        let ty = f.ty;
        let doc = format!("Sets `{}` (builder style).", ident.unraw());
        quote! {
            #[doc = #doc]
            #[must_use]
            pub fn #ident(mut self, value: impl ::std::convert::Into<#ty>) -> Self {
                self.#ident = ::std::option::Option::Some(value.into());
                self
            }
        }
    });
    let writes = channel_fields.iter().filter_map(|f| {
        let ch = f.channel.as_ref()?;
        let ident = f.ident;
        Some(quote! {
            if let ::std::option::Option::Some(v) = &self.#ident {
                writes.push((
                    ::std::string::String::from(#ch),
                    ::stategraph::derive_support::field_to_value(#ch, v)?,
                ));
            }
        })
    });
    let reads = channel_fields.iter().filter_map(|f| {
        let ch = f.channel.as_ref()?;
        let ident = f.ident;
        let ty = f.ty;
        Some(quote! {
            #ch => {
                update.#ident = ::std::option::Option::Some(
                    ::stategraph::derive_support::field_from_value::<#ty>(#ch, value)?,
                );
            }
        })
    });
    quote! {
        #[doc = #doc]
        #[derive(::std::default::Default, ::std::fmt::Debug, ::std::clone::Clone)]
        #vis struct #update_name {
            #(#decls),*
        }

        impl #update_name {
            #(#builders)*
        }

        impl ::stategraph::FromWrites for #update_name {
            fn from_writes(
                writes: &[(::std::string::String, ::stategraph::Value)],
            ) -> ::stategraph::Result<Self> {
                #[allow(unused_mut)]
                let mut update = <Self as ::std::default::Default>::default();
                for (channel, value) in writes {
                    let _ = value;
                    match channel.as_str() {
                        #(#reads)*
                        _ => {}
                    }
                }
                ::std::result::Result::Ok(update)
            }
        }

        impl ::stategraph::IntoUpdate for #update_name {
            fn into_writes(
                self,
            ) -> ::stategraph::Result<::std::vec::Vec<(::std::string::String, ::stategraph::Value)>> {
                #[allow(unused_mut)]
                let mut writes = ::std::vec::Vec::new();
                #(#writes)*
                ::std::result::Result::Ok(writes)
            }
        }
    }
}
