//! The proof a `pty-session serve` gives that it holds a client's token, before the client
//! sends it: `ls` and `attach` never hand a token to whatever happens to listen on the
//! port (a squatter bound there while the person's server is down would print it, and a
//! generated token survives restarts).
//!
//! On the connection that will carry the token, the client asks `GET` [`PATH`]`?nonce=`
//! 32 fresh random bytes (hex), without a token. The server answers, for each of its
//! tokens, HMAC-SHA256 keyed by the token over a fixed context, the nonce and the address
//! the client reached it at (the connection's local address, the server's own view). The
//! client computes the same over its token, its nonce and the address it connected to,
//! and compares in constant time. The address makes a relay useless: a squatter on one
//! port that forwards the challenge to the real server on another gets a proof over the
//! other address, which the client refuses. A tunnel (`ssh -L`) is such a relay too, so
//! through one the proof fails; the docs say so.
//!
//! The endpoint is extra: MCP clients do not use it, and the token still authenticates
//! every other request. What it gives anyone who asks is a MAC of a random challenge under
//! each token, which says nothing of a long random token (a generated one has 256 bits);
//! a short hand-made token becomes guessable offline, which docs/configuration.md warns of.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context as _, anyhow, bail};
use axum::extract::{Request, State};
use axum::response::{IntoResponse, Response};
use hmac::{Hmac, KeyInit as _, Mac as _};
use http::StatusCode;
use http_body_util::BodyExt as _;
use hyper_util::rt::TokioIo;
use serde::{Deserialize, Serialize};
use sha2::Sha256;
use tokio::net::TcpStream;

use crate::http::auth::Tokens;
use crate::http::connections::Connection;

/// The route of the challenge.
pub const PATH: &str = "/api/identify";

/// What every proof is computed over first, so that a proof means nothing anywhere else.
const CONTEXT: &[u8] = b"pty-session serve holds this token; v1";

/// The nonce's length in bytes.
const NONCE_BYTES: usize = 32;

/// The longest answer a client reads.
const MAX_ANSWER_BYTES: usize = 64 * 1024;

/// How long a client waits for the proof.
const TIMEOUT: Duration = Duration::from_secs(10);

/// The server's answer: one proof per token, hex.
#[derive(Debug, Serialize, Deserialize)]
pub struct Proofs {
    /// HMAC-SHA256 under each token, in hex.
    pub proofs: Vec<String>,
}

/// The MAC under `token` over the context, `nonce` and `addr`.
fn mac(token: &[u8], nonce: &[u8], addr: SocketAddr) -> Hmac<Sha256> {
    let mut mac = Hmac::<Sha256>::new_from_slice(token).expect("HMAC takes keys of any length");
    mac.update(CONTEXT);
    mac.update(&[0]);
    mac.update(nonce);
    mac.update(&[0]);
    mac.update(canonical(addr).to_string().as_bytes());
    mac
}

/// `addr` with an IPv4 address mapped into IPv6 (a dual-stack listener's view) written
/// as IPv4, so that both ends name the same address the same way.
fn canonical(addr: SocketAddr) -> SocketAddr {
    SocketAddr::new(addr.ip().to_canonical(), addr.port())
}

/// The proofs of `tokens` for `nonce` at `addr`.
pub fn prove<'a>(tokens: impl Iterator<Item = &'a [u8]>, nonce: &[u8], addr: SocketAddr) -> Proofs {
    Proofs {
        proofs: tokens
            .map(|token| hex(&mac(token, nonce, addr).finalize().into_bytes()))
            .collect(),
    }
}

/// Whether one of `proofs` is `token`'s for `nonce` at `addr`; every proof is compared,
/// each in constant time.
pub fn verify(token: &[u8], nonce: &[u8], addr: SocketAddr, proofs: &Proofs) -> bool {
    let mut found = false;
    for proof in &proofs.proofs {
        let Some(bytes) = unhex(proof) else { continue };
        found |= mac(token, nonce, addr).verify_slice(&bytes).is_ok();
    }
    found
}

/// The route of [`PATH`], answered with the proofs of `tokens`.
pub fn router(tokens: Arc<Tokens>) -> axum::Router {
    axum::Router::new()
        .route(PATH, axum::routing::get(answer))
        .with_state(tokens)
}

/// The handler of [`PATH`]: needs no token, answers the proofs of every token of `tokens`
/// for the query's `nonce` (64 hex digits) at the address the client reached.
async fn answer(State(tokens): State<Arc<Tokens>>, request: Request) -> Response {
    let nonce = request
        .uri()
        .query()
        .unwrap_or_default()
        .split('&')
        .find_map(|pair| pair.strip_prefix("nonce="))
        .and_then(unhex)
        .filter(|nonce| nonce.len() == NONCE_BYTES);
    let Some(nonce) = nonce else {
        return (
            StatusCode::BAD_REQUEST,
            format!("400 Bad Request: give nonce= {NONCE_BYTES} random bytes in hex\n"),
        )
            .into_response();
    };
    let Some(local) = request
        .extensions()
        .get::<Connection>()
        .and_then(Connection::local)
    else {
        return (
            StatusCode::SERVICE_UNAVAILABLE,
            "503 Service Unavailable: the connection's address is unknown\n",
        )
            .into_response();
    };
    axum::Json(prove(tokens.secrets(), &nonce, local)).into_response()
}

