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

use crate::mcp::owner::{ActiveOwner, Caller, Owners};
use crate::mcp::wire::{
    self, CloseArgs, CloseResult, ListArgs, ListResult, ListedSession, OpenArgs, OpenResult,
    ScreenArgs, ScreenResult, SendArgs, SendResult, TailArgs, TailResult,
};
use crate::mcp::{progress, reply};

/// The tool handler. Cheap to clone; all state lives in the shared service, because over
/// HTTP with the current protocol rmcp builds one handler per request.
#[derive(Clone)]
pub struct PtyTools {
    service: PtyService,
    caller: Caller,
    stopping: Stopping,
    /// The `cwd` of a `pty_open` that names none, where the server's own directory is not
    /// the client's (the background server of persistent sessions).
    default_cwd: Option<std::sync::Arc<str>>,
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
    /// Start a command on its own terminal (shell, REPL, debugger, ssh, database console,
    /// or a full-screen program like vim) and return once its output settled, with a
    /// sessionId for the other tools; the process keeps running.
    /// A wait ends at the first of: exit; the program waits for input (e.g. at a prompt),
    /// or over ssh its prompt came back; a line matches `until`; `timeoutMs` (default
    /// 5000). settledBy says which.
    /// Each output line is delivered once across open, send and tail. `pending` is the
    /// unfinished last line, e.g. a prompt (">>> ", "Password: "): what the program waits
    /// at. Close sessions you no longer need with pty_close.
    #[tool(
        input_schema = wire::input_schema::<OpenArgs>(),
        output_schema = wire::output_schema::<OpenResult>(),
        annotations(destructive_hint = false, open_world_hint = true),
        meta = crate::people::app::tool_meta()
    )]
    async fn pty_open(
        &self,
        ctx: RequestContext<RoleServer>,
        arguments: JsonObject,
    ) -> Result<CallToolResult, ErrorData> {
        self.waiting(&ctx, async |owner, cancel, progress| {
            self.open_reporting(owner, arguments, cancel, progress)
                .await
        })
        .await
    }

    /// Type into a session and return once the output settled: exit, an input wait (or
    /// over ssh the prompt back), an `until` match, or `timeoutMs` (default 5000).
    /// `data` is written exactly, then Enter unless submit is false; "\u0003" is Ctrl-C.
    /// `keys` presses named keys instead: ["C-c"], ["Escape", ":wq", "Enter"], ["Up"] (no
    /// Enter unless submit). `cols`/`rows` resize first; data "" with submit false only
    /// waits.
    /// `delta` holds the lines not delivered before (with echo on, your input first). A
    /// `pending` prompt means the program waits for you; settledBy "timeout" means it is
    /// still busy: read on with pty_tail, or pass `until` and a longer timeoutMs. While a
    /// full-screen program runs, the reply carries `screen` and `cursor`.
    /// In a bash, zsh or fish session, `commands` lists each command that finished, with
    /// its exitCode: no need to append `; echo $?`.
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
        pty_session::timeline::mark("tool");
        self.waiting(&ctx, async |owner, cancel, progress| {
            self.send_reporting(owner, arguments, cancel, progress)
                .await
        })
        .await
    }

    /// Read what a session printed since the last reply, without typing; each line comes
    /// once. `from` re-reads kept lines from that number on instead (lineBegin..lineEnd
    /// are kept), leaving unread lines unread.
    /// Answers at once, unless settle, until, quietMs or timeoutMs is given: then it waits
    /// as pty_send does (e.g. until "BUILD (OK|FAILED)", timeoutMs 600000).
    /// A reply holds at most `lines` (default 200) and `maxBytes` (default 32768): past
    /// that the newest come, truncated is true, skipped counts the rest, and the status
    /// line names the `from` that re-reads them. Works after exit, until pty_close.
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
        self.waiting(&ctx, async |owner, cancel, progress| {
            self.tail_reporting(owner, arguments, cancel, progress)
                .await
        })
        .await
    }

    /// The terminal window as a person sees it now: visible rows (trailing blanks
    /// trimmed), cursor (row, col from 0), size, altScreen. For full-screen programs (vim,
    /// less, htop) and any session at any time, also after exit. Reads no output away.
    #[tool(
        input_schema = wire::input_schema::<ScreenArgs>(),
        output_schema = wire::output_schema::<ScreenResult>(),
        annotations(read_only_hint = true, open_world_hint = false),
        meta = crate::people::app::tool_meta()
    )]
    async fn pty_screen(
        &self,
        ctx: RequestContext<RoleServer>,
        arguments: JsonObject,
    ) -> Result<CallToolResult, ErrorData> {
        let caller = self.caller(&ctx)?;
        Ok(self.screen(caller.owner(), arguments))
    }

    /// Your sessions, to find ids again (e.g. after your context was compacted). Exited
    /// sessions stay readable until pty_close; only running ones count toward the limits.
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

    /// Kill a session's whole process tree, wait until it is gone, and forget the session
    /// (its id then answers UNKNOWN_SESSION). closed is false if it was already closed or
    /// never existed.
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

