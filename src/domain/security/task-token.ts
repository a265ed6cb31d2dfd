/**
 * Task tokens: a capability for exactly one attempt of one step, handed to the remote service so it can
 * heartbeat and report without an API token. `payload.signature`, both base64url; the signature is
 * HMAC-SHA-256 over the payload with a secret only the deployment knows.
 */
import { fromBase64Url, toBase64Url } from "./base64url";

export interface TaskTokenClaims {
  tenant: string;
  workflowId: string;
  stepId: string;
  attempt: number;
  /**
   * When the token stops working: its attempt's start-to-close deadline plus TASK_TOKEN_GRACE_MS, so a token
   * that leaks from a remote's logs opens nothing for long. Absent only on the queue message's own token, which
   * never leaves Shepherd (the remote gets the one minted when the attempt is claimed), and on tokens older than
   * this field.
   */
  expiresAt?: number;
  /** A worker task's pool (a claimed task's token only): its report tells the pool the task no longer runs. */
  pool?: string;
}

/** After its attempt's deadline a token still works this long, so a late report is refused as stale (409), not as unknown. */
export const TASK_TOKEN_GRACE_MS = 5 * 60_000;

export function isExpired(claims: TaskTokenClaims, now: number): boolean {
  return claims.expiresAt !== undefined && now > claims.expiresAt;
}

const encoder = new TextEncoder();

/** Importing the key costs more than signing with it; one secret is in use at a time, so keep the last one. */
let lastKey: { secret: string; key: Promise<CryptoKey> } | undefined;

function hmacKey(secret: string): Promise<CryptoKey> {
  if (lastKey && lastKey.secret === secret) return lastKey.key;
  const key = crypto.subtle.importKey("raw", encoder.encode(secret), { name: "HMAC", hash: "SHA-256" }, false, ["sign", "verify"]);
  lastKey = { secret, key };
  return key;
}

export async function signTaskToken(claims: TaskTokenClaims, secret: string): Promise<string> {
  const expiry = claims.expiresAt === undefined ? [] : [claims.expiresAt, ...(claims.pool === undefined ? [] : [claims.pool])];
  const fields = [claims.tenant, claims.workflowId, claims.stepId, claims.attempt, ...expiry];
  const payload = toBase64Url(encoder.encode(JSON.stringify(fields)));
  const signature = await crypto.subtle.sign("HMAC", await hmacKey(secret), encoder.encode(payload));
  return `${payload}.${toBase64Url(new Uint8Array(signature))}`;
}

/** The claims of a genuine token, or undefined for anything forged, altered or malformed. */
export async function verifyTaskToken(token: string, secret: string): Promise<TaskTokenClaims | undefined> {
  const [payload, signature, extra] = token.split(".");
  if (!payload || !signature || extra !== undefined) return undefined;
  const signatureBytes = fromBase64Url(signature);
  if (!signatureBytes) return undefined;
  // crypto.subtle.verify compares in constant time.
  const valid = await crypto.subtle.verify("HMAC", await hmacKey(secret), signatureBytes, encoder.encode(payload));
  if (!valid) return undefined;
  const bytes = fromBase64Url(payload);
  if (!bytes) return undefined;
  try {
    const [tenant, workflowId, stepId, attempt, expiresAt, pool] = JSON.parse(new TextDecoder().decode(bytes)) as unknown[];
    if (typeof tenant !== "string" || typeof workflowId !== "string" || typeof stepId !== "string") return undefined;
    if (typeof attempt !== "number" || !Number.isInteger(attempt)) return undefined;
    if (expiresAt !== undefined && typeof expiresAt !== "number") return undefined;
    if (pool !== undefined && typeof pool !== "string") return undefined;
    return { tenant, workflowId, stepId, attempt, ...(expiresAt === undefined ? {} : { expiresAt }), ...(pool === undefined ? {} : { pool }) };
  } catch {
    return undefined;
  }
}
