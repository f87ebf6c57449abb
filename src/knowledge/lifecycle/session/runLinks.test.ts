/**
 * Staging and recording follow a run link only where Maestro puts run folders: inside `.workflow/`, the
 * orchestrator's run folder (`$MAESTRO_HOME/runs/`), or the run folder the worker handed this process
 * (`$MAESTRO_RUN_DIR`: an agent is not told the daemon's home). A repository can plant `runs/<rid> -> /anywhere`;
 * a stage, a record or a load's consumption there is refused naming the link and where it leads, and nothing is written.
 */
import { mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { project, tmpDir } from '../../../../test/helpers/knowledge2.js';
import { resolveWorkflowRoot } from '../../format/root.js';
import { readLedger } from '../ledger/ledger.js';
import { record, recordConsumed, stage } from './ops.js';
import { createRun, createSession, orchestratorRunsDir, readSession, runDir, setActiveRun } from './store.js';

/** A folder outside everything Maestro owns, holding a run.json that names `run-1` (as a planted one would). */
function elsewhere(): { dir: string; files: () => Record<string, string> } {
  const dir = join(tmpDir('maestro-elsewhere-'), 'run-1');
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'run.json'), JSON.stringify({ schema_version: 'run/3.0', run_id: 'run-1', session_id: 's-1', step_id: 'step-1', parent_run_id: null, retry_of_run_id: null, attempt: 1, command: 'manual', args: [], goal: null, status: 'running', revision: 1, actor_id: 'maestro', input_refs: [], output_refs: [], primary_artifact_id: null, verdict: null, summary: null, created_at: '2026-01-01T00:00:00.000Z', started_at: '2026-01-01T00:00:00.000Z', ended_at: null, sealed_at: null }));
  return { dir, files: () => Object.fromEntries(readdirSync(dir).map((f) => [f, readFileSync(join(dir, f), 'utf8')])) };
}

/** Session s-1 of `p` with its run folder `run-1` a link to `target`, planted by hand (not by createRun). */
function plant(p: ReturnType<typeof project>, target: string): string {
  createSession(p.root, 's-1');
  const link = runDir(p.root, 's-1', 'run-1');
  mkdirSync(join(p.root.workflowDir, 'sessions', 's-1', 'runs'), { recursive: true });
  symlinkSync(target, link);
  return link;
}

const candidate = { target: 'spec' as const, title: 'x', content: 'Queues are drained before shutdown.' };

