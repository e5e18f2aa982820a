//! The pty-session facade for Node.js: the library's [`pty_session::PtyService`] as a
//! JavaScript class, in process, through napi-rs.
//!
//! Every call takes the tools' arguments and answers the tools' results, with the field
//! names of the MCP results (`sessionId`, `settledBy`, `initialOutput`, ...): the
//! arguments go through the server's own [`wire`] types (which reject wrong types and
//! unknown keys with `INVALID_ARGUMENT`) and the results are its result types, serialized
//! as MCP serializes them. Only the session id and the owner move out of the argument
//! object into arguments of their own: `send(owner, id, { data })`.
//!
//! Errors are JavaScript `Error`s whose `code` is the library's error code
//! (`UNKNOWN_SESSION`, `FOREIGN_SESSION`, `INVALID_ARGUMENT`, `CANCELLED`, ...) and whose
//! message is the library's. Async calls run on the addon's tokio runtime and answer
//! through a promise: node's event loop never waits on a session. An `AbortSignal`
//! cancels a waiting `open`, `send` or `tail` (module `abort`).
//!
//! The service's spawner is a separate executable (module `spawner`): inside node, the current
//! executable is `node`, which does not link the library.
#![deny(missing_docs)]

mod abort;
mod spawner;

use std::collections::BTreeMap;
use std::future::Future;
use std::path::PathBuf;
use std::time::Duration;

use napi::JsValue;
use napi::bindgen_prelude::{JsObjectValue, PromiseRaw, Unknown};
use napi::{Env, ValueType};
use napi_derive::napi;
use pty_session::{CancellationToken, Config, Error, Owner, SessionId};
use pty_session_server::reply::wire_name;
use pty_session_server::wire::{
    self, CloseArgs, CloseResult, ListResult, ListedSession, OpenArgs, OpenResult, ScreenArgs,
    ScreenResult, SendArgs, SendResult, TailArgs, TailResult,
};
use serde::Deserialize;
use serde_json::{Map, Value};

/// The options of `new PtyService(config)`, as JavaScript names them.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct ServiceOptions {
    spawner: Option<String>,
    tail_lines: Option<usize>,
    tail_bytes: Option<usize>,
    scrollback_lines: Option<usize>,
    scrollback_bytes: Option<usize>,
    max_sessions_per_owner: Option<usize>,
    max_sessions: Option<usize>,
    max_exited_per_owner: Option<usize>,
    close_grace_ms: Option<u64>,
    default_env: Option<BTreeMap<String, String>>,
}

impl ServiceOptions {
    fn into_config(self) -> Result<Config, Error> {
        let mut config = Config::default();
        let spawner = spawner::locate(self.spawner.map(PathBuf::from))
            .map_err(|problem| Error::invalid("spawner", problem))?;
        config.spawner = Some(spawner);
        let sizes = [
            (self.tail_lines, &mut config.tail_lines),
            (self.tail_bytes, &mut config.tail_bytes),
            (self.scrollback_lines, &mut config.scrollback_lines),
            (self.scrollback_bytes, &mut config.scrollback_bytes),
            (
                self.max_sessions_per_owner,
                &mut config.max_sessions_per_owner,
            ),
            (self.max_sessions, &mut config.max_sessions),
            (self.max_exited_per_owner, &mut config.max_exited_per_owner),
        ];
        for (given, field) in sizes {
            if let Some(value) = given {
                *field = value;
            }
        }
        if let Some(ms) = self.close_grace_ms {
            config.close_grace = Duration::from_millis(ms);
        }
        if let Some(env) = self.default_env {
            config.default_env = env;
        }
        Ok(config)
    }
}

/// Long-lived interactive processes on pseudo-terminals: the pty-session facade.
///
/// Every call names an owner (a string, e.g. an agent's id); a session belongs to the
/// owner that opened it, and another owner's calls on it fail with `FOREIGN_SESSION`.
/// Each session has one read cursor: every line is delivered once, across `open`,
/// `send` and `tail`. `open` and `send` return once the output settled (`settledBy`:
/// `"exit"`, `"input"`, `"until"`, `"quiet"`, `"timeout"`, `"none"`).
///
/// ```js
/// const { PtyService } = require('pty-session')
/// const pty = new PtyService()
/// const { sessionId } = await pty.open('agent-1', { command: 'python3 -q' })
/// const { delta, settledBy } = await pty.send('agent-1', sessionId, { data: '6*7' })
/// // delta === '>>> 6*7\n42\n', settledBy === 'input'
/// await pty.close('agent-1', sessionId)
/// ```
#[napi(js_name = "PtyService")]
pub struct JsPtyService {
    service: pty_session::PtyService,
}

