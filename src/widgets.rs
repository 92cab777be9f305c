//! Widgets: a price and a quality, both free text.
//!
//! `{"id": 1, "price": "$10", "quality": "good"}`. A create needs both
//! fields; an update sets one or both.

use serde::Serialize;

use crate::error::ApiError;
use crate::items::Str;
use crate::query::{FieldType, FieldValue, Queryable};
use crate::request::Fields;
use crate::resource::Resource;
use crate::validate::{Need, Validator, nothing_to_update};

/// The most characters `price` and `quality` may have.
pub const MAX_TEXT: usize = 100;

const FIELDS: &[&str] = &["price", "quality"];
const FIELDS_WITH_ID: &[&str] = &["id", "price", "quality"];

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Widget {
    pub id: u64,
    /// Free text holding an amount and a currency sign: "$10", "10 €".
    pub price: Str,
    /// A descriptive label: "good".
    pub quality: Str,
}

pub struct NewWidget {
    price: String,
    quality: String,
}

pub struct UpdateWidget {
    price: Option<String>,
    quality: Option<String>,
}

impl Queryable for Widget {
    const FIELDS: &'static [(&'static str, FieldType)] = &[
        ("id", FieldType::Integer),
        ("price", FieldType::Text),
        ("quality", FieldType::Text),
    ];

    fn field(&self, index: usize) -> FieldValue<'_> {
        match index {
            0 => FieldValue::Integer(self.id),
            1 => FieldValue::Text(&self.price),
            _ => FieldValue::Text(&self.quality),
        }
    }
}

impl Resource for Widget {
    const KIND: &'static str = "widget";
    const PATH: &'static str = "/api/widgets";
    type New = NewWidget;
    type Patch = UpdateWidget;

    fn parse_new(fields: Fields<'_>) -> Result<NewWidget, ApiError> {
        let mut v = Validator::new(Self::KIND, fields, FIELDS);
        let price = v.string("price", MAX_TEXT, Need::Required);
        let quality = v.string("quality", MAX_TEXT, Need::Required);
        v.finish()?;
        // `finish` has already reported a missing field, so both are set.
        Ok(NewWidget {
            price: price.ok_or(ApiError::Internal)?,
            quality: quality.ok_or(ApiError::Internal)?,
        })
    }

    fn parse_patch(fields: Fields<'_>, id: u64) -> Result<UpdateWidget, ApiError> {
        let mut v = Validator::new(Self::KIND, fields, FIELDS_WITH_ID);
        v.matching_id(id);
        let price = v.string("price", MAX_TEXT, Need::Optional);
        let quality = v.string("quality", MAX_TEXT, Need::Optional);
        v.finish()?;
        if price.is_none() && quality.is_none() {
            return Err(nothing_to_update(Self::KIND, FIELDS));
        }
        Ok(UpdateWidget { price, quality })
    }

    fn create(id: u64, new: NewWidget) -> Widget {
        Widget {
            id,
            price: new.price.into(),
            quality: new.quality.into(),
        }
    }

    fn apply(&mut self, patch: UpdateWidget) {
        if let Some(price) = patch.price {
            self.price = price.into();
        }
        if let Some(quality) = patch.quality {
            self.quality = quality.into();
        }
    }

    fn id(&self) -> u64 {
        self.id
    }
}
