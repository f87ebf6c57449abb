/**
 * Input schemas of the knowledge review, promotion and audit routes
 * (src/api/routes/knowledgeReview.ts). Pure (zod only): the web board derives its
 * request types from these (type-only import), so the browser sends exactly
 * what the daemon validates.
 */
import { z } from 'zod';

/** Session ids are folder names under `.workflow/sessions/` (store.ts `assertSegment`). */
export const sessionId = z
  .string()
  .min(1)
  .max(128)
  .regex(/^[a-z0-9]([a-z0-9-]*[a-z0-9])?$/, 'must be a session id (lowercase letters, digits and dashes)');
export const candidateId = z.string().regex(/^KDC-[a-f0-9]{16}$/, 'must be a candidate id (KDC-<16 hex>)');
const knowledgeRef = z.string().trim().min(1).max(300);

/** Every review route names a registered project; the daemon maps it to that project's `.workflow/`. */
export const projectQuery = z.object({ projectId: z.string().min(1).max(200) }).strict();
export const sessionParams = z.object({ sessionId }).strict();

export const RESOLVE_AS = ['duplicate', 'related', 'conflict', 'supersede', 'unique'] as const;

export const resolveBody = z
  .object({
    candidate: candidateId,
    as: z.enum(RESOLVE_AS),
    target: knowledgeRef.optional(),
    reason: z.string().trim().min(1, 'must say why').max(2000),
    /** Reconcile stale receipts first (the CLI's `--refresh`). */
    refresh: z.boolean().default(false),
  })
  .strict()
  .refine((b) => b.as === 'unique' || !!b.target, { message: 'needs a target knowledge id unless resolved as unique', path: ['target'] });

export const promoteBody = z.union(
  [z.object({ candidates: z.array(candidateId).min(1).max(100) }).strict(), z.object({ all: z.literal(true) }).strict()],
  { error: 'give {"candidates": ["KDC-<16 hex>", …]} (1 to 100 ids) or {"all": true}, and nothing else' },
);

export const auditQuery = projectQuery
  .extend({
    scope: z.enum(['spec', 'knowhow', 'all']).default('all'),
    /** Adds the deterministic soft-prune plan; applying it stays a CLI act (`maestro knowledge audit --prune --apply`). */
    prune: z.enum(['true', 'false']).default('false').transform((v) => v === 'true'),
  })
  .strict();

export type ResolveBody = z.input<typeof resolveBody>;
export type PromoteBody = z.input<typeof promoteBody>;
export type AuditQuery = z.input<typeof auditQuery>;
