//! Resumed event streams (`GET /mcp` with `Last-Event-ID`) answered without a warning.
//!
//! A client whose event stream ended reconnects with the id of the last event it read
//! (Gemini CLI does so in ordinary use, after each response stream). When the server
//! still holds that stream, rmcp replays what the client missed. When it does not (the
//! request was answered and its stream dropped, or the id is not one of ours), rmcp
//! answers an empty stream, which ends the client's retries, but logs a WARN for it.
//! Nothing is wrong then: [`Resumable`] answers the same empty stream itself and logs
//! it at debug.

use futures_util::StreamExt as _;
use futures_util::stream::{self, Stream};
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::streamable_http_server::session::local::{
    LocalSessionManager, LocalSessionManagerError,
};
use rmcp::transport::streamable_http_server::session::{
    EventStore, RestoreOutcome, ServerSseMessage, SessionId, SessionManager,
};

/// rmcp's in-memory sessions, with resumption that ends quietly when the stream is gone.
pub struct Resumable(pub LocalSessionManager);

impl SessionManager for Resumable {
    type Error = LocalSessionManagerError;
    type Transport = <LocalSessionManager as SessionManager>::Transport;

    fn create_session(
        &self,
    ) -> impl Future<Output = Result<(SessionId, Self::Transport), Self::Error>> + Send {
        self.0.create_session()
    }

    fn initialize_session(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> impl Future<Output = Result<ServerJsonRpcMessage, Self::Error>> + Send {
        self.0.initialize_session(id, message)
    }

    fn has_session(
        &self,
        id: &SessionId,
    ) -> impl Future<Output = Result<bool, Self::Error>> + Send {
        self.0.has_session(id)
    }

    fn close_session(
        &self,
        id: &SessionId,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send {
        self.0.close_session(id)
    }

    fn create_stream(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> impl Future<
        Output = Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error>,
    > + Send {
        self.0.create_stream(id, message)
    }

    fn accept_message(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send {
        self.0.accept_message(id, message)
    }

    fn create_standalone_stream(
        &self,
        id: &SessionId,
    ) -> impl Future<
        Output = Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error>,
    > + Send {
        self.0.create_standalone_stream(id)
    }

    async fn resume(
        &self,
        id: &SessionId,
        last_event_id: String,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        match self.0.resume(id, last_event_id.clone()).await {
            Ok(replay) => Ok(replay.left_stream()),
            Err(err) => {
                tracing::debug!(
                    mcp_session = %id,
                    last_event_id,
                    %err,
                    "a resumed event stream the server no longer holds; answering an empty stream"
                );
                Ok(stream::empty().right_stream())
            }
        }
    }

    fn restore_session(
        &self,
        id: SessionId,
    ) -> impl Future<Output = Result<RestoreOutcome<Self::Transport>, Self::Error>> + Send {
        self.0.restore_session(id)
    }

    fn event_store(&self) -> Option<std::sync::Arc<dyn EventStore>> {
        self.0.event_store()
    }
}
