/** Board columns: the fifteen statuses grouped into five lanes a person reads left to right. */
import type { TaskStatus } from '../api/types.js';

export const LANES: { key: string; statuses: TaskStatus[] }[] = [
  { key: 'lane.backlog', statuses: ['ready', 'queued'] },
  { key: 'lane.planning', statuses: ['planning', 'plan_review', 'spec_review', 'waiting_children'] },
  { key: 'lane.working', statuses: ['executing', 'awaiting_input', 'reviewing', 'exec_review', 'merging'] },
  { key: 'lane.done', statuses: ['done'] },
  { key: 'lane.attention', statuses: ['needs_attention', 'cancelled', 'superseded'] },
];

/** Statuses where a person is expected to act. */
export const NEEDS_PERSON: ReadonlySet<TaskStatus> = new Set(['plan_review', 'spec_review', 'exec_review', 'awaiting_input', 'needs_attention']);
