/** What the API answers on every error: `{"error": {"code", "message", "details"?}}`. */
export interface ApiErrorBody {
  error: { code: string; message: string; details?: unknown[] };
}

/**
 * A non-2xx answer, thrown by every client operation: the status and the API's own code, message and details, so
 * callers branch on `code` ("not_found", "conflict", "validation_failed", ...) rather than on message text.
 */
export class ShepherdApiError extends Error {
  override readonly name = "ShepherdApiError";

  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details?: unknown[],
  ) {
    super(message);
  }

  /** Reads the error body; an answer that is not the API's shape (a proxy's HTML page, say) keeps its status. */
  static async from(response: { status: number; statusText: string; text(): Promise<string> }): Promise<ShepherdApiError> {
    const text = await response.text().catch(() => "");
    const body = parseErrorBody(text);
    if (body) return new ShepherdApiError(response.status, body.error.code, body.error.message, body.error.details);
    return new ShepherdApiError(response.status, `http_${response.status}`, text.slice(0, 200) || response.statusText || `HTTP ${response.status}`);
  }
}

function parseErrorBody(text: string): ApiErrorBody | undefined {
  try {
    const body: unknown = JSON.parse(text);
    if (typeof body !== "object" || body === null || !("error" in body)) return undefined;
    const error = body.error as Partial<ApiErrorBody["error"]> | null;
    if (typeof error?.code !== "string" || typeof error.message !== "string") return undefined;
    return { error: { code: error.code, message: error.message, ...(Array.isArray(error.details) ? { details: error.details } : {}) } };
  } catch {
    return undefined;
  }
}
