/** How the object's outbox delivers what a commit left in it (task messages, webhook messages, the index entry): one policy. */

/**
 * A send is leased to the instance that committed it for this long; if that instance dies before the queue
 * accepts the messages (or D1 answers the index write), the alarm sends them then. Never a deadline of the
 * attempt: only of our own send. As long as a heartbeat deadline (30 s by default), so the alarm armed for the
 * lease is usually the one the claim would arm anyway: a successful send costs no alarm write of its own (moving the alarm back after each
 * send cost 14 % more CPU per step at W = 200: 5.3 against 4.6 ms), and a step still queued when the lease lapses costs one early
 * alarm that finds nothing due.
 */
export const SEND_LEASE_MS = 30_000;

/** Failures in a row (a send the queue refused, a webhook receiver that failed) space the next try out: 1 s, 2 s … 60 s. */
export const SEND_RETRY = { initialMs: 1_000, maxMs: 60_000, jitter: 0.2 };

/**
 * The end's notice to a start's `notify` URL: a receiver outside Shepherd, given time to come back (5 s, 10 s … 10
 * minutes apart) and given up after this many tries, about 50 minutes after the first, with `workflow_notify_failed`.
 */
export const NOTICE_RETRY = { initialMs: 5_000, maxMs: 600_000, jitter: 0.2 };
export const NOTICE_TRIES = 12;
