/**
 * Receipts, promotion receipts and ledgers are written only inside the project's `.workflow/`, even when the
 * caller got past the read guards (a link planted between a read and a write). The run folder is the designed
 * exception (a link to the orchestrator's run directory); the `runs/` folder above it is not.
 */
import { cpSync, existsSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { project } from '../../../../test/helpers/knowledge2.js';
import { createLifecycleContext } from '../context.js';
import { updatePromotions } from '../promote/promotion.js';
import { stage } from '../session/ops.js';
import { createRun, createSession, listRunIds, sessionDir } from '../session/store.js';
import { readSourceState, reconcileSource, runSource, sessionSource } from './receipt.js';

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
