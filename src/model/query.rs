//! The list query language of `GET /api/widgets` and `/api/todos`: filters,
//! full-text `q`, sorting and slicing, as json-server 0.17 users write them,
//! but strict: every parameter is checked, and anything unknown or
//! malformed is a 400 that names it and lists what is valid.
//!
//! | parameter | meaning |
//! |---|---|
//! | `field=v` | equal; repeated, any of the values (`id=1&id=3`) |
//! | `field_ne=v` | not equal; repeated, none of the values |
//! | `field_gte=v`, `field_lte=v` | at least, at most (numbers; text by code point); repeated, any |
//! | `field_like=v` | text matching the regular expression `v`, ignoring case; repeated, any |
//! | `q=v` | any text field containing `v`, ignoring case |
//! | `_sort=f1,f2` `_order=asc,desc` | order, `asc` or `desc` in any case; ties by `id` ascending |
//! | `_page=n` `_limit=m` | page `n` (from 1) of `m` (default 10) |
//! | `_start=i` `_end=j` or `_limit=m` | items `i` (from 0) up to `j` (excluded) or `m` of them |
//! | `sort=[..]` `range=[..]` `filter={..}` | react-admin's simple-rest dialect (`query/simple_rest.rs`) |
//!
//! Values are read by the field's type: integers in canonical decimal
//! (`01` is an error), booleans `true` or `false`, text as it is. Distinct
//! parameters must all hold (AND); how a repeated one combines, and what
//! each filter costs, is `query/filter.rs`'s. `name[]=v` (and qs's
//! `name[0]=v`), the array form of axios and qs, is `name=v` repeated.
//! Names and values arrive percent-decoded
//! (`http::query_pairs`, which refuses malformed escapes). `_delay` is the
//! application's, and ignored here; so is `_`, jQuery's cache-buster
//! (`?_=1700000000`), on every path. An unknown name close to a valid one
//! gets a "did you mean" (`spelling.rs`); json-server's relations,
//! `_embed` and `_expand`, get a 400 that says there are none.

use std::cmp::Ordering;

use super::{Field, FieldType, FieldValue, MAX_SAFE_INTEGER, Queryable, parse_decimal, spelling};
use crate::error::ApiError;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Op {
    Eq,
    Ne,
    Gte,
    Lte,
    Like,
}

/// Which part of the matching items to send.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Slice {
    #[default]
    All,
    /// `_start`/`_end`/`_limit`: from `start`, at most `len` items.
    /// Positions and counts are `u64` as sent, on every target: a 32-bit
    /// `usize` would refuse a value over 4 GiB that a 64-bit one takes.
    Range { start: u64, len: Option<u64> },
    /// `_page` and `_limit`: page `page` (from 1) of `limit` items.
    Page { page: u64, limit: u64 },
}

/// A parsed list query; the default is the plain list, every item by id.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ListQuery {
    filters: Vec<Filter>,
    /// `q`, lowercased.
    search: Option<String>,
    /// Field indexes and whether descending.
    sort: Vec<(usize, bool)>,
    pub slice: Slice,
    /// The query's other parameters, as sent, for the `Link` header.
    kept: Vec<(String, String)>,
    /// Whether it used the simple-rest dialect, whose clients read the
    /// total from `Content-Range`.
    pub simple_rest: bool,
}

/// How the store reads the items for a query, from the plainest.
#[derive(Debug, Clone, Copy)]
pub enum Plan<'a> {
    /// Every item, in id order: the list the store keeps between writes.
    Whole,
    /// Every item sorted, with no filter and no `q`: the order depends on
    /// the items alone, so the store keeps it between writes
    /// (`store/items.rs`); the slice is taken from it.
    Sorted(&'a [(usize, bool)]),
    /// A `_like` filter, whose regular expression costs far more per item
    /// than the other filters: the store runs the query over a copy of the
    /// items that pass [`ListQuery::prefilter`], after releasing the
    /// collection's lock.
    Pattern,
    /// Anything else ([`ListQuery::run`]), a page of the items in id
    /// order among them.
    Run,
}

