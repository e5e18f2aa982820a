//! The MCP handler: one type, one method per tool, serving every transport from one
//! [`PtyService`].
//!
//! A tool method finds the caller's owner, parses its arguments ([`wire`]), calls the
//! facade and shapes the reply ([`reply`]); there is no other logic here. The doc comment
//! of each tool method is its MCP description: short and exact, for a model; the full
//! reference a person reads is docs/tools.md, which these descriptions must agree with.

use std::sync::LazyLock;

use pty_session::{Error, Owner, ProgressFn, PtyService, SessionId};
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::model::{CallToolResult, JsonObject};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, tool, tool_handler, tool_router};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::owner::{ActiveOwner, Caller, Owners};
use crate::wire::{
    self, CloseArgs, CloseResult, ListArgs, ListResult, ListedSession, OpenArgs, OpenResult,
    ScreenArgs, ScreenResult, SendArgs, SendResult, TailArgs, TailResult,
};
use crate::{progress, reply};

/// The tool handler. Cheap to clone; all state lives in the shared service, because over
/// HTTP with the current protocol rmcp builds one handler per request.
#[derive(Clone)]
pub struct PtyTools {
    service: PtyService,
    caller: Caller,
    stopping: Stopping,
}

/// The server's stop as the tools see it: when it fires, a call in flight ends at once
/// with `CANCELLED` (its reply still goes out), and the server can wait for every call to
/// have ended before it closes connections. Cheap to clone.
#[derive(Clone, Default)]
pub struct Stopping {
    token: CancellationToken,
    calls: TaskTracker,
}

impl Stopping {
    /// Ends the calls in flight, and any call made from now on, with `CANCELLED`.
    pub fn stop(&self) {
        self.token.cancel();
    }

    /// Waits until no call is in flight (after [`Stopping::stop`]).
    pub async fn calls_ended(&self) {
        self.calls.close();
        self.calls.wait().await;
    }

    /// Runs `call`, which ends with `CANCELLED` once `cancel` is cancelled, cancelling
    /// `cancel` when the server stops; the call counts as in flight meanwhile.
    async fn run<T>(&self, cancel: &CancellationToken, call: impl Future<Output = T>) -> T {
        let _in_flight = self.calls.token();
        let mut call = std::pin::pin!(call);
        tokio::select! {
            biased;
            out = call.as_mut() => out,
            () = self.token.cancelled() => {
                cancel.cancel();
                call.await
            }
        }
    }
}

