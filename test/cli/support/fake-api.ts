// A fake of the service's routes for commands that only send a request and show its answer: each route answers what
// the test sets (`answer`), every request is recorded as it arrived, and an unset route is a 404 as the service's.
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";

export const FAKE_API_TOKEN = "fake-api-token";

export interface ArrivedRequest {
  method: string;
  /** The path as sent, percent-encoding kept. */
  path: string;
  query: Record<string, string>;
  body: unknown;
  authorization: string | undefined;
}

/** What a route answers: one body, or one per request in turn (the last one repeated). */
export type Answer = { status?: number; body: unknown } | { status?: number; body: unknown }[];

export interface FakeApi {
  url: string;
  requests: ArrivedRequest[];
  /** `answer("GET /v1/targets", { body: {...} })`: what `METHOD path` answers from now on. */
  answer(route: string, answer: Answer): void;
  close(): Promise<void>;
}

export async function startFakeApi(): Promise<FakeApi> {
  const answers = new Map<string, { status?: number; body: unknown }[]>();
  const requests: ArrivedRequest[] = [];
  const server = createServer((req, res) => {
    let text = "";
    req.on("data", (chunk: Buffer) => (text += chunk.toString("utf8")));
    req.on("end", () => {
      const url = new URL(req.url ?? "/", "http://fake");
      const method = req.method ?? "GET";
      requests.push({ method, path: url.pathname, query: Object.fromEntries(url.searchParams), body: text === "" ? undefined : JSON.parse(text), authorization: req.headers.authorization });
      const queued = answers.get(`${method} ${url.pathname}`);
      const next = queued && queued.length > 1 ? queued.shift() : queued?.[0];
      const { status, body } = next ?? { status: 404, body: { error: { code: "not_found", message: `No route for ${method} ${url.pathname}.` } } };
      res.writeHead(status ?? 200, { "Content-Type": "application/json" });
      res.end(JSON.stringify(body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    answer: (route, answer) => answers.set(route, Array.isArray(answer) ? [...answer] : [answer]),
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
