//! Where `ls` and `attach` look for sessions: a `serve` (its address, and the token it
//! must prove it holds before it is sent: [`crate::http::proof`]) and the background
//! server of `mcp --persist`, from the flags and `$PTY_SESSION_URL`.

use std::path::Path;
use std::time::Duration;

use anyhow::{Context as _, bail};
use http_body_util::BodyExt as _;
use hyper_util::rt::TokioIo;

use crate::cli::RemoteArgs;
use crate::http::auth;
use crate::http::proof;
use crate::ownership;
use crate::people::listing::Listing;
use crate::people::shown::shown;

/// Where the server is and the token to show it.
pub struct Remote {
    /// `host:port`.
    pub(crate) authority: String,
    pub(crate) token: String,
}

/// `host:port` of `url` (`http://host[:port]`), and the port.
fn authority_of(url: &str) -> anyhow::Result<(String, u16)> {
    let Some(rest) = url.strip_prefix("http://") else {
        bail!("--url must be http://HOST[:PORT] (attach and ls speak plain HTTP), not {url:?}");
    };
    let authority = rest.split('/').next().unwrap_or_default();
    if authority.is_empty() {
        bail!("--url {url:?} names no host");
    }
    Ok(match authority.rsplit_once(':') {
        Some((_, port)) if !authority.ends_with(']') => {
            let port: u16 = port
                .parse()
                .with_context(|| format!("bad port in --url {url:?}"))?;
            (authority.to_owned(), port)
        }
        _ => (format!("{authority}:80"), 80),
    })
}

/// Whether something listens at `authority`: a `serve` to ask, when none was named.
async fn listens(authority: &str) -> bool {
    matches!(
        tokio::time::timeout(
            Duration::from_secs(5),
            tokio::net::TcpStream::connect(authority)
        )
        .await,
        Ok(Ok(_))
    )
}

impl Remote {
    /// The server at `url` (`http://host[:port]`), with the token of `token_file`, else of
    /// `PTY_SESSION_TOKEN`, else of the file where `serve` writes a generated token.
    pub fn new(url: &str, token_file: Option<&Path>) -> anyhow::Result<Remote> {
        let (authority, port) = authority_of(url)?;
        let token = match token_file {
            Some(path) => read_token(path)?,
            None => match std::env::var(auth::TOKEN_ENV) {
                Ok(token) if !token.trim().is_empty() => token.trim().to_owned(),
                _ => {
                    let path = auth::default_token_path(port).with_context(|| {
                        format!(
                            "no token: give --token-file FILE or set {}",
                            auth::TOKEN_ENV
                        )
                    })?;
                    read_token(&path).with_context(|| {
                        format!(
                            "no token: give --token-file FILE or set {}; the token a `serve` \
                             on port {port} generated would be in {}",
                            auth::TOKEN_ENV,
                            path.display()
                        )
                    })?
                }
            },
        };
        Ok(Remote { authority, token })
    }

    pub(crate) fn bearer(&self) -> String {
        format!("Bearer {}", self.token)
    }
}

/// The token in `path`, a file that must pass [`ownership::check_secret_file`]: a token
/// another user planted would lead this client to their server.
fn read_token(path: &Path) -> anyhow::Result<String> {
    ownership::check_secret_file(path)
        .with_context(|| format!("refusing the token file {}", path.display()))?;
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read the token file {}", path.display()))?;
    let token = text.trim();
    if token.is_empty() {
        bail!("the token file {} is empty", path.display());
    }
    Ok(token.to_owned())
}

/// The token's sessions on the server, asked once it proved that it holds the token
/// ([`proof::identified`]).
pub async fn sessions(remote: &Remote) -> anyhow::Result<Vec<Listing>> {
    let stream = proof::identified(&remote.authority, &remote.token).await?;
    let (mut sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .context("HTTP handshake failed")?;
    tokio::spawn(connection);
    let request = http::Request::get("/api/sessions")
        .header(http::header::HOST, &remote.authority)
        .header(http::header::AUTHORIZATION, remote.bearer())
        .body(http_body_util::Empty::<bytes::Bytes>::new())
        .context("cannot build the request")?;
    let response = sender
        .send_request(request)
        .await
        .context("no answer from the server")?;
    let status = response.status();
    let body = response
        .into_body()
        .collect()
        .await
        .context("cannot read the answer")?
        .to_bytes();
    if !status.is_success() {
        bail!(
            "the server answered {}",
            shown(String::from_utf8_lossy(&body).trim())
        );
    }
    serde_json::from_slice(&body).context("the server's list is not the expected JSON")
}

/// What `ls` and `attach` call the background server in messages.
pub(crate) const PERSIST_NAME: &str = "the background server of `pty-session mcp --persist`";

/// Where `ls` and `attach` look, from their flags.
pub(crate) enum Places<'a> {
    /// `--url` or `--token-file`: that `serve` alone.
    Serve(&'a RemoteArgs),
    /// `--persist`: the background server alone.
    Persist,
    /// Neither: the background server, and the `serve` at the default URL if one listens.
    Both,
}

impl<'a> Places<'a> {
    pub(crate) fn of(remote: &'a RemoteArgs, persist: bool) -> Places<'a> {
        if persist {
            Places::Persist
        } else if remote.url.is_some() || remote.token_file.is_some() {
            Places::Serve(remote)
        } else {
            Places::Both
        }
    }
}

pub(crate) fn remote_of(args: &RemoteArgs) -> anyhow::Result<Remote> {
    match &args.url {
        Some(url) => Remote::new(url, args.token_file.as_deref()),
        None => Remote::new(&default_url(), args.token_file.as_deref()),
    }
}

/// The `host:port` of the default `serve` ([`default_url`]), and whether anything listens
/// there.
pub(crate) async fn default_serve() -> anyhow::Result<(String, bool)> {
    let (authority, _) = authority_of(&default_url())?;
    let listening = listens(&authority).await;
    Ok((authority, listening))
}

/// The `serve` that `ls` and `attach` ask without `--url`: `$PTY_SESSION_URL`, else
/// `http://` and [`DEFAULT_LISTEN`](crate::cli::DEFAULT_LISTEN).
pub fn default_url() -> String {
    std::env::var(URL_ENV)
        .ok()
        .filter(|url| !url.trim().is_empty())
        .unwrap_or_else(|| format!("http://{}", crate::cli::DEFAULT_LISTEN))
}

/// The environment variable that names the `serve` of `ls` and `attach` without `--url`
/// (they still ask the background server too).
pub const URL_ENV: &str = "PTY_SESSION_URL";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_give_their_authority_and_port() {
        assert_eq!(
            authority_of("http://127.0.0.1:7717").unwrap(),
            ("127.0.0.1:7717".to_owned(), 7717)
        );
        assert_eq!(
            authority_of("http://localhost/api").unwrap(),
            ("localhost:80".to_owned(), 80)
        );
        assert_eq!(
            authority_of("http://[::1]").unwrap(),
            ("[::1]:80".to_owned(), 80)
        );
        assert_eq!(
            authority_of("http://[::1]:9").unwrap(),
            ("[::1]:9".to_owned(), 9)
        );
        for bad in [
            "https://127.0.0.1",
            "127.0.0.1:7717",
            "http://",
            "http://h:port",
        ] {
            assert!(authority_of(bad).is_err(), "{bad}");
        }
    }

    #[tokio::test]
    async fn nothing_listens_on_a_port_just_let_go() {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        assert!(!listens(&format!("127.0.0.1:{port}")).await);
        let held = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = held.local_addr().unwrap();
        assert!(listens(&addr.to_string()).await);
    }
}