impl ListQuery {
    /// Which read the store makes for this query.
    pub fn plan(&self) -> Plan<'_> {
        let unfiltered = self.filters.is_empty() && self.search.is_none();
        if !unfiltered {
            return match self.filters.iter().any(Filter::has_pattern) {
                true => Plan::Pattern,
                false => Plan::Run,
            };
        }
        match (self.sort.as_slice(), self.slice) {
            ([], Slice::All) => Plan::Whole,
            ([], _) => Plan::Run,
            (sort, _) => Plan::Sorted(sort),
        }
    }

    /// Runs the query over the `count` items of `items` (in id order): the
    /// matching items in the order and slice asked for, and how many
    /// matched before slicing.
    pub fn run<'a, T: Queryable + 'a>(
        &self,
        items: impl Iterator<Item = &'a T>,
        count: usize,
    ) -> (Vec<&'a T>, usize) {
        let unfiltered = self.filters.is_empty() && self.search.is_none();
        if unfiltered && self.sort.is_empty() {
            // Slice straight off the collection: nothing else is looked at.
            let (start, len) = self.bounds();
            return (items.skip(start).take(len).collect(), count);
        }
        let mut matched: Vec<&T> = items.filter(|item| self.matches(*item)).collect();
        self.sort(&mut matched);
        let total = matched.len();
        let page = matched.drain(self.range(total)).collect();
        (page, total)
    }

    /// Puts `items`, given in id order, in the query's order. Stable, so
    /// ties stay by id ascending.
    pub fn sort<T: Queryable>(&self, items: &mut [&T]) {
        if !self.sort.is_empty() {
            items.sort_by(|a, b| self.compare(*a, *b));
        }
    }

    /// Which of `total` matching items the slice sends, by position.
    pub fn range(&self, total: usize) -> std::ops::Range<usize> {
        let (start, len) = self.bounds();
        let end = start.saturating_add(len).min(total);
        start.min(end)..end
    }

    /// The first position and how many (`usize::MAX`: every one), in this
    /// machine's `usize`: a number past it is past every item, so it
    /// saturates.
    fn bounds(&self) -> (usize, usize) {
        let (start, len) = match self.slice {
            Slice::All => (0, u64::MAX),
            Slice::Range { start, len } => (start, len.unwrap_or(u64::MAX)),
            Slice::Page { page, limit } => ((page - 1).saturating_mul(limit), limit),
        };
        let start = usize::try_from(start).unwrap_or(usize::MAX);
        (start, usize::try_from(len).unwrap_or(usize::MAX))
    }

    /// Whether `item` passes every filter that runs no regular expression.
    pub fn prefilter<T: Queryable>(&self, item: &T) -> bool {
        let cheap = self.filters.iter().filter(|filter| !filter.has_pattern());
        cheap
            .into_iter()
            .all(|filter| filter.holds(item.field(filter.field)))
    }

    // Inlined into the loop over the items: `run` has two callers (the
    // store's items, and a copy of them for a pattern), and a call per
    // item made a one-value filter cost a fifth more instructions
    // (callgrind, 20,000 todos, `?userId=3`).
    #[inline(always)]
    fn matches<T: Queryable>(&self, item: &T) -> bool {
        for filter in &self.filters {
            if !filter.holds(item.field(filter.field)) {
                return false;
            }
        }
        self.search.as_deref().is_none_or(|needle| {
            (0..T::FIELDS.len()).any(|i| match item.field(i) {
                FieldValue::Text(text) => contains_folded(text, needle),
                _ => false,
            })
        })
    }

    fn compare<T: Queryable>(&self, a: &T, b: &T) -> Ordering {
        for &(field, descending) in &self.sort {
            let order = a.field(field).cmp(&b.field(field));
            let order = if descending { order.reverse() } else { order };
            if order != Ordering::Equal {
                return order;
            }
        }
        Ordering::Equal
    }

    /// Adds the filter a parameter (or a member of `filter`) names, or
    /// `q`: `name` as in a query string, `values` as sent (more than one
    /// for any of them); `param` is the parameter its errors name.
    fn add_filter<T: Queryable>(
        &mut self,
        param: &str,
        name: &str,
        values: Vec<String>,
    ) -> Result<(), ApiError> {
        if name == "q" {
            return match (&self.search, values.as_slice()) {
                (None, [value]) => {
                    self.search = Some(value.to_lowercase());
                    Ok(())
                }
                _ => Err(repeated("q")),
            };
        }
        let (field_name, op) = OPERATORS
            .iter()
            .find_map(|(suffix, op)| name.strip_suffix(suffix).map(|f| (f, *op)))
            .unwrap_or((name, Op::Eq));
        let field = field_index::<T>(field_name).ok_or_else(|| unknown::<T>(param, name))?;
        let with_example = |err| match param {
            "filter" => simple_rest::with_example::<T>(err, field),
            _ => err,
        };
        let operands = values
            .iter()
            .map(|value| operand::<T>(param, field, op, value))
            .collect::<Result<Vec<_>, _>>()
            .map_err(with_example)?;
        // A parameter repeated adds values to its filter (`id=1&id=3`: any
        // of them); a member of `filter` is a filter of its own, which must
        // hold too (`filter={"id":[]}`, any of none, matches nothing).
        let same = |f: &Filter| param != "filter" && f.field == field && f.op == op;
        let filter = match self.filters.iter().position(same) {
            Some(at) => &mut self.filters[at],
            None => {
                self.filters.push(Filter::new(field, op));
                let last = self.filters.len() - 1;
                &mut self.filters[last]
            }
        };
        filter.add(param, operands)
    }

    /// The `Link` header for a `_page` query (RFC 8288): `first`, `prev`,
    /// `next` and `last` as they apply, each the same query at another page.
    pub fn link(&self, path: &str, total: usize) -> Option<String> {
        let Slice::Page { page, limit } = self.slice else {
            return None;
        };
        let last = (total as u64).div_ceil(limit).max(1);
        let mut kept = form_urlencoded::Serializer::new(String::new());
        for (name, value) in &self.kept {
            kept.append_pair(name, value);
        }
        let kept = kept.finish();
        let and = if kept.is_empty() { "" } else { "&" };
        let pages = [
            ("first", Some(1)),
            ("prev", (page > 1).then_some((page - 1).min(last))),
            ("next", (page < last).then_some(page.saturating_add(1))),
            ("last", Some(last)),
        ];
        let mut links = Vec::new();
        for (rel, page) in pages {
            if let Some(page) = page {
                let url = format!("{path}?{kept}{and}_page={page}&_limit={limit}");
                links.push(format!("<{url}>; rel=\"{rel}\""));
            }
        }
        Some(links.join(", "))
    }
}

