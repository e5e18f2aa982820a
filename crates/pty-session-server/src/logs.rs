//! Logs: to stderr, quiet unless `RUST_LOG` asks for more, and without a client's mistakes.
//!
//! By default only warnings and errors show, plus `serve`'s start-up lines (the target
//! [`STARTUP`]). rmcp logs every error it answers a client with (a tool or method that
//! does not exist, bad params) as a WARN, and a response it cannot send because the client
//! went away mid-call as an ERROR: neither is the server's fault, so [`ClientMistakes`]
//! hides them unless `RUST_LOG` asks for debug lines.
//!
//! rmcp's debug and trace lines hold every message whole: what an agent sends a program
//! (a password typed through the MCP App view among it) and what the program printed.
//! `RUST_LOG=debug` is what a person sets to see why a session misbehaves, not to write
//! everyone's keys into a file, so rmcp stays at `info` unless `RUST_LOG` names it
//! ([`redacted`]); `RUST_LOG=debug,rmcp=debug` still shows the messages, on purpose.

use std::fmt;
use std::io::IsTerminal as _;

use tracing::field::{Field, Visit};
use tracing::level_filters::LevelFilter;
use tracing::{Event, Subscriber};
use tracing_subscriber::EnvFilter;
use tracing_subscriber::layer::{Context, Layer, SubscriberExt as _};
use tracing_subscriber::util::SubscriberInitExt as _;

/// The target of `serve`'s start-up lines (its address, the generated token's file), shown
/// at the default level.
pub const STARTUP: &str = "pty_session_server::startup";

/// `RUST_LOG`'s directives, with rmcp capped at `info` unless they name it: its debug
/// lines hold the messages whole (what is typed, what programs print).
pub fn redacted(directives: &str) -> String {
    if directives.contains("rmcp") || directives.trim().is_empty() {
        directives.to_owned()
    } else {
        format!("{directives},rmcp=info")
    }
}

/// Installs the stderr logger: `RUST_LOG` if set (rmcp's messages [`redacted`]), else
/// `default_directives`.
pub fn init(default_directives: &str) {
    let filter = match std::env::var(EnvFilter::DEFAULT_ENV) {
        Ok(directives) => EnvFilter::try_new(redacted(&directives))
            .unwrap_or_else(|_| EnvFilter::new(default_directives)),
        Err(_) => EnvFilter::new(default_directives),
    };
    let verbose = filter
        .max_level_hint()
        .is_some_and(|level| level >= LevelFilter::DEBUG);
    tracing_subscriber::registry()
        .with(ClientMistakes { shown: verbose })
        .with(filter)
        .with(
            tracing_subscriber::fmt::layer()
                .with_writer(std::io::stderr)
                .with_ansi(std::io::stderr().is_terminal()),
        )
        .init();
}

/// Hides rmcp's lines about a client's mistakes unless `shown`.
pub struct ClientMistakes {
    /// Whether debug lines were asked for, which shows these too.
    pub shown: bool,
}

/// The messages rmcp logs for what a client did, not the server.
const MISTAKES: [&str; 4] = [
    // An error answered to a request: no such tool or method, bad params.
    "response error",
    // A request the peer may not send at this point.
    "rejected peer request",
    // The client closed its connection before the answer to its call.
    "failed to send pending response during drain",
    // The same, for a reply whose client (a stdio peer, an HTTP stream) is already gone.
    "fail to response message",
];

/// JSON-RPC's internal error, which is the server's: always shown.
const INTERNAL_ERROR: &str = "ErrorCode(-32603)";

impl<S: Subscriber> Layer<S> for ClientMistakes {
    fn event_enabled(&self, event: &Event<'_>, _cx: Context<'_, S>) -> bool {
        if self.shown || !event.metadata().target().starts_with("rmcp") {
            return true;
        }
        let mut fields = Fields::default();
        event.record(&mut fields);
        !is_mistake(&fields.message, &fields.error)
    }
}

/// Whether an rmcp event with `message` and `error` fields is a client's mistake.
fn is_mistake(message: &str, error: &str) -> bool {
    MISTAKES.contains(&message) && !error.contains(INTERNAL_ERROR)
}

/// The `message` and `error` fields of an event.
#[derive(Default)]
struct Fields {
    message: String,
    error: String,
}

impl Visit for Fields {
    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        match field.name() {
            "message" => self.message = format!("{value:?}"),
            "error" => self.error = format!("{value:?}"),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rmcp_stays_at_info_unless_named() {
        assert_eq!(redacted("debug"), "debug,rmcp=info");
        assert_eq!(
            redacted("warn,pty_session=trace"),
            "warn,pty_session=trace,rmcp=info"
        );
        assert_eq!(redacted("debug,rmcp=debug"), "debug,rmcp=debug");
        assert_eq!(redacted(""), "");
    }

    #[test]
    fn client_mistakes_and_server_errors() {
        let not_found = "ErrorData { code: ErrorCode(-32602), message: \"tool not found\" }";
        assert!(is_mistake("response error", not_found));
        assert!(is_mistake("rejected peer request", ""));
        assert!(is_mistake(
            "failed to send pending response during drain",
            "channel closed"
        ));
        let internal = "ErrorData { code: ErrorCode(-32603), message: \"no principal\" }";
        assert!(!is_mistake("response error", internal));
        assert!(!is_mistake("timed out draining in-flight responses", ""));
    }
}
