/**
 * What importing a run's stored ledger at a task's gate (knowledge/lifecycle/session/importRun.ts) costs the daemon:
 * a ledger of 1,000 candidates against a corpus of 1,000 spec entries, imported as the daemon does on the first
 * GET /api/tasks/:id at exec_review. Printed: the whole import, and the event loop's longest block during it (the
 * candidates are scored ahead in slices; reconciled at once, the loop was held for the whole import, ~1.5 s here).
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { resolveWorkflowRoot } from '../src/knowledge/format/root.js';
import { createLifecycleContext } from '../src/knowledge/lifecycle/context.js';
import { emptyLedger, stageInto } from '../src/knowledge/lifecycle/ledger/ledger.js';
import { importStoredRun } from '../src/knowledge/lifecycle/session/importRun.js';
import { createSession } from '../src/knowledge/lifecycle/session/store.js';

let seed = 7;
const rnd = () => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff);
const WORDS = Array.from({ length: 5000 }, () => Array.from({ length: 3 + Math.floor(rnd() * 7) }, () => String.fromCharCode(97 + Math.floor(rnd() * 26))).join(''));
const pick = () => WORDS[Math.min(WORDS.length - 1, Math.floor(Math.pow(WORDS.length, rnd())) - 1)]!;
const sentence = (n: number) => Array.from({ length: n }, pick).join(' ');

export async function benchImport(entries = 1000, candidates = 1000): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'maestro-bench-import-'));
  try {
    mkdirSync(join(dir, '.workflow', 'specs'), { recursive: true });
    const blocks = Array.from({ length: entries }, (_, n) => `<spec-entry category="coding" keywords="${pick()}" date="2026-01-01" sid="S-20260101-${n.toString(16).padStart(6, '0')}" title="${sentence(4)}">\n\n### ${sentence(4)}\n\nThe ${pick()} must ${sentence(18)}.\n\n</spec-entry>`);
    for (let f = 0; f * 50 < entries; f++) writeFileSync(join(dir, '.workflow', 'specs', `file-${f}.md`), `${blocks.slice(f * 50, f * 50 + 50).join('\n\n')}\n`);
    const root = resolveWorkflowRoot({ workflowRoot: dir, env: { ...process.env, MAESTRO_HOME: join(dir, '.home') } });
    const sid = 'task-t-0123456789ab';
    const rid = 'r-0123456789abcdef';
    const now = '2026-12-07T10:00:00.000Z';
    const ledger = emptyLedger(sid, rid, now);
    for (let i = 0; i < candidates; i++) {
      const content = `The ${pick()} must ${sentence(16)}.`;
      stageInto(ledger, { target: 'spec', action: 'propose', title: content.slice(0, 60), content, category: 'coding', source_kind: 'decision', evidence_refs: [`run:${rid}`] }, now, 'bench');
    }
    // A daemon's long-lived context has read the project's corpus before (its watcher keeps it): so here too.
    const lc = createLifecycleContext({ embedder: null });
    lc.corpus.read(root.workflowDir);
    let longest = 0;
    let last = performance.now();
    let probing = true;
    const probe = () => {
      const t = performance.now();
      longest = Math.max(longest, t - last);
      last = t;
      if (probing) setImmediate(probe);
    };
    setImmediate(probe);
    const start = performance.now();
    await importStoredRun(lc, root, sid, { rid, command: 'execute', goal: 'bench', ledger: JSON.stringify(ledger), label: 'bench' }, () => createSession(root, sid, 'bench'));
    const total = performance.now() - start;
    probe();
    probing = false;
    console.log(`import of a stored ledger, ${ledger.candidates.length} candidates against ${entries} entries: ${total.toFixed(0)} ms in all; the event loop's longest block ${longest.toFixed(0)} ms (the whole import before it was scored ahead in slices)`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await benchImport();
