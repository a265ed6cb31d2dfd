/**
 * Reading a remote's answer within the agent's limit, and the attempt's exchange as the agent saw it: the request it
 * sent (secrets redacted) and the answer, each body bounded (domain/exchange).
 */
import { capturedBody, capturedText, type CapturedRequest, type CapturedResponse } from "../../domain/exchange/exchange";
import { redactedHeaders, redactedUrl } from "../../domain/security/redaction";

/** The answer's headers an operator reads beside its body. */
const KEPT_RESPONSE_HEADERS = ["content-type", "content-length", "retry-after", "location"];

/** A body read up to `limit` bytes: `complete` false when it went on past the limit (and was not read further). */
export interface ReadBody {
  bytes: Uint8Array;
  complete: boolean;
}

/** Reads at most `limit` bytes, however long the body would go on. */
export async function readCapped(response: Response, limit: number): Promise<ReadBody> {
  if (!response.body) return { bytes: new Uint8Array(), complete: true };
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  let complete = true;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    chunks.push(value);
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel();
      complete = false;
      break;
    }
  }
  const bytes = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return { bytes, complete };
}

/** The request as it went out: method, URL, every header (credentials redacted) and the body. */
export function sentRequest(method: string, url: string, headers: Headers, body: string | undefined): CapturedRequest {
  return { method, url: redactedUrl(url), headers: redactedHeaders(headers), ...(body === undefined ? {} : { body: capturedText(body) }) };
}

/** The answer: its status, the headers that explain its body, and the body as far as it was read. */
export function receivedResponse(response: Response, body: ReadBody): CapturedResponse {
  const headers = redactedHeaders(KEPT_RESPONSE_HEADERS.flatMap((name) => {
    const value = response.headers.get(name);
    return value === null ? [] : [[name, value] as [string, string]];
  }));
  // Past the agent's limit the length is unknown: the declared one if any, else at least what was read.
  const declared = Number(response.headers.get("content-length"));
  const total = body.complete ? body.bytes.byteLength : Math.max(body.bytes.byteLength, Number.isFinite(declared) ? declared : 0);
  return { status: response.status, ...(Object.keys(headers).length === 0 ? {} : { headers }), ...(total === 0 ? {} : { body: capturedBody(body.bytes, total) }) };
}
