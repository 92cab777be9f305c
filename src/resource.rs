//! What widgets and todos have in common: the [`Resource`] trait each of them
//! implements, and the five handlers (list, get, create, update, delete)
//! written once for both.
//!
//! A resource file (`widgets.rs`, `todos.rs`) says only what differs: its
//! fields, their rules, and how an update applies. Everything else, from
//! decoding the body to the `Location` header, lives here.

use std::sync::Arc;

use serde::Serialize;
use serde_json::Value;

use crate::error::ApiError;
use crate::query::{ListQuery, Queryable};
use crate::request::{Fields, Input, Request};
use crate::response::{JSON, Reply, Tag, decimal, match_hits, none_match_hits};
use crate::store::{Current, Store, Stored};
use crate::validate::MAX_SAFE_INTEGER;

/// A kind of item the API serves.
pub trait Resource: Serialize + Clone + Send + Sync + Stored + Queryable + 'static {
    /// Singular name for messages: "todo".
    const KIND: &'static str;
    /// Collection path: "/api/todos".
    const PATH: &'static str;
    /// A validated create body.
    type New;
    /// A validated update body: the fields to change.
    type Patch;

    /// Checks a create body; 422 lists every offending field.
    fn parse_new(fields: Fields<'_>) -> Result<Self::New, ApiError>;
    /// Checks an update body for the item `id`; an `id` member must match it.
    fn parse_patch(fields: Fields<'_>, id: u64) -> Result<Self::Patch, ApiError>;
    /// The item a create makes, with the id the store assigned.
    fn create(id: u64, new: Self::New) -> Self;
    /// Changes the fields the patch names; the others keep their value.
    fn apply(&mut self, patch: Self::Patch);
    /// The item's id.
    fn id(&self) -> u64;
}

/// An item read from the data files (`--data`), held to the rules of a
/// create: an object with one `id` from 1 to 2^53-1 and the fields a create
/// takes, each once. The error names the offending fields.
pub fn from_stored<T: Resource>(mut fields: Fields<'_>) -> Result<T, String> {
    let mut ids = fields
        .iter()
        .enumerate()
        .filter(|(_, (name, _))| name == "id");
    let at = match (ids.next(), ids.next()) {
        (Some((at, _)), None) => at,
        (Some(_), Some(_)) => return Err("id is given more than once".into()),
        (None, _) => return Err("id is required".into()),
    };
    let id = match fields.remove(at).1 {
        Input::Json(Value::Number(id)) => id.as_u64(),
        _ => None,
    };
    let id = match id {
        Some(id) if (1..=MAX_SAFE_INTEGER).contains(&id) => id,
        _ => return Err("id must be a whole number from 1 to 2^53-1".into()),
    };
    match T::parse_new(fields) {
        Ok(new) => Ok(T::create(id, new)),
        Err(ApiError::Invalid { errors, .. }) => Err(format!(
            "{} {id}: {}",
            T::KIND,
            errors
                .iter()
                .map(|e| format!("{} {}", e.field, e.message))
                .collect::<Vec<_>>()
                .join("; ")
        )),
        Err(err) => Err(format!("{} {id}: {err}", T::KIND)),
    }
}

/// `GET /api/{collection}`: the items the query selects (every item,
/// ascending id, by default), with `ETag`, `X-Total-Count`, and `Link` for a
/// `_page` query.
pub fn list<T: Resource>(
    store: &Store,
    req: &Request<'_>,
    query: &ListQuery,
) -> Result<Reply, ApiError> {
    let listed = if query.is_plain() {
        store.list_json::<T>()?
    } else {
        store.query::<T>(query)?
    };
    if let Some(unchanged) = not_modified(req, &listed.etag) {
        return Ok(unchanged);
    }
    let mut reply =
        shared(listed.body, &listed.etag).with_header("X-Total-Count", listed.total.to_string());
    if let Some(link) = query.link(T::PATH, listed.total) {
        reply = reply.with_header("Link", link);
    }
    Ok(reply)
}

/// `GET /api/{collection}/{id}`, with its `ETag`; 304 for a matching
/// `If-None-Match`.
pub fn get<T: Resource>(store: &Store, req: &Request<'_>, id: u64) -> Result<Reply, ApiError> {
    let rendered = store.get_json::<T>(id)?.ok_or_else(|| missing::<T>(id))?;
    if let Some(unchanged) = not_modified(req, &rendered.etag) {
        return Ok(unchanged);
    }
    Ok(shared(rendered.body, &rendered.etag))
}

/// `POST /api/{collection}`: 201 with the item, its `Location` and `ETag`.
pub fn create<T: Resource>(store: &Store, req: &mut Request<'_>) -> Result<Reply, ApiError> {
    let new = T::parse_new(req.fields(false)?)?;
    let (id, body) = store.create::<T>(new)?;
    let mut location = String::with_capacity(T::PATH.len() + 21);
    location.push_str(T::PATH);
    location.push('/');
    // Digits are ASCII.
    location.push_str(std::str::from_utf8(decimal(id).as_ref()).unwrap_or_default());
    let tag = Tag::of(&body);
    Ok(Reply::bytes(201, JSON, body)
        .with_header("ETag", tag)
        .with_header("Location", location))
}

/// `PUT` and `PATCH /api/{collection}/{id}`: both merge the fields sent
/// into the item (see README, "Updates"); PATCH also takes merge-patch+json.
/// With `If-Match`, only while the item is still the version named.
pub fn update<T: Resource>(
    store: &Store,
    id: u64,
    req: &mut Request<'_>,
    merge_patch: bool,
) -> Result<Reply, ApiError> {
    // An unknown id is 404 whatever the body or If-Match (RFC 9110 section
    // 13.2.1: a failure found before the content is processed wins over
    // preconditions). Then the body's checks, then If-Match, under the
    // store's lock: of two updates sent with the same If-Match, only the
    // first to get there may change the item.
    if !store.contains::<T>(id) {
        return Err(missing::<T>(id));
    }
    let patch = T::parse_patch(req.fields(merge_patch)?, id)?;
    let check = |current: Current<'_, T>| precondition(req.header("If-Match"), id, current);
    match store.update::<T>(id, check, |item| item.apply(patch))? {
        Some(rendered) => Ok(shared(rendered.body, &rendered.etag)),
        // Deleted since the check above.
        None => Err(missing::<T>(id)),
    }
}

/// `DELETE /api/{collection}/{id}`: 204, or 404 when already gone; with
/// `If-Match`, only while the item is still the version named.
pub fn delete<T: Resource>(store: &Store, req: &Request<'_>, id: u64) -> Result<Reply, ApiError> {
    let check = |current: Current<'_, T>| precondition(req.header("If-Match"), id, current);
    if store.delete::<T>(id, check)? {
        Ok(Reply::empty(204))
    } else {
        Err(missing::<T>(id))
    }
}

/// `DELETE /api/{collection}` with `--allow-reset`: removes every item; ids
/// are still never reused.
pub fn clear<T: Resource>(store: &Store) -> Result<Reply, ApiError> {
    store.clear::<T>()?;
    Ok(Reply::empty(204))
}

/// A 200 with a body the store keeps (an item or a list), and its `ETag`.
fn shared(body: Arc<Vec<u8>>, etag: &Tag) -> Reply {
    Reply::shared_json(200, body).with_header("ETag", etag.clone())
}

/// 304 with the tag when `If-None-Match` matches it (GET and HEAD).
pub(crate) fn not_modified(req: &Request<'_>, tag: &Tag) -> Option<Reply> {
    let header = req.header("If-None-Match")?;
    none_match_hits(header, tag.as_str())
        .then(|| Reply::empty(304).with_header("ETag", tag.clone()))
}

/// `If-Match` (RFC 9110 section 13.1.1) on an existing item: without it,
/// anything goes; with it, `*` or exactly the item's current tag.
fn precondition<T: Resource>(
    if_match: Option<&str>,
    id: u64,
    current: Current<'_, T>,
) -> Result<(), ApiError> {
    let Some(header) = if_match else {
        return Ok(());
    };
    if current
        .tag()
        .is_ok_and(|tag| match_hits(header, tag.as_str()))
    {
        return Ok(());
    }
    Err(ApiError::PreconditionFailed {
        detail: format!(
            "If-Match: {header} does not match the current version of {} {id}",
            T::KIND
        ),
    })
}

/// The 404 for a well-formed id that names no item.
pub fn missing<T: Resource>(id: u64) -> ApiError {
    ApiError::NotFound {
        detail: format!("no {} with id {id}", T::KIND),
    }
}