/// Connects to `authority` and has the server there prove that it holds `token`, on the
/// connection it returns, ready for the request that carries the token. Fails, without
/// having sent the token, when what listens there cannot prove it.
pub async fn identified(authority: &str, token: &str) -> anyhow::Result<TcpStream> {
    let stream = TcpStream::connect(authority)
        .await
        .with_context(|| format!("cannot connect to {authority}"))?;
    let addr = stream
        .peer_addr()
        .with_context(|| format!("no address of {authority}"))?;
    let challenge = async {
        let mut nonce = [0u8; NONCE_BYTES];
        getrandom::fill(&mut nonce).map_err(|err| anyhow!("no OS randomness: {err}"))?;
        let (stream, proofs) = ask(stream, authority, &nonce).await?;
        if !verify(token.as_bytes(), &nonce, addr, &proofs) {
            bail!(
                "it answered {} proofs, none for your token and this address (a serve with \
                 other tokens, or a relay to one)",
                proofs.proofs.len()
            );
        }
        Ok(stream)
    };
    let outcome = match tokio::time::timeout(TIMEOUT, challenge).await {
        Ok(outcome) => outcome,
        Err(_) => Err(anyhow!("no proof within {TIMEOUT:?}")),
    };
    outcome.map_err(|why| {
        anyhow!(
            "something else listens on {authority} (not a pty-session serve holding your \
             token): {why:#}; your token was not sent"
        )
    })
}

/// How long [`is_serve`] waits for an answer.
const PROBE_TIMEOUT: Duration = Duration::from_secs(3);

/// Whether what listens at `authority` is a `pty-session serve`: it answers the challenge,
/// asked without a token, with proofs. Says nothing of whose tokens it holds
/// ([`identified`] does); tells a `serve` from another program on its port.
pub async fn is_serve(authority: &str) -> bool {
    let probe = async {
        let stream = TcpStream::connect(authority).await.ok()?;
        let mut nonce = [0u8; NONCE_BYTES];
        getrandom::fill(&mut nonce).ok()?;
        ask(stream, authority, &nonce).await.ok()
    };
    matches!(
        tokio::time::timeout(PROBE_TIMEOUT, probe).await,
        Ok(Some(_))
    )
}

/// The challenge for `nonce` asked on `stream`; the stream back, with nothing after the
/// answer in flight.
async fn ask(
    stream: TcpStream,
    authority: &str,
    nonce: &[u8],
) -> anyhow::Result<(TcpStream, Proofs)> {
    let (mut sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .context("no HTTP")?;
    // Kept open after the answer: the stream goes on to carry the token's request.
    let connection = tokio::spawn(connection.without_shutdown());
    let request = http::Request::get(format!("{PATH}?nonce={}", hex(nonce)))
        .header(http::header::HOST, authority)
        .body(http_body_util::Empty::<bytes::Bytes>::new())
        .context("cannot build the request")?;
    let response = sender
        .send_request(request)
        .await
        .context("no answer to the challenge")?;
    let status = response.status();
    let body = http_body_util::Limited::new(response.into_body(), MAX_ANSWER_BYTES)
        .collect()
        .await
        .map_err(|err| anyhow!("cannot read its answer: {err}"))?
        .to_bytes();
    drop(sender);
    let parts = connection
        .await
        .context("the connection's task failed")?
        .context("the connection failed")?;
    if !status.is_success() {
        bail!(
            "it answered the challenge with {status} {:?}",
            String::from_utf8_lossy(&body[..body.len().min(200)])
        );
    }
    if !parts.read_buf.is_empty() {
        bail!("it sent more than its answer");
    }
    let proofs: Proofs = serde_json::from_slice(&body).context("its answer is not proofs")?;
    Ok((parts.io.into_inner(), proofs))
}

/// `bytes` as lowercase hex.
fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The bytes of hex `text` (either case); `None` if it is not hex.
fn unhex(text: &str) -> Option<Vec<u8>> {
    if !text.len().is_multiple_of(2) {
        return None;
    }
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(text.get(i..i + 2)?, 16).ok())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(text: &str) -> SocketAddr {
        text.parse().unwrap()
    }

    #[test]
    fn a_proof_holds_for_its_token_nonce_and_address_only() {
        let nonce = [7u8; NONCE_BYTES];
        let tokens: [&[u8]; 2] = [b"alice-token-0123456789", b"bob-token-9876543210"];
        let proofs = prove(tokens.into_iter(), &nonce, at("127.0.0.1:7717"));
        assert_eq!(proofs.proofs.len(), 2);
        for token in tokens {
            assert!(verify(token, &nonce, at("127.0.0.1:7717"), &proofs));
        }
        assert!(!verify(
            b"carol-token-000000000",
            &nonce,
            at("127.0.0.1:7717"),
            &proofs
        ));
        // Another nonce, or the proof a relay got from the real server on another port.
        assert!(!verify(
            tokens[0],
            &[8u8; NONCE_BYTES],
            at("127.0.0.1:7717"),
            &proofs
        ));
        assert!(!verify(tokens[0], &nonce, at("127.0.0.1:7718"), &proofs));
        assert!(!verify(tokens[0], &nonce, at("127.0.0.2:7717"), &proofs));
        // A dual-stack listener sees an IPv4 client at a mapped address: the same one.
        assert!(verify(
            tokens[0],
            &nonce,
            at("[::ffff:127.0.0.1]:7717"),
            &proofs
        ));
        // Junk is no proof.
        let junk = Proofs {
            proofs: vec!["zz".into(), String::new(), "00".repeat(32), "abc".into()],
        };
        assert!(!verify(tokens[0], &nonce, at("127.0.0.1:7717"), &junk));
    }

    #[test]
    fn hex_goes_both_ways() {
        assert_eq!(hex(&[0, 0xab, 0xff]), "00abff");
        assert_eq!(unhex("00ABff"), Some(vec![0, 0xab, 0xff]));
        assert_eq!(unhex("0"), None);
        assert_eq!(unhex("0g"), None);
        assert_eq!(unhex("é1"), None);
    }
}