#[tool_router]
impl PtyTools {
    /// Start a command on its own terminal (a shell, REPL, debugger, ssh, database console,
    /// or a full-screen program: vim, less, htop) and wait until its first output settled. Returns a sessionId for pty_send, pty_tail
    /// and pty_close; the process keeps running after the reply.
    /// A wait ends at the first of: the process exited; it waits for input (e.g. at a
    /// prompt); a line matched `until`; `timeoutMs` passed (default 5000). settledBy says
    /// which.
    /// Output comes as completed lines, each delivered exactly once across open, send and
    /// tail. `pending` is the unfinished last line, e.g. a prompt (">>> ", "Password: "):
    /// it shows what the program waits for, and is repeated in every reply until its line
    /// ends.
    /// Close sessions you no longer need with pty_close.
    #[tool(
        input_schema = wire::input_schema::<OpenArgs>(),
        output_schema = wire::output_schema::<OpenResult>(),
        annotations(destructive_hint = false, open_world_hint = true)
    )]
    async fn pty_open(
        &self,
        ctx: RequestContext<RoleServer>,
        arguments: JsonObject,
    ) -> Result<CallToolResult, ErrorData> {
        let caller = self.caller(&ctx)?;
        let cancel = ctx.ct.child_token();
        let progress = progress::reporter(&ctx);
        let call = self.open_reporting(caller.owner(), arguments, &cancel, progress);
        Ok(self.stopping.run(&cancel, call).await)
    }

    /// Type into a session and wait until the output settled: the process exited, it waits
    /// for input again, a line matched `until`, or `timeoutMs` passed (default 5000).
    /// `data` is written exactly, then Enter unless submit is false. `keys` presses named
    /// keys instead, encoded as the program expects: ["C-c"], ["Escape", ":wq", "Enter"],
    /// ["Up"] (no Enter after them unless submit is true). `cols`/`rows` resize the
    /// terminal first; data "" with submit false only waits.
    /// `delta` holds only lines not delivered before (with echo on, your input comes back
    /// first). A `pending` prompt means the program waits for you; settledBy "timeout"
    /// means it is still busy: read on with pty_tail, or pass `until` and a longer
    /// timeoutMs. While a full-screen program (vim, less) has the alternate screen on, the
    /// reply carries `screen` and `cursor`.
    #[tool(
        input_schema = wire::input_schema::<SendArgs>(),
        output_schema = wire::output_schema::<SendResult>(),
        annotations(destructive_hint = true, open_world_hint = true)
    )]
    async fn pty_send(
        &self,
        ctx: RequestContext<RoleServer>,
        arguments: JsonObject,
    ) -> Result<CallToolResult, ErrorData> {
        let caller = self.caller(&ctx)?;
        let cancel = ctx.ct.child_token();
        let progress = progress::reporter(&ctx);
        let call = self.send_reporting(caller.owner(), arguments, &cancel, progress);
        Ok(self.stopping.run(&cancel, call).await)
    }

    /// Read what a session printed since the last reply, without typing. Every line is
    /// delivered once: lines already returned by pty_open, pty_send or an earlier tail do
    /// not come back. `from` re-reads kept lines from that line number on instead (oldest
    /// first; lineBegin..lineEnd are kept), leaving unread lines unread.
    /// Without settle arguments it answers at once; with any of settle, until, quietMs or
    /// timeoutMs it first waits as pty_send does (e.g. until "BUILD (OK|FAILED)" with
    /// timeoutMs 600000) and reports settledBy.
    /// A reply holds at most `lines` (default 200) and `maxBytes` (default 32768): when
    /// more is due the newest come back, truncated true, skipped = how many were left out,
    /// and the status line says which `from` re-reads them. `pending` is the unfinished
    /// last line, such as a prompt. Works after the process exited, until pty_close.
    #[tool(
        input_schema = wire::input_schema::<TailArgs>(),
        output_schema = wire::output_schema::<TailResult>(),
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn pty_tail(
        &self,
        ctx: RequestContext<RoleServer>,
        arguments: JsonObject,
    ) -> Result<CallToolResult, ErrorData> {
        let caller = self.caller(&ctx)?;
        let cancel = ctx.ct.child_token();
        let progress = progress::reporter(&ctx);
        let call = self.tail_reporting(caller.owner(), arguments, &cancel, progress);
        Ok(self.stopping.run(&cancel, call).await)
    }

    /// Show what the session's terminal window shows now, as a person would see it: the
    /// visible rows (trailing blanks trimmed), the cursor (row, col from 0), the size, and
    /// altScreen. For full-screen programs (vim, less, htop, top) and for any session at
    /// any time, also after it exited. Does not move the output cursor.
    #[tool(
        input_schema = wire::input_schema::<ScreenArgs>(),
        output_schema = wire::output_schema::<ScreenResult>(),
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn pty_screen(
        &self,
        ctx: RequestContext<RoleServer>,
        arguments: JsonObject,
    ) -> Result<CallToolResult, ErrorData> {
        let caller = self.caller(&ctx)?;
        Ok(self.screen(caller.owner(), arguments))
    }

    /// List your sessions (to find ids again, e.g. after your context was compacted): id,
    /// command, pid, status (exitCode or signal once exited), cwd, startedAt, unreadLines,
    /// pending, altScreen. Exited sessions stay listed and readable until pty_close (the
    /// oldest are closed past the server's maxExitedPerOwner); only running sessions count
    /// toward the session limits.
    #[tool(
        input_schema = wire::input_schema::<ListArgs>(),
        output_schema = wire::output_schema::<ListResult>(),
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn pty_list(
        &self,
        ctx: RequestContext<RoleServer>,
        arguments: JsonObject,
    ) -> Result<CallToolResult, ErrorData> {
        let caller = self.caller(&ctx)?;
        Ok(self.list(caller.owner(), arguments))
    }

    /// Kill a session's whole process tree (SIGHUP/SIGTERM, then SIGKILL), wait until it is
    /// gone, and forget the session: its id then answers UNKNOWN_SESSION.
    /// closed is false if the session was already closed or never existed.
    #[tool(
        input_schema = wire::input_schema::<CloseArgs>(),
        output_schema = wire::output_schema::<CloseResult>(),
        annotations(destructive_hint = true, idempotent_hint = true, open_world_hint = false)
    )]
    async fn pty_close(
        &self,
        ctx: RequestContext<RoleServer>,
        arguments: JsonObject,
    ) -> Result<CallToolResult, ErrorData> {
        let caller = self.caller(&ctx)?;
        let call = self.close(caller.owner(), arguments);
        // Quick calls: they end by themselves, the server waits for them.
        Ok(self.stopping.run(&CancellationToken::new(), call).await)
    }
}

