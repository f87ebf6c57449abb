/**
 * A stopping daemon lets its tasks go only once what their runs proposed is stored in the database: the run's
 * sealed knowledge ledger (runAftermath.ts knowledgeFinished) is what a daemon taking the task over imports at the
 * gate, and a run whose ledger is missing is named there as one whose candidates cannot come. The Ingestor keeps
 * what each run's onFinal goes on doing and its stop waits for it (commit 4ece3806); this test fails without that.
 *
 * A real, large ledger makes the knowledge finish take its time: the execute's report accepts 600 decisions and
 * the project's specs hold 2,000 entries, so scoring them (in slices) outlasts the rest of the stop. The daemon
 * stops while the execute is in its agent stage; the stage finishes in the grace period, the run succeeds, and the
 * stop returns. Read after the stop: the task is let go (no claim) and the run's ledger, all 600 candidates, is
 * in the database. Without the wait, the stop closed the store first and no ledger was stored.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createStore } from '../../src/store/store.js';
import { openSqlite } from '../../src/store/sqlite.js';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { removeTempDirs, tempDir } from '../helpers/db.js';
import { makeRepo } from '../helpers/repo.js';
import { until } from '../helpers/wait.js';
import { budget } from '../helpers/budget.js';

// A report's frontmatter holds at most 64 KiB: 600 short decisions fit.
const DECISIONS = 600;
const ENTRIES = 2000;

const decision = (i: number) => `Module m${i} greets from src/g${i}.ts only.`;
const SCRIPT = `steps:
  - match: { role: execute }
    actions:
      - wait: 2000
      - write: { path: "a.txt", content: "hello\\n" }
      - write:
          path: .maestro/report.md
          content: |
            ---
            verdict: done
            summary: "greetings placed"
            decisions:
${Array.from({ length: DECISIONS }, (_, i) => `              - accepted: "${decision(i)}"`).join('\n')}
            ---
  - match: { role: review }
    actions:
      - verdict: { verdict: approve, findings: [] }
`;

const spec = (n: number) => `<spec-entry category="coding" keywords="k${n}" date="2026-01-01" sid="S-20260101-${n.toString(16).padStart(4, '0')}" title="Rule ${n} of module m${n}">\n\n### Rule ${n} of module m${n}\n\nModule m${n} logs through src/log${n}.ts and keeps its state in store${n}.\n\n</spec-entry>`;

describe('a stopping daemon and its runs\' knowledge', () => {
  let daemon: TestDaemon | null = null;
  afterEach(async () => {
    await daemon?.stop({ graceMs: 0 });
    daemon = null;
    removeTempDirs();
  });

  it("lets its task go only once the run's knowledge ledger is stored in the database", { timeout: budget(300_000) }, async () => {
    const repo = makeRepo({ 'README.md': '# test\n', '.workflow/specs/coding-conventions.md': `${Array.from({ length: ENTRIES }, (_, i) => spec(i)).join('\n\n')}\n` });
    const script = join(tempDir('maestro-script-'), 'script.yaml');
    writeFileSync(script, SCRIPT);
    const d = await startTestDaemon({ tickMs: 100 });
    daemon = d;
    const project = await d.store.projects.create({ name: 'p', repoPath: repo, config: { provider: { kind: 'scripted', script } } });
    const task = await d.store.tasks.create({ projectId: project.id, title: 'Greet', complexity: 'easy', ownedFiles: ['a.txt'] });
    d.orchestrator.kick();
    await until(d.bus, async () => (await d.store.events.list({ taskId: task.id, type: 'run.phase' })).events.some((e) => e.payload.stage === 'agent' && e.payload.state === 'start'), 'the execute in its agent stage', budget(120_000));
    // Stopped mid-stage: the stage finishes in the grace period, its run succeeds, the task is let go at review.
    daemon = null;
    await d.stop({ graceMs: 60_000 });

    const store = createStore(openSqlite(join(d.config.home, 'maestro.db')));
    try {
      const [execute] = await store.runs.list({ taskId: task.id });
      expect(execute).toMatchObject({ kind: 'execute', status: 'succeeded' });
      const released = (await store.events.list({ taskId: task.id, type: 'task.released' })).events;
      expect(released.map((e) => e.payload)).toEqual([expect.objectContaining({ status: 'reviewing' })]);
      const stored = (await store.runs.knowledgeOf([execute!.id])).get(execute!.id);
      expect(stored, 'the execute run\'s ledger stored before the stop let the task go').toEqual(expect.any(String));
      const ledger = JSON.parse(stored!) as { candidates: Array<{ content: string }> };
      expect(ledger.candidates).toHaveLength(DECISIONS);
      expect(ledger.candidates.map((c) => c.content)).toContain(decision(DECISIONS - 1));
    } finally {
      await store.close();
    }
  });
});
