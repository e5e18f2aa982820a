// What the browser tests share: a WebSocket client for the DevTools protocol, small
// enough to need nothing but Node (18 or later), with no flag and no package.
import { request } from "node:http";
import { randomBytes } from "node:crypto";

// The handshake, masked frames out, unmasked frames in (fragmented or not).
export function connect(url) {
  return new Promise((resolve, reject) => {
    const req = request(url.replace(/^ws:/, "http:"), {
      headers: {
        Connection: "Upgrade",
        Upgrade: "websocket",
        "Sec-WebSocket-Version": "13",
        "Sec-WebSocket-Key": randomBytes(16).toString("base64"),
      },
    });
    req.on("error", reject);
    req.on("response", (res) => reject(new Error(`no upgrade: ${res.statusCode}`)));
    req.on("upgrade", (_res, socket, head) => {
      socket.setNoDelay(true);
      const client = { onmessage: null };
      let buffer = head;
      let pieces = [];
      socket.on("data", (data) => {
        buffer = Buffer.concat([buffer, data]);
        for (;;) {
          if (buffer.length < 2) return;
          const fin = buffer[0] & 0x80;
          const opcode = buffer[0] & 0x0f;
          let length = buffer[1] & 0x7f;
          let at = 2;
          if (length === 126) {
            if (buffer.length < 4) return;
            length = buffer.readUInt16BE(2);
            at = 4;
          } else if (length === 127) {
            if (buffer.length < 10) return;
            length = Number(buffer.readBigUInt64BE(2));
            at = 10;
          }
          if (buffer.length < at + length) return;
          const payload = buffer.subarray(at, at + length);
          buffer = buffer.subarray(at + length);
          if (opcode === 8) return socket.end();
          if (opcode === 1 || opcode === 0) {
            pieces.push(payload);
            if (fin) {
              const text = Buffer.concat(pieces).toString("utf8");
              pieces = [];
              client.onmessage?.({ data: text });
            }
          }
        }
      });
      client.send = (text) => {
        const payload = Buffer.from(text, "utf8");
        const mask = randomBytes(4);
        let header;
        if (payload.length < 126) {
          header = Buffer.from([0x81, 0x80 | payload.length]);
        } else if (payload.length < 65536) {
          header = Buffer.alloc(4);
          header[0] = 0x81;
          header[1] = 0x80 | 126;
          header.writeUInt16BE(payload.length, 2);
        } else {
          header = Buffer.alloc(10);
          header[0] = 0x81;
          header[1] = 0x80 | 127;
          header.writeBigUInt64BE(BigInt(payload.length), 2);
        }
        for (let i = 0; i < payload.length; i++) payload[i] ^= mask[i % 4];
        socket.write(Buffer.concat([header, mask, payload]));
      };
      client.close = () => socket.end();
      resolve(client);
    });
    req.end();
  });
}


// A new blank page of the browser at `url`, attached: `page(method, params)` calls the
// DevTools protocol on it, `send(method, params)` on the browser; `onEvent(message)` is
// shown every event (a message with a `method`). An answer with an error rejects.
export async function openPage(url, onEvent = () => {}) {
  const cdp = await connect(url);
  let nextId = 1;
  const waiting = new Map();
  cdp.onmessage = (event) => {
    const message = JSON.parse(event.data);
    if (message.method) onEvent(message);
    const entry = waiting.get(message.id);
    if (!entry) return;
    waiting.delete(message.id);
    if (message.error) entry.reject(new Error(JSON.stringify(message.error)));
    else entry.resolve(message.result);
  };
  const send = (method, params = {}, sessionId) =>
    new Promise((resolve, reject) => {
      const id = nextId++;
      waiting.set(id, { resolve, reject });
      cdp.send(JSON.stringify({ id, method, params, sessionId }));
    });
  const { targetId } = await send("Target.createTarget", { url: "about:blank" });
  const { sessionId } = await send("Target.attachToTarget", { targetId, flatten: true });
  const page = (method, params) => send(method, params, sessionId);
  const close = async () => {
    await send("Target.closeTarget", { targetId });
    cdp.close();
  };
  return { page, send, close };
}

// `evaluate(expression)`: its value in the page (awaited; a thrown exception rejects).
// `waitFor(what, expression)`: polls it until truthy, failing after `deadlineMs` with what
// the page shows.
export function pageScripts(page, deadlineMs) {
  async function evaluate(expression) {
    const { result, exceptionDetails } = await page("Runtime.evaluate", {
      expression, returnByValue: true, awaitPromise: true,
    });
    if (exceptionDetails) throw new Error(`${expression}: ${JSON.stringify(exceptionDetails)}`);
    return result.value;
  }
  async function waitFor(what, expression) {
    const start = Date.now();
    for (;;) {
      const value = await evaluate(expression);
      if (value) return value;
      if (Date.now() - start > deadlineMs) {
        const screen = await evaluate("document.body.innerText");
        throw new Error(`timed out waiting for ${what}; the page shows:\n${screen}`);
      }
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  return { evaluate, waitFor };
}

// The web view at `pageUrl` in a new page, logged in with `token`; the page's exceptions
// are shown on stderr. `setUp(page)` runs before the page loads (a window size, focus
// emulation). Returns the page (`openPage`) and its scripts (`pageScripts`).
export async function loggedInPage({ cdpUrl, pageUrl, token, deadlineMs, setUp = async () => {} }) {
  const { page, close } = await openPage(cdpUrl, (message) => {
    if (message.method === "Runtime.exceptionThrown") {
      console.error("page exception:", JSON.stringify(message.params.exceptionDetails));
    }
  });
  await page("Page.enable");
  await page("Runtime.enable");
  await setUp(page);
  const { evaluate, waitFor } = pageScripts(page, deadlineMs);
  await page("Page.navigate", { url: pageUrl });
  await waitFor("the page's script", "document.readyState === 'complete' && document.body.dataset.ready === 'yes'");
  await evaluate(`(() => {
  document.getElementById('token').value = ${JSON.stringify(token)};
  document.querySelector('#login-form button').click();
})()`);
  return { page, close, evaluate, waitFor };
}
