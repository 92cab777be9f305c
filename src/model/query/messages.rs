//! What a list query's 400 says when it names what no list query takes:
//! the valid parameters, "did you mean", and json-server's relations.

use super::{Field, OPERATORS, Queryable, RESERVED, bad_hinted};
use crate::error::ApiError;
use crate::model::spelling;

pub(super) fn field_names<T: Queryable>() -> String {
    T::FIELDS
        .iter()
        .map(Field::name)
        .collect::<Vec<_>>()
        .join(", ")
}

/// What a list query may contain, for error messages.
fn valid_parameters<T: Queryable>() -> String {
    format!(
        "valid parameters: {fields} (each also with _ne, _gte, _lte, or _like for text), q, _sort, _order, _page, _limit, _start, _end, sort, range, filter, _delay, _",
        fields = field_names::<T>()
    )
}

/// Every parameter name a list query of `T` takes: the reserved ones, and
/// each field alone and with each operator.
fn parameter_names<T: Queryable>() -> Vec<String> {
    let mut names: Vec<String> = RESERVED.iter().map(|name| name.to_string()).collect();
    for field in T::FIELDS {
        let field = field.name();
        names.push(field.to_string());
        for (suffix, _) in OPERATORS {
            names.push(format!("{field}{suffix}"));
        }
    }
    names
}

/// The 400 for a parameter no list query takes (`param`), or for a
/// member of `filter` that names no filter (`param` is `filter`), with a
/// "did you mean" when a valid name is close (`_sortt`, `userid`).
pub(super) fn unknown<T: Queryable>(param: &str, name: &str) -> ApiError {
    if let Some(relations) = relations(name) {
        return relations;
    }
    let names = parameter_names::<T>();
    let mut names: Vec<&str> = names.iter().map(String::as_str).collect();
    if param == "filter" {
        // A member of `filter` is a field, a field's operator, or `q`.
        names.retain(|name| *name == "q" || !RESERVED.contains(name));
        let hint = match spelling::closest(name, &names) {
            Some(meant) => format!("did you mean \"{meant}\"?"),
            None => "name a field, a field with _ne, _gte, _lte or _like, or q".into(),
        };
        return bad_hinted(
            "filter",
            format!("'{name}' is not a filter; fields: {}", field_names::<T>()),
            &hint,
        );
    }
    let hint = match spelling::closest(name, &names) {
        Some(meant) => format!("did you mean {meant}?"),
        None => "check the parameter's spelling against the list".into(),
    };
    ApiError::BadRequest {
        detail: format!(
            "unknown query parameter '{param}'; {}",
            valid_parameters::<T>()
        ),
        hint: Some(hint),
    }
}

/// The 400 for json-server's relations, `_embed` and `_expand` (and
/// `embed`, ra-data-simple-rest's): neither collection has any, which is
/// what a user who sends them needs to hear rather than a spelling hint.
/// `None` for any other name. Paths that take no list query use it too.
pub fn relations(name: &str) -> Option<ApiError> {
    matches!(name, "_embed" | "_expand" | "embed").then(|| {
        bad_hinted(
            name,
            "widgets and todos have no relations, so there is nothing to embed or expand".into(),
            &format!("remove {name}: each item is served as it is stored"),
        )
    })
}
