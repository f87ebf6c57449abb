/**
 * The watched corpus read (corpusWatch.ts): it stats only what the watcher
 * names, and still sees every write that finished before the read — from
 * this thread with no event-loop turn in between, and from another process.
 * When the watcher cannot be trusted (a corpus directory replaced), the read
 * falls back to the full stat walk and stays exact. A corpus smaller than
 * the cache's threshold is statted and gets no thread until it grows.
 */
import { execFileSync } from 'node:child_process';
import { appendFileSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
// RACY_MS: a file or folder modified this recently before a read is read again by design.
import { CorpusCache, RACY_MS, readCorpus } from './corpusDocs.js';
import { sleepSync } from '../../../lib/sleepSync.js';

// 0: every watched read asks its watcher, however small the corpus (the default waits for WATCH_FROM_FILES files).
const cache = new CorpusCache({ watchFromFiles: 0 });
const sized = new CorpusCache({ watchFromFiles: 30 });

const dirs: string[] = [];
afterEach(async () => {
  await cache.unwatch();
  cache.clear();
  await sized.unwatch();
  sized.clear();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const entry = (sid: string, title: string) => `<spec-entry category="coding" keywords="k" date="2026-01-01" sid="${sid}" title="${title}">\n\n### ${title}\n\n${title} says something.\n\n</spec-entry>\n\n`;

function corpus(files = 40): string {
  const wf = join(mkdtempSync(join(tmpdir(), 'maestro-watch-')), '.workflow');
  dirs.push(join(wf, '..'));
  mkdirSync(join(wf, 'specs'), { recursive: true });
  mkdirSync(join(wf, 'knowhow'), { recursive: true });
  for (let f = 0; f < files; f++) writeFileSync(join(wf, 'specs', `f${f}.md`), entry(`S-20260101-${f.toString(16).padStart(4, '0')}`, `Rule ${f}`));
  for (let k = 0; k < files; k++) writeFileSync(join(wf, 'knowhow', `TIP-20260101-t${k}.md`), `---\ntitle: "Tip ${k}"\ntype: tip\n---\n\nTip ${k}.\n`);
  return wf;
}

/**
 * Until nothing in the corpus is within the racy window any more: the newest modification time of
 * its folders and files is more than RACY_MS old by the clock the read compares it with. A state
 * the read checks, not a guess at how long the machine needs.
 */
function settle(wf: string): void {
  const paths = [wf, ...['specs', 'knowhow'].flatMap((d) => [join(wf, d), ...readdirSync(join(wf, d)).map((f) => join(wf, d, f))])];
  const newest = Math.max(...paths.map((p) => statSync(p).mtimeMs));
  const left = newest + RACY_MS + 1 - Date.now();
  if (left > 0) sleepSync(left);
}

/** Reads until the watcher has taken over (a quiet read stats nothing): a state the reads show. */
function untilWatched(c: CorpusCache, wf: string): void {
  const deadline = Date.now() + 60_000;
  for (;;) {
    settle(wf);
    if (c.read(wf).statted === 0) return;
    if (Date.now() > deadline) throw new Error('the watcher never took over within 60 s');
    c.watch(wf); // a thread that missed its start time was closed: start another
    sleepSync(20);
  }
}

describe('watched corpus reads', () => {
  it('stat only what changed, and see a write made just before the read (same thread, no loop turn; another process)', () => {
    const wf = corpus();
    expect(cache.watch(wf, { waitStarted: true })).toBe(true);
    settle(wf);
    expect(cache.read(wf).statted).toBe(80); // first answer: the full walk that the watcher then keeps current
    const quiet = cache.read(wf);
    expect(quiet.statted).toBe(0);
    // Same thread, synchronously, immediately before the read.
    appendFileSync(join(wf, 'specs', 'f7.md'), entry('S-20260102-0001', 'Appended here'));
    const a = cache.read(wf);
    expect(a.statted).toBe(1);
    expect(a.fingerprint).toBe(readCorpus(wf).fingerprint);
    expect(a.fingerprint).not.toBe(quiet.fingerprint);
    // A second same-size write right away (same coarse mtime, likely): still seen, because every write is an event.
    writeFileSync(join(wf, 'specs', 'f8.md'), entry('S-20260101-0008', 'Rule X'));
    cache.read(wf);
    writeFileSync(join(wf, 'specs', 'f8.md'), entry('S-20260101-0008', 'Rule Y'));
    expect(cache.read(wf).fingerprint).toBe(readCorpus(wf).fingerprint);
    // Another process, finished before the read starts.
    settle(wf);
    execFileSync(process.execPath, ['-e', `require('fs').writeFileSync(${JSON.stringify(join(wf, 'knowhow', 'TIP-20260101-t3.md'))}, '---\\ntitle: "Tip 3"\\ntype: tip\\nstatus: deprecated\\n---\\n\\nTip 3.\\n')`]);
    const b = cache.read(wf);
    expect(b.statted).toBe(1); // the watcher reports every write: no racy re-reads
    expect(b.parsed).toBe(1);
    expect(b.fingerprint).toBe(readCorpus(wf).fingerprint);
    expect(b.docs.some((d) => d.id === 'knowhow-tip-20260101-t3')).toBe(false);
    // Created and deleted files.
    settle(wf);
    writeFileSync(join(wf, 'specs', 'new.md'), entry('S-20260103-0001', 'New file'));
    rmSync(join(wf, 'specs', 'f1.md'));
    const c = cache.read(wf);
    expect(c.statted).toBe(2); // new.md, f1.md
    expect(c.parsed).toBe(1);
    expect(c.fingerprint).toBe(readCorpus(wf).fingerprint);
  });

  it('a replaced corpus directory falls back to the full walk and stays exact', () => {
    const wf = corpus(10);
    cache.watch(wf, { waitStarted: true });
    cache.read(wf);
    rmSync(join(wf, 'specs'), { recursive: true });
    mkdirSync(join(wf, 'specs'));
    writeFileSync(join(wf, 'specs', 'only.md'), entry('S-20260104-0001', 'Only'));
    const r = cache.read(wf);
    expect(r.statted).toBe(11);
    expect(r.fingerprint).toBe(readCorpus(wf).fingerprint);
    // The new directory is watched from now on (by a new watcher, once it has started).
    expect(cache.watch(wf, { waitStarted: true })).toBe(true);
    settle(wf);
    cache.read(wf);
    appendFileSync(join(wf, 'specs', 'only.md'), entry('S-20260104-0002', 'Second'));
    const s = cache.read(wf);
    expect(s.statted).toBe(1);
    expect(s.parsed).toBe(1);
    expect(s.fingerprint).toBe(readCorpus(wf).fingerprint);
  });

  it('started in the background: reads stay exact until it has started, then stat only what changed', () => {
    const wf = corpus(10);
    // No wait: the caller goes on at once, and reads walk everything until the thread has its watches in place.
    expect(cache.watch(wf)).toBe(true);
    const early = cache.read(wf);
    expect(early.fingerprint).toBe(readCorpus(wf).fingerprint);
    appendFileSync(join(wf, 'specs', 'f2.md'), entry('S-20260105-0001', 'Written while the watcher starts'));
    expect(cache.read(wf).fingerprint).toBe(readCorpus(wf).fingerprint);
    // Once the thread has started, changes come from it.
    untilWatched(cache, wf);
    appendFileSync(join(wf, 'specs', 'f3.md'), entry('S-20260105-0002', 'Written once it watches'));
    const late = cache.read(wf);
    expect(late.statted).toBe(1);
    expect(late.fingerprint).toBe(readCorpus(wf).fingerprint);
  });

  it('a small corpus is statted with no thread; once a read finds it large enough, its watcher starts and takes over', () => {
    const wf = corpus(10); // 20 files, the threshold is 30
    expect(sized.watch(wf)).toBe(true);
    expect(sized.watch(wf, { waitStarted: true })).toBe(false); // no thread to wait for
    settle(wf);
    expect(sized.read(wf).statted).toBe(20);
    expect(sized.read(wf).statted).toBe(20); // every read stats every file: no watcher is asked
    expect(sized.watched).toEqual([]);
    appendFileSync(join(wf, 'specs', 'f2.md'), entry('S-20260106-0001', 'Seen by the stat walk'));
    expect(sized.read(wf).fingerprint).toBe(readCorpus(wf).fingerprint);
    // It grows past the threshold: the read that counts the files starts the thread.
    for (let f = 10; f < 20; f++) writeFileSync(join(wf, 'specs', `f${f}.md`), entry(`S-20260106-1${f}`, `Rule ${f}`));
    expect(sized.read(wf).fingerprint).toBe(readCorpus(wf).fingerprint);
    expect(sized.watched).toEqual([wf]);
    untilWatched(sized, wf);
    appendFileSync(join(wf, 'specs', 'f12.md'), entry('S-20260106-0002', 'Seen by the watcher'));
    const late = sized.read(wf);
    expect(late.statted).toBe(1);
    expect(late.fingerprint).toBe(readCorpus(wf).fingerprint);
  });

  it('a folder no longer watched starts no thread however large it grows', async () => {
    const wf = corpus(10);
    sized.watch(wf);
    await sized.unwatch(wf);
    for (let f = 10; f < 20; f++) writeFileSync(join(wf, 'specs', `f${f}.md`), entry(`S-20260107-1${f}`, `Rule ${f}`));
    expect(sized.read(wf).statted).toBe(30);
    expect(sized.watched).toEqual([]);
  });
});