#[napi]
impl JsPtyService {
    /// A service. `config` tunes it (all optional): `spawner` (the helper executable that
    /// forks the sessions' processes; default: `PTY_SESSION_SPAWNER_PATH`, else the
    /// `pty-session-spawner` the build put beside the addon), `tailLines`, `tailBytes`,
    /// `scrollbackLines`, `scrollbackBytes`, `maxSessionsPerOwner`, `maxSessions`,
    /// `maxExitedPerOwner`, `closeGraceMs`, `defaultEnv`.
    ///
    /// Throws an `Error` with code `INVALID_ARGUMENT` naming a bad option.
    #[napi(constructor, ts_args_type = "config?: PtyServiceConfig")]
    pub fn new(env: Env, config: Option<Unknown<'_>>) -> napi::Result<Self> {
        let made = optional_object("config", config)
            .and_then(|config| wire::parse::<ServiceOptions>(config.unwrap_or_default()))
            .and_then(ServiceOptions::into_config)
            .and_then(pty_session::PtyService::try_new);
        match made {
            Ok(service) => Ok(JsPtyService { service }),
            Err(err) => Err(js_error(&env, &err)),
        }
    }

    /// Starts a session for `owner` and waits until its first output settled.
    ///
    /// `request` takes `pty_open`'s arguments: `command` (required), `cwd`, `env`, `cols`,
    /// `rows`, `echo`, `sandbox`, `settle`, `until`, `quietMs`, `timeoutMs`, `lines`,
    /// `maxBytes`. Aborting `signal` before the output settled closes the new session
    /// and rejects with `CANCELLED`.
    #[napi(
        ts_args_type = "owner: string, request: OpenRequest, signal?: AbortSignal | null",
        ts_return_type = "Promise<OpenResult>"
    )]
    pub fn open<'env>(
        &self,
        env: &'env Env,
        owner: Unknown<'env>,
        request: Unknown<'env>,
        signal: Option<Unknown<'env>>,
    ) -> napi::Result<PromiseRaw<'env, Value>> {
        let token = CancellationToken::new();
        let parsed = owner_arg(owner).and_then(|owner| {
            let request = object("request", request)?;
            let request = wire::parse::<OpenArgs>(request).and_then(OpenArgs::into_request)?;
            Ok((owner, request))
        });
        let listening = abort::listen(env, signal, &token);
        let service = self.service.clone();
        answer(env, listening, async move {
            let (owner, request) = parsed?;
            not_aborted(&token)?;
            let opened = service.open(&owner, request, &token).await?;
            Ok(to_json(&OpenResult::new(opened)))
        })
    }

    /// Types into `owner`'s session `id` and waits until the output settled.
    ///
    /// `request` takes `pty_send`'s arguments but `id`: `data` or `keys`, `submit`,
    /// `cols`, `rows`, `read`, and the settle options. Aborting `signal` ends the wait
    /// with `CANCELLED` (what was written stays written).
    #[napi(
        ts_args_type = "owner: string, id: string, request: SendRequest, signal?: AbortSignal | null",
        ts_return_type = "Promise<SendResult>"
    )]
    pub fn send<'env>(
        &self,
        env: &'env Env,
        owner: Unknown<'env>,
        id: Unknown<'env>,
        request: Unknown<'env>,
        signal: Option<Unknown<'env>>,
    ) -> napi::Result<PromiseRaw<'env, Value>> {
        let token = CancellationToken::new();
        let parsed = owner_arg(owner).and_then(|owner| {
            let request = with_id(id, object("request", request)?)?;
            let (id, request) =
                wire::parse::<SendArgs>(request).and_then(SendArgs::into_request)?;
            Ok((owner, id, request.cancel_on(token.clone())))
        });
        let listening = abort::listen(env, signal, &token);
        let service = self.service.clone();
        answer(env, listening, async move {
            let (owner, id, request) = parsed?;
            not_aborted(&token)?;
            let sent = service.send(&owner, &SessionId::new(&id), request).await?;
            Ok(to_json(&SendResult::new(sent)))
        })
    }

    /// Reads what `owner`'s session `id` printed since the last reply, without typing.
    ///
    /// `request` is a number of lines (the seed's `tail(owner, id, lines)`) or
    /// `pty_tail`'s arguments but `id`: `from` (re-read from that line number on),
    /// `lines`, `maxBytes`, and the settle options (given any, it waits as `send` does).
    /// Aborting `signal` ends such a wait with `CANCELLED`.
    #[napi(
        ts_args_type = "owner: string, id: string, request?: number | TailRequest | null, signal?: AbortSignal | null",
        ts_return_type = "Promise<TailResult>"
    )]
    pub fn tail<'env>(
        &self,
        env: &'env Env,
        owner: Unknown<'env>,
        id: Unknown<'env>,
        request: Option<Unknown<'env>>,
        signal: Option<Unknown<'env>>,
    ) -> napi::Result<PromiseRaw<'env, Value>> {
        let token = CancellationToken::new();
        let parsed = owner_arg(owner).and_then(|owner| {
            let request = match request.map(json).transpose()? {
                None | Some(Value::Null) => Map::new(),
                Some(Value::Number(lines)) => Map::from_iter([("lines".into(), lines.into())]),
                Some(Value::Object(request)) => request,
                Some(_) => {
                    return Err(Error::invalid(
                        "request",
                        "must be a number of lines or an object of pty_tail's arguments",
                    ));
                }
            };
            let request = with_id(id, request)?;
            let (id, request) =
                wire::parse::<TailArgs>(request).and_then(TailArgs::into_request)?;
            let reread = request.rereads();
            Ok((owner, id, request.cancel_on(token.clone()), reread))
        });
        let listening = abort::listen(env, signal, &token);
        let service = self.service.clone();
        answer(env, listening, async move {
            let (owner, id, request, reread) = parsed?;
            not_aborted(&token)?;
            let tail = service.tail(&owner, &SessionId::new(&id), request).await?;
            Ok(to_json(&TailResult::new(tail, reread)))
        })
    }

    /// The terminal window of `owner`'s session `id` as a person sees it now: `rows`,
    /// `cursor`, `cols`, `altScreen`, status; with `{ frame: true }` also `frame`, the
    /// bytes that draw it. Reads no output away; answers at once.
    #[napi(
        ts_args_type = "owner: string, id: string, request?: ScreenRequest | null",
        ts_return_type = "ScreenResult"
    )]
    pub fn screen(
        &self,
        env: Env,
        owner: Unknown<'_>,
        id: Unknown<'_>,
        request: Option<Unknown<'_>>,
    ) -> napi::Result<Value> {
        let screen = || -> Result<Value, Error> {
            let owner = owner_arg(owner)?;
            let request = with_id(id, optional_object("request", request)?.unwrap_or_default())?;
            let args = wire::parse::<ScreenArgs>(request)?;
            let id = SessionId::new(&args.id);
            if args.frame.unwrap_or(false) {
                let (screen, frame) = self.service.screen_drawn(&owner, &id)?;
                let mut result = ScreenResult::new(screen);
                result.frame = Some(String::from_utf8_lossy(&frame).into_owned());
                Ok(to_json(&result))
            } else {
                Ok(to_json(&ScreenResult::new(
                    self.service.screen(&owner, &id)?,
                )))
            }
        };
        screen().map_err(|err| js_error(&env, &err))
    }

    /// `owner`'s sessions, oldest first, exited ones until closed: `{ sessions }`.
    #[napi(ts_args_type = "owner: string", ts_return_type = "ListResult")]
    pub fn list(&self, env: Env, owner: Unknown<'_>) -> napi::Result<Value> {
        let listed = owner_arg(owner).map(|owner| {
            to_json(&ListResult {
                sessions: self
                    .service
                    .list(&owner)
                    .into_iter()
                    .map(ListedSession::new)
                    .collect(),
            })
        });
        listed.map_err(|err| js_error(&env, &err))
    }

    /// Kills the whole process tree of `owner`'s session `id`, waits until it is gone and
    /// forgets the session: `{ closed: true }`, or `{ closed: false }` if it was already
    /// closed or never existed.
    #[napi(
        ts_args_type = "owner: string, id: string",
        ts_return_type = "Promise<CloseResult>"
    )]
    pub fn close<'env>(
        &self,
        env: &'env Env,
        owner: Unknown<'env>,
        id: Unknown<'env>,
    ) -> napi::Result<PromiseRaw<'env, Value>> {
        let parsed = owner_arg(owner).and_then(|owner| {
            let args = wire::parse::<CloseArgs>(with_id(id, Map::new())?)?;
            Ok((owner, args.id))
        });
        let service = self.service.clone();
        answer(env, Ok(None), async move {
            let (owner, id) = parsed?;
            let closed = service.close(&owner, &SessionId::new(&id)).await?;
            Ok(to_json(&CloseResult { closed }))
        })
    }

    /// Closes all of `owner`'s sessions (the harness's disposal of an agent).
    #[napi(ts_args_type = "owner: string", ts_return_type = "Promise<void>")]
    pub fn dispose<'env>(
        &self,
        env: &'env Env,
        owner: Unknown<'env>,
    ) -> napi::Result<PromiseRaw<'env, Value>> {
        let owner = owner_arg(owner);
        let service = self.service.clone();
        answer(env, Ok(None), async move {
            service.dispose(&owner?).await;
            Ok(Value::Null)
        })
    }

    /// Closes every session of every owner.
    #[napi(ts_return_type = "Promise<void>")]
    pub fn shutdown<'env>(&self, env: &'env Env) -> napi::Result<PromiseRaw<'env, Value>> {
        let service = self.service.clone();
        answer(env, Ok(None), async move {
            service.shutdown().await;
            Ok(Value::Null)
        })
    }
}

