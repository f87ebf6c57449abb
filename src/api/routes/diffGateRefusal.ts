/**
 * Why the diff gate refused a task's change, for the task's detail, so that `task show` and the board can name
 * the ways out that fit it: the limit in `.maestro/config.json` it went over, the task's ownedFiles, or the
 * files the person must deal with. Read from the run's own record of it, the failed stage's run.phase event,
 * where the worker put the refusal's numbers (executor/context.ts `stage`), so nothing is parsed from prose. A
 * refusal recorded before its numbers were (an older worker) has none, and the detail says nothing.
 */
import type { Run, Task } from '../../core/types.js';
import { branchName } from '../../executor/protocol/job.js';
import type { Store } from '../../store/store.js';
import type { DiffGateRefusal } from '../wire/responses.js';
import { runEvents } from './reviewData.js';

/** The details executor.ts's diff gate (and commitWork's refusal of a repository made in the worktree) gives. */
interface GateDetails {
  lines?: number;
  filesChanged?: number;
  limits?: { maxDiffLines?: number; maxDiffFiles?: number; maxFileBytes?: number };
  outsideOwned?: string[];
  outsideOwnedCount?: number;
  largeFiles?: Array<{ path: string; bytes: number }>;
  strayGitlinks?: string[];
  /** false when refused before anything was committed (worktreeStage.ts); absent, as in older records, when after. */
  committed?: boolean;
}

const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);
const strings = (v: unknown): string[] => (Array.isArray(v) ? v.filter((s): s is string => typeof s === 'string') : []);

/** A measure over its limit, or null when within it (or not measured). */
function over(changed: unknown, limit: unknown): { changed: number; limit: number } | null {
  const c = num(changed);
  const l = num(limit);
  return c !== null && l !== null && c > l ? { changed: c, limit: l } : null;
}

/** What the diff gate refused of a task that needs attention for it (its latest run's refusal), else null. */
export async function diffGateRefusal(store: Store, task: Task, runs: readonly Run[]): Promise<DiffGateRefusal | null> {
  if (task.status !== 'needs_attention' || !task.lastRunError?.startsWith('DIFF_GATE:')) return null;
  const run = runs.at(-1);
  if (!run) return null;
  const refused = (await runEvents(store, run.id, 'run.phase')).filter((e) => e.payload.state === 'failed' && (e.payload.detail as { attention?: unknown } | undefined)?.attention === 'diff_gate').at(-1);
  const details = (refused?.payload.detail as { details?: GateDetails } | undefined)?.details;
  if (!details || typeof details !== 'object') return null;
  const outside = strings(details.outsideOwned);
  const large = Array.isArray(details.largeFiles) ? details.largeFiles.filter((f) => typeof f?.path === 'string' && num(f.bytes) !== null) : [];
  const maxFileBytes = num(details.limits?.maxFileBytes);
  return {
    runId: run.id,
    branch: branchName(task.id, task.version),
    lines: over(details.lines, details.limits?.maxDiffLines),
    files: over(details.filesChanged, details.limits?.maxDiffFiles),
    outsideOwned: outside.length ? { count: num(details.outsideOwnedCount) ?? outside.length, files: outside } : null,
    largeFiles: large.length && maxFileBytes !== null ? { limit: maxFileBytes, files: large.map((f) => ({ path: f.path, bytes: f.bytes })) } : null,
    strayGitlinks: strings(details.strayGitlinks),
    committed: details.committed !== false,
  };
}
