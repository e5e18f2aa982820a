//! The tools' arguments and results as they travel: serde + JsonSchema mirrors of the
//! library's request and reply types, with the camelCase field names of docs/tools.md.
//!
//! Field docs here are the schema descriptions a client sees (pinned by the golden
//! snapshot of `tools/list`). Serde checks the types here (a bad call comes back as
//! `INVALID_ARGUMENT` naming the field); the values — ranges, names, paths, regexes — are
//! checked in one place, the library, and its errors name the argument in the library's
//! words, which [`crate::mcp::reply::error`] turns into the tool's.

//!
//! - `args`: what each tool takes, turned into the library's requests;
//! - `results`: what each tool answers, made from the library's replies;
//! - here: the schemas a client sees, and the parse that names a bad argument.

use std::sync::Arc;

use pty_session::Error;
use schemars::JsonSchema;
use schemars::generate::SchemaSettings;
use serde::de::DeserializeOwned;

mod args;
mod results;

pub use args::*;
pub use results::*;

/// The `inputSchema` of a tool taking `T`.
pub fn input_schema<T: JsonSchema>() -> Arc<serde_json::Map<String, serde_json::Value>> {
    schema::<T>(SchemaSettings::draft2020_12())
}

/// The `outputSchema` of a tool returning `T`: what its `Serialize` writes.
pub fn output_schema<T: JsonSchema>() -> Arc<serde_json::Map<String, serde_json::Value>> {
    schema::<T>(SchemaSettings::draft2020_12().for_serialize())
}

/// A self-contained schema (no `$ref`s, which some clients cannot follow) in standard
/// JSON Schema, within what strict validators accept (OpenAI's strict function calling,
/// Gemini's function declarations): without the `null` that schemars adds to optional
/// fields, in their `type` and in a string `enum` (an absent field says the same, and
/// those hosts refuse type unions and enum values of another type), without the `format`
/// it puts on integers (`uint32`, `int64`: not formats JSON Schema defines, so validators
/// such as ajv warn about each one; `minimum` already says what a model needs), without
/// `default` (the description says it) and without `$schema` (MCP's default dialect is
/// the one it names).
fn schema<T: JsonSchema>(
    settings: SchemaSettings,
) -> Arc<serde_json::Map<String, serde_json::Value>> {
    let generator = settings
        .with(|s| s.inline_subschemas = true)
        .into_generator();
    let mut value = serde_json::to_value(generator.into_root_schema_for::<T>())
        .expect("a schema serializes to JSON");
    standardize(&mut value);
    let serde_json::Value::Object(mut object) = value else {
        panic!(
            "the schema of {} is not an object",
            std::any::type_name::<T>()
        );
    };
    // The type's own name and doc comment are noise to a model; the tool describes it.
    object.remove("$schema");
    object.remove("title");
    object.remove("description");
    Arc::new(object)
}

/// Turns every `"type": [X, "null"]` into `"type": X`, drops `null` from every `enum`,
/// and drops the `format` of every integer and every `default`.
fn standardize(value: &mut serde_json::Value) {
    match value {
        serde_json::Value::Object(object) => {
            if let Some(serde_json::Value::Array(types)) = object.get_mut("type") {
                types.retain(|t| t != "null");
                if let [single] = types.as_slice() {
                    let single = single.clone();
                    object.insert("type".into(), single);
                }
            }
            if let Some(serde_json::Value::Array(values)) = object.get_mut("enum") {
                values.retain(|v| !v.is_null());
            }
            object.remove("default");
            if object.get("type").is_some_and(|t| t == "integer") {
                object.remove("format");
            }
            object.values_mut().for_each(standardize);
        }
        serde_json::Value::Array(items) => items.iter_mut().for_each(standardize),
        _ => {}
    }
}

/// Deserializes a tool's arguments, mapping every serde complaint (a wrong type, a
/// missing or unknown field) to `INVALID_ARGUMENT`, naming the field.
pub fn parse<T: DeserializeOwned>(
    arguments: serde_json::Map<String, serde_json::Value>,
) -> Result<T, Error> {
    serde_path_to_error::deserialize(serde_json::Value::Object(arguments)).map_err(|err| {
        let path = err.path().to_string();
        let inner = err.into_inner();
        let argument = if path == "." {
            "arguments".to_owned()
        } else {
            path
        };
        Error::invalid(argument, format!("{inner}; see the tool's inputSchema"))
    })
}

#[cfg(test)]
mod tests {
    use pty_session::limits;

    use super::*;

    /// The description of `field` in the input schema of `T`.
    fn description<T: JsonSchema>(field: &str) -> String {
        let schema = input_schema::<T>();
        schema["properties"][field]["description"]
            .as_str()
            .unwrap_or_else(|| panic!("{field} has no description"))
            .to_owned()
    }

    /// The descriptions state defaults and limits in words; they must be the library's.
    #[test]
    fn the_descriptions_state_the_library_defaults() {
        let config = pty_session::Config::default();
        for (field, stated) in [
            ("quietMs", format!("(default {})", limits::DEFAULT_QUIET_MS)),
            (
                "timeoutMs",
                format!("(default {})", limits::DEFAULT_TIMEOUT_MS),
            ),
            ("lines", format!("(default {})", config.tail_lines)),
            ("maxBytes", format!("(default {})", config.tail_bytes)),
            ("cols", format!("(default {})", limits::DEFAULT_COLS)),
            ("rows", format!("(default {})", limits::DEFAULT_ROWS)),
        ] {
            let text = description::<OpenArgs>(field);
            assert!(
                text.contains(&stated),
                "{field}: {stated} missing from {text:?}"
            );
        }
        for field in ["quietMs", "timeoutMs", "lines", "maxBytes"] {
            assert_eq!(
                description::<OpenArgs>(field),
                description::<TailArgs>(field)
            );
        }
        assert_eq!(limits::MAX_DATA_BYTES, 1024 * 1024);
        assert!(description::<SendArgs>("data").contains("at most 1 MiB"));
    }
}
