// When the supervisor asks whether a queued attempt's task message was lost: the one place its delay is drawn.
/**
 * How long an attempt may wait in our queue before the supervisor asks whether its message was lost. Asking
 * is cheap and changes nothing while the queue is merely slow; only a lost message is sent again.
 */
export const QUEUE_CHECK_MS = 60_000;

/**
 * Each check lands anywhere from half to one and a half QUEUE_CHECK_MS after the send. Attempts sent together
 * (a burst's, say) lost together (a local queue across a restart) would otherwise all be found and sent again
 * in the same second, and that herd of work would make every other workflow's alarm run late.
 */
export const QUEUE_CHECK_JITTER = 0.5;

/** How long from now the supervisor waits before it asks about a queued attempt's message. */
export function queueCheckDelayMs(random: () => number): number {
  return Math.round(QUEUE_CHECK_MS * (1 + QUEUE_CHECK_JITTER * (2 * random() - 1)));
}