describe('a run link planted to a folder outside', () => {
  it('is not staged or recorded into, through --run or the active run; the refusal names the link and where it leads', () => {
    const p = project();
    const out = elsewhere();
    const link = plant(p, out.dir);
    const before = out.files();
    const refused = expect.objectContaining({
      code: 'PATH_OUTSIDE_PROJECTS',
      message: expect.stringContaining(`Refusing to write ${link}: ${link} is a symbolic link leading to ${out.dir}, outside the project's ${p.root.workflowDir} and the orchestrator's run folder ${orchestratorRunsDir(p.root)}. A run folder is read and written only there. Nothing was written.`),
    });
    expect(() => stage(p.root, { ...candidate, run: 'run-1', session: 's-1' }, {})).toThrow(refused);
    expect(() => record(p.root, ['S-20260101-aaaa'], { run: 'run-1', session: 's-1' }, {})).toThrow(refused);
    setActiveRun(p.root, 's-1', 'run-1');
    expect(() => stage(p.root, candidate, {})).toThrow(refused);
    expect(() => record(p.root, ['S-20260101-aaaa'], {}, {})).toThrow(refused);
    expect(() => stage(p.root, candidate, { MAESTRO_SESSION_ID: 's-1', MAESTRO_RUN_ID: 'run-1' })).toThrow(refused);
    // A load in the active run answers, and says why it was not recorded.
    expect(recordConsumed(p.root, ['S-20260101-aaaa'], {})).toEqual({ recorded: false, warning: expect.stringContaining(`Refusing to write ${link}: ${link} is a symbolic link leading to ${out.dir}`) });
    expect(out.files()).toEqual(before);
  });

  it('is not written through when the run is created (maestro run create, or with a link of its own)', () => {
    const p = project();
    const out = join(tmpDir('maestro-elsewhere-'), 'run-1');
    mkdirSync(out);
    const link = plant(p, out);
    const refused = expect.objectContaining({ code: 'PATH_OUTSIDE_PROJECTS', message: expect.stringContaining(`Refusing to write ${link}: ${link} is a symbolic link leading to ${out}, outside the project's`) });
    expect(() => createRun(p.root, 's-1', { runId: 'run-1' })).toThrow(refused);
    expect(() => createRun(p.root, 's-1', { runId: 'run-1', linkTo: join(p.root.home, 'runs', 'task-1', 'run-1') })).toThrow(refused);
    expect(readdirSync(out)).toEqual([]);
    expect(readSession(p.root, 's-1').active_run_ids).toEqual([]);
  });

  it("is refused when it leads beside this run's own folder ($MAESTRO_RUN_DIR), not to it", () => {
    const p = project();
    const runs = join(tmpDir('maestro-daemon-home-'), 'runs', 'task-1');
    const own = join(runs, 'r-own');
    const other = join(runs, 'r-other');
    mkdirSync(own, { recursive: true });
    mkdirSync(other, { recursive: true });
    const link = plant(p, other);
    const agent = resolveWorkflowRoot({ workflowRoot: p.dir, env: { MAESTRO_RUN_DIR: own } }); // no MAESTRO_HOME, as an agent's
    expect(() => stage(agent, { ...candidate, run: 'run-1', session: 's-1' }, {})).toThrow(`Refusing to write ${link}: ${link} is a symbolic link leading to ${other}, outside the project's ${p.root.workflowDir} and the orchestrator's run folder ${orchestratorRunsDir(agent)} (nor this run's own folder ${own}, $MAESTRO_RUN_DIR).`);
    expect(readdirSync(other)).toEqual([]);
  });
});

describe('a run link Maestro made', () => {
  it("is staged into when it leads to the run folder the worker handed the agent, under a daemon with another home", () => {
    const p = project();
    const own = join(tmpDir('maestro-daemon-home-'), 'runs', 'task-1', 'r-1');
    mkdirSync(own, { recursive: true });
    writeFileSync(join(own, 'run.json'), elsewhere().files()['run.json']!); // the daemon's home, which the agent is not told
    plant(p, own);
    const agent = resolveWorkflowRoot({ workflowRoot: p.dir, env: { MAESTRO_RUN_DIR: own } });
    const staged = stage(agent, { ...candidate, run: 'run-1', session: 's-1' }, {});
    expect(staged.ledger).toBe(join(runDir(p.root, 's-1', 'run-1'), 'knowledge-delta.json'));
    expect(readLedger(join(own, 'knowledge-delta.json'))!.candidates.map((c) => c.candidate_id)).toEqual([staged.candidate.candidate_id]);
  });

  it("is staged into when it leads into the orchestrator's run folder", () => {
    const p = project();
    const own = join(p.root.home, 'runs', 'task-1', 'r-1');
    mkdirSync(own, { recursive: true });
    writeFileSync(join(own, 'run.json'), elsewhere().files()['run.json']!);
    plant(p, own);
    setActiveRun(p.root, 's-1', 'run-1');
    expect(record(p.root, ['S-20260101-aaaa'], {}, {}).recorded).toEqual(['S-20260101-aaaa']);
    expect(recordConsumed(p.root, ['spec:project:coding-conventions-001'], {})).toEqual({ recorded: true, warning: null });
    expect(readLedger(join(own, 'knowledge-delta.json'))!.inputs.map((i) => i.signal).sort()).toEqual(['cited', 'consumed']);
  });
});
