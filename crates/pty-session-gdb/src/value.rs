//! MI values ([`Value`]): c-strings, tuples and lists, and the ordered `name=value` lists
//! ([`Results`]) that records and tuples carry.

use std::fmt;

/// One MI value, with its strings decoded.
///
/// ```
/// use pty_session_gdb::Value;
/// let frame: Value = r#"{func="main",args=[{name="argc",value="1"}],line="20"}"#.parse().unwrap();
/// assert_eq!(frame.str("func"), Some("main"));
/// let args: Vec<_> = frame.get("args").unwrap().items().collect();
/// assert_eq!(args[0].str("name"), Some("argc"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Value {
    /// A c-string (`"..."`), its escapes decoded.
    Const(String),
    /// A tuple, `{name=value,...}`.
    Tuple(Results),
    /// A list of values, `[value,...]`; `[]` is an empty one.
    List(Vec<Value>),
    /// A list of results, `[name=value,...]`, such as `stack=[frame={..},frame={..}]`.
    ResultList(Results),
}

impl Value {
    /// The string, if this is a c-string.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::Const(text) => Some(text),
            _ => None,
        }
    }

    /// The first value named `name`, if this is a tuple or a list of results.
    pub fn get(&self, name: &str) -> Option<&Value> {
        match self {
            Value::Tuple(results) | Value::ResultList(results) => results.get(name),
            _ => None,
        }
    }

    /// The string named `name`: [`get`](Self::get) then [`as_str`](Self::as_str).
    pub fn str(&self, name: &str) -> Option<&str> {
        self.get(name).and_then(Value::as_str)
    }

    /// The elements of a list, whether of values or of results (then their values, in
    /// order); nothing for a c-string or a tuple.
    pub fn items(&self) -> Items<'_> {
        match self {
            Value::List(values) => Items::Values(values.iter()),
            Value::ResultList(results) => Items::Results(results.0.iter()),
            Value::Const(_) | Value::Tuple(_) => Items::Values([].iter()),
        }
    }
}

/// The elements of a list: see [`Value::items`].
#[derive(Debug, Clone)]
pub enum Items<'a> {
    /// Of a list of values.
    Values(std::slice::Iter<'a, Value>),
    /// Of a list of results.
    Results(std::slice::Iter<'a, (String, Value)>),
}

impl<'a> Iterator for Items<'a> {
    type Item = &'a Value;

    fn next(&mut self) -> Option<&'a Value> {
        match self {
            Items::Values(values) => values.next(),
            Items::Results(results) => results.next().map(|(_, value)| value),
        }
    }
}

/// An ordered list of `name=value` pairs. Names may repeat (`bkpt=` in a breakpoint
/// table, `frame=` in a stack), so this is a list, not a map.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Results(pub Vec<(String, Value)>);

impl Results {
    /// The first value named `name`.
    pub fn get(&self, name: &str) -> Option<&Value> {
        self.0.iter().find(|(n, _)| n == name).map(|(_, v)| v)
    }

    /// Every value named `name`, in order.
    pub fn get_all<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a Value> + 'a {
        self.0
            .iter()
            .filter(move |(n, _)| n == name)
            .map(|(_, v)| v)
    }

    /// The string named `name`.
    pub fn str(&self, name: &str) -> Option<&str> {
        self.get(name).and_then(Value::as_str)
    }

    /// The pairs in order.
    pub fn iter(&self) -> std::slice::Iter<'_, (String, Value)> {
        self.0.iter()
    }

    /// How many pairs there are.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl<'a> IntoIterator for &'a Results {
    type Item = &'a (String, Value);
    type IntoIter = std::slice::Iter<'a, (String, Value)>;

    fn into_iter(self) -> Self::IntoIter {
        self.0.iter()
    }
}

/// Writes `text` as an MI c-string, quoted, with gdb's escapes for quotes, backslashes
/// and control characters (octal where C has no letter).
pub(crate) fn write_c_string(f: &mut fmt::Formatter<'_>, text: &str) -> fmt::Result {
    f.write_str("\"")?;
    for c in text.chars() {
        match c {
            '"' => f.write_str("\\\"")?,
            '\\' => f.write_str("\\\\")?,
            '\n' => f.write_str("\\n")?,
            '\t' => f.write_str("\\t")?,
            '\r' => f.write_str("\\r")?,
            c if (c as u32) < 0x20 || c == '\u{7f}' => write!(f, "\\{:03o}", c as u32)?,
            c => write!(f, "{c}")?,
        }
    }
    f.write_str("\"")
}

/// Writes the pairs as MI, `name=value` separated by commas.
pub(crate) fn write_results(f: &mut fmt::Formatter<'_>, results: &Results) -> fmt::Result {
    for (i, (name, value)) in results.iter().enumerate() {
        if i > 0 {
            f.write_str(",")?;
        }
        write!(f, "{name}={value}")?;
    }
    Ok(())
}

/// The MI syntax, which parses back to the same value.
impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Const(text) => write_c_string(f, text),
            Value::Tuple(results) => {
                f.write_str("{")?;
                write_results(f, results)?;
                f.write_str("}")
            }
            Value::List(values) => {
                f.write_str("[")?;
                for (i, value) in values.iter().enumerate() {
                    if i > 0 {
                        f.write_str(",")?;
                    }
                    write!(f, "{value}")?;
                }
                f.write_str("]")
            }
            Value::ResultList(results) => {
                f.write_str("[")?;
                write_results(f, results)?;
                f.write_str("]")
            }
        }
    }
}

/// The MI syntax, `name=value,...`.
impl fmt::Display for Results {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_results(f, self)
    }
}
