//! The MCP App of `pty_open` and `pty_screen`: a terminal view that hosts supporting the
//! MCP Apps extension render beside the tool's result, in a sandboxed frame.
//!
//! The tools name the view in `_meta.ui.resourceUri`; `resources/read` of that `ui://`
//! URI returns one HTML document (xterm.js and the view's script inlined, as a sandboxed
//! frame loads nothing else) with the MIME type `text/html;profile=mcp-app` and a CSP in
//! its `_meta` that allows no outside origin. The view follows the session through the
//! host's bridge: `pty_screen` with `frame: true` for what the window shows (drawn in its
//! colours, with the cursor), `pty_send` with `read: false` for what the person types, so
//! the agent's unread lines stay unread. It polls less while the screen stays the same
//! and stops once the session ended or the host tore it down. A host without MCP Apps
//! ignores all of it.

use std::sync::LazyLock;

use rmcp::model::{MetaObject, ReadResourceResult, Resource, ResourceContents};
use serde_json::json;

/// The view's URI.
pub const URI: &str = "ui://pty-session/terminal";

/// The MIME type of an MCP App's HTML.
pub const MIME_TYPE: &str = "text/html;profile=mcp-app";

const TEMPLATE: &str = include_str!("../web/app/view.html");
const VIEW_JS: &str = include_str!("../web/app/view.js");
const XTERM_JS: &str = include_str!("../web/vendor/xterm.js");
const XTERM_CSS: &str = include_str!("../web/vendor/xterm.css");

/// The document, assembled once.
static HTML: LazyLock<String> = LazyLock::new(|| {
    TEMPLATE
        .replace("/*XTERM_CSS*/", XTERM_CSS)
        .replace("/*XTERM_JS*/", XTERM_JS)
        .replace("/*VIEW_JS*/", VIEW_JS)
});

/// The `_meta` of a tool shown with the view (`_meta.ui.resourceUri`; the flat
/// `"ui/resourceUri"` key of the extension's drafts is deprecated and left out).
pub fn tool_meta() -> MetaObject {
    object(json!({"ui": {"resourceUri": URI}}))
}

/// The view as `resources/list` shows it.
pub fn resource() -> Resource {
    Resource::new(URI, "terminal")
        .with_title("Terminal")
        .with_description("A live view of a pty-session session, for hosts with MCP Apps")
        .with_mime_type(MIME_TYPE)
        .with_meta(resource_meta())
}

/// `resources/read` of the view, or `None` for another URI.
pub fn read(uri: &str) -> Option<ReadResourceResult> {
    (uri == URI).then(|| {
        ReadResourceResult::new(vec![
            ResourceContents::text(HTML.as_str(), URI)
                .with_mime_type(MIME_TYPE)
                .with_meta(resource_meta()),
        ])
    })
}

/// The frame's policy: nothing from or to another origin (everything is inline, and the
/// session is reached only through the host), with a border around the terminal.
fn resource_meta() -> MetaObject {
    object(json!({"ui": {
        "csp": {"connectDomains": [], "resourceDomains": [], "frameDomains": []},
        "prefersBorder": true,
    }}))
}

fn object(value: serde_json::Value) -> MetaObject {
    match value {
        serde_json::Value::Object(map) => MetaObject(map),
        _ => unreachable!("a JSON object"),
    }
}