/// `CANCELLED` if the call's signal was aborted before it started: the library would
/// race the cancellation against the call's first step (a send could still write).
fn not_aborted(token: &CancellationToken) -> Result<(), Error> {
    if token.is_cancelled() {
        return Err(Error::Cancelled);
    }
    Ok(())
}

/// The promise of a call: `call` runs on the addon's runtime; its error becomes a
/// JavaScript `Error` with a `code` on node's thread, where the call's abort listener is
/// removed too.
fn answer<'env>(
    env: &'env Env,
    listening: Result<Option<abort::Listening>, Error>,
    call: impl Future<Output = Result<Value, Error>> + Send + 'static,
) -> napi::Result<PromiseRaw<'env, Value>> {
    let (listening, refused) = match listening {
        Ok(listening) => (listening, None),
        Err(err) => (None, Some(err)),
    };
    let call = async move {
        Ok(match refused {
            Some(err) => Err(err),
            None => call.await,
        })
    };
    env.spawn_future_with_callback(call, move |env, outcome| {
        if let Some(listening) = listening {
            listening.release(env);
        }
        outcome.map_err(|err| js_error(env, &err))
    })
}

/// A JavaScript `Error` with the error's `code` and message. The message is the
/// library's, with an argument named as JavaScript names it (`timeoutMs`).
fn js_error(env: &Env, err: &Error) -> napi::Error {
    let message = match err {
        Error::InvalidArgument { argument, problem } => {
            format!("{}: {problem}", wire_name(argument))
        }
        _ => err.to_string(),
    };
    let made = || -> napi::Result<napi::Error> {
        let mut object = env.create_error(napi::Error::from_reason(message.clone()))?;
        object.set_named_property("code", err.code())?;
        Ok(napi::Error::from(object.to_unknown()))
    };
    made().unwrap_or_else(|_| napi::Error::from_reason(message))
}

