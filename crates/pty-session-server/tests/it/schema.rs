//! The golden snapshot of `tools/list`: names, descriptions, input and output schemas.
//! The descriptions are the tool methods' doc comments; refresh with `UPDATE_EXPECT=1`.

use expect_test::expect_file;

use crate::support::{
    current_client, http_server, legacy_client, scratch, stdio_server, tokens_file,
};

async fn tools_json(client: &crate::support::Client) -> String {
    let mut tools = client.list_all_tools().await.expect("tools/list");
    tools.sort_by(|a, b| a.name.cmp(&b.name));
    serde_json::to_string_pretty(&tools).unwrap() + "\n"
}

#[tokio::test]
async fn tools_list_matches_the_snapshot() {
    let server = stdio_server(&[]).await;
    let tools = tools_json(&server.client).await;
    expect_file!["tools_list.json"].assert_eq(&tools);
    let names: Vec<_> = server
        .client
        .list_all_tools()
        .await
        .unwrap()
        .into_iter()
        .map(|t| t.name)
        .collect();
    for name in [
        "pty_open",
        "pty_send",
        "pty_tail",
        "pty_screen",
        "pty_list",
        "pty_close",
    ] {
        assert!(names.iter().any(|n| n == name), "{name} in {names:?}");
    }
    assert_eq!(names.len(), 6);
}

#[tokio::test]
async fn http_serves_the_same_tools_on_both_protocols() {
    let dir = scratch("schema-http");
    let token = "tok-schema-0123456789";
    let tokens = tokens_file(&dir, &[("alice", token)]);
    let server = http_server(&["--tokens", tokens.to_str().unwrap()], &[]).await;
    let stdio = stdio_server(&[]).await;
    let expected = tools_json(&stdio.client).await;
    let current = current_client(&server.url, token).await;
    assert_eq!(tools_json(&current).await, expected);
    let legacy = legacy_client(&server.url, token).await;
    assert_eq!(tools_json(&legacy).await, expected);
}

/// The JSON Schema keywords both OpenAI's strict function calling and Gemini's function
/// declarations document as supported, and `additionalProperties`, which OpenAI's strict
/// mode requires (`false`) on every object.
const PORTABLE_KEYWORDS: &[&str] = &[
    "type",
    "description",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "enum",
    "anyOf",
    "format",
    "pattern",
    "minimum",
    "maximum",
    "minItems",
    "maxItems",
];

/// The problems a strict validator (OpenAI's strict function calling, Gemini's function
/// declarations) finds in `schema` at `path`: a keyword outside [`PORTABLE_KEYWORDS`]
/// (`$schema`, `$ref`, `default`, `oneOf` …), a type that is not one JSON type (no
/// `[X, "null"]`), an `enum` with a value of another type than its `type` (no `null` in
/// a string enum), an object that allows unknown properties or requires one it does not
/// define, an array without `items`. Two rules of OpenAI's strict mode are not checked:
/// that every property be required (optional arguments are optional here, as MCP has
/// them) and that no object be a map (`env` is one: names to strings).
fn strict_problems(schema: &serde_json::Value, path: &str, problems: &mut Vec<String>) {
    let Some(object) = schema.as_object() else {
        problems.push(format!("{path}: not an object"));
        return;
    };
    for key in object.keys() {
        if !PORTABLE_KEYWORDS.contains(&key.as_str()) {
            problems.push(format!("{path}: keyword {key:?}"));
        }
    }
    let ty = object.get("type").and_then(|t| t.as_str());
    match (object.get("type"), ty) {
        (None, _) if object.contains_key("anyOf") => {}
        (_, Some("string" | "number" | "integer" | "boolean" | "array" | "object")) => {}
        (other, _) => problems.push(format!("{path}: type {other:?} is not one JSON type")),
    }
    if let Some(values) = object.get("enum") {
        let values = values.as_array().map(Vec::as_slice).unwrap_or_default();
        if values.is_empty() {
            problems.push(format!("{path}: an empty enum"));
        }
        for value in values {
            let fits = match ty {
                Some("string") => value.is_string(),
                Some("integer") => value.is_i64() || value.is_u64(),
                Some("number") => value.is_number(),
                Some("boolean") => value.is_boolean(),
                _ => false,
            };
            if !fits {
                problems.push(format!("{path}: enum value {value} is not a {ty:?}"));
            }
        }
    }
    if ty == Some("object") {
        match object.get("additionalProperties") {
            Some(serde_json::Value::Bool(false)) => {}
            // A map (`env`): its values' schema.
            Some(values @ serde_json::Value::Object(_)) if !object.contains_key("properties") => {
                strict_problems(values, &format!("{path}{{}}"), problems);
            }
            _ => problems.push(format!("{path}: additionalProperties is not false")),
        }
        let properties = object.get("properties").and_then(|p| p.as_object());
        for name in object
            .get("required")
            .and_then(|r| r.as_array())
            .into_iter()
            .flatten()
        {
            let name = name.as_str().unwrap_or_default();
            if !properties.is_some_and(|p| p.contains_key(name)) {
                problems.push(format!(
                    "{path}: requires {name:?}, which it does not define"
                ));
            }
        }
        for (name, property) in properties.into_iter().flatten() {
            strict_problems(property, &format!("{path}.{name}"), problems);
        }
    }
    if ty == Some("array") {
        match object.get("items") {
            Some(items) => strict_problems(items, &format!("{path}[]"), problems),
            None => problems.push(format!("{path}: an array without items")),
        }
    }
    for (i, branch) in object
        .get("anyOf")
        .and_then(|a| a.as_array())
        .into_iter()
        .flatten()
        .enumerate()
    {
        strict_problems(branch, &format!("{path}|{i}"), problems);
    }
}

#[tokio::test]
async fn input_schemas_pass_strict_validators() {
    let server = stdio_server(&[]).await;
    let tools = server.client.list_all_tools().await.expect("tools/list");
    let mut problems = Vec::new();
    for tool in &tools {
        let schema = serde_json::Value::Object((*tool.input_schema).clone());
        strict_problems(&schema, &tool.name, &mut problems);
    }
    assert!(problems.is_empty(), "{problems:#?}");
}

#[test]
fn the_strict_check_finds_what_strict_validators_refuse() {
    let bad = serde_json::json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "properties": {
            "settle": {"type": "string", "enum": ["auto", null]},
            "echo": {"type": "boolean", "default": true},
            "rows": {"type": ["integer", "null"]},
            "keys": {"type": "array"},
        },
        "required": ["id"],
    });
    let mut problems = Vec::new();
    strict_problems(&bad, "t", &mut problems);
    for expected in [
        "t: keyword \"$schema\"",
        "t.settle: enum value null is not a Some(\"string\")",
        "t.echo: keyword \"default\"",
        "t.rows: type Some(Array [String(\"integer\"), String(\"null\")]) is not one JSON type",
        "t.keys: an array without items",
        "t: additionalProperties is not false",
        "t: requires \"id\", which it does not define",
    ] {
        assert!(
            problems.iter().any(|p| p == expected),
            "{expected} in {problems:#?}"
        );
    }
}
