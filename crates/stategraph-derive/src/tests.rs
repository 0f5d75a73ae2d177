//! The derive's compile errors, checked on parsed inputs.

use syn::{parse_quote, DeriveInput};

use crate::expand::expand;

fn error_of(input: DeriveInput) -> String {
    match expand(&input) {
        Ok(tokens) => panic!("expected an error, got {tokens}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn tuple_structs_are_rejected() {
    let err = error_of(parse_quote! { struct S(i64); });
    assert!(err.contains("named fields"), "{err}");
}

#[test]
fn enums_are_rejected() {
    let err = error_of(parse_quote! { enum S { A } });
    assert!(err.contains("not enums"), "{err}");
}

#[test]
fn generic_structs_are_rejected() {
    let err = error_of(parse_quote! { struct S<T> { a: T } });
    assert!(err.contains("generic"), "{err}");
}

#[test]
fn unknown_reducer_keywords_are_rejected() {
    let err = error_of(parse_quote! { struct S { #[state(reducer = "sum")] a: i64 } });
    assert!(err.contains("unknown reducer \"sum\""), "{err}");
    let err = error_of(parse_quote! { struct S { #[state(reducer = 1 + 2)] a: i64 } });
    assert!(err.contains("expected a reducer keyword"), "{err}");
}

#[test]
fn unknown_attributes_are_rejected() {
    let err = error_of(parse_quote! { struct S { #[state(reduce = add)] a: i64 } });
    assert!(err.contains("unknown state attribute"), "{err}");
}

#[test]
fn duplicate_channel_names_are_rejected() {
    let err = error_of(parse_quote! { struct S { a: i64, #[state(rename = "a")] b: i64 } });
    assert!(err.contains("already used by field `a`"), "{err}");
}

#[test]
fn skip_does_not_combine_with_a_reducer() {
    let err = error_of(parse_quote! { struct S { #[state(skip, reducer = add)] a: i64 } });
    assert!(err.contains("cannot be combined"), "{err}");
}

#[test]
fn keywords_and_paths_pick_their_reducer() {
    let input: DeriveInput = parse_quote! {
        struct S {
            #[state(reducer = append)] a: Vec<i64>,
            #[state(reducer = my::max)] b: i64,
            #[state(reducer = "add_messages")] c: Vec<i64>,
        }
    };
    let code = expand(&input).unwrap().to_string().replace(' ', "");
    assert!(code.contains("::stategraph::reducers::add()"), "{code}");
    assert!(
        code.contains("::stategraph::reducers::from_fn::<i64>(my::max)"),
        "{code}"
    );
    assert!(
        code.contains("::stategraph::reducers::add_messages()"),
        "{code}"
    );
    assert!(code.contains("structSUpdate{"), "{code}");
    assert!(
        code.contains("pubfnb(mutself,value:impl::std::convert::Into<i64>)"),
        "{code}"
    );
}

#[test]
fn delta_fields_become_delta_channels() {
    let input: DeriveInput = parse_quote! {
        struct S {
            #[state(delta(reducer = add_messages, snapshot_frequency = 7))] m: Vec<i64>,
            #[state(delta(reducer = my::concat))] n: Vec<i64>,
        }
    };
    let code = expand(&input).unwrap().to_string().replace(' ', "");
    assert!(
        code.contains("DeltaChannel::from_pairwise(::stategraph::reducers::add_messages(),7)"),
        "{code}"
    );
    assert!(
        code.contains("from_pairwise(::stategraph::reducers::from_fn::<Vec<i64>>(my::concat),100)"),
        "{code}"
    );
}

#[test]
fn bad_delta_attributes_are_rejected() {
    let err =
        error_of(parse_quote! { struct S { #[state(delta(snapshot_frequency = 2))] a: Vec<i64> } });
    assert!(err.contains("needs `reducer"), "{err}");
    let err = error_of(
        parse_quote! { struct S { #[state(delta(reducer = add, snapshot_frequency = 0))] a: Vec<i64> } },
    );
    assert!(err.contains("positive"), "{err}");
    let err = error_of(
        parse_quote! { struct S { #[state(reducer = add, delta(reducer = add))] a: Vec<i64> } },
    );
    assert!(err.contains("its own reducer"), "{err}");
    let err = error_of(
        parse_quote! { struct S { #[state(delta(reducer = add, every = 2))] a: Vec<i64> } },
    );
    assert!(err.contains("unknown delta argument"), "{err}");
    let err =
        error_of(parse_quote! { struct S { #[state(skip, delta(reducer = add))] a: Vec<i64> } });
    assert!(err.contains("cannot be combined"), "{err}");
}

#[test]
fn unknown_managed_values_are_rejected() {
    let err = error_of(parse_quote! { struct S { #[state(managed = steps_left)] a: i64 } });
    assert!(err.contains("unknown managed value `steps_left`"), "{err}");
}

#[test]
fn managed_values_are_not_channels() {
    let err = error_of(parse_quote! {
        struct S { #[state(managed = remaining_steps, reducer = add)] a: i64 }
    });
    assert!(err.contains("cannot be combined"), "{err}");
}
