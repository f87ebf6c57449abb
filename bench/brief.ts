/**
 * Part of bench:knowledge: what a run's brief costs the daemon (KnowledgeBridge.briefFor through the
 * KnowledgeService, synchronous on its event loop at every run start), for a corpus of 300 entries with
 * no finished tasks and with 5,000 (3 runs each, every run's knowledge ledger under `.workflow/sessions/`),
 * and for 3,000 entries. Beside each: the same brief read as before (every source file checked, run ledgers
 * included, and the spec and knowhow files parsed again for the keywords), measured in the same run. Then a
 * fresh search (what an agent's `maestro search` asks the daemon for), and a search in a one-shot process (the
 * CLI with no daemon), each beside the same search with every source re-checked, as before.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { builtinSources, loadCorpus } from '../src/knowledge/format/corpus.js';
import { resolveWorkflowRoot } from '../src/knowledge/format/root.js';
import { KnowledgeBridge } from '../src/knowledge/lifecycle/bridge.js';
import { buildKeywordIndex } from '../src/knowledge/search/keywordIndex.js';
import { openKnowledge } from '../src/knowledge/knowledge.js';
import { KnowledgeService, resolveKnowledgeConfig } from '../src/knowledge/service.js';

const WORDS = 'alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike november oscar papa quebec romeo sierra tango uniform victor whiskey xray yankee zulu'.split(' ');
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

function project(entries: number, tasks: number): string {
  const dir = mkdtempSync(join(tmpdir(), 'maestro-bench-brief-'));
  const knowhow = join(dir, '.workflow', 'knowhow');
  const specs = join(dir, '.workflow', 'specs');
  mkdirSync(knowhow, { recursive: true });
  mkdirSync(specs, { recursive: true });
  const words = (i: number) => Array.from({ length: 12 }, (_, j) => WORDS[(i * 7 + j * 3) % WORDS.length]).join(' ');
  const specCount = Math.floor(entries / 2);
  writeFileSync(join(specs, 'coding.md'), Array.from({ length: specCount }, (_, i) => `<spec-entry category="coding" keywords="${WORDS[i % WORDS.length]}${i}" date="2026-01-01" title="Rule ${i}">\n\n### Rule ${i}\n\n${words(i)}\n\n</spec-entry>\n`).join('\n'));
  for (let i = 0; i < entries - specCount; i++) writeFileSync(join(knowhow, `TIP-20260101-t${i}.md`), `---\ntitle: "Tip ${WORDS[i % WORDS.length]} ${i}"\ntype: tip\n---\n\n${words(i)}\n`);
  for (let t = 0; t < tasks; t++) {
    for (let r = 0; r < 3; r++) {
      const run = join(dir, '.workflow', 'sessions', `task-t${t}`, 'runs', `run-${r}`);
      mkdirSync(run, { recursive: true });
      writeFileSync(join(run, 'knowledge-delta.json'), JSON.stringify({ session_id: `task-t${t}`, run_id: `run-${r}`, inputs: [{ knowledge_id: `knowhow-tip-20260101-t${t % 10}`, signal: 'consumed' }] }));
    }
  }
  return dir;
}

interface Figures {
  brief: { now: number; before: number };
  search: { now: number; before: number };
  oneShot: { now: number; before: number };
}

/** Median ms of a brief and of a fresh search now, and of the same reads as before, on one project. */
async function measure(dir: string): Promise<Figures> {
  const env = { ...process.env, MAESTRO_HOME: join(dir, '.home') };
  const service = new KnowledgeService({ ...resolveKnowledgeConfig(env), embedder: null });
  service.start();
  try {
    const bridge = KnowledgeBridge.forService(service, env);
    const root = resolveWorkflowRoot({ workflowRoot: dir, includeGlobal: true, env });
    const text = (i: number) => `Build the ${WORDS[i % WORDS.length]} thing ${i}`;
    const k = service.pool.get(dir, true);
    k.sync(); // the index exists, as in a daemon that has served searches
    const ms = (f: () => void) => {
      const t = performance.now();
      f();
      return performance.now() - t;
    };
    const runs = { brief: [] as number[], briefBefore: [] as number[], search: [] as number[], searchBefore: [] as number[], oneShot: [] as number[], oneShotBefore: [] as number[] };
    const oneShot = (i: number, before: boolean) => {
      // As before: one scan of every source (sync, which the throttle then counts as the search's scan).
      const one = openKnowledge({ workflowRoot: dir, includeGlobal: true, embedder: null, env, syncIntervalMs: before ? 3_600_000 : 0 });
      if (before) one.sync();
      one.search(text(i), { readOnlyProbe: true });
      one.close();
    };
    for (let i = 0; i < 15; i++) {
      runs.brief.push(ms(() => bridge.briefFor({ id: `t${i}`, title: text(i) }, dir)));
      runs.briefBefore.push(ms(() => {
        buildKeywordIndex(loadCorpus(builtinSources(root)).entries).match(text(i), 5);
        k.sync();
        k.search(text(i), { limit: 6, readOnlyProbe: true });
      }));
      runs.search.push(ms(() => (k.sync({ graph: false }), k.search(text(i), { readOnlyProbe: true }))));
      runs.searchBefore.push(ms(() => (k.sync(), k.search(text(i), { readOnlyProbe: true }))));
      if (i < 5) {
        runs.oneShot.push(ms(() => oneShot(i, false)));
        runs.oneShotBefore.push(ms(() => oneShot(i, true)));
      }
    }
    const pair = (now: number[], before: number[]) => ({ now: median(now), before: median(before) });
    return { brief: pair(runs.brief, runs.briefBefore), search: pair(runs.search, runs.searchBefore), oneShot: pair(runs.oneShot, runs.oneShotBefore) };
  } finally {
    await service.stop();
  }
}

export async function benchBrief(): Promise<void> {
  console.log('\n== a run\'s brief (synchronous in the daemon at every run start), a fresh search (an agent\'s maestro search), a search with no daemon ==');
  const rows: Figures[] = [];
  for (const [entries, tasks] of [[300, 0], [300, 5000], [3000, 0]] as const) {
    const dir = project(entries, tasks);
    try {
      const m = await measure(dir);
      rows.push(m);
      const fig = (f: { now: number; before: number }) => `${f.now.toFixed(2)} ms (as before ${f.before.toFixed(2)} ms, ${(f.before / f.now).toFixed(1)}× less)`;
      console.log(`${entries} entries, ${String(tasks).padStart(4)} finished tasks (${tasks * 3} run ledgers): brief ${fig(m.brief)}   search ${fig(m.search)}   one-shot search ${fig(m.oneShot)}`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  const ratio = (f: (x: Figures) => number) => (f(rows[1]!) / f(rows[0]!)).toFixed(2);
  console.log(`ratio 5,000 finished tasks / none (1× = independent of history): brief ${ratio((x) => x.brief.now)}× (as before ${ratio((x) => x.brief.before)}×), search ${ratio((x) => x.search.now)}× (as before ${ratio((x) => x.search.before)}×), one-shot search ${ratio((x) => x.oneShot.now)}× (as before ${ratio((x) => x.oneShot.before)}×)`);
}