/// What the server tells a client at `initialize`: its tools, and the one resource of its
/// MCP App ([`crate::people::app`]).
const INSTRUCTIONS: &str = "Interactive processes on pseudo-terminals. pty_open starts one (a shell, \
                    python, gdb, ssh, psql) and returns its sessionId; pty_send types into it and \
                    returns the new output once it settled; pty_tail reads output without typing \
                    (or re-reads with from, or waits with until); pty_list lists your sessions; \
                    pty_screen shows the terminal window (for vim, less, htop, top); \
                    pty_close kills it. Each output line is delivered once; `pending` is the \
                    unfinished last line, usually the prompt the program waits at.";

#[tool_handler(router = PtyTools::router())]
impl ServerHandler for PtyTools {
    fn get_info(&self) -> rmcp::model::ServerConfig {
        rmcp::model::ServerConfig::new(
            rmcp::model::ServerCapabilities::builder()
                .enable_tools()
                .enable_resources()
                .build(),
        )
        .with_server_info(rmcp::model::Implementation::new(
            "pty-session",
            env!("CARGO_PKG_VERSION"),
        ))
        .with_instructions(INSTRUCTIONS.to_string())
    }

    async fn list_resources(
        &self,
        _request: Option<rmcp::model::PaginatedRequestParams>,
        _ctx: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::ListResourcesResult, ErrorData> {
        Ok(rmcp::model::ListResourcesResult::with_all_items(vec![
            crate::people::app::resource(),
        ]))
    }

    async fn read_resource(
        &self,
        request: rmcp::model::ReadResourceRequestParams,
        _ctx: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::ReadResourceResponse, ErrorData> {
        match crate::people::app::read(&request.uri, &self.service.config().colours) {
            Some(result) => Ok(result.into()),
            None => Err(ErrorData::resource_not_found(
                format!(
                    "no resource {:?}; the one resource is {}",
                    request.uri,
                    crate::people::app::URI
                ),
                None,
            )),
        }
    }
}

/// The calls behind the tools, by owner. Public so that tests can drive a call with a
/// token they control (a cancelled request gets no response over MCP).
impl PtyTools {
    /// A handler for the one client of a stdio server.
    pub fn stdio(service: PtyService, owner: Owner) -> PtyTools {
        PtyTools {
            service,
            caller: Caller::Stdio(owner),
            stopping: Stopping::default(),
            default_cwd: None,
        }
    }

    /// A handler for one client of the background server of persistent sessions: its
    /// calls count as `owner`'s activity in `owners`, and its sessions start in `cwd`
    /// (the client's directory) unless a call says otherwise.
    pub fn named(
        service: PtyService,
        owner: Owner,
        owners: Owners,
        cwd: Option<String>,
    ) -> PtyTools {
        PtyTools {
            service,
            caller: Caller::Named(owner, owners),
            stopping: Stopping::default(),
            default_cwd: cwd.map(Into::into),
        }
    }

    /// What ends this handler's calls in flight ([`Stopping::stop`]).
    pub fn stopping(&self) -> &Stopping {
        &self.stopping
    }

    /// A handler for HTTP requests, whose owners come from the request; `stopping` ends
    /// its calls when the server stops.
    pub fn http(service: PtyService, owners: Owners, stopping: Stopping) -> PtyTools {
        PtyTools {
            service,
            caller: Caller::Http(owners),
            stopping,
            default_cwd: None,
        }
    }

    /// The tools, built once: rmcp's default builds them, JSON schemas and all, for every
    /// request.
    fn router() -> &'static ToolRouter<PtyTools> {
        static ROUTER: LazyLock<ToolRouter<PtyTools>> = LazyLock::new(PtyTools::tool_router);
        &ROUTER
    }

    /// A call that waits for a settle, for its caller: `call` gets the caller, a token
    /// that the request's cancel and the server's stop both end, and where progress goes.
    async fn waiting(
        &self,
        ctx: &RequestContext<RoleServer>,
        call: impl AsyncFnOnce(&Owner, &CancellationToken, Option<ProgressFn>) -> CallToolResult,
    ) -> Result<CallToolResult, ErrorData> {
        let caller = self.caller(ctx)?;
        let cancel = ctx.ct.child_token();
        let progress = progress::reporter(ctx);
        let call = call(caller.owner(), &cancel, progress);
        Ok(self.stopping.run(&cancel, call).await)
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
        let mut arguments = arguments;
        if let Some(cwd) = &self.default_cwd
            && !arguments.contains_key("cwd")
        {
            arguments.insert("cwd".to_owned(), cwd.as_ref().into());
        }
        let mut request = match wire::parse::<OpenArgs>(arguments).and_then(OpenArgs::into_request)
        {
            Ok(request) => request,
            Err(err) => return reply::error(&err),
        };
        if let Some(progress) = progress {
            request = request.reporting_to(progress);
        }
        respond(self.service.open(owner, request, cancel).await, |opened| {
            let sandbox = opened.sandbox;
            reply::opened(&OpenResult::new(opened), sandbox)
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
        let sent = self
            .service
            .send(owner, &SessionId::new(&id), request)
            .await;
        let result = respond(sent, |sent| {
            reply::sent(&id, self.sandbox(owner, &id), &SendResult::new(sent))
        });
        pty_session::timeline::mark("result");
        result
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
            |tail| {
                reply::tail(
                    &id,
                    self.sandbox(owner, &id),
                    &TailResult::new(tail, reread),
                )
            },
        )
    }

    /// `pty_screen` for `owner`.
    pub fn screen(&self, owner: &Owner, arguments: JsonObject) -> CallToolResult {
        let (id, drawn) = match wire::parse::<ScreenArgs>(arguments) {
            Ok(args) => (args.id, args.frame.unwrap_or(false)),
            Err(err) => return reply::error(&err),
        };
        let session = SessionId::new(&id);
        let sandbox = self.sandbox(owner, &id);
        if !drawn {
            return respond(self.service.screen(owner, &session), |screen| {
                reply::screen(&id, sandbox, &ScreenResult::new(screen))
            });
        }
        respond(
            self.service.screen_drawn(owner, &session),
            |(screen, frame)| {
                let mut result = ScreenResult::new(screen);
                // The frame is written from the cells' characters: it is always UTF-8.
                result.frame = Some(String::from_utf8_lossy(&frame).into_owned());
                reply::screen(&id, sandbox, &result)
            },
        )
    }

    /// The sandbox of `owner`'s session `id`, for a reply's status line (`none` once the
    /// session is gone).
    fn sandbox(&self, owner: &Owner, id: &str) -> pty_session::Sandbox {
        self.service
            .sandbox(owner, &SessionId::new(id))
            .unwrap_or_default()
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
