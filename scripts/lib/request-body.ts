// A fake remote's reading of a request body: bounded, so a runaway caller cannot fill the tool's memory, and
// parsed as JSON when it is JSON.
import type { IncomingMessage } from "node:http";

/** The body as UTF-8 text; rejects (and destroys the request) once it passes maxBytes. */
export function readBody(req: IncomingMessage, maxBytes: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) {
        reject(new Error("body too large"));
        req.destroy();
        return;
      }
      chunks.push(chunk);
    });
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });
}

/** The parsed body, undefined when it is empty or not JSON. */
export function parseJson(text: string): unknown {
  if (text.trim() === "") return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
