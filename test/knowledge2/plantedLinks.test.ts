/**
 * Run links a repository planted, as a user meets them on the command line: `maestro knowledge stage` and
 * `record` refuse a run folder that links out of `.workflow/` and the orchestrator's run folder, naming the link
 * and where it leads, exit non-zero and write nothing there (so does `maestro run create`); `maestro knowledge audit` reports such a run as its
 * session's problem and audits the rest; `maestro search --workflow-root` (confined) reads nothing a workspaces.json
 * linked to a file outside the project names, and `maestro spec health` says so.
 */
import { mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { stage } from '../../src/knowledge/lifecycle/session/ops.js';
import { createRun, createSession, runDir } from '../../src/knowledge/lifecycle/session/store.js';
import { budget } from '../helpers/budget.js';
import { maestro, project, tmpDir } from '../helpers/knowledge2.js';

const RUN_JSON = { schema_version: 'run/3.0', run_id: 'run-1', session_id: 's-1', step_id: 'step-1', parent_run_id: null, retry_of_run_id: null, attempt: 1, command: 'manual', args: [], goal: null, status: 'running', revision: 1, actor_id: 'maestro', input_refs: [], output_refs: [], primary_artifact_id: null, verdict: null, summary: null, created_at: '2026-01-01T00:00:00.000Z', started_at: '2026-01-01T00:00:00.000Z', ended_at: null, sealed_at: null };

/** Session s-1 of a project whose run folder `run-1` a repository linked to a folder outside, holding a run.json. */
function planted() {
  const p = project();
  createSession(p.root, 's-1');
  const elsewhere = join(tmpDir('maestro-elsewhere-'), 'run-1');
  mkdirSync(elsewhere, { recursive: true });
  writeFileSync(join(elsewhere, 'run.json'), JSON.stringify(RUN_JSON));
  const link = runDir(p.root, 's-1', 'run-1');
  mkdirSync(join(link, '..'), { recursive: true });
  symlinkSync(elsewhere, link);
  return { p, elsewhere, link, env: { MAESTRO_HOME: p.root.home } };
}

describe('run links planted by a repository, on the command line', { timeout: budget(120_000) }, () => {
  it('maestro knowledge stage and record refuse a run folder linked outside, saying where it leads; nothing is written', async () => {
    const { p, elsewhere, link, env } = planted();
    const refusal = `Refusing to write ${link}: ${link} is a symbolic link leading to ${elsewhere}, outside the project's ${p.root.workflowDir} and the orchestrator's run folder ${join(p.root.home, 'runs')}. A run folder is read and written only there. Nothing was written.`;
    const staged = await maestro(['knowledge', 'stage', 'spec', 'Pin images', 'Container builds pin base images by digest.', '--run', 'run-1', '--session', 's-1', '--workflow-root', p.dir], env);
    expect(staged.code).toBe(1);
    expect(staged.stderr).toContain(refusal);
    const recorded = await maestro(['knowledge', 'record', 'S-20260101-aaaa', '--run', 'run-1', '--session', 's-1', '--workflow-root', p.dir], env);
    expect(recorded.code).toBe(1);
    expect(recorded.stderr).toContain(refusal);
    expect(readdirSync(elsewhere)).toEqual(['run.json']);
    expect(JSON.parse(readFileSync(join(elsewhere, 'run.json'), 'utf8'))).toEqual(RUN_JSON);
  });

  it('maestro run create writes no run.json through a run folder a repository linked outside', async () => {
    const p = project();
    createSession(p.root, 's-1');
    const elsewhere = tmpDir('maestro-elsewhere-');
    const link = runDir(p.root, 's-1', 'run-1');
    mkdirSync(join(link, '..'), { recursive: true });
    symlinkSync(elsewhere, link);
    const created = await maestro(['run', 'create', '--session', 's-1', '--run-id', 'run-1', '--activate', '--workflow-root', p.dir], { MAESTRO_HOME: p.root.home });
    expect(created.code).toBe(1);
    expect(created.stderr).toContain(`Refusing to write ${link}: ${link} is a symbolic link leading to ${elsewhere}, outside the project's ${p.root.workflowDir}`);
    expect(readdirSync(elsewhere)).toEqual([]);
  });

  it('maestro knowledge audit names the session and the link of a run folder linked outside, and audits the other sessions', async () => {
    const { p, elsewhere, link, env } = planted();
    createSession(p.root, 's-2');
    createRun(p.root, 's-2', { runId: 'run-1' });
    stage(p.root, { target: 'spec', title: 'x', content: 'Queues are drained before shutdown.', run: 'run-1', session: 's-2' }, process.env);
    const audited = await maestro(['knowledge', 'audit', '--json', '--workflow-root', p.dir], env);
    expect(audited.code).toBe(0);
    const result = JSON.parse(audited.stdout) as { pipeline: { sessions: number; ledgers: number; pending_observed: number }; findings: Array<{ subtype: string; target: string; evidence: string }> };
    expect(result.pipeline).toMatchObject({ sessions: 2, ledgers: 1, pending_observed: 1 });
    expect(result.findings).toContainEqual(expect.objectContaining({ subtype: 'invalid-session-authority', target: 'sessions/s-1/runs/run-1', evidence: expect.stringContaining(`${link} is a symbolic link leading to ${elsewhere}`) }));
    expect(readdirSync(elsewhere)).toEqual(['run.json']);
  });

  it('maestro session show names a run folder linked outside instead of showing what it leads to, and shows the other runs', async () => {
    const { p, elsewhere, link, env } = planted();
    writeFileSync(join(elsewhere, 'run.json'), JSON.stringify({ ...RUN_JSON, verdict: 'PLANTED-VERDICT' }));
    createRun(p.root, 's-1', { runId: 'run-2' });
    const shown = await maestro(['session', 'show', 's-1', '--workflow-root', p.dir], env);
    expect(shown.code).toBe(0);
    expect(shown.stdout).toMatch(/^ {2}run-2 {2}running/m);
    expect(shown.stdout).not.toContain('PLANTED-VERDICT');
    expect(shown.stderr).toContain(`maestro: not listed, run run-1: Refusing to read ${link}: ${link} is a symbolic link leading to ${elsewhere}`);
    const json = JSON.parse((await maestro(['session', 'show', 's-1', '--json', '--workflow-root', p.dir], env)).stdout) as { runs: Array<{ run_id: string }>; unreadable: Array<{ run_id: string }> };
    expect(json.runs.map((r) => r.run_id)).toEqual(['run-2']);
    expect(json.unreadable).toEqual([{ run_id: 'run-1', error: expect.stringContaining('is a symbolic link leading to') }]);
  });

  it('maestro search --workflow-root reads nothing a workspaces.json linked to a file outside the project names, and spec health says why', async () => {
    const p = project();
    // A workspace inside the project (a confined root reads that), named only by the file outside.
    const theirs = join(p.dir, 'theirs');
    mkdirSync(join(theirs, '.workflow', 'specs'), { recursive: true });
    writeFileSync(join(theirs, '.workflow', 'specs', 'learnings.md'), '<spec-entry category="learning" keywords="errors" date="2026-11-01" title="Planted errors">\nPLANTED\n</spec-entry>\n');
    const real = join(tmpDir('maestro-elsewhere-'), 'workspaces.json');
    writeFileSync(real, JSON.stringify({ workspaces: [{ name: 'theirs', path: theirs }] }));
    const file = join(p.root.workflowDir, 'workspaces.json');
    symlinkSync(real, file);
    const env = { MAESTRO_HOME: p.root.home };
    const searched = await maestro(['search', 'errors', '--json', '--no-daemon', '--workflow-root', p.dir], env);
    expect(searched.code).toBe(0);
    expect(searched.stdout).not.toContain('Planted errors');
    const health = await maestro(['spec', 'health', '--json', '--workflow-root', p.dir], env);
    expect(health.code).toBe(1);
    expect(JSON.parse(health.stdout).findings).toContainEqual(
      expect.objectContaining({ file, severity: 'error', message: expect.stringContaining(`Refusing to read ${file}: ${file} is a symbolic link leading to ${real}, outside the project ${p.dir}.`) }),
    );
    // The same file inside the project: the workspace is read.
    rmSync(file);
    writeFileSync(file, readFileSync(real));
    expect((await maestro(['search', 'errors', '--json', '--no-daemon', '--workflow-root', p.dir], env)).stdout).toContain('Planted errors');
  });
});
