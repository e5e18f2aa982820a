//! People watching: `pty-session serve` streams a session to a web viewer and to an
//! attached terminal (both are WebSocket clients of `/api/sessions/{id}/stream`, as the
//! page and `pty-session attach` are), while the program floods; and a viewer's keystroke
//! to `cat` and back. Beside the raw read loop of the same program, in the same run.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail, ensure};
use futures_util::{SinkExt as _, StreamExt as _};
use serde_json::{Value, json};
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::client::IntoClientRequest as _;

use crate::report::Report;
use crate::stats::{Samples, median};
use crate::workloads::{rate_str, rates_str, ratio_str};
use crate::{Plan, mcp, raw};

type Socket =
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

/// A viewer of session `id`, past the hello and the first frame (the recent lines).
async fn viewer(addr: SocketAddr, token: &str, id: &str) -> Result<Socket> {
    let mut request = format!("ws://{addr}/api/sessions/{id}/stream").into_client_request()?;
    request
        .headers_mut()
        .insert("Authorization", format!("Bearer {token}").parse()?);
    let (mut socket, _) = tokio_tungstenite::connect_async(request)
        .await
        .context("connect a viewer")?;
    let hello = socket.next().await.context("no hello")??;
    ensure!(
        matches!(&hello, Message::Text(text) if text.contains("hello")),
        "{hello:?}"
    );
    Ok(socket)
}

/// Reads a viewer to the end of its session: bytes seen and chunks it was told it skipped.
async fn watch_to_end(mut socket: Socket) -> Result<(u64, u64)> {
    let (mut bytes, mut skipped) = (0u64, 0u64);
    while let Some(message) = socket.next().await {
        match message? {
            Message::Binary(data) => bytes += data.len() as u64,
            Message::Text(text) => {
                let value: Value = serde_json::from_str(text.as_str())?;
                match value["type"].as_str() {
                    Some("ended") => return Ok((bytes, skipped)),
                    Some("skipped") => skipped += value["chunks"].as_u64().unwrap_or(0),
                    _ => {}
                }
            }
            Message::Close(_) => break,
            _ => {}
        }
    }
    bail!("the stream closed before the session ended")
}

fn vm_hwm_kib(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|status| {
            let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
            line.split_whitespace().nth(1)?.parse().ok()
        })
        .unwrap_or(0)
}

pub async fn viewers(plan: &Plan, report: &mut Report) -> Result<()> {
    let server = tokio::task::block_in_place(|| mcp::Server::start_http(&plan.server))?;
    let (addr, token) = server.http_addr().context("serve's address")?;
    let pid = server.pid().context("serve's pid")?;

    // A keystroke from a viewer to `cat`, and its echo back on the stream.
    let cat = tokio::task::block_in_place(|| server.open("cat"))?;
    let mut socket = viewer(addr, token, &cat).await?;
    let mut keys = Samples::default();
    let rounds = if plan.quick { 10 } else { 200 };
    for _ in 0..rounds {
        let start = Instant::now();
        socket.send(Message::Binary(b"x".to_vec().into())).await?;
        loop {
            let message = tokio::time::timeout(Duration::from_secs(10), socket.next())
                .await
                .context("no echo within 10 s")?
                .context("the stream closed")??;
            if let Message::Binary(data) = message
                && data.contains(&b'x')
            {
                break;
            }
        }
        keys.push(start.elapsed());
    }
    drop(socket);
    report.row(
        "people: a viewer's keystroke",
        &format!(
            "MCP HTTP `serve`, WebSocket viewer → `cat` → its echo on the stream ({rounds} keys)"
        ),
        keys.summary(),
        String::new(),
        "p50 ≤ 5 ms",
        (!plan.quick).then_some(keys.p50() <= 5.0),
    );

    // A flood watched by a web viewer and an attached terminal.
    let n = plan.seq_n.to_string();
    let total = crate::workloads::seq_bytes(plan.seq_n);
    let (mut ratios, mut rates, mut skips) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..plan.bulk_reps {
        let limit = tokio::task::block_in_place(|| raw::read_loop(&["seq", "1", &n]))?;
        let limit_rate = limit.bytes as f64 / limit.elapsed.as_secs_f64();
        let opened = tokio::task::block_in_place(|| {
            server.call(
                "pty_open",
                json!({"command": format!("read go; exec seq 1 {n}"), "settle": "none"}),
            )
        })?;
        let id = opened["sessionId"]
            .as_str()
            .context("sessionId")?
            .to_owned();
        let mut web = viewer(addr, token, &id).await?;
        let attached = viewer(addr, token, &id).await?;
        let start = Instant::now();
        web.send(Message::Binary(b"\r".to_vec().into())).await?;
        let (web, attached) = tokio::join!(watch_to_end(web), watch_to_end(attached));
        let elapsed = start.elapsed().as_secs_f64();
        let ((web_bytes, web_skips), (attached_bytes, attached_skips)) = (web?, attached?);
        ensure!(
            web_bytes + attached_bytes > 0,
            "the viewers saw nothing of the flood"
        );
        let rate = total as f64 / elapsed;
        rates.push(rate);
        ratios.push(rate / limit_rate);
        skips.push(web_skips + attached_skips);
        tokio::task::block_in_place(|| server.call("pty_close", json!({"id": id})))?;
    }
    let peak = vm_hwm_kib(pid);
    tokio::task::block_in_place(|| server.stop())?;
    let ratio = median(&ratios);
    report.row(
        &format!("people: `seq 1 {n}` watched by a web viewer and an attached terminal"),
        &format!("MCP HTTP `serve`, two WebSocket viewers, {} run(s)", ratios.len()),
        format!(
            "{} MB/s (runs: {}); chunks skipped for slow viewers per run: {:?}; peak server RSS {:.1} MiB",
            rate_str(median(&rates) / 1e6),
            rates_str(&rates.iter().map(|r| r / 1e6).collect::<Vec<_>>()),
            skips,
            peak as f64 / 1024.0
        ),
        ratio_str(ratio, &ratios),
        "≥ 0.7× raw; RSS ≤ 64 MiB",
        (!plan.quick).then_some(ratio >= 0.7 && peak <= 64 * 1024),
    );
    Ok(())
}
