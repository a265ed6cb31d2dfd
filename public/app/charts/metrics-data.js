// What the metrics page draws: the tenant's all-time figures (GET /v1/metrics) and, for the window on show, the
// series the service keeps a minute at a time (GET /v1/metrics/series): however many workflows ran, one request.
import { api, query } from "../api.js";
import { windowRange } from "./outcome-series.js";

export async function loadMetrics(span) {
  const now = Date.now();
  const [figures, series] = await Promise.all([api("/v1/metrics"), api(`/v1/metrics/series${query(windowRange(span, now))}`)]);
  return { figures, series, loadedAt: now };
}