#[tool_handler(
    router = PtyTools::router(),
    name = "pty-session",
    instructions = "Interactive processes on pseudo-terminals. pty_open starts one (a shell, \
                    python, gdb, ssh, psql) and returns its sessionId; pty_send types into it and \
                    returns the new output once it settled; pty_tail reads output without typing \
                    (or re-reads with from, or waits with until); pty_list lists your sessions; \
                    pty_screen shows the terminal window (for vim, less, htop, top); \
                    pty_close kills it. Each output line is delivered once; `pending` is the \
                    unfinished last line, usually the prompt the program waits at."
)]
impl ServerHandler for PtyTools {}

/// The calls behind the tools, by owner. Public so that tests can drive a call with a
/// token they control (a cancelled request gets no response over MCP).
impl PtyTools {
    /// A handler for the one client of a stdio server.
    pub fn stdio(service: PtyService, owner: Owner) -> PtyTools {
        PtyTools {
            service,
            caller: Caller::Stdio(owner),
            stopping: Stopping::default(),
        }
    }

    /// A handler for HTTP requests, whose owners come from the request; `stopping` ends
    /// its calls when the server stops.
    pub fn http(service: PtyService, owners: Owners, stopping: Stopping) -> PtyTools {
        PtyTools {
            service,
            caller: Caller::Http(owners),
            stopping,
        }
    }

