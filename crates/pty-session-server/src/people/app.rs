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

use crate::people::xterm::{XTERM_CSS, XTERM_JS};

/// The view's URI.
pub const URI: &str = "ui://pty-session/terminal";

/// The MIME type of an MCP App's HTML.
pub const MIME_TYPE: &str = "text/html;profile=mcp-app";

const TEMPLATE: &str = include_str!("../../web/app/view.html");
const VIEW_JS: &str = include_str!("../../web/app/view.js");
/// What the views show and send safely (`shown`, `quietAnswers`), shared with the page.
const SAFE_JS: &str = include_str!("../../web/safe.js");

/// The document, assembled once (the tests assemble it too: it cannot fail here).
static HTML: LazyLock<String> = LazyLock::new(|| {
    assemble(
        TEMPLATE,
        &[
            Inline::style("/*XTERM_CSS*/", XTERM_CSS),
            Inline::script("/*XTERM_JS*/", XTERM_JS),
            Inline::script("/*SAFE_JS*/", SAFE_JS),
            Inline::script("/*VIEW_JS*/", VIEW_JS),
        ],
    )
    .unwrap_or_else(|err| panic!("the MCP App's HTML: {err}"))
});

/// Code inlined into the template in place of its marker, and what it must not hold (in
/// any case) lest it end its element early.
struct Inline<'a> {
    marker: &'a str,
    code: &'a str,
    forbidden: &'static [&'static str],
}

impl<'a> Inline<'a> {
    fn script(marker: &'a str, code: &'a str) -> Self {
        Inline {
            marker,
            code,
            forbidden: &["</script", "<!--"],
        }
    }

    fn style(marker: &'a str, code: &'a str) -> Self {
        Inline {
            marker,
            code,
            forbidden: &["</style"],
        }
    }
}

