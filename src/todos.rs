//! Todos: an owner, a title and a completion flag.
//!
//! `{"id": 1, "userId": 1, "title": "Buy milk", "completed": false}`. A
//! create needs `userId` and `title`; `completed` defaults to `false`. An
//! update sets any of the three.

use serde::Serialize;

use crate::error::ApiError;
use crate::items::Str;
use crate::query::{FieldType, FieldValue, Queryable};
use crate::request::Fields;
use crate::resource::Resource;
use crate::validate::{Need, Validator, nothing_to_update};

/// The most characters a title may have.
pub const MAX_TITLE: usize = 1000;

const FIELDS: &[&str] = &["userId", "title", "completed"];
const FIELDS_WITH_ID: &[&str] = &["id", "userId", "title", "completed"];

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Todo {
    pub id: u64,
    /// The owner: 1 to 2^53-1, so every JSON client holds it exactly.
    pub user_id: u64,
    pub title: Str,
    pub completed: bool,
}

pub struct NewTodo {
    user_id: u64,
    title: String,
    completed: bool,
}

pub struct UpdateTodo {
    user_id: Option<u64>,
    title: Option<String>,
    completed: Option<bool>,
}

impl Queryable for Todo {
    const FIELDS: &'static [(&'static str, FieldType)] = &[
        ("id", FieldType::Integer),
        ("userId", FieldType::Integer),
        ("title", FieldType::Text),
        ("completed", FieldType::Boolean),
    ];

    fn field(&self, index: usize) -> FieldValue<'_> {
        match index {
            0 => FieldValue::Integer(self.id),
            1 => FieldValue::Integer(self.user_id),
            2 => FieldValue::Text(&self.title),
            _ => FieldValue::Boolean(self.completed),
        }
    }
}

impl Resource for Todo {
    const KIND: &'static str = "todo";
    const PATH: &'static str = "/api/todos";
    type New = NewTodo;
    type Patch = UpdateTodo;

    fn parse_new(fields: Fields<'_>) -> Result<NewTodo, ApiError> {
        let mut v = Validator::new(Self::KIND, fields, FIELDS);
        let user_id = v.integer("userId", Need::Required);
        let title = v.string("title", MAX_TITLE, Need::Required);
        let completed = v.boolean("completed", Need::Optional);
        v.finish()?;
        // `finish` has already reported a missing field, so both are set.
        Ok(NewTodo {
            user_id: user_id.ok_or(ApiError::Internal)?,
            title: title.ok_or(ApiError::Internal)?,
            completed: completed.unwrap_or(false),
        })
    }

    fn parse_patch(fields: Fields<'_>, id: u64) -> Result<UpdateTodo, ApiError> {
        let mut v = Validator::new(Self::KIND, fields, FIELDS_WITH_ID);
        v.matching_id(id);
        let user_id = v.integer("userId", Need::Optional);
        let title = v.string("title", MAX_TITLE, Need::Optional);
        let completed = v.boolean("completed", Need::Optional);
        v.finish()?;
        if user_id.is_none() && title.is_none() && completed.is_none() {
            return Err(nothing_to_update(Self::KIND, FIELDS));
        }
        Ok(UpdateTodo {
            user_id,
            title,
            completed,
        })
    }

    fn create(id: u64, new: NewTodo) -> Todo {
        Todo {
            id,
            user_id: new.user_id,
            title: new.title.into(),
            completed: new.completed,
        }
    }

    fn apply(&mut self, patch: UpdateTodo) {
        if let Some(user_id) = patch.user_id {
            self.user_id = user_id;
        }
        if let Some(title) = patch.title {
            self.title = title.into();
        }
        if let Some(completed) = patch.completed {
            self.completed = completed;
        }
    }

    fn id(&self) -> u64 {
        self.id
    }
}