const RESERVED: &[&str] = &[
    "q", "_sort", "_order", "_page", "_limit", "_start", "_end", "sort", "range", "filter",
    "_delay", "_",
];
const OPERATORS: &[(&str, Op)] = &[
    ("_ne", Op::Ne),
    ("_gte", Op::Gte),
    ("_lte", Op::Lte),
    ("_like", Op::Like),
];

/// `_page`, `_limit`, `_start` and `_end`, as sent, each at most once.
pub(super) struct Counts {
    page: Option<u64>,
    limit: Option<u64>,
    start: Option<u64>,
    end: Option<u64>,
}

impl Counts {
    /// Whether any of them was sent.
    fn any(&self) -> bool {
        let Counts {
            page,
            limit,
            start,
            end,
        } = self;
        page.is_some() || limit.is_some() || start.is_some() || end.is_some()
    }
}

/// Parses the query of a list request for resource `T`, from its decoded
/// name and value pairs.
pub fn parse<T: Queryable>(pairs: &[(String, String)]) -> Result<ListQuery, ApiError> {
    let mut parsed = ListQuery {
        filters: Vec::new(),
        search: None,
        sort: Vec::new(),
        slice: Slice::All,
        kept: Vec::new(),
        simple_rest: false,
    };
    let (mut sort, mut order): (Option<String>, Option<String>) = (None, None);
    // React-admin's simple-rest parameters, once one is met.
    let mut dialect: Option<simple_rest::Dialect> = None;
    let mut counts = Counts {
        page: None,
        limit: None,
        start: None,
        end: None,
    };
    for (sent, value) in pairs {
        if sent.is_empty() && value.is_empty() {
            continue;
        }
        let (name, value) = (array_name(sent), value.clone());
        // `_page` and `_limit` are not kept for `Link`, which sets its own.
        if !matches!(name, "_page" | "_limit" | "_delay" | "_") {
            parsed.kept.push((sent.clone(), value.clone()));
        }
        match name {
            // The application's (see the module comment).
            "_delay" => {}
            // A cache-buster means nothing, so it may also repeat.
            "_" => {}
            "_page" => count(&mut counts.page, "_page", &value)?,
            "_limit" => count(&mut counts.limit, "_limit", &value)?,
            "_start" => count(&mut counts.start, "_start", &value)?,
            "_end" => count(&mut counts.end, "_end", &value)?,
            "_sort" => set_once(&mut sort, "_sort", value)?,
            "_order" => set_once(&mut order, "_order", value)?,
            "sort" | "range" | "filter" => dialect.get_or_insert_default().set(name, value)?,
            "q" => parsed.add_filter::<T>("q", "q", vec![value])?,
            _ => parsed.add_filter::<T>(sent, name, vec![value])?,
        }
    }
    match dialect {
        Some(dialect) => dialect.apply::<T>(&mut parsed, (sort, order), &counts)?,
        None => {
            if sort.is_some() || order.is_some() {
                parsed.sort = parse_sort::<T>(sort.as_deref(), order.as_deref())?;
            }
            parsed.slice = parse_slice(&counts)?;
        }
    }
    parsed.filters.iter_mut().for_each(Filter::finish);
    Ok(parsed)
}

