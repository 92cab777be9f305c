//! What widgets and todos have in common: the [`Resource`] trait each of them
//! implements, and the five handlers (list, get, create, update, delete)
//! written once for both.
//!
//! A resource file (`widgets.rs`, `todos.rs`) says only what differs: its
//! fields, their rules, and how an update applies. Everything else, from
//! decoding the body to the `Location` header, lives here.

use serde::Serialize;
use serde_json::Value;

use crate::error::ApiError;
use crate::request::{Fields, Input, Request};
use crate::response::Reply;
use crate::store::{Store, Stored};
use crate::validate::MAX_SAFE_INTEGER;

/// A kind of item the API serves.
pub trait Resource: Serialize + Clone + Send + Sync + Stored + 'static {
    /// Singular name for messages: "todo".
    const KIND: &'static str;
    /// Collection path: "/api/todos".
    const PATH: &'static str;
    /// A validated create body.
    type New;
    /// A validated update body: the fields to change.
    type Patch;

    /// Checks a create body; 422 lists every offending field.
    fn parse_new(fields: Fields) -> Result<Self::New, ApiError>;
    /// Checks an update body for the item `id`; an `id` member must match it.
    fn parse_patch(fields: Fields, id: u64) -> Result<Self::Patch, ApiError>;
    /// The item a create makes, with the id the store assigned.
    fn create(id: u64, new: Self::New) -> Self;
    /// Changes the fields the patch names; the others keep their value.
    fn apply(&mut self, patch: Self::Patch);
    /// The item's id.
    fn id(&self) -> u64;
}

/// The id of `item` (for code that has the item, not the type, at hand).
pub fn id_of<T: Resource>(item: &T) -> u64 {
    item.id()
}

/// An item read from the data files (`--data`), held to the rules of a
/// create: an object with an `id` from 1 to 2^53-1 and the fields a create
/// takes. The error names the offending fields.
pub fn from_stored<T: Resource>(value: Value) -> Result<T, String> {
    let Value::Object(members) = value else {
        return Err(format!("a {} must be a JSON object", T::KIND));
    };
    let mut id = None;
    let mut fields = Vec::with_capacity(members.len());
    for (name, value) in members {
        if name == "id" {
            id = Some(value);
        } else {
            fields.push((name, Input::Json(value)));
        }
    }
    let id = match id.as_ref().map(Value::as_u64) {
        Some(Some(id)) if (1..=MAX_SAFE_INTEGER).contains(&id) => id,
        Some(_) => return Err("id must be a whole number from 1 to 2^53-1".into()),
        None => return Err("id is required".into()),
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

/// `GET /api/{collection}`: every item, ascending id.
pub fn list<T: Resource>(store: &Store) -> Reply {
    match store.list_json::<T>() {
        Ok(bytes) => Reply::shared_json(200, bytes),
        Err(err) => {
            // Our own types always serialize; reaching this is a bug.
            log::error!("cannot serialize a list: {err}");
            Reply::from(ApiError::Internal)
        }
    }
}

/// `GET /api/{collection}/{id}`.
pub fn get<T: Resource>(store: &Store, id: u64) -> Result<Reply, ApiError> {
    match store.get::<T>(id) {
        Some(item) => Ok(Reply::json(200, &item)),
        None => Err(missing::<T>(id)),
    }
}

/// `POST /api/{collection}`: 201 with the item and its `Location`.
pub fn create<T: Resource>(store: &Store, req: &mut Request<'_>) -> Result<Reply, ApiError> {
    let new = T::parse_new(req.fields(false)?)?;
    let (id, item) = store.create::<T>(new)?;
    Ok(Reply::json(201, &item).with_header("Location", format!("{}/{id}", T::PATH)))
}

/// `PUT` and `PATCH /api/{collection}/{id}`: both merge the fields sent
/// into the item (see README, "Updates"); PATCH also takes merge-patch+json.
pub fn update<T: Resource>(
    store: &Store,
    id: u64,
    req: &mut Request<'_>,
    merge_patch: bool,
) -> Result<Reply, ApiError> {
    // An unknown id is 404 whatever the body, so check before decoding it.
    if !store.contains::<T>(id) {
        return Err(missing::<T>(id));
    }
    let patch = T::parse_patch(req.fields(merge_patch)?, id)?;
    match store.update::<T>(id, |item| item.apply(patch))? {
        Some(item) => Ok(Reply::json(200, &item)),
        // Deleted between the check above and the update.
        None => Err(missing::<T>(id)),
    }
}

/// `DELETE /api/{collection}/{id}`: 204, or 404 when already gone.
pub fn delete<T: Resource>(store: &Store, id: u64) -> Result<Reply, ApiError> {
    if store.delete::<T>(id)? {
        Ok(Reply::empty(204))
    } else {
        Err(missing::<T>(id))
    }
}

/// The 404 for a well-formed id that names no item.
pub fn missing<T: Resource>(id: u64) -> ApiError {
    ApiError::NotFound {
        detail: format!("no {} with id {id}", T::KIND),
    }
}
