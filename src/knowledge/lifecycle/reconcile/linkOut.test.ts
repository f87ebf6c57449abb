/**
 * Receipts, promotion receipts and ledgers are written only inside the project's `.workflow/`, even when the
 * caller got past the read guards (a link planted between a read and a write). The run folder is the designed
 * exception (a link to the orchestrator's run directory); the `runs/` folder above it is not.
 */
import { cpSync, existsSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { project, tmpDir } from '../../../../test/helpers/knowledge2.js';
import { resolveWorkflowRoot } from '../../format/root.js';
import { createLifecycleContext } from '../context.js';
import { updatePromotions } from '../promote/promotion.js';
import { completeRun, stage } from '../session/ops.js';
import { activeRun, createRun, createSession, listRunIds, orchestratorRunsDir, releaseActiveRun, sessionDir, sessionsDir, setActiveRun } from '../session/store.js';
import { readSourceState, reconcileSource, runSource, sessionSource, sessionSources } from './receipt.js';

const lc = createLifecycleContext({ embedder: null });

/** A project whose session `sid` (with one candidate) was moved outside, and a link left in its place. */
function linkedOut(sid: string, move: (p: ReturnType<typeof project>) => string) {
  const p = project();
  createSession(p.root, sid);
  createRun(p.root, sid, { runId: 'run-1' });
  stage(p.root, { target: 'spec', title: 'x', content: 'Queues are drained before shutdown.', run: 'run-1', session: sid }, process.env);
  stage(p.root, { target: 'spec', title: 'y', content: 'Logs rotate daily.', session: sid }, process.env);
  const outside = project().dir;
  const moved = move(p);
  cpSync(moved, join(outside, 'moved'), { recursive: true });
  rmSync(moved, { recursive: true });
  symlinkSync(join(outside, 'moved'), moved);
  return { p, outside: join(outside, 'moved') };
}

describe('writes of the review and promotion through a link out of .workflow/', () => {
  it('a session folder linked out takes no receipt and no promotion receipt', () => {
    const { p, outside } = linkedOut('evil', (p) => sessionDir(p.root, 'evil'));
    const before = readdirSync(outside).sort();
    const src = sessionSource(p.root, 'evil');
    expect(() => reconcileSource(lc, p.root, src)).toThrow(`Refusing to write ${sessionDir(p.root, 'evil')}: it is a symbolic link`);
    expect(() => updatePromotions(p.root, src.dir, 'evil', 'session', () => undefined)).toThrow(`Refusing to write ${sessionDir(p.root, 'evil')}: it is a symbolic link`);
    expect(readdirSync(outside).sort()).toEqual(before);
  });

  it("a session's runs/ folder linked out is neither listed nor written through", () => {
    const { p, outside } = linkedOut('s-1', (p) => join(sessionDir(p.root, 's-1'), 'runs'));
    const runs = join(sessionDir(p.root, 's-1'), 'runs');
    expect(() => listRunIds(p.root, 's-1')).toThrow(`Refusing to read ${runs}: ${runs} is a symbolic link leading to ${outside}, outside the project's`);
    expect(() => reconcileSource(lc, p.root, runSource(p.root, 's-1', 'run-1'))).toThrow(`Refusing to write ${runs}: it is a symbolic link`);
    expect(existsSync(join(outside, 'run-1', 'knowledge-reconciliation.json'))).toBe(false);
  });

  it("a run folder's ledger linked to a file outside it is not read", () => {
    const p = project();
    createSession(p.root, 's-1');
    createRun(p.root, 's-1', { runId: 'run-1', linkTo: join(project().dir, 'run-1') });
    const secret = join(project().dir, 'secret.json');
    writeFileSync(secret, '{"TOPSECRET": true}');
    const src = runSource(p.root, 's-1', 'run-1');
    symlinkSync(secret, src.ledgerPath);
    expect(() => readSourceState(src)).toThrow(`Refusing to read ${src.ledgerPath}: ${src.ledgerPath} is a symbolic link leading to ${secret}, outside its folder ${src.dir}`);
  });
});

describe("run folders lead only into .workflow/ or the orchestrator's run folder", () => {
  /** Session s-1 with a run `run-1` whose folder links to `linkTo`, a candidate staged in it (by the run's own agent, told its folder). */
  function runLinkedTo(p: ReturnType<typeof project>, linkTo: string) {
    createSession(p.root, 's-1');
    createRun(p.root, 's-1', { runId: 'run-1', linkTo });
    stage({ ...p.root, runFolder: linkTo }, { target: 'spec', title: 'x', content: 'Queues are drained before shutdown.', run: 'run-1', session: 's-1' }, process.env);
    return runSource(p.root, 's-1', 'run-1');
  }
  const refusal = (p: ReturnType<typeof project>, dir: string, real: string) =>
    `Refusing to read ${dir}: ${dir} is a symbolic link leading to ${real}, outside the project's ${p.root.workflowDir} and the orchestrator's run folder ${orchestratorRunsDir(p.root)}`;

  it('a run folder linked elsewhere is not reviewed, completed or reconciled, and nothing is written there', () => {
    const p = project();
    const elsewhere = join(tmpDir(), 'run-1');
    const src = runLinkedTo(p, elsewhere);
    const before = Object.fromEntries(readdirSync(elsewhere).map((f) => [f, readFileSync(join(elsewhere, f), 'utf8')]));
    const refused = expect.objectContaining({ code: 'PATH_OUTSIDE_PROJECTS', message: expect.stringContaining(refusal(p, src.dir, elsewhere)) });
    expect(() => sessionSources(p.root, 's-1')).toThrow(refused);
    expect(() => reconcileSource(lc, p.root, src)).toThrow(refused);
    expect(() => completeRun(lc, p.root, 's-1', 'run-1')).toThrow(refused);
    expect(() => updatePromotions(p.root, src.dir, 's-1', 'run-1', () => undefined)).toThrow(refused);
    expect(Object.fromEntries(readdirSync(elsewhere).map((f) => [f, readFileSync(join(elsewhere, f), 'utf8')]))).toEqual(before);
    // A link to a place that does not exist (yet) is judged by where it points.
    rmSync(elsewhere, { recursive: true });
    expect(() => reconcileSource(lc, p.root, src)).toThrow(refusal(p, src.dir, elsewhere));
    expect(existsSync(elsewhere)).toBe(false);
  });

  it("a run folder linked into $MAESTRO_HOME/runs/ or inside .workflow/ is reconciled; the CLI's default home is the daemon's", () => {
    const p = project();
    const src = runLinkedTo(p, join(p.root.home, 'runs', 'task-1', 'run-1'));
    createRun(p.root, 's-1', { runId: 'run-2', linkTo: join(p.root.workflowDir, 'elsewhere', 'run-2') });
    expect(sessionSources(p.root, 's-1').map((s) => s.rid)).toEqual(['session', 'run-1', 'run-2']);
    expect(reconcileSource(lc, p.root, src).run_id).toBe('run-1');
    // No MAESTRO_HOME: the same default as the daemon's (~/.maestro), whose runs/ this temp folder is not in.
    const cli = resolveWorkflowRoot({ workflowRoot: p.dir, env: {} });
    expect(orchestratorRunsDir(cli)).toBe(join(homedir(), '.maestro', 'runs'));
    expect(() => sessionSources(cli, 's-1')).toThrow(`outside the project's ${p.root.workflowDir} and the orchestrator's run folder ${join(homedir(), '.maestro', 'runs')}`);
  });

  it('.active-run linked to a file outside is neither read nor written through', () => {
    const p = project();
    createSession(p.root, 's-1');
    createRun(p.root, 's-1', { runId: 'run-1' });
    const secret = join(tmpDir(), 'secret.txt');
    writeFileSync(secret, 'TOPSECRET words\n');
    const file = join(sessionsDir(p.root), '.active-run');
    symlinkSync(secret, file);
    const refused = expect.objectContaining({ code: 'PATH_OUTSIDE_PROJECTS', message: expect.stringContaining(`Refusing to read ${file}: ${file} is a symbolic link leading to ${secret}`) });
    expect(() => activeRun(p.root, {})).toThrow(refused);
    let message = '';
    try {
      stage(p.root, { target: 'spec', title: 'x', content: 'Logs rotate daily.' }, {});
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).toContain(`${file} is a symbolic link leading to ${secret}`);
    expect(message).not.toContain('TOPSECRET');
    expect(() => setActiveRun(p.root, 's-1', 'run-1')).toThrow(`Refusing to write ${file}: it is a symbolic link`);
    releaseActiveRun(p.root, 's-1', 'run-1'); // a seal goes on: the link names no run of ours
    expect(readFileSync(secret, 'utf8')).toBe('TOPSECRET words\n');
  });
});
