/** The record of a superseded task version in its session's folder (taskVersion.ts), as review reads it. */
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { project } from '../../../../test/helpers/knowledge2.js';
import { createLifecycleContext } from '../context.js';
import { review } from '../reconcile/review.js';
import { createSession, sessionDir } from './store.js';
import { markSessionSuperseded, TASK_VERSION_FILE, type SupersededVersion } from './taskVersion.js';

const lc = createLifecycleContext({ embedder: null });
const v1: SupersededVersion = { task_id: 't-1', version: 1, cause: 'retried', gate: null, reason: 'retried from the current main', who: 'ana', at: '2026-12-01T00:00:00.000Z', superseded_by: { task_id: 't-2', version: 2, session_id: 'task-t-2' } };

describe('a superseded task version', () => {
  it('is recorded only where this host holds the session, and review says it', () => {
    const p = project();
    expect(markSessionSuperseded(p.root, 'task-t-1', v1)).toBe(false);
    expect(existsSync(sessionDir(p.root, 'task-t-1'))).toBe(false); // no session made for it
    createSession(p.root, 'task-t-1', 'greet');
    expect(review(lc, p.root, 'task-t-1').superseded).toBeNull();
    expect(markSessionSuperseded(p.root, 'task-t-1', v1)).toBe(true);
    expect(review(lc, p.root, 'task-t-1').superseded).toEqual(v1);
  });

  it('a broken record is CORRUPT_FILE naming it, as any broken session file (the queue shows the session with the error)', () => {
    const p = project();
    createSession(p.root, 'task-t-1', 'greet');
    const file = join(sessionDir(p.root, 'task-t-1'), TASK_VERSION_FILE);
    writeFileSync(file, JSON.stringify({ ...v1, schema_version: 'maestro-task-version/1.0', version: 'one' }));
    expect(() => review(lc, p.root, 'task-t-1')).toThrow(`${file}: field version must be an integer.`);
  });
});
