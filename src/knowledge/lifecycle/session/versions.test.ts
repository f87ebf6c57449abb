/**
 * Rewriting maestro-flow's session.json / run.json loses nothing (versions.ts): a newer version is
 * refused before anything changes, an older one keeps every key its upgrade does not consume, and a
 * value of the wrong type is a corrupt file, not a null. Each case runs the command the user runs.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { maestro, project } from '../../../../test/helpers/knowledge2.js';
import { createLifecycleContext } from '../context.js';
import { completeRun, sealRun, sealSession } from './ops.js';
import { createRun, createSession, readSession, runDir, sessionDir } from './store.js';

const lc = createLifecycleContext({ embedder: null });

const json = (doc: object) => `${JSON.stringify(doc, null, 2)}\n`;
const read = (file: string) => JSON.parse(readFileSync(file, 'utf8'));

describe('session.json and run.json of other versions', () => {
  it('refuses to create a run in a session/4.0 session, naming file and version, and changes nothing', async () => {
    const p = project();
    createSession(p.root, 's99');
    const file = join(sessionDir(p.root, 's99'), 'session.json');
    const newer = json({ ...read(file), schema_version: 'session/4.0', workspace_binding: { workspace_id: 'ws-1', repo_id: 'repo-1' }, owners: ['ana', 'li'] });
    writeFileSync(file, newer);
    const r = await maestro(['run', 'create', '--session', 's99', '--run-id', 'run-s99', '--workflow-root', p.dir]);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain(`${file} is session/4.0, newer than this Maestro knows (it writes session/3.0)`);
    expect(r.stderr).toContain('[SCHEMA_TOO_NEW]');
    expect(readFileSync(file, 'utf8')).toBe(newer);
    expect(existsSync(join(sessionDir(p.root, 's99'), 'runs', 'run-s99'))).toBe(false);
    // Still readable, as written.
    expect(readSession(p.root, 's99')).toMatchObject({ schema_version: 'session/4.0', owners: ['ana', 'li'], workspace_binding: { workspace_id: 'ws-1' } });
  });

  it('upgrades a session/2.0 file to 3.0 keeping topic_identity, identity_revision and the execution ids', async () => {
    const p = project();
    createSession(p.root, 's2');
    const file = join(sessionDir(p.root, 's2'), 'session.json');
    const topic = { topic_id: 'topic-1', revision: 2 };
    writeFileSync(file, json({ schema_version: 'session/2.0', session_id: 's2', intent: 'statusless fixture', topic_identity: topic, identity_revision: 4, activity_revision: 7, current_execution_id: 'execution-7', latest_execution_id: 'execution-7', latest_completed_run_id: null, archived_at: null, archived_by: null }));
    const r = await maestro(['run', 'create', '--session', 's2', '--run-id', 'run-1', '--workflow-root', p.dir]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const after = read(file);
    expect(after).toMatchObject({ schema_version: 'session/3.0', objective: 'statusless fixture', status: 'open', activity_revision: 8, active_run_ids: ['run-1'] });
    expect(after).toMatchObject({ topic_identity: topic, identity_revision: 4, current_execution_id: 'execution-7', latest_execution_id: 'execution-7', latest_completed_run_id: null, archived_by: null });
    expect(after).not.toHaveProperty('intent'); // moved to objective, as maestro-flow's migration moves it
  });

  it('refuses to complete a run/3.1 run, naming file and version, and changes nothing', async () => {
    const p = project();
    createSession(p.root, 's3');
    createRun(p.root, 's3', { runId: 'run-3' });
    const dir = runDir(p.root, 's3', 'run-3');
    const file = join(dir, 'run.json');
    const newer = json({ ...read(file), schema_version: 'run/3.1', command_contract_hash: `sha256:${'a'.repeat(64)}`, handoff: { summary: 'done', artifact_refs: [] } });
    writeFileSync(file, newer);
    writeFileSync(join(dir, 'report.md'), '---\nverdict: ready\nsummary: ok\nconstraints:\n  - locked: "Never log API tokens."\n---\n');
    const r = await maestro(['run', 'complete', 'run-3', '--session', 's3', '--workflow-root', p.dir]);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain(`${file} is run/3.1, newer than this Maestro knows (it writes run/3.0)`);
    expect(readFileSync(file, 'utf8')).toBe(newer);
    expect(existsSync(join(dir, 'knowledge-delta.json'))).toBe(false); // the report was not staged either
  });

  it('refuses a field of the wrong type, naming file and field, instead of writing null', async () => {
    const p = project();
    createSession(p.root, 's4');
    const file = join(sessionDir(p.root, 's4'), 'session.json');
    const bad = json({ ...read(file), activity_revision: 'zzz' });
    writeFileSync(file, bad);
    const r = await maestro(['run', 'create', '--session', 's4', '--run-id', 'run-4', '--workflow-root', p.dir]);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain(`${file}: field activity_revision must be a whole number ≥ 0, found "zzz"`);
    expect(r.stderr).toContain('[CORRUPT_FILE]');
    expect(readFileSync(file, 'utf8')).toBe(bad);
    expect(existsSync(join(sessionDir(p.root, 's4'), 'runs', 'run-4'))).toBe(false);
  });

  it('seals nothing in a session/4.0 session: run seal and session seal refuse before any write', () => {
    const p = project();
    createSession(p.root, 's5');
    createRun(p.root, 's5', { runId: 'run-5' });
    const file = join(sessionDir(p.root, 's5'), 'session.json');
    const runFile = join(runDir(p.root, 's5', 'run-5'), 'run.json');
    const newer = json({ ...read(file), schema_version: 'session/4.0', owners: ['ana'] });
    writeFileSync(file, newer);
    const runBefore = readFileSync(runFile, 'utf8');
    expect(() => sealRun(lc, p.root, 's5', 'run-5')).toThrow(expect.objectContaining({ code: 'SCHEMA_TOO_NEW', message: expect.stringContaining(`${file} is session/4.0`) }));
    expect(() => sealSession(lc, p.root, 's5')).toThrow(expect.objectContaining({ code: 'SCHEMA_TOO_NEW' }));
    expect(readFileSync(file, 'utf8')).toBe(newer);
    expect(readFileSync(runFile, 'utf8')).toBe(runBefore);
    expect(existsSync(join(runDir(p.root, 's5', 'run-5'), 'knowledge-delta.json'))).toBe(false);
  });

  it('upgrades a command-run/1.3 run as maestro-flow migrates it and keeps what the mapping does not consume', () => {
    const p = project();
    createSession(p.root, 's6');
    createRun(p.root, 's6', { runId: 'run-6' });
    const file = join(runDir(p.root, 's6', 'run-6'), 'run.json');
    const command = { name: 'execute', version: '1', source_path: 'commands/execute.md', content_hash: 'a'.repeat(64), resolved_prompt_hash: 'b'.repeat(64) };
    const handoff = { summary: 'built it', artifact_refs: ['ART-2'], next: [] };
    writeFileSync(file, json({ schema_version: 'command-run/1.3', session_id: 's6', run_id: 'run-6', sequence: 3, parent_run_id: null, command, status: 'running', input: { args: ['--fast'], consumes: ['S-1'], context_identity_revision: 2, reuse_assessments: [] }, gate_ids: ['g-1'], output: { produces: ['ART-1'], primary_artifact_id: 'ART-1', verdict: 'ready_with_concerns' }, handoff, chain_step_id: 'step-9', started_at: '2026-01-01T00:00:00Z', completed_at: '2026-01-01T01:00:00Z', sealed_at: null }));
    completeRun(lc, p.root, 's6', 'run-6');
    const after = read(file);
    expect(after).toMatchObject({ schema_version: 'run/3.0', step_id: 'step-9', command: 'execute', args: ['--fast'], input_refs: ['S-1'], output_refs: ['ART-1', 'ART-2'], primary_artifact_id: 'ART-1', status: 'completed', created_at: '2026-01-01T00:00:00Z', started_at: '2026-01-01T00:00:00Z' });
    // Kept: everything the mapping did not consume (the command descriptor becomes its name, as in maestro-flow).
    expect(after).toMatchObject({ sequence: 3, gate_ids: ['g-1'], handoff, input: { context_identity_revision: 2 }, output: { verdict: 'ready_with_concerns' } });
    expect(after).not.toHaveProperty('chain_step_id');
    expect(after).not.toHaveProperty('completed_at');
  });
});
