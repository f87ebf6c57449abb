/**
 * `npm run bench:observer` — the observer's figures, each with a baseline
 * measured in the same run:
 *   1. parse throughput (MB/s) on a 50 MB transcript — vs a naive
 *      readFileSync + split + JSON.parse of every line (no cutting);
 *      plus the peak RSS of parsing it in a child process (target < 300 MB);
 *   2. tail latency from append to updated bundle on disk — fs.watch runner vs
 *      a poll-only runner (100 ms);
 *   3. prior retrieval per question on a 5,000-entry wiki — inverted index vs
 *      a linear scan scoring every entry;
 *   4. discovery of the newest session among 1,000 transcripts (what
 *      `maestro observe` does without --session) — vs reading every file whole;
 *   5. one huge line (a tool result of 50 MB and of 200 MB): time and peak RSS
 *      of the reader, vs the splitter it had before (which re-concatenated the
 *      partial line on every chunk: quadratic; run at 50 MB only unless
 *      `huge-full` is passed, as 200 MB took 195 s).
 * Targets: ≥ 50 MB/s; tail < 100 ms; retrieval < 5 ms/question; < 300 MB;
 * discovery < 50 ms.
 * Prints figures; asserts nothing.
 */
import { execFileSync } from 'node:child_process';
import { appendFileSync, closeSync, mkdirSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync, writeSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { writeLargeTranscript } from '../src/observer/__fixtures__/large-transcript.js';
import { TranscriptBuilder } from '../src/observer/__fixtures__/transcript-builder.js';
import { readTranscriptFile } from '../src/observer/transcript/reader.js';
import { ObserverRunner } from '../src/observer/runner.js';
import { ObserverSession } from '../src/observer/session.js';
import { InMemoryWikiRetriever } from '../src/observer/wiki/retriever.js';
import { listWikiEntries } from '../src/knowledge/format/wiki/entries.js';
import { claudeProjectDirs, encodeProjectPath, newestSession } from '../src/observer/paths.js';
import { matchTokens, normalizeMatchText, requestSimilarity } from '../src/observer/text.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const work = mkdtempSync(join(tmpdir(), 'maestro-bench-observer-'));
const MB = 1024 * 1024;

function pct(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

function fmt(n: number, digits = 2): string {
  return n.toFixed(digits);
}

async function parseThroughput(): Promise<void> {
  const path = join(work, 'big.jsonl');
  const { bytes, explorations } = writeLargeTranscript(path, 50 * MB);
  const size = bytes / MB;
  readTranscriptFile(path); // warm-up (JIT, page cache)
  // Ours and the baseline alternate, so a burst of load from other processes hits both alike.
  // Wall time is what a user waits; CPU time (process.cpuUsage) is the work done, much less
  // sensitive to how many other processes share the cores.
  const runs = 5;
  const ours: Array<{ wall: number; cpu: number }> = [];
  const naive: Array<{ wall: number; cpu: number }> = [];
  const timed = (f: () => void) => {
    const c = process.cpuUsage();
    const t = performance.now();
    f();
    const d = process.cpuUsage(c);
    return { wall: performance.now() - t, cpu: (d.user + d.system) / 1000 };
  };
  for (let i = 0; i < runs; i += 1) {
    ours.push(
      timed(() => {
        if (readTranscriptFile(path).explorations.length !== explorations) throw new Error('parse mismatch');
      }),
    );
    naive.push(
      timed(() => {
        let n = 0;
        for (const line of readFileSync(path, 'utf8').split('\n')) {
          try {
            if (JSON.parse(line)) n += 1;
          } catch {
            // skip
          }
        }
        if (!n) throw new Error('naive parse found nothing');
      }),
    );
  }
  const rate = (ms: number) => size / (ms / 1000);
  const best = (xs: Array<{ wall: number; cpu: number }>, k: 'wall' | 'cpu') => Math.min(...xs.map((x) => x[k]));
  const median = (xs: Array<{ wall: number; cpu: number }>, k: 'wall' | 'cpu') => pct(xs.map((x) => x[k]), 50);
  const oursRate = rate(best(ours, 'wall'));
  console.log(`parse: ${fmt(size, 1)} MB, ${explorations} explorations, ${runs} alternating runs each`);
  console.log(
    `  observer reader     best ${fmt(oursRate, 1)} MB/s (${fmt(best(ours, 'wall'), 0)} ms)  median ${fmt(rate(median(ours, 'wall')), 1)} MB/s  CPU-time ${fmt(rate(best(ours, 'cpu')), 1)} MB/s   target ≥ 50 MB/s: ${oursRate >= 50 ? 'met' : 'NOT met'}`,
  );
  console.log(
    `  baseline naive      best ${fmt(rate(best(naive, 'wall')), 1)} MB/s (${fmt(best(naive, 'wall'), 0)} ms)  median ${fmt(rate(median(naive, 'wall')), 1)} MB/s  CPU-time ${fmt(rate(best(naive, 'cpu')), 1)} MB/s`,
  );
  console.log(
    `  ratio               best ${fmt(best(naive, 'wall') / best(ours, 'wall'))}×  median ${fmt(median(naive, 'wall') / median(ours, 'wall'))}×  CPU-time ${fmt(best(naive, 'cpu') / best(ours, 'cpu'))}×`,
  );
  const child = JSON.parse(
    execFileSync(process.execPath, ['--import', 'tsx', join(ROOT, 'src/observer/__fixtures__/parse-child.ts'), path], { cwd: ROOT, encoding: 'utf8' }).trim(),
  ) as { maxRssBytes: number };
  const rss = child.maxRssBytes / MB;
  console.log(`  peak RSS (child)    ${fmt(rss, 0)} MB   target < 300 MB: ${rss < 300 ? 'met' : 'NOT met'}\n`);
  rmSync(path);
}

async function tailLatency(watch: boolean, samples: number, pollMs: number): Promise<number[]> {
  const dir = mkdtempSync(join(work, 'tail-'));
  const jsonl = join(dir, 'live.jsonl');
  const wiki = join(dir, 'wiki');
  const bundle = join(wiki, 'sessions', 'live', 'bundle.json');
  const b = new TranscriptBuilder();
  b.user('first question').turn({ answer: 'ok' }).writeTo(jsonl);
  const session = new ObserverSession({ sessionId: 'live', jsonlPath: jsonl, wikiRoot: wiki, workspaceRoot: dir, projectSlug: 'bench' });
  let resolveStep: (() => void) | null = null;
  const runner = new ObserverRunner(session, { watch, pollMs, onStep: () => resolveStep?.() });
  runner.start();
  const waitFor = async (pred: () => boolean) => {
    while (!pred()) await new Promise<void>((r) => (resolveStep = r));
  };
  const inBundle = (id: string) => {
    try {
      return readFileSync(bundle, 'utf8').includes(`"${id}"`);
    } catch {
      return false;
    }
  };
  await waitFor(() => inBundle('exp_1'));
  const out: number[] = [];
  for (let i = 2; i < samples + 2; i += 1) {
    await new Promise((r) => setTimeout(r, 20));
    const chunk = b.user(`question number ${i} about the retry policy`).take();
    const t = performance.now();
    appendFileSync(jsonl, chunk);
    await waitFor(() => inBundle(`exp_${i}`));
    out.push(performance.now() - t);
  }
  runner.stop();
  return out;
}

async function tail(): Promise<void> {
  const watched = await tailLatency(true, 40, 500);
  const polled = await tailLatency(false, 10, 100);
  const p50 = pct(watched, 50);
  const p95 = pct(watched, 95);
  console.log(`tail latency (append → bundle.json on disk), ${watched.length} appends`);
  console.log(`  fs.watch runner     p50 ${fmt(p50, 1)} ms  p95 ${fmt(p95, 1)} ms  max ${fmt(Math.max(...watched), 1)} ms   target < 100 ms: ${p95 < 100 ? 'met' : 'NOT met'}`);
  console.log(`  baseline poll 100ms p50 ${fmt(pct(polled, 50), 1)} ms  p95 ${fmt(pct(polled, 95), 1)} ms   ratio p50 ${fmt(pct(polled, 50) / p50)}× p95 ${fmt(pct(polled, 95) / p95)}× faster\n`);
}

const WORDS = 'auth token session cache retry backoff deploy docker nginx proxy websocket queue worker schema migration index search parser lexer config logger metrics trace span router handler middleware cookie csrf cors upload storage bucket lambda cron job scheduler lock mutex pool connection timeout latency throughput memory leak crash panic'.split(' ');

function seedWiki(root: string, n: number): void {
  let seed = 7;
  const rand = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
  const pick = () => WORDS[Math.floor(rand() * WORDS.length)]!;
  for (let i = 1; i <= n; i += 1) {
    const words = [pick(), pick(), pick(), pick()];
    const id = `C${String(i).padStart(3, '0')}`;
    const dir = join(root, 'knowledge', 'contexts', ['debug', 'implement', 'devops', 'research'][i % 4]!);
    mkdirSync(dir, { recursive: true });
    const tags = i % 10 === 0 ? '  - "proj:other"' : i % 7 === 0 ? '  - "scope:global"' : '  - "proj:bench"';
    writeFileSync(
      join(dir, `${id}-${words.join('-')}.md`),
      `---\nid: "${id}"\nslug: "${words.join('-')}"\nrequest: "Fix the ${words[0]} ${words[1]} problem in the ${words[2]} ${words[3]}"\ntype: "context"\ntags:\n${tags}\n  - "${words[0]}"\nstatus: "draft"\n---\n\n# ${words.join(' ')}\n\n## 摘要\n\nThe ${words[0]} ${words[1]} failed because the ${words[2]} ${words[3]} was misconfigured; ${pick()} ${pick()} ${pick()}.\n\n## 解决方案\n\nSet the ${pick()} ${pick()} and restart the ${pick()}.\n`,
    );
  }
}

async function retrieval(): Promise<void> {
  const root = join(work, 'wiki5000');
  seedWiki(root, 5_000);
  let seed = 99;
  const rand = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
  const questions = Array.from({ length: 1_000 }, () => `why does the ${WORDS[Math.floor(rand() * WORDS.length)]} ${WORDS[Math.floor(rand() * WORDS.length)]} fail in the ${WORDS[Math.floor(rand() * WORDS.length)]}?`);
  const t0 = performance.now();
  const r = new InMemoryWikiRetriever(root, { projectSlug: 'bench', rescanIntervalMs: Infinity });
  r.refresh();
  const build = performance.now() - t0;
  let hits = 0;
  const per: number[] = [];
  for (const q of questions) {
    const t = performance.now();
    if (r.search({ text: q, derived: true })) hits += 1;
    per.push(performance.now() - t);
  }
  const mean = per.reduce((a, b) => a + b, 0) / per.length;
  // Baseline: what the notes' first match service did — score every entry on every question.
  const entries = listWikiEntries(root).entries;
  const baseQuestions = questions.slice(0, 50);
  const tb = performance.now();
  for (const q of baseQuestions) {
    const qt = matchTokens(q);
    let best = 0;
    for (const e of entries) {
      const text = `${e.request} ${e.summary} ${e.tags.join(' ')}`.toLowerCase();
      const coverage = qt.filter((t) => text.includes(t)).length / Math.max(1, qt.length);
      best = Math.max(best, 0.55 * coverage + 0.45 * requestSimilarity(q, e.request));
    }
    void normalizeMatchText(String(best));
  }
  const baseMean = (performance.now() - tb) / baseQuestions.length;
  console.log(`prior retrieval on ${entries.length} entries (${hits}/${questions.length} questions hit; index built in ${fmt(build, 0)} ms)`);
  console.log(`  inverted index      mean ${fmt(mean, 3)} ms  p95 ${fmt(pct(per, 95), 3)} ms  max ${fmt(Math.max(...per), 3)} ms   target < 5 ms: ${pct(per, 95) < 5 ? 'met' : 'NOT met'}`);
  console.log(`  baseline scan-all   mean ${fmt(baseMean, 3)} ms   ratio ${fmt(baseMean / mean, 1)}× faster`);
  // Live use: a question every 10 ms for 4 s while the wiki is rescanned in the background (default: once a second).
  const live = new InMemoryWikiRetriever(root, { projectSlug: 'bench' });
  live.refresh();
  const t1 = performance.now();
  await live.refreshAsync();
  const asyncRescan = performance.now() - t1;
  const t2 = performance.now();
  live.refresh();
  const syncRescan = performance.now() - t2;
  const during: number[] = [];
  for (const q of questions.slice(0, 400)) {
    const t = performance.now();
    live.search({ text: q, derived: true });
    during.push(performance.now() - t);
    await new Promise((r) => setTimeout(r, 10));
  }
  await live.idle();
  console.log(`  during background rescans (1/s): p95 ${fmt(pct(during, 95), 3)} ms  max ${fmt(Math.max(...during), 3)} ms per question`);
  console.log(`  rescan with no changes: ${fmt(asyncRescan, 1)} ms in the background (a blocking one: ${fmt(syncRescan, 1)} ms)`);
}

async function discovery(): Promise<void> {
  const claude = join(work, 'claude');
  const repo = join(work, 'my_repo');
  mkdirSync(repo, { recursive: true });
  const folder = join(claude, 'projects', encodeProjectPath(repo));
  mkdirSync(folder, { recursive: true });
  const b = new TranscriptBuilder();
  // 1,000 sessions of ~20 KB each with spread mtimes; the newest few have no user line yet (a session just opened).
  for (let i = 0; i < 1_000; i += 1) {
    const path = join(folder, `${String(i).padStart(4, '0')}-session.jsonl`);
    if (i >= 997) writeFileSync(path, '{"type":"summary","summary":"starting"}\n');
    else {
      for (let k = 0; k < 8; k += 1) b.user(`question ${k} of session ${i} about the retry policy`).turn({ tools: [{ name: 'Read', input: { file_path: `src/f${k}.ts` }, result: 'x'.repeat(2_000) }], answer: 'ok' });
      b.writeTo(path);
    }
    const t = new Date(1_700_000_000_000 + i * 60_000);
    utimesSync(path, t, t);
  }
  const env = { CLAUDE_CONFIG_DIR: claude };
  const expected = '0996-session';
  const ours: number[] = [];
  const naive: number[] = [];
  for (let run = 0; run < 15; run += 1) {
    let t = performance.now();
    const found = newestSession(claudeProjectDirs(env, repo, repo));
    ours.push(performance.now() - t);
    if (found?.sessionId !== expected) throw new Error(`discovery found ${found?.sessionId}`);
    // Baseline: read every transcript whole, keep those with a user line, take the newest.
    t = performance.now();
    let best: { id: string; mtime: number } | null = null;
    for (const name of readdirSync(folder)) {
      const path = join(folder, name);
      if (!readFileSync(path, 'utf8').includes('"type":"user"')) continue;
      const mtime = statSync(path).mtimeMs;
      if (!best || mtime > best.mtime) best = { id: name.slice(0, -'.jsonl'.length), mtime };
    }
    naive.push(performance.now() - t);
    if (best?.id !== expected) throw new Error('baseline mismatch');
  }
  console.log(`discovery of the newest session among 1,000 transcripts (${fmt(statSync(join(folder, '0000-session.jsonl')).size / 1024, 0)} KB each), 15 runs`);
  console.log(`  observer            best ${fmt(Math.min(...ours), 1)} ms  median ${fmt(pct(ours, 50), 1)} ms   target < 50 ms: ${pct(ours, 50) < 50 ? 'met' : 'NOT met'}`);
  console.log(`  baseline read-all   best ${fmt(Math.min(...naive), 1)} ms  median ${fmt(pct(naive, 50), 1)} ms   ratio ${fmt(pct(naive, 50) / pct(ours, 50), 1)}× faster\n`);
  rmSync(claude, { recursive: true, force: true });
}

/** A transcript whose second line is one tool result of `bytes` bytes. */
function writeHugeLine(path: string, bytes: number): void {
  const fd = openSync(path, 'w');
  try {
    writeSync(fd, `${JSON.stringify({ type: 'user', timestamp: '2026-11-20T10:00:00.000Z', message: { role: 'user', content: 'dump the orders table' } })}\n`);
    writeSync(fd, `${JSON.stringify({ type: 'assistant', timestamp: '2026-11-20T10:00:01.000Z', message: { id: 'm1', role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_big', name: 'Bash', input: { command: 'cat dump.sql' } }], stop_reason: 'tool_use' } })}\n`);
    writeSync(fd, '{"type":"user","timestamp":"2026-11-20T10:00:05.000Z","message":{"role":"user","content":[{"tool_use_id":"toolu_big","type":"tool_result","content":"');
    const block = Buffer.alloc(MB, 'a');
    for (let left = bytes; left > 0; left -= block.length) writeSync(fd, block, 0, Math.min(block.length, left));
    writeSync(fd, '"}]}}\n');
    writeSync(fd, `${JSON.stringify({ type: 'assistant', timestamp: '2026-11-20T10:00:06.000Z', message: { id: 'm2', role: 'assistant', content: [{ type: 'text', text: 'done' }], stop_reason: 'end_turn' } })}\n`);
  } finally {
    closeSync(fd);
  }
}

function hugeLine(full: boolean): void {
  const child = (path: string, mode: 'now' | 'before') =>
    JSON.parse(execFileSync(process.execPath, ['--import', 'tsx', join(ROOT, 'src/observer/__fixtures__/huge-line-child.ts'), path, mode], { cwd: ROOT, encoding: 'utf8', maxBuffer: 16 * MB }).trim()) as {
      ms: number;
      toolStatus: string | null;
      issues: Array<{ line: number; reason: string }>;
      maxRssBytes: number;
    };
  const tiny = join(work, 'tiny.jsonl');
  writeHugeLine(tiny, 10);
  console.log(`one huge line (a tool result), read in a child process (node + tsx reading a tiny file: peak RSS ${fmt(child(tiny, 'now').maxRssBytes / MB, 0)} MB)`);
  for (const size of [50, 200]) {
    const path = join(work, `huge-${size}.jsonl`);
    writeHugeLine(path, size * MB);
    const now = child(path, 'now');
    const issue = now.issues[0] ? ` · reported: line ${now.issues[0].line}, ${now.issues[0].reason.split(';')[0]}` : '';
    console.log(`  ${size} MB line, reader now     ${fmt(now.ms / 1000, 2)} s  peak RSS ${fmt(now.maxRssBytes / MB, 0)} MB  tool ${now.toolStatus}${issue}`);
    if (size === 50 || full) {
      const before = child(path, 'before');
      console.log(`  ${size} MB line, reader before  ${fmt(before.ms / 1000, 2)} s  peak RSS ${fmt(before.maxRssBytes / MB, 0)} MB  tool ${before.toolStatus}   ratio ${fmt(before.ms / now.ms, 1)}× faster, ${fmt(before.maxRssBytes / now.maxRssBytes, 1)}× less memory`);
    } else console.log(`  ${size} MB line, reader before  not run (quadratic: 195 s and 677 MB measured on main; \`huge-full\` runs it)`);
    rmSync(path);
  }
  console.log('');
}

try {
  console.log(`observer benchmark (node ${process.version}, ${new Date().toISOString()}, load average ${loadavg().map((l) => l.toFixed(1)).join(' ')} on ${cpus().length} cores)\n`);
  // `npm run bench:observer -- retrieval` runs one part; no argument runs them all (`huge-full` adds the 200 MB baseline).
  const only = new Set(process.argv.slice(2));
  const want = (name: string) => only.size === 0 || (only.size === 1 && only.has('huge-full')) || only.has(name);
  if (want('parse')) await parseThroughput();
  if (want('tail')) await tail();
  if (want('retrieval')) await retrieval();
  if (want('discovery')) await discovery();
  if (want('huge') || only.has('huge-full')) hugeLine(only.has('huge-full'));
} finally {
  rmSync(work, { recursive: true, force: true });
}