/// A value as JSON; `INVALID_ARGUMENT` naming `argument` if it has no JSON form (a
/// function, a symbol, a bigint, a cycle).
fn json_named(argument: &str, value: Unknown<'_>) -> Result<Value, Error> {
    // SAFETY: the conversion to JSON checks the value's type itself and fails on any it
    // does not take.
    unsafe { value.cast::<Value>() }
        .map_err(|err| Error::invalid(argument, format!("has no JSON form ({})", err.reason)))
}

fn json(value: Unknown<'_>) -> Result<Value, Error> {
    json_named("request", value)
}

/// An argument that must be an object of named arguments.
fn object(argument: &str, value: Unknown<'_>) -> Result<Map<String, Value>, Error> {
    match json_named(argument, value)? {
        Value::Object(map) => Ok(map),
        _ => Err(Error::invalid(argument, "must be an object")),
    }
}

/// An optional object argument: `undefined` and `null` are none.
fn optional_object(
    argument: &str,
    value: Option<Unknown<'_>>,
) -> Result<Option<Map<String, Value>>, Error> {
    let Some(value) = value else {
        return Ok(None);
    };
    if matches!(value.get_type(), Ok(ValueType::Undefined | ValueType::Null)) {
        return Ok(None);
    }
    object(argument, value).map(Some)
}

/// The owner: a non-empty string.
fn owner_arg(value: Unknown<'_>) -> Result<Owner, Error> {
    match json_named("owner", value)? {
        Value::String(owner) if !owner.is_empty() => Ok(Owner::new(owner)),
        Value::String(_) => Err(Error::invalid("owner", "is empty; give the owner's name")),
        _ => Err(Error::invalid("owner", "must be a string")),
    }
}

/// `request` with the session id, a string argument of its own, as `id`.
fn with_id(id: Unknown<'_>, mut request: Map<String, Value>) -> Result<Map<String, Value>, Error> {
    if request.contains_key("id") {
        return Err(Error::invalid(
            "id",
            "give the session id as the argument before the request, not in it",
        ));
    }
    match json_named("id", id)? {
        Value::String(id) => {
            request.insert("id".to_owned(), Value::String(id));
            Ok(request)
        }
        _ => Err(Error::invalid("id", "must be a string (a sessionId)")),
    }
}

fn to_json(result: &impl serde::Serialize) -> Value {
    serde_json::to_value(result).expect("wire results serialize to JSON")
}
