// The sandbox proxy, served on an origin other than the host's with the view's CSP as a
// header (mcp_app.mjs): it holds the view in an inner frame of its own origin and relays
// JSON-RPC between the host (its parent) and the view, as the MCP Apps hosts do. The
// host's sandbox-resource-ready notification carries the view's HTML.
"use strict";
const hostOrigin = new URL(document.referrer).origin;
const inner = document.createElement("iframe");
inner.setAttribute("sandbox", "allow-scripts allow-same-origin allow-forms");
inner.style.cssText = "width:100%;height:100%;border:none;display:block";
document.body.append(inner);

window.addEventListener("message", (event) => {
  const message = event.data;
  if (event.source === window.parent) {
    if (event.origin !== hostOrigin) return;
    if (message?.method === "ui/notifications/sandbox-resource-ready") {
      const doc = inner.contentDocument;
      doc.open();
      doc.write(message.params.html);
      doc.close();
    } else {
      inner.contentWindow.postMessage(message, "*");
    }
  } else if (event.source === inner.contentWindow) {
    window.parent.postMessage(message, hostOrigin);
  }
});

window.parent.postMessage(
  { jsonrpc: "2.0", method: "ui/notifications/sandbox-proxy-ready", params: {} },
  hostOrigin,
);
