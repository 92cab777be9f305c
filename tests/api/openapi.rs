//! The OpenAPI document a server serves follows its configuration, and the
//! preconditions it describes (`If-Match`, `If-None-Match`) are refused
//! when malformed, as it says.

use serde_json::Value;
use widgets_todos::app::OPENAPI;
use widgets_todos::config::fault_settings::FaultSettings;
use widgets_todos::config::{Config, Secret};

use crate::support::{TestServer, config, problem};

const TOKEN: &str = "Authorization: Bearer T";

/// The document served with `--allow-reset` and `--auth-token T` as asked,
/// and its `ETag`.
fn served(allow_reset: bool, auth: bool) -> (Value, String) {
    let auth_token = auth.then(|| Secret::new("T"));
    let server = TestServer::with_config(Config {
        allow_reset,
        auth_token,
        ..config()
    });
    let headers: &[&str] = if auth { &[TOKEN] } else { &[] };
    let response = server.send("GET", "/api/openapi.json", headers, b"");
    assert_eq!(response.status, 200);
    assert_eq!(response.header("Content-Type"), Some("application/json"));
    let etag = response.header("ETag").expect("an ETag").to_string();
    // The tag is the served document's: a client holding it gets 304.
    let line = format!("If-None-Match: {etag}");
    let revalidated = server.send(
        "GET",
        "/api/openapi.json",
        &[headers, &[&line]].concat(),
        b"",
    );
    assert_eq!(revalidated.status, 304);
    (response.json(), etag)
}

/// Every `x-feature` value anywhere in `value`.
fn features(value: &Value) -> Vec<&str> {
    match value {
        Value::Object(object) => {
            let own = object.get("x-feature").and_then(Value::as_str);
            own.into_iter()
                .chain(object.values().flat_map(features))
                .collect()
        }
        Value::Array(values) => values.iter().flat_map(features).collect(),
        _ => Vec::new(),
    }
}

/// Every operation of the document, as `METHOD path`.
fn operations(document: &Value) -> Vec<String> {
    let mut found = Vec::new();
    for (path, item) in document["paths"].as_object().expect("paths") {
        for method in item.as_object().expect("a path item").keys() {
            if !["parameters", "summary", "description", "x-feature"].contains(&method.as_str()) {
                found.push(format!("{} {path}", method.to_uppercase()));
            }
        }
    }
    found
}

