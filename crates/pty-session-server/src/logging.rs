//! The server's log: to stderr (stdout is the protocol over stdio), filtered by `RUST_LOG`
//! or the command's default, without the errors rmcp logs for events that are expected.

use std::io::IsTerminal as _;

use tracing::field::{Field, Visit};
use tracing_subscriber::layer::{Context, SubscriberExt as _};
use tracing_subscriber::util::SubscriberInitExt as _;
use tracing_subscriber::{EnvFilter, Layer};

/// Starts logging to stderr with `RUST_LOG`, else `default_filter`.
pub fn init(default_filter: &str) {
    let filter =
        EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(default_filter));
    tracing_subscriber::registry()
        .with(ExpectedDrops)
        .with(
            tracing_subscriber::fmt::layer()
                .with_writer(std::io::stderr)
                .with_ansi(std::io::stderr().is_terminal())
                .with_filter(filter),
        )
        .init();
}

/// What rmcp logs as an error when a reply cannot be sent because its client went away
/// (an HTTP client dropping its connection mid-call, a stdio client exiting): the call
/// was already cancelled, nobody waits for the reply, nothing failed. (Its transports
/// fail a send only when the other end is gone.)
const EXPECTED: &[(&str, &str)] = &[
    (
        "rmcp::service",
        "failed to send pending response during drain",
    ),
    ("rmcp::service", "fail to response message"),
];

/// Drops the events of [`EXPECTED`] for every layer.
struct ExpectedDrops;

impl<S: tracing::Subscriber> Layer<S> for ExpectedDrops {
    fn event_enabled(&self, event: &tracing::Event<'_>, _ctx: Context<'_, S>) -> bool {
        let target = event.metadata().target();
        if !EXPECTED.iter().any(|(expected, _)| *expected == target) {
            return true;
        }
        let mut message = Message(None);
        event.record(&mut message);
        let Some(message) = message.0 else {
            return true;
        };
        !EXPECTED
            .iter()
            .any(|(expected, text)| *expected == target && message == *text)
    }
}

/// The `message` field of an event.
struct Message(Option<String>);

impl Visit for Message {
    fn record_str(&mut self, field: &Field, value: &str) {
        if field.name() == "message" {
            self.0 = Some(value.to_owned());
        }
    }

    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        if field.name() == "message" {
            self.0 = Some(format!("{value:?}"));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};

    /// A writer into a shared buffer.
    #[derive(Clone, Default)]
    struct Buffer(Arc<Mutex<Vec<u8>>>);

    impl std::io::Write for Buffer {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(bytes);
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn a_reply_to_a_departed_client_is_not_an_error_but_other_errors_are() {
        let buffer = Buffer::default();
        let writer = buffer.clone();
        let subscriber = tracing_subscriber::registry().with(ExpectedDrops).with(
            tracing_subscriber::fmt::layer()
                .with_writer(move || writer.clone())
                .with_ansi(false),
        );
        tracing::subscriber::with_default(subscriber, || {
            let error = "broken pipe";
            tracing::error!(target: "rmcp::service", %error, "failed to send pending response during drain");
            tracing::error!(target: "rmcp::service", %error, "fail to close sink");
            tracing::error!(target: "elsewhere", "failed to send pending response during drain");
        });
        let logged = String::from_utf8(buffer.0.lock().unwrap().clone()).unwrap();
        assert!(
            !logged.contains("rmcp::service: failed to send pending"),
            "{logged}"
        );
        assert!(logged.contains("fail to close sink"), "{logged}");
        assert!(
            logged.contains("elsewhere: failed to send pending"),
            "{logged}"
        );
    }
}
