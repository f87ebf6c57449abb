/**
 * Where a version's feedback came from, as data (the type is core/types.ts's FeedbackSource): a person's rejection at a gate (who, which gate, the reason, the
 * line comments) or a person's retry from the current main after the last version stopped. The task's `feedback`
 * is the same said in English, for the agent's prompt; a reader that speaks another language (the board) composes
 * its own sentence from this instead. Pure (zod only): the store checks the column against it on read, and the API
 * describes the field with it.
 */
import { z } from 'zod';
import { GATES, type FeedbackSource } from './types.js';

/** A reviewer's comment on one line of the diff; `side` old is a deleted line's number in the old file. */
export const lineCommentSchema = z.strictObject({ file: z.string(), line: z.number(), side: z.enum(['new', 'old']), text: z.string() });

export const feedbackSourceSchema: z.ZodType<FeedbackSource> = z.discriminatedUnion('kind', [
  z.strictObject({
    kind: z.literal('rejection'),
    gate: z.enum(GATES),
    who: z.string(),
    reason: z.string(),
    comments: z.array(lineCommentSchema),
  }),
  z.strictObject({
    kind: z.literal('fresh'),
    version: z.number().int().describe('the version that stopped and needed attention'),
    who: z.string(),
    error: z.string().nullable().describe('why it stopped (its lastRunError, cut to 1,000 characters), or null'),
  }),
]);

export type { FeedbackSource };