#[test]
fn the_served_document_follows_the_flags() {
    let file: Value = serde_json::from_slice(OPENAPI).expect("openapi.json is JSON");
    let mut tags = Vec::new();
    for (allow_reset, auth) in [(false, false), (true, false), (false, true), (true, true)] {
        let (document, etag) = served(allow_reset, auth);
        let flags = format!("allow_reset {allow_reset}, auth {auth}");
        tags.push(etag);

        // --allow-reset: the collection DELETEs.
        let ops = operations(&document);
        for path in ["/api/todos", "/api/widgets"] {
            let reset = format!("DELETE {path}");
            assert_eq!(ops.contains(&reset), allow_reset, "{reset}, {flags}");
            assert!(ops.contains(&format!("POST {path}")), "{flags}");
        }
        // --auth-token: the 401s, the bearer scheme, the requirement.
        let text = document.to_string();
        assert_eq!(text.contains(r#""401""#), auth, "{flags}");
        assert_eq!(document.get("security").is_some(), auth, "{flags}");
        let scheme = document.pointer("/components/securitySchemes/bearer");
        assert_eq!(scheme.is_some(), auth, "{flags}");
        assert_eq!(
            document["paths"]["/api/todos/{id}"]["get"]["responses"]
                .get("401")
                .is_some(),
            auth,
            "{flags}"
        );
        // What is left of the features is only what is on.
        for feature in features(&document) {
            let on = match feature {
                "allow-reset" => allow_reset,
                "auth-token" => auth,
                _ => false,
            };
            assert!(on, "x-feature {feature} served with {flags}");
        }
        // Nothing is served that the file does not have.
        let all = operations(&file);
        assert!(ops.iter().all(|op| all.contains(op)), "{flags}");
        assert_eq!(document["info"], file["info"]);
        let schemas = document["components"]["schemas"]
            .as_object()
            .expect("schemas");
        for (name, schema) in schemas {
            assert_eq!(schema, &file["components"]["schemas"][name], "{name}");
        }
        assert!(schemas.contains_key("Todo") && !schemas.contains_key("RecordedRequest"));
    }
    // Four documents, four entity tags.
    tags.sort();
    tags.dedup();
    assert_eq!(tags.len(), 4, "{tags:?}");
}

#[test]
fn with_every_feature_on_the_file_is_served() {
    // Every feature openapi.json marks with x-feature, on.
    let server = TestServer::with_config(Config {
        allow_reset: true,
        auth_token: Some(Secret::new("T")),
        faults: FaultSettings {
            on: true,
            ..FaultSettings::default()
        },
        record: Some(100),
        ..config()
    });
    let response = server.send("GET", "/api/openapi.json", &[TOKEN], b"");
    assert_eq!(response.status, 200);
    assert_eq!(response.body, OPENAPI, "the file itself, byte for byte");
}

#[test]
fn malformed_preconditions_are_400_and_change_nothing() {
    let server = TestServer::start();
    server.create("/api/todos", r#"{"userId": 1, "title": "Buy milk"}"#);
    let before = server.get("/api/todos/1");
    let tag = before.header("ETag").expect("an ETag").to_string();
    let json = "Content-Type: application/json";
    let body = br#"{"title": "changed"}"#;
    for value in ["", "abc", "W/abc", "\"a\" \"b\"", ",", "*, \"a\"", "\"a"] {
        let line = format!("If-Match: {value}");
        for method in ["PUT", "PATCH"] {
            let refused = problem(
                &server.send(method, "/api/todos/1", &[&line, json], body),
                400,
            );
            let detail = refused["detail"].as_str().unwrap_or_default();
            assert!(detail.starts_with("If-Match: '"), "{detail}");
        }
        problem(&server.send("DELETE", "/api/todos/1", &[&line], b""), 400);
        let line = format!("If-None-Match: {value}");
        for path in ["/api/todos/1", "/api/todos", "/api/openapi.json"] {
            problem(&server.send("GET", path, &[&line], b""), 400);
            let head = server.send("HEAD", path, &[&line], b"");
            assert_eq!(head.status, 400, "HEAD {path} with {line}");
        }
    }
    let after = server.get("/api/todos/1");
    assert_eq!(after.body, before.body);
    assert_eq!(after.header("ETag"), Some(tag.as_str()));

    // The order of checks stands: a missing item is 404, and the body's own
    // errors come before If-Match.
    let empty = "If-Match: ";
    problem(
        &server.send("PUT", "/api/todos/9", &[empty, json], body),
        404,
    );
    problem(&server.send("DELETE", "/api/todos/9", &[empty], b""), 404);
    let invalid = br#"{"title": 7}"#;
    problem(
        &server.send("PATCH", "/api/todos/1", &[empty, json], invalid),
        422,
    );

    // Well-formed lists, with empty elements (RFC 9110 section 5.6.1.2) and
    // a comma inside a tag, still work.
    let line = format!("If-Match: , \"a,b\",, {tag} ,");
    let patched = server.send("PATCH", "/api/todos/1", &[&line, json], body);
    assert_eq!(patched.status, 200, "{}", patched.text());
    let tag = patched.header("ETag").expect("an ETag");
    let line = format!("If-None-Match: W/\"x\",{tag}");
    assert_eq!(
        server.send("GET", "/api/todos/1", &[&line], b"").status,
        304
    );
}

#[test]
fn every_path_with_a_get_describes_its_head() {
    let file: Value = serde_json::from_slice(OPENAPI).expect("openapi.json is JSON");
    let ops = operations(&file);
    let gets = ops.iter().filter_map(|op| op.strip_prefix("GET "));
    for path in gets {
        assert!(ops.contains(&format!("HEAD {path}")), "no HEAD {path}");
    }
    // The document itself answers HEAD: its headers, no body.
    let server = TestServer::start();
    let get = server.get("/api/openapi.json");
    let head = server.send("HEAD", "/api/openapi.json", &[], b"");
    assert_eq!(head.status, 200);
    assert!(head.body.is_empty());
    assert_eq!(head.header("ETag"), get.header("ETag"));
    let line = format!("If-None-Match: {}", get.header("ETag").unwrap());
    let revalidated = server.send("HEAD", "/api/openapi.json", &[&line], b"");
    assert_eq!(revalidated.status, 304);
}

/// Every schema object anywhere in `value` that has `properties`, with
/// its JSON pointer.
fn object_schemas<'a>(value: &'a Value, at: &str, found: &mut Vec<(String, &'a Value)>) {
    match value {
        Value::Object(object) => {
            if object.get("properties").is_some_and(Value::is_object) {
                found.push((at.to_string(), value));
            }
            for (key, inner) in object {
                object_schemas(inner, &format!("{at}/{key}"), found);
            }
        }
        Value::Array(values) => {
            for (i, inner) in values.iter().enumerate() {
                object_schemas(inner, &format!("{at}/{i}"), found);
            }
        }
        _ => {}
    }
}

#[test]
fn generated_clients_get_what_the_server_takes_and_sends() {
    let file: Value = serde_json::from_slice(OPENAPI).expect("openapi.json is JSON");
    // Code generators (openapi-typescript) type a member with a
    // `default` beside its type as always present: fine for what the
    // server sends, wrong for what a client may leave out. So a `default`
    // stands beside a property's type only when the property is required;
    // an optional one keeps it inside `allOf`.
    let mut schemas = Vec::new();
    object_schemas(&file, "", &mut schemas);
    assert!(schemas.len() > 10, "{}", schemas.len());
    for (at, schema) in schemas {
        let required: Vec<&str> = schema["required"]
            .as_array()
            .map(|names| names.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        for (name, property) in schema["properties"].as_object().unwrap() {
            if property.get("default").is_some() {
                assert!(required.contains(&name.as_str()), "{at}/properties/{name}");
            }
        }
    }
    // `completed` refers to a plain boolean whose default is `false`: a
    // `$ref` carries no `default` beside it for openapi-typescript, and
    // openapi-python-client gets a boolean (in `allOf`, it made an empty
    // class of it).
    let completed = &file["components"]["schemas"]["TodoCreate"]["properties"]["completed"];
    let target = completed["$ref"].as_str().expect("a $ref");
    let target = target.strip_prefix('#').expect("a local $ref");
    let boolean = file.pointer(target).expect("the schema referred to");
    assert_eq!(boolean["type"], "boolean", "{boolean}");
    assert_eq!(boolean["default"], false, "{boolean}");

    // Every problem has a message; a 422's errors is an object of strings
    // with `root.serverError`.
    let problem = &file["components"]["schemas"]["Problem"];
    assert!(
        problem["required"]
            .as_array()
            .unwrap()
            .contains(&"message".into())
    );
    let errors = &file["components"]["schemas"]["FieldErrors"];
    assert_eq!(errors["additionalProperties"]["type"], "string");
    assert_eq!(errors["required"], serde_json::json!(["root"]));

    // DELETE of an item: 200 with the item, 204 for return=minimal.
    for (path, schema) in [("/api/todos/{id}", "Todo"), ("/api/widgets/{id}", "Widget")] {
        let delete = &file["paths"][path]["delete"];
        let ok = &delete["responses"]["200"]["content"]["application/json"]["schema"]["$ref"];
        assert_eq!(ok, &format!("#/components/schemas/{schema}"));
        assert!(delete["responses"]["204"].is_object(), "{path}");
        let prefer = serde_json::json!({"$ref": "#/components/parameters/PreferReturn"});
        assert!(
            delete["parameters"].as_array().unwrap().contains(&prefer),
            "{path}"
        );
    }
}

/// Every object anywhere in `value`, with its JSON pointer.
fn objects<'a>(value: &'a Value, at: &str, found: &mut Vec<(String, &'a Value)>) {
    match value {
        Value::Object(object) => {
            found.push((at.to_string(), value));
            for (key, inner) in object {
                objects(inner, &format!("{at}/{key}"), found);
            }
        }
        Value::Array(values) => {
            for (i, inner) in values.iter().enumerate() {
                objects(inner, &format!("{at}/{i}"), found);
            }
        }
        _ => {}
    }
}

#[test]
fn no_primitive_is_wrapped_in_all_of() {
    // A boolean, number or string inside `allOf` is what a generator makes
    // an empty class of (openapi-python-client); `allOf` is for objects.
    let file: Value = serde_json::from_slice(OPENAPI).expect("openapi.json is JSON");
    let mut all = Vec::new();
    objects(&file, "", &mut all);
    for (at, object) in all {
        for member in object["allOf"].as_array().into_iter().flatten() {
            let primitive = ["boolean", "integer", "number", "string"]
                .iter()
                .any(|t| member["type"] == *t);
            assert!(!primitive, "{at}/allOf wraps {member}");
        }
    }
}

/// Every parameter of the document: those of `components`, and those of
/// each path item and operation written in place.
fn parameters(document: &Value) -> Vec<(String, &Value)> {
    let mut found = Vec::new();
    for (name, parameter) in document["components"]["parameters"].as_object().unwrap() {
        found.push((format!("components {name}"), parameter));
    }
    for (path, item) in document["paths"].as_object().unwrap() {
        for (key, value) in item.as_object().unwrap() {
            let list = match key.as_str() {
                "parameters" => value,
                _ => &value["parameters"],
            };
            for parameter in list.as_array().into_iter().flatten() {
                if parameter.get("$ref").is_none() {
                    found.push((format!("{key} {path} {}", parameter["name"]), parameter));
                }
            }
        }
    }
    found
}

#[test]
fn every_parameter_has_an_example() {
    // Postman's converter (openapi-to-postmanv2, Example mode) makes up a
    // value for a parameter without one: a 16-digit id, the word "string".
    let file: Value = serde_json::from_slice(OPENAPI).expect("openapi.json is JSON");
    let found = parameters(&file);
    assert!(found.len() > 50, "{}", found.len());
    for (at, parameter) in found {
        assert!(parameter.get("example").is_some(), "no example: {at}");
    }
}

/// A parameter's example as the text a query or a header field carries:
/// an array (a repeated query parameter, `explode`) gives one per value.
fn texts(example: &Value) -> Vec<String> {
    match example {
        Value::Array(values) => values.iter().flat_map(texts).collect(),
        Value::String(text) => vec![text.clone()],
        other => vec![other.to_string()],
    }
}

/// The request Postman's converter makes of `method path` in Example mode
/// with its defaults: every parameter given its example, the body its
/// JSON example. Returns the target, the header lines and the body.
fn example_request(document: &Value, path: &str, method: &str) -> (String, Vec<String>, String) {
    let item = &document["paths"][path];
    let operation = &item[method];
    let resolve = |parameter: &'_ Value| -> Value {
        match parameter["$ref"].as_str() {
            Some(target) => document.pointer(&target[1..]).expect("$ref").clone(),
            None => parameter.clone(),
        }
    };
    let listed = item["parameters"].as_array().into_iter().flatten();
    let own = operation["parameters"].as_array().into_iter().flatten();
    let mut target = path.to_string();
    let mut query = form_urlencoded::Serializer::new(String::new());
    let mut headers = Vec::new();
    for parameter in listed.chain(own).map(resolve) {
        let name = parameter["name"].as_str().expect("a name");
        for text in texts(&parameter["example"]) {
            match parameter["in"].as_str() {
                Some("path") => target = target.replace(&format!("{{{name}}}"), &text),
                Some("query") => {
                    query.append_pair(name, &text);
                }
                _ => headers.push(format!("{name}: {text}")),
            }
        }
    }
    // The body: the example of the JSON schema the operation refers to.
    let schema = &operation["requestBody"]["content"]["application/json"]["schema"];
    let body = match schema["$ref"].as_str() {
        Some(target) => &document.pointer(&target[1..]).expect("$ref")["example"],
        None => &schema["example"],
    };
    let body = match body {
        Value::Null => String::new(),
        body => {
            headers.push("Content-Type: application/json".into());
            body.to_string()
        }
    };
    (format!("{target}?{}", query.finish()), headers, body)
}

#[test]
fn every_parameter_example_works_on_the_sample_data() {
    let server = TestServer::start();
    let seed = include_str!("../../scripts/seed.json");
    let seed: Value = serde_json::from_str(seed).expect("scripts/seed.json is JSON");
    for collection in ["widgets", "todos"] {
        for item in seed[collection].as_array().unwrap() {
            let mut item = item.clone();
            item.as_object_mut().unwrap().remove("id");
            server.create(&format!("/api/{collection}"), &item.to_string());
        }
    }
    let document = server.get("/api/openapi.json").json();

    // Each parameter of a list alone (`_order` needs `_sort`) finds items
    // of the sample data.
    for path in ["/api/todos", "/api/widgets"] {
        let operation = &document["paths"][path]["get"];
        for parameter in operation["parameters"].as_array().unwrap() {
            let Some(name) = parameter["name"].as_str() else {
                continue;
            };
            let mut query = form_urlencoded::Serializer::new(String::new());
            if name == "_order" {
                query.append_pair("_sort", "id,id");
            }
            for text in texts(&parameter["example"]) {
                query.append_pair(name, &text);
            }
            let target = format!("{path}?{}", query.finish());
            let response = server.get(&target);
            assert_eq!(response.status, 200, "{target}: {}", response.text());
            let found = response.json().as_array().map_or(0, Vec::len);
            assert!(found > 0, "{target} finds nothing in the sample data");
        }
    }

    // Every operation of the served document, in its order, as Postman's
    // collection runs them: every request succeeds, the change feed's
    // included, since its example `_limit=0` ends the stream.
    let accept = |operation: &Value| {
        let first = operation["responses"].as_object().unwrap().values().next();
        let media = first.and_then(|r| r["content"].as_object()?.keys().next().cloned());
        media.map(|media| format!("Accept: {media}"))
    };
    for (path, item) in document["paths"].as_object().unwrap() {
        for (method, operation) in item.as_object().unwrap() {
            if !METHODS.contains(&method.as_str()) {
                continue;
            }
            let (target, mut headers, body) = example_request(&document, path, method);
            headers.extend(accept(operation));
            let lines: Vec<&str> = headers.iter().map(String::as_str).collect();
            let name = method.to_uppercase();
            let response = server.send(&name, &target, &lines, body.as_bytes());
            assert!(
                response.status < 400,
                "{name} {target} {headers:?}: {} {}",
                response.status,
                response.text()
            );
        }
    }
}

const METHODS: [&str; 6] = ["get", "head", "post", "put", "patch", "delete"];
