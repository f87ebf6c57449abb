/**
 * The longest delay a Node timer holds: setTimeout and setInterval take a signed 32-bit number of
 * milliseconds (2^31 − 1, about 24.8 days). A larger one prints TimeoutOverflowWarning and fires after
 * 1 ms, so a check with a month's timeout "timed out" at once and a poll every 30 days spun. Every ms
 * setting that feeds a timer is bounded by it where it is read. No zod here: the CLI's fast paths load it.
 */
export const MAX_TIMER_MS = 2_147_483_647;

/** What a setting over MAX_TIMER_MS is told. */
export const MAX_TIMER_MESSAGE = `must be at most ${MAX_TIMER_MS} ms (about 24.8 days), the longest a Node timer holds`;
