//! MCP progress notifications: the library's progress reports during a long settle, sent
//! to a client that asked for them with a `progressToken`.

use pty_session::{Progress, ProgressFn};
use rmcp::RoleServer;
use rmcp::model::ProgressNotificationParam;
use rmcp::service::RequestContext;

/// A progress callback for the request of `ctx`, if its client sent a `progressToken`.
/// Reports go out in order from a task of their own, which ends when the callback is
/// dropped with the call's request.
pub fn reporter(ctx: &RequestContext<RoleServer>) -> Option<ProgressFn> {
    let token = ctx.meta.get_progress_token()?;
    let peer = ctx.peer.clone();
    let (reports, mut queue) = tokio::sync::mpsc::unbounded_channel::<Progress>();
    tokio::spawn(async move {
        while let Some(report) = queue.recv().await {
            let elapsed_ms = report.elapsed.as_millis() as f64;
            let notification = ProgressNotificationParam::new(token.clone(), elapsed_ms)
                .with_message(message(&report));
            if peer.notify_progress(notification).await.is_err() {
                break;
            }
        }
    });
    Some(ProgressFn::new(move |report| {
        // The receiver is gone only once the transport is; nothing to tell then.
        let _ = reports.send(report);
    }))
}

/// The newest lines, else the pending line, else how long the call has waited.
fn message(report: &Progress) -> String {
    if !report.lines.is_empty() {
        report.lines.join("\n")
    } else if !report.pending.is_empty() {
        report.pending.clone()
    } else {
        format!(
            "waiting for {} s; {} lines so far",
            report.elapsed.as_secs(),
            report.total_lines
        )
    }
}