/// The template with each marker (there exactly once) replaced by its code. Refuses code
/// that would end its element early: an HTML parser ends a `<script>` at the first
/// `</script` whatever the JavaScript around it, and a `<style>` at `</style`. In a script,
/// `<!--` is refused too: before a `<script` it keeps the element open past its end.
fn assemble(template: &str, parts: &[Inline<'_>]) -> Result<String, String> {
    let mut places = Vec::with_capacity(parts.len());
    for part in parts {
        let lower = part.code.to_ascii_lowercase();
        let early = part
            .forbidden
            .iter()
            .find_map(|end| lower.find(end).map(|at| (end, at)));
        if let Some((end, at)) = early {
            return Err(format!(
                "the code for {} holds `{end}` at byte {at}",
                part.marker
            ));
        }
        let mut found = template.match_indices(part.marker);
        match (found.next(), found.next()) {
            (Some((at, _)), None) => places.push((at, part)),
            _ => return Err(format!("the template must hold {} once", part.marker)),
        }
    }
    // Markers are looked for in the template only, never in the code inlined.
    places.sort_by_key(|(at, _)| *at);
    let mut html =
        String::with_capacity(template.len() + parts.iter().map(|p| p.code.len()).sum::<usize>());
    let mut from = 0;
    for (at, part) in places {
        html.push_str(&template[from..at]);
        html.push_str(part.code);
        from = at + part.marker.len();
    }
    html.push_str(&template[from..]);
    Ok(html)
}

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

/// The view's terminal colours as `view.js` has them: the library's defaults.
const DEFAULT_THEME: &str = r##"const TERMINAL_THEME = { background: "#000000", foreground: "#dddddd", cursor: "#dddddd" };"##;

/// The document with the terminal drawn in `colours`: those the session's programs are
/// told (OSC 10, 11, 12), which the server's configuration may set.
fn html(colours: &pty_session::Colours) -> String {
    let hex = pty_session::Colours::hex;
    let theme = format!(
        r#"const TERMINAL_THEME = {{ background: "{}", foreground: "{}", cursor: "{}" }};"#,
        hex(colours.background),
        hex(colours.foreground),
        hex(colours.cursor)
    );
    HTML.replacen(DEFAULT_THEME, &theme, 1)
}

/// `resources/read` of the view, drawing its terminal in `colours`, or `None` for
/// another URI.
pub fn read(uri: &str, colours: &pty_session::Colours) -> Option<ReadResourceResult> {
    (uri == URI).then(|| {
        ReadResourceResult::new(vec![
            ResourceContents::text(html(colours), URI)
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The web view and the MCP App view draw on the colours a session tells a program
    /// that asks (OSC 10, 11, 12), so that vim's `background` guess reads in them.
    #[test]
    fn the_views_draw_the_colours_programs_are_told() {
        let colours = pty_session::Colours::default();
        let hex = |[r, g, b]: [u8; 3]| format!("#{r:02x}{g:02x}{b:02x}");
        let theme = format!(
            r#"{{ background: "{}", foreground: "{}", cursor: "{}" }}"#,
            hex(colours.background),
            hex(colours.foreground),
            hex(colours.cursor)
        );
        for (name, source) in [
            ("app.js", include_str!("../../web/app.js")),
            ("app/view.js", include_str!("../../web/app/view.js")),
        ] {
            assert!(source.contains(&theme), "{name} draws with {theme}");
        }
    }

    /// The view draws its terminal in the configured colours: the default theme is in the
    /// document exactly once, and gives way to another.
    #[test]
    fn the_view_draws_the_configured_colours() {
        assert_eq!(HTML.matches(DEFAULT_THEME).count(), 1);
        assert_eq!(html(&pty_session::Colours::default()), *HTML);
        let colours = pty_session::Colours {
            foreground: [0x65, 0x7b, 0x83],
            background: [0xfd, 0xf6, 0xe3],
            cursor: [0x65, 0x7b, 0x83],
        };
        let html = html(&colours);
        assert!(!html.contains(DEFAULT_THEME));
        assert!(html.contains(
            r##"const TERMINAL_THEME = { background: "#fdf6e3", foreground: "#657b83", cursor: "#657b83" };"##
        ));
    }

    /// The document as served: every marker replaced, nothing inlined ends its element
    /// early (this fails if a new xterm.js or view.js holds `</script`).
    #[test]
    fn the_document_assembles() {
        let html = HTML.as_str();
        for marker in [
            "/*XTERM_CSS*/",
            "/*XTERM_JS*/",
            "/*SAFE_JS*/",
            "/*VIEW_JS*/",
        ] {
            assert!(!html.contains(marker), "{marker} left in");
        }
        assert!(html.contains(XTERM_JS) && html.contains(VIEW_JS) && html.contains(XTERM_CSS));
        assert!(html.contains(SAFE_JS));
        assert_eq!(html.matches("</script>").count(), 3);
    }

    #[test]
    fn code_that_would_end_its_element_is_refused() {
        let template = "<style>/*CSS*/</style><script>/*JS*/</script>";
        let html = |css, js| {
            assemble(
                template,
                &[Inline::style("/*CSS*/", css), Inline::script("/*JS*/", js)],
            )
        };
        assert_eq!(
            html("b{}", "let a = 1 < 2;").unwrap(),
            "<style>b{}</style><script>let a = 1 < 2;</script>"
        );
        for js in ["x = '</script>'", "x = '</SCRIPT '", "/* <!-- */"] {
            let err = html("", js).unwrap_err();
            assert!(err.contains("/*JS*/"), "{js:?}: {err}");
        }
        assert!(html("</Style>", "").unwrap_err().contains("/*CSS*/"));
        // A marker in inlined code is code, not a marker.
        assert_eq!(
            html("/*JS*/", "1").unwrap(),
            "<style>/*JS*/</style><script>1</script>"
        );
        let missing = assemble("<script></script>", &[Inline::script("/*JS*/", "1")]);
        assert!(missing.unwrap_err().contains("once"));
        let twice = assemble("/*JS*//*JS*/", &[Inline::script("/*JS*/", "1")]);
        assert!(twice.unwrap_err().contains("once"));
    }
}
