// The remote service's side of a task: the claims its task token carries, and its calls on the task routes.
import { env, exports } from "cloudflare:workers";
import { verifyTaskToken, type TaskTokenClaims } from "../../src/domain/security/task-token";

/** The claims of a genuine task token (its signature checked with the Worker's secret); undefined for a bad one. */
export function tokenClaims(token: string): Promise<TaskTokenClaims | undefined> {
  return verifyTaskToken(token, env.TASK_TOKEN_SECRET);
}

/** A remote service's call on its task token, as it would make it: no API token, the task token is the credential. */
export async function callTask(token: string, action: "heartbeat" | "complete" | "fail", body: unknown): Promise<{ status: number; body: any }> {
  const response = await exports.default.fetch(`http://shepherd.test/v1/tasks/${token}/${action}`, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : undefined };
}
