/**
 * Schemas of path and query parameters shared by the routes: every id, number
 * and flag a URL carries is read by one of these, so all answer alike.
 */
import { z } from 'zod';
import { TASK_STATUSES } from '../../core/status.js';

/** The longest id a URL may name. Ours are about 20 characters; 200 leaves room for ids a client makes up. */
export const MAX_ID = 200;
const TOO_LONG = `is too long; an id is at most ${MAX_ID} characters.`;
/** An id in a query (a filter): may be empty, as before. */
export const idQuery = z.string().max(MAX_ID, TOO_LONG);
/** An id in a path. The server lets path parameters as long as a request line through (server.ts), so an over-long one is this 400, not an unrouted 404. */
export const idString = z.string().min(1).max(MAX_ID, { error: TOO_LONG, abort: true });

export const idParam = z.object({ id: idString }).strict();
export const taskIdParam = z.object({ taskId: idString }).strict();

const DECIMAL = /^[0-9]+$/;
/** Digits only, for a number whose range its reader checks (the knowledge search's limit, src/knowledge/search/params.ts). */
export const queryDigits = z.string().regex(DECIMAL, 'must be a decimal integer');
/**
 * A whole number in a query, written in decimal digits: "16", not "0x10", "1e1", "16.0", " 16" or "" (which
 * z.coerce.number(), that is Number(), all read as numbers).
 */
export const queryInt = (min: number, max: number) => {
  const expected = `must be a decimal integer from ${min} to ${max}`;
  return z
    .string()
    .regex(DECIMAL, expected)
    .describe(expected.replace('must be ', ''))
    .transform(Number)
    .refine((n) => n >= min && n <= max, expected);
};
/** A flag in a query: true or false, or 1 or 0 (as the knowledge search has always taken them); left out or empty, false. */
export const queryFlag = z
  .enum(['true', 'false', '1', '0', ''], { error: 'must be true or false (or 1 or 0)' })
  .optional()
  .transform((v) => v === 'true' || v === '1');

export const taskListQuery = z
  .object({
    projectId: idQuery.optional(),
    status: z
      .string()
      .max(1000)
      .transform((s) => s.split(',').filter(Boolean))
      .pipe(z.array(z.enum(TASK_STATUSES)))
      .optional(),
    parentId: idQuery.optional(),
    q: z.string().max(500).optional(),
    limit: queryInt(1, 5000).default(500),
    offset: queryInt(0, 10_000_000).default(0),
    /** `board`: the slim rows the board lists (src/core/taskSummary.ts); `full` (default): whole tasks. */
    view: z.enum(['full', 'board']).default('full'),
  })
  .strict();

export const eventListQuery = z
  .object({
    projectId: idQuery.optional(),
    taskId: idQuery.optional(),
    runId: idQuery.optional(),
    traceId: idQuery.optional(),
    type: z.string().max(100).optional(),
    after: queryInt(0, Number.MAX_SAFE_INTEGER).optional(),
    before: queryInt(1, Number.MAX_SAFE_INTEGER).optional(),
    order: z.enum(['oldest', 'newest']).default('oldest'),
    limit: queryInt(1, 1000).default(100),
  })
  .strict();
