/** The orchestrator bridge: a corrupt run file is reported, not read as "never registered". */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { project, tmpDir } from '../../../test/helpers/knowledge2.js';
import { KnowledgeBridge, runIdFor, sessionIdFor } from './bridge.js';
import { runDir } from './session/store.js';

describe('KnowledgeBridge.onRunFinished', () => {
  it('answers null for a run it never registered, and throws CORRUPT_FILE for a run.json that no longer parses', () => {
    const p = project();
    const bridge = new KnowledgeBridge();
    const task = { id: 'T1', title: 'Add greeting' };
    const info = (id: string, dir: string) => ({ task, run: { id, kind: 'execute' }, runDir: dir, repoPath: p.dir });
    expect(bridge.onRunFinished(info('r-never', tmpDir()))).toBeNull();
    const dir = tmpDir();
    mkdirSync(dir, { recursive: true });
    bridge.onRunStarted(info('r-1', dir));
    const file = join(runDir(p.root, sessionIdFor(task.id), runIdFor('r-1')), 'run.json');
    writeFileSync(file, '{"run_id": ');
    expect(() => bridge.onRunFinished(info('r-1', dir))).toThrow(expect.objectContaining({ code: 'CORRUPT_FILE', message: expect.stringContaining(file) }));
  });
});