    /// The tools, built once: rmcp's default builds them, JSON schemas and all, for every
    /// request.
    fn router() -> &'static ToolRouter<PtyTools> {
        static ROUTER: LazyLock<ToolRouter<PtyTools>> = LazyLock::new(PtyTools::tool_router);
        &ROUTER
    }

    fn caller(&self, ctx: &RequestContext<RoleServer>) -> Result<ActiveOwner, ErrorData> {
        self.caller.owner(ctx).ok_or_else(|| {
            // The HTTP gate puts a principal on every request it lets through.
            ErrorData::internal_error("the request carries no authenticated principal", None)
        })
    }

    /// `pty_open` for `owner`; `cancel` ends the settle with CANCELLED.
    pub async fn open(
        &self,
        owner: &Owner,
        arguments: JsonObject,
        cancel: &CancellationToken,
    ) -> CallToolResult {
        self.open_reporting(owner, arguments, cancel, None).await
    }

    /// `pty_open`, telling `progress` of the newest lines while it waits.
    pub async fn open_reporting(
        &self,
        owner: &Owner,
        arguments: JsonObject,
        cancel: &CancellationToken,
        progress: Option<ProgressFn>,
    ) -> CallToolResult {
        let mut request = match wire::parse::<OpenArgs>(arguments).and_then(OpenArgs::into_request)
        {
            Ok(request) => request,
            Err(err) => return reply::error(&err),
        };
        if let Some(progress) = progress {
            request = request.reporting_to(progress);
        }
        respond(self.service.open(owner, request, cancel).await, |opened| {
            reply::opened(&OpenResult::new(opened))
        })
    }

    /// `pty_send` for `owner`; `cancel` ends the settle with CANCELLED.
    pub async fn send(
        &self,
        owner: &Owner,
        arguments: JsonObject,
        cancel: &CancellationToken,
    ) -> CallToolResult {
        self.send_reporting(owner, arguments, cancel, None).await
    }

    /// `pty_send`, telling `progress` of the newest lines while it waits.
    pub async fn send_reporting(
        &self,
        owner: &Owner,
        arguments: JsonObject,
        cancel: &CancellationToken,
        progress: Option<ProgressFn>,
    ) -> CallToolResult {
        let (id, mut request) =
            match wire::parse::<SendArgs>(arguments).and_then(SendArgs::into_request) {
                Ok(parsed) => parsed,
                Err(err) => return reply::error(&err),
            };
        if let Some(progress) = progress {
            request = request.reporting_to(progress);
        }
        let request = request.cancel_on(cancel.clone());
        respond(
            self.service
                .send(owner, &SessionId::new(&id), request)
                .await,
            |sent| reply::sent(&id, &SendResult::new(sent)),
        )
    }

    /// `pty_tail` for `owner`; `cancel` ends a wait with CANCELLED.
    pub async fn tail(
        &self,
        owner: &Owner,
        arguments: JsonObject,
        cancel: &CancellationToken,
    ) -> CallToolResult {
        self.tail_reporting(owner, arguments, cancel, None).await
    }

    /// `pty_tail`, telling `progress` of the newest lines while it waits.
    pub async fn tail_reporting(
        &self,
        owner: &Owner,
        arguments: JsonObject,
        cancel: &CancellationToken,
        progress: Option<ProgressFn>,
    ) -> CallToolResult {
        let (id, mut request) =
            match wire::parse::<TailArgs>(arguments).and_then(TailArgs::into_request) {
                Ok(parsed) => parsed,
                Err(err) => return reply::error(&err),
            };
        if let Some(progress) = progress {
            request = request.reporting_to(progress);
        }
        let reread = request.rereads();
        let request = request.cancel_on(cancel.clone());
        respond(
            self.service
                .tail(owner, &SessionId::new(&id), request)
                .await,
            |tail| reply::tail(&id, &TailResult::new(tail, reread)),
        )
    }

    /// `pty_screen` for `owner`.
    pub fn screen(&self, owner: &Owner, arguments: JsonObject) -> CallToolResult {
        let id = match wire::parse::<ScreenArgs>(arguments) {
            Ok(args) => args.id,
            Err(err) => return reply::error(&err),
        };
        respond(self.service.screen(owner, &SessionId::new(&id)), |screen| {
            reply::screen(&id, &ScreenResult::new(screen))
        })
    }

    /// `pty_list` for `owner`.
    pub fn list(&self, owner: &Owner, arguments: JsonObject) -> CallToolResult {
        if let Err(err) = wire::parse::<ListArgs>(arguments) {
            return reply::error(&err);
        }
        let sessions = self.service.list(owner);
        reply::listed(&ListResult {
            sessions: sessions.into_iter().map(ListedSession::new).collect(),
        })
    }

    /// `pty_close` for `owner`.
    pub async fn close(&self, owner: &Owner, arguments: JsonObject) -> CallToolResult {
        let id = match wire::parse::<CloseArgs>(arguments) {
            Ok(args) => args.id,
            Err(err) => return reply::error(&err),
        };
        respond(
            self.service.close(owner, &SessionId::new(&id)).await,
            |closed| reply::closed(&id, &CloseResult { closed }),
        )
    }
}

fn respond<T>(result: Result<T, Error>, ok: impl FnOnce(T) -> CallToolResult) -> CallToolResult {
    match result {
        Ok(value) => ok(value),
        Err(err) => reply::error(&err),
    }
}