/// The name a parameter in the array form of axios and qs stands for:
/// `userId[]=1&userId[]=2`, or qs's `userId[0]=1&userId[1]=2`, is `userId`
/// repeated, as json-server reads it (Express parses queries with qs).
fn array_name(name: &str) -> &str {
    let Some((base, index)) = name.strip_suffix(']').and_then(|n| n.rsplit_once('[')) else {
        return name;
    };
    match !base.is_empty() && index.bytes().all(|b| b.is_ascii_digit()) {
        true => base,
        false => name,
    }
}

fn set_once(slot: &mut Option<String>, name: &str, value: String) -> Result<(), ApiError> {
    match slot {
        Some(_) => Err(repeated(name)),
        None => {
            *slot = Some(value);
            Ok(())
        }
    }
}

fn field_index<T: Queryable>(name: &str) -> Option<usize> {
    T::FIELDS.iter().position(|field| field.name() == name)
}

/// A non-negative whole number for `_page`, `_limit`, `_start`, `_end`,
/// into its `slot`; 400 for a second.
fn count(slot: &mut Option<u64>, name: &str, value: &str) -> Result<(), ApiError> {
    let Some(n) = parse_decimal(value) else {
        return Err(bad(
            name,
            format!("'{value}' is not a whole number of 0 or more (like 0, 1 or 20)"),
        ));
    };
    match slot.replace(n) {
        Some(_) => Err(repeated(name)),
        None => Ok(()),
    }
}

fn operand<T: Queryable>(
    param: &str,
    field: usize,
    op: Op,
    value: &str,
) -> Result<Operand, ApiError> {
    let (field_name, field_type) = (T::FIELDS[field].name(), T::FIELDS[field].field_type());
    match (field_type, op) {
        // Made into a pattern by `Filter::add`.
        (FieldType::Text, Op::Like) => Ok(Operand::Text(value.to_string())),
        (_, Op::Like) => Err(bad(
            param,
            format!("_like applies to text fields only; {field_name} is not text"),
        )),
        (FieldType::Boolean, Op::Gte | Op::Lte) => Err(bad(
            param,
            format!("{field_name} is true or false: use {field_name} or {field_name}_ne"),
        )),
        (FieldType::Text, _) => Ok(Operand::Text(value.to_string())),
        (FieldType::Integer, _) => parse_decimal(value)
            .filter(|n| *n <= MAX_SAFE_INTEGER)
            .map(Operand::Integer)
            .ok_or_else(|| {
                bad(
                    param,
                    format!(
                        "'{value}' is not an integer: {field_name} takes whole numbers written without leading zeros, like 3"
                    ),
                )
            }),
        (FieldType::Boolean, _) => match value {
            "true" => Ok(Operand::Boolean(true)),
            "false" => Ok(Operand::Boolean(false)),
            _ => Err(bad(
                param,
                format!("'{value}' is not a boolean: {field_name} takes true or false"),
            )),
        },
    }
}

