/** Schemas of path and query parameters shared by the routes. */
import { z } from 'zod';
import { TASK_STATUSES } from '../../core/status.js';

export const idParam = z.object({ id: z.string().min(1).max(200) }).strict();
export const taskIdParam = z.object({ taskId: z.string().min(1).max(200) }).strict();

const int = (min: number, max: number) => z.coerce.number().int().min(min).max(max);

export const taskListQuery = z
  .object({
    projectId: z.string().max(200).optional(),
    status: z
      .string()
      .max(1000)
      .transform((s) => s.split(',').filter(Boolean))
      .pipe(z.array(z.enum(TASK_STATUSES)))
      .optional(),
    parentId: z.string().max(200).optional(),
    q: z.string().max(500).optional(),
    limit: int(1, 5000).default(500),
    offset: int(0, 10_000_000).default(0),
    /** `board`: the slim rows the board lists (src/core/taskSummary.ts); `full` (default): whole tasks. */
    view: z.enum(['full', 'board']).default('full'),
  })
  .strict();

export const eventListQuery = z
  .object({
    projectId: z.string().max(200).optional(),
    taskId: z.string().max(200).optional(),
    runId: z.string().max(200).optional(),
    traceId: z.string().max(200).optional(),
    type: z.string().max(100).optional(),
    after: int(0, Number.MAX_SAFE_INTEGER).optional(),
    before: int(1, Number.MAX_SAFE_INTEGER).optional(),
    order: z.enum(['oldest', 'newest']).default('oldest'),
    limit: int(1, 1000).default(100),
  })
  .strict();
