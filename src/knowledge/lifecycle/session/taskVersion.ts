/**
 * Where a task's knowledge session stands among the task's versions.
 *
 * A person who rejects a task at a gate (or retries it from the current main)
 * makes a new version of it: a new task id, so a new session (`task-<id>`),
 * while the old version's session keeps the candidates its runs staged. What
 * an agent learned in a rejected try can still be true, so those candidates
 * stay in the review queue, for a person to decide; but the person should
 * know where they come from. The daemon records it in the old session's
 * folder, `task-version.json`, when it makes the new version; review reads it
 * (`superseded`: which version, why, what took its place), and the API, the
 * CLI and the board say it and list such sessions after the current ones.
 *
 * A session folder is this host's (bridge.ts): the record is written where
 * the rejection is made, if that host holds the session.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { MaestroError } from '../../../core/errors.js';
import { writeFileAtomic } from '../../format/atomic.js';
import { assertNotLinked } from '../../format/linkGuard.js';
import type { WorkflowRoot } from '../../format/root.js';
import { isJsonObject, readJsonObject } from '../jsonFile.js';
import { assertReadableInside, assertSessionInside, sessionDir } from './store.js';

export const TASK_VERSION_SCHEMA = 'maestro-task-version/1.0';
export const TASK_VERSION_FILE = 'task-version.json';

/** A session's task version that a newer one replaced, and why. */
export interface SupersededVersion {
  task_id: string;
  version: number;
  /** rejected: a person rejected it at `gate`; retried: a person retried it from the current main. */
  cause: 'rejected' | 'retried';
  gate: string | null;
  reason: string;
  who: string;
  at: string;
  superseded_by: { task_id: string; version: number; session_id: string };
}

const path = (root: WorkflowRoot, sid: string) => join(sessionDir(root, sid), TASK_VERSION_FILE);

/** Records that the session's task version was replaced; false (nothing written) when this host has no such session. */
export function markSessionSuperseded(root: WorkflowRoot, sid: string, v: SupersededVersion): boolean {
  if (!existsSync(join(sessionDir(root, sid), 'session.json'))) return false;
  assertSessionInside(root, sid);
  const file = path(root, sid);
  assertNotLinked(file);
  writeFileAtomic(file, `${JSON.stringify({ schema_version: TASK_VERSION_SCHEMA, ...v }, null, 2)}\n`);
  return true;
}

/** The session's superseded version, or null (a current version, or a session no task made). CORRUPT_FILE names a broken record. */
export function readSessionSuperseded(root: WorkflowRoot, sid: string): SupersededVersion | null {
  const file = path(root, sid);
  if (!existsSync(file)) return null;
  assertReadableInside(root, file);
  const o = readJsonObject(file);
  const bad = (field: string, what: string) => new MaestroError('CORRUPT_FILE', `${file}: field ${field} must be ${what}.`, { details: { file } });
  if (o.schema_version !== TASK_VERSION_SCHEMA) throw bad('schema_version', TASK_VERSION_SCHEMA);
  for (const f of ['task_id', 'reason', 'who', 'at'] as const) if (typeof o[f] !== 'string') throw bad(f, 'a string');
  if (!Number.isInteger(o.version)) throw bad('version', 'an integer');
  if (o.cause !== 'rejected' && o.cause !== 'retried') throw bad('cause', 'rejected or retried');
  if (o.gate !== null && typeof o.gate !== 'string') throw bad('gate', 'a string or null');
  const by = o.superseded_by;
  if (!isJsonObject(by) || typeof by.task_id !== 'string' || typeof by.session_id !== 'string' || !Number.isInteger(by.version)) throw bad('superseded_by', '{ task_id, version, session_id }');
  return {
    task_id: o.task_id as string,
    version: o.version as number,
    cause: o.cause,
    gate: o.gate as string | null,
    reason: o.reason as string,
    who: o.who as string,
    at: o.at as string,
    superseded_by: { task_id: by.task_id, version: by.version as number, session_id: by.session_id },
  };
}