fn parse_sort<T: Queryable>(
    sort: Option<&str>,
    order: Option<&str>,
) -> Result<Vec<(usize, bool)>, ApiError> {
    let Some(sort) = sort else {
        return match order {
            Some(_) => Err(bad(
                "_order",
                "_order needs _sort, naming the fields to order by".into(),
            )),
            None => Ok(Vec::new()),
        };
    };
    let fields: Vec<&str> = sort.split(',').collect();
    let orders: Vec<&str> = order.map_or_else(Vec::new, |o| o.split(',').collect());
    if orders.len() > fields.len() {
        return Err(bad(
            "_order",
            format!(
                "{} orders given for {} _sort fields",
                orders.len(),
                fields.len()
            ),
        ));
    }
    fields
        .iter()
        .enumerate()
        .map(|(i, name)| {
            let field = field_index::<T>(name).ok_or_else(|| {
                let fields: Vec<&str> = T::FIELDS.iter().map(Field::name).collect();
                let meant = spelling::closest(name, &fields);
                ApiError::BadRequest {
                    detail: format!(
                        "bad query parameter '_sort': '{name}' is not a field; fields: {}",
                        field_names::<T>()
                    ),
                    hint: meant.map(|meant| format!("did you mean _sort={meant}?")),
                }
            })?;
            // json-server lower-cases the order, and react-admin sends ASC.
            let descending = match orders.get(i).copied().unwrap_or("asc") {
                order if order.eq_ignore_ascii_case("asc") => false,
                order if order.eq_ignore_ascii_case("desc") => true,
                other => {
                    return Err(bad(
                        "_order",
                        format!("'{other}' is not an order: use asc or desc"),
                    ));
                }
            };
            Ok((field, descending))
        })
        .collect()
}

fn parse_slice(counts: &Counts) -> Result<Slice, ApiError> {
    let Counts {
        page,
        limit,
        start,
        end,
    } = *counts;
    // Combined, they count as json-server 0.17 counts them: `_page` before
    // `_start` and `_end`, and `_end` before `_limit`. An OpenAPI document
    // cannot say that parameters exclude each other, so a client made
    // from it (Postman's converter sends every parameter's example) may
    // send them all.
    match (page, limit, start, end) {
        (None, None, None, None) => Ok(Slice::All),
        (Some(0), _, _, _) => Err(bad("_page", "pages are numbered from 1".into())),
        (Some(_), Some(0), _, _) => Err(bad(
            "_limit",
            "with _page, _limit must be at least 1".into(),
        )),
        (Some(page), limit, _, _) => Ok(Slice::Page {
            page,
            limit: limit.unwrap_or(10),
        }),
        (None, _, start, Some(end)) if end < start.unwrap_or(0) => Err(bad(
            "_end",
            format!("_end ({end}) is before _start ({})", start.unwrap_or(0)),
        )),
        (None, _, start, Some(end)) => Ok(Slice::Range {
            start: start.unwrap_or(0),
            len: Some(end - start.unwrap_or(0)),
        }),
        (None, limit, start, None) => Ok(Slice::Range {
            start: start.unwrap_or(0),
            len: limit,
        }),
    }
}

pub(crate) fn repeated(name: &str) -> ApiError {
    bad(name, format!("{name} is given more than once"))
}

pub(crate) fn bad(name: &str, why: String) -> ApiError {
    ApiError::BadRequest {
        detail: format!("bad query parameter '{name}': {why}"),
        hint: None,
    }
}

/// [`bad`], with how to fix it.
pub(crate) fn bad_hinted(name: &str, why: String, hint: &str) -> ApiError {
    ApiError::BadRequest {
        detail: format!("bad query parameter '{name}': {why}"),
        hint: Some(hint.to_string()),
    }
}

mod filter;
mod messages;
mod simple_rest;

pub use filter::MAX_PATTERN;
use filter::{Filter, Operand, contains_folded};

pub use messages::relations;
use messages::{field_names, unknown};

#[cfg(test)]
#[path = "query_tests.rs"]
mod tests;
