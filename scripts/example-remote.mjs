// Placeholder example remote: answers every POST with {"ok":true} on http://127.0.0.1:8788.
import { createServer } from "node:http";

const host = "127.0.0.1";
const port = 8788;

const server = createServer((req, res) => {
  if (req.method !== "POST") {
    res.writeHead(405, { "content-type": "application/json", allow: "POST" });
    res.end(JSON.stringify({ ok: false, error: "method_not_allowed" }));
    return;
  }
  req.resume();
  req.on("end", () => {
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify({ ok: true }));
  });
});

server.listen(port, host, () => {
  console.log(`example remote listening on http://${host}:${port}`);
});
