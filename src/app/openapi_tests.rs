use serde_json::{Value, json};

use super::{COMPACT, OPENAPI, Options, document, offers, prune};

fn parse(bytes: &[u8]) -> Value {
    serde_json::from_slice(bytes).unwrap()
}

/// Every `x-feature` value anywhere in `value`.
fn features(value: &Value, found: &mut Vec<String>) {
    match value {
        Value::Object(object) => {
            if let Some(feature) = object.get("x-feature") {
                found.push(feature.as_str().unwrap().to_string());
            }
            object.values().for_each(|value| features(value, found));
        }
        Value::Array(values) => values.iter().for_each(|value| features(value, found)),
        _ => {}
    }
}

#[test]
fn every_feature_the_file_names_is_known() {
    let mut found = Vec::new();
    features(&parse(OPENAPI), &mut found);
    assert!(found.contains(&"allow-reset".to_string()), "{found:?}");
    for feature in found {
        let known = offers(&Options::default(), &feature);
        assert_eq!(
            known,
            Some(false),
            "x-feature {feature}: add it to offers()"
        );
    }
}

#[test]
fn with_every_feature_on_the_file_is_served_as_it_is() {
    assert_eq!(parse(&document(&|_| true, false)), parse(OPENAPI));
}

#[test]
fn read_only_serves_no_write() {
    let served = parse(&document(&|_| true, true));
    for path in [
        "/api/todos",
        "/api/todos/{id}",
        "/api/widgets",
        "/api/widgets/{id}",
    ] {
        let item = &served["paths"][path];
        assert!(item.get("get").is_some(), "{path}");
        for write in ["post", "put", "patch", "delete"] {
            assert!(item.get(write).is_none(), "{path} {write}");
        }
    }
}

#[test]
fn with_every_feature_off_nothing_of_them_is_left() {
    let served = document(&|_| false, false);
    let text = String::from_utf8(served.clone()).unwrap();
    for absent in ["x-feature", "security", "bearer", "Unauthorized", "\"401\""] {
        assert!(!text.contains(absent), "{absent} served");
    }
    let served = parse(&served);
    for path in ["/api/todos", "/api/widgets"] {
        let item = &served["paths"][path];
        assert!(item.get("post").is_some() && item.get("delete").is_none());
    }
    assert_eq!(served["openapi"], "3.1.0");
}

#[test]
fn pruning_rules() {
    let check = |mut document: Value, expected: Value| {
        prune(&mut document, &|feature| feature == "on");
        assert_eq!(document, expected);
    };
    // Operations, inline parameters and parameters by reference.
    check(
        json!({
            "paths": {"/a": {
                "parameters": [{"name": "p", "x-feature": "off"}, {"name": "q"}],
                "get": {"parameters": [
                    {"$ref": "#/components/parameters/P"},
                    {"$ref": "#/components/parameters/Q"},
                    {"name": "r", "x-feature": "on"}
                ]},
                "delete": {"x-feature": "off"},
                "put": {"x-feature": "on"},
                "summary": "kept"
            }},
            "components": {"parameters": {"P": {"x-feature": "off"}, "Q": {}}},
            "security": [{"bearer": []}]
        }),
        json!({
            "paths": {"/a": {
                "parameters": [{"name": "q"}],
                "get": {"parameters": [
                    {"$ref": "#/components/parameters/Q"},
                    {"name": "r", "x-feature": "on"}
                ]},
                "put": {"x-feature": "on"},
                "summary": "kept"
            }},
            "components": {"parameters": {"Q": {}}}
        }),
    );
    // A path item off, and one left with nothing but OPTIONS.
    check(
        json!({"paths": {
            "/a": {"x-feature": "off", "get": {}},
            "/b": {"get": {"x-feature": "off"}, "options": {}},
            "/c": {"get": {"x-feature": "on"}, "options": {}}
        }}),
        json!({"paths": {"/c": {"get": {"x-feature": "on"}, "options": {}}}}),
    );
    // Without the bearer token.
    check(
        json!({
            "paths": {"/a": {"get": {
                "security": [],
                "responses": {"200": {}, "401": {"$ref": "#/components/responses/Unauthorized"}}
            }}},
            "components": {
                "responses": {"Unauthorized": {}, "NotFound": {}},
                "securitySchemes": {"bearer": {}}
            },
            "security": [{"bearer": []}]
        }),
        json!({
            "paths": {"/a": {"get": {"responses": {"200": {}}}}},
            "components": {"responses": {"NotFound": {}}}
        }),
    );
}

#[test]
fn the_binary_holds_the_file_without_its_layout() {
    assert_eq!(parse(COMPACT), parse(OPENAPI));
    assert!(!COMPACT.contains(&b'\n'));
    assert!(COMPACT.len() < OPENAPI.len() * 3 / 4, "{}", COMPACT.len());
}
