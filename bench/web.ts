/**
 * bench:web — the board's weight and first render.
 *   1. Gzip size of the built app's JavaScript, beside React + ReactDOM alone
 *      (a one-line app built the same way, in this run): the app's own code is
 *      the difference. Target: under 300 KB gzip.
 *   2. The board's list payload (`view=board`) beside the full tasks' JSON.
 *   3. Time from navigation start to the first board render showing all tasks,
 *      in headless Chromium against a real daemon holding 1,000 tasks, beside
 *      the same with 100 tasks. Target: under 500 ms for 1,000.
 *   4. The reviewer's diff (bench/webDiff.ts): GET …/diff of 1,000 files
 *      (target < 300 ms) and the diff view of 5,000 lines over 200 files
 *      (target < 500 ms).
 * Prints figures and ratios; asserts nothing.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { gzipSync } from 'node:zlib';
import { build } from 'vite';
import { ensureWebBuilt, WEB_DIR } from '../src/api/web.js';
import { webRoutes } from '../src/api/web.js';
import { resolveConfig } from '../src/config/config.js';
import { startDaemon } from '../src/app/daemon.js';
import { browserSkipReason, launchBrowser } from '../test/web/browser.js';
import { diffFigures } from './webDiff.js';

const kb = (n: number) => `${(n / 1024).toFixed(1)} KB`;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

function gzipOfJs(dir: string): number {
  let total = 0;
  for (const f of readdirSync(join(dir, 'assets'))) if (f.endsWith('.js')) total += gzipSync(readFileSync(join(dir, 'assets', f)), { level: 9 }).length;
  return total;
}

async function sizes(): Promise<void> {
  const dist = ensureWebBuilt({ force: true });
  const app = gzipOfJs(dist);
  // Baseline: React + ReactDOM rendering one element, built by the same Vite in production mode.
  const tmp = mkdtempSync(join(WEB_DIR, '.bench-baseline-'));
  try {
    writeFileSync(join(tmp, 'index.html'), '<!doctype html><div id="root"></div><script type="module" src="./main.js"></script>');
    writeFileSync(join(tmp, 'main.js'), "import { createElement } from 'react';\nimport { createRoot } from 'react-dom/client';\ncreateRoot(document.getElementById('root')).render(createElement('div', null, 'hi'));\n");
    await build({ root: tmp, logLevel: 'silent', configFile: false, build: { outDir: join(tmp, 'dist'), emptyOutDir: true } });
    const react = gzipOfJs(join(tmp, 'dist'));
    console.log('bundle (gzip -9 of every JS file in web/dist/assets)');
    console.log(`  whole app JS:             ${kb(app)}`);
    console.log(`  React + ReactDOM alone:   ${kb(react)}  (baseline)`);
    console.log(`  the app's own code:       ${kb(app - react)}  (whole / baseline = ${(app / react).toFixed(2)}x)  target < 300 KB: ${app - react < 300 * 1024 ? 'met' : 'NOT met'}`);
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

async function firstRender(): Promise<void> {
  const skip = browserSkipReason();
  if (skip) {
    console.log(`first render: SKIPPED — ${skip}`);
    return;
  }
  const home = mkdtempSync(join(tmpdir(), 'maestro-bench-web-'));
  const repo = join(home, 'repo');
  mkdirSync(repo);
  execFileSync('git', ['init', '-q', '-b', 'main'], { cwd: repo });
  const sink = new Writable({ write: (_c, _e, cb) => cb() });
  const daemon = await startDaemon({ ...resolveConfig({ home, port: 0 }, {}), logLevel: 'error' }, { env: process.env, noOrchestrator: true, logDestination: sink, plugins: [(app) => webRoutes(app)] });
  const browser = await launchBrowser();
  try {
    // Log the browser in once, as a person opening the printed link does; the token it leaves in the board's storage serves every later page.
    const login = await browser.context.newPage();
    await login.goto(daemon.boardUrl);
    await login.close();
    const figures: Record<number, number> = {};
    const renderFigures: Record<number, number> = {};
    for (const n of [100, 1000]) {
      const project = await daemon.store.projects.create({ name: `bench-${n}`, repoPath: repo, config: {} });
      const statuses = 4;
      for (let i = 0; i < n; i++) {
        const t = await daemon.store.tasks.create({ projectId: project.id, title: `Task ${i}: ${'a fairly ordinary title '.repeat(1 + (i % 3))}`, priority: (i % 3) as 0 | 1 | 2 });
        if (i % statuses === 1) await daemon.store.tasks.transition(t.id, 'cancelled', { from: 'ready', reason: 'bench' });
      }
      // The list payload the board asks for (slim rows) beside the full tasks, in this run.
      const bytes = async (view: string) => (await (await fetch(`${daemon.url}/api/tasks?projectId=${project.id}&limit=5000&view=${view}`, { headers: { authorization: `Bearer ${daemon.token}` } })).arrayBuffer()).byteLength;
      const [full, slim] = [await bytes('full'), await bytes('board')];
      console.log(`  ${String(n).padStart(5)} tasks: list payload ${kb(slim)} (view=board) vs ${kb(full)} full tasks (baseline), ${(slim / full).toFixed(2)}x`);
      const times: number[] = [];
      // The render alone: from the moment the tasks and the app are both in to the board showing them.
      const renders: number[] = [];
      for (let round = 0; round < 7; round++) {
        const page = await browser.context.newPage();
        await page.addInitScript(`localStorage.setItem('maestro.project', ${JSON.stringify(project.id)})`);
        // The moment React commits the board with every task counted, seen by a MutationObserver
        // (a microtask after the DOM change, so it does not depend on how often the page is polled).
        await page.addInitScript(`
          window.__boardAt = null;
          new MutationObserver(() => {
            const el = document.querySelector('[data-testid="task-count"]');
            if (window.__boardAt === null && el && el.textContent === '${n} tasks') window.__boardAt = performance.now();
          }).observe(document, { subtree: true, childList: true, characterData: true });`);
        await page.goto(`${daemon.url}/#/board`);
        const ms = await page.waitForFunction('window.__boardAt', undefined, { polling: 50, timeout: 30_000 });
        times.push(Number(await ms.jsonValue()));
        {
          // A string, not a function: tsx would wrap a function with helpers the page does not have.
          const parts = (await page.evaluate(`(() => {
            const nav = performance.getEntriesByType('navigation')[0];
            const res = performance.getEntriesByType('resource');
            const find = (s) => res.find((r) => r.name.includes(s));
            return { dcl: nav.domContentLoadedEventEnd, projects: find('/api/projects')?.responseEnd, tasks: find('/api/tasks')?.responseEnd, tasksStart: find('/api/tasks')?.startTime };
          })()`)) as { dcl: number; projects?: number; tasks?: number; tasksStart?: number };
          // index.html asks for the tasks before the app's code arrives, so the render starts when both are in.
          renders.push(times[times.length - 1]! - Math.max(parts.tasks ?? 0, parts.dcl));
          if (round === 6) console.log(`    (last round: DOM ready ${parts.dcl.toFixed(0)} ms, projects answered ${parts.projects?.toFixed(0)} ms, tasks asked ${parts.tasksStart?.toFixed(0)} / answered ${parts.tasks?.toFixed(0)} ms)`);
        }
        await page.close();
      }
      figures[n] = median(times.slice(2)); // the first rounds warm the HTTP cache and the JIT
      renderFigures[n] = median(renders.slice(2));
      console.log(`  ${String(n).padStart(5)} tasks: median ${figures[n]!.toFixed(0)} ms from navigation start to the board (rounds: ${times.map((t) => t.toFixed(0)).join(', ')}); render once data and code are in: ${renderFigures[n]!.toFixed(0)} ms`);
    }
    console.log(`first render, 1,000 vs 100 tasks (baseline): navigation → board ${(figures[1000]! / figures[100]!).toFixed(2)}x, data → board ${(renderFigures[1000]! / renderFigures[100]!).toFixed(2)}x`);
    console.log(`target < 500 ms for 1,000 tasks: navigation → board ${figures[1000]! < 500 ? 'met' : 'NOT met'} (${figures[1000]!.toFixed(0)} ms), data → board ${renderFigures[1000]! < 500 ? 'met' : 'NOT met'} (${renderFigures[1000]!.toFixed(0)} ms)`);
  } finally {
    await browser.close();
    await daemon.stop({ graceMs: 0 });
    rmSync(home, { recursive: true, force: true });
  }
}

await sizes();
console.log('first board render in headless Chromium');
await firstRender();
await diffFigures();
