/**
 * `maestro search` with this home's daemon running and without it: the same
 * stdout, stderr and exit code either way. A real daemon (temporary home,
 * port 0) holds the home's lock; the CLI finds it by that lock and asks it at
 * MAESTRO_URL, here a pass-through proxy in this process that counts the
 * searches it forwards, so each case also shows which path answered.
 */
import { cpSync, mkdirSync, writeFileSync } from 'node:fs';
import { createServer, request, type Server } from 'node:http';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { removeTempDirs, tempDir } from '../helpers/db.js';
import { startTestDaemon } from '../helpers/daemon.js';
import { cleanEnv, cliFor, gitRepo, ROOT } from './helpers.js';
import { budget } from '../helpers/budget.js';

afterEach(() => removeTempDirs());

const FIXTURE = join(ROOT, 'test', 'fixtures', 'knowledge', 'mf-workflow', '.workflow');

/** Forwards every request to `target` unchanged and counts the knowledge searches among them. */
async function countingProxy(target: string): Promise<{ url: string; searches: () => number; searchUrls: string[]; close: () => Promise<void> }> {
  let searches = 0;
  const searchUrls: string[] = [];
  const server: Server = createServer((req, res) => {
    if (req.url?.startsWith('/api/knowledge/search')) {
      searches++;
      searchUrls.push(req.url);
    }
    const out = request(new URL(req.url ?? '/', target), { method: req.method, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    out.on('error', () => res.writeHead(502).end());
    req.pipe(out);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as { port: number };
  return { url: `http://127.0.0.1:${port}`, searches: () => searches, searchUrls, close: () => new Promise((r) => server.close(() => r())) };
}

/** A git repository holding the maestro-flow fixture's `.workflow/`. */
function projectWithKnowledge(): string {
  const repo = gitRepo();
  cpSync(FIXTURE, join(repo, '.workflow'), { recursive: true });
  return repo;
}

// Two CLI processes per case on a shared 2-core machine: generous time, no timing assertions.
describe('maestro search through the daemon and in process', { timeout: budget(300_000) }, () => {
  it('prints the same results, no-match notes and usage errors either way, and asks the daemon only for searches it may answer', async () => {
    const d = await startTestDaemon({}, { noOrchestrator: true });
    const proxy = await countingProxy(d.url);
    try {
      const { cli, cliJson } = cliFor(d.config.home);
      const repo = projectWithKnowledge();
      const added = await cliJson(['project', 'add', repo, '--name', 'docs', '--url', d.url]);
      expect(added.code).toBe(0);
      const stranger = tempDir('maestro-unregistered-');
      cpSync(FIXTURE, join(stranger, '.workflow'), { recursive: true });

      const warm = cleanEnv({ MAESTRO_URL: proxy.url });
      const cold = cleanEnv({ MAESTRO_SEARCH_DAEMON: 'off' });
      const cases: Array<{ args: string[]; asks: boolean }> = [
        { args: ['search', 'errors', 'imports', 'install', '--workflow-root', repo], asks: true },
        { args: ['search', 'release', 'checklist', '--json', '--workflow-root', repo], asks: true },
        { args: ['search', 'release', '--type', 'knowhow', '--limit', '2', '--json', '--workflow-root', repo], asks: true },
        { args: ['search', 'zzqxv', 'wqkkz', '--workflow-root', repo], asks: true },
        // An entry named by its id leads the page either way (the id alone, and among words).
        { args: ['search', 'S-20260611-k3x9', '--json', '--workflow-root', repo], asks: true },
        { args: ['search', 'errors', 'S-20260611-k3x9', '--workflow-root', repo], asks: true },
        // Not a registered project: the daemon refuses it, this process answers.
        { args: ['search', 'errors', 'imports', '--json', '--workflow-root', stranger], asks: true },
        // A probe writes nothing anywhere, and --code builds the code graph here: never asked.
        { args: ['search', 'errors', '--read-only-probe', '--json', '--workflow-root', repo], asks: false },
        { args: ['search', 'errors', '--code', '--json', '--workflow-root', repo], asks: false },
        { args: ['search', 'errors', '--limit', '0', '--workflow-root', repo], asks: false },
        { args: ['search', 'errors', '--limit', '0', '--json', '--workflow-root', repo], asks: false },
      ];
      for (const { args, asks } of cases) {
        const before = proxy.searches();
        const viaDaemon = await cli(args, warm);
        expect(proxy.searches() - before, args.join(' ')).toBe(asks ? 1 : 0);
        const inProcess = await cli(args, cold);
        expect(proxy.searches()).toBe(before + (asks ? 1 : 0));
        expect(viaDaemon, args.join(' ')).toEqual(inProcess);
      }
      // --no-daemon: this process answers, with the same output, even where the daemon would be asked.
      const before = proxy.searches();
      const noDaemon = await cli([...cases[0]!.args, '--no-daemon'], warm);
      expect(proxy.searches()).toBe(before);
      expect(noDaemon).toEqual(await cli(cases[0]!.args, cold));
      const first = await cli(cases[0]!.args, warm);
      expect(first.code).toBe(0);
      expect(first.stdout).toMatch(/^\d+ result\(s\) for "errors imports install"\n 1\. \[/);
      const named = JSON.parse((await cli(cases[4]!.args, warm)).stdout) as { results: Array<{ aliases: string[]; name: string }> };
      expect(named.results[0]!.aliases).toContain('S-20260611-k3x9');
      const among = await cli(cases[5]!.args, warm);
      expect(among.stdout).toContain(' 1. [');
      expect(among.stdout.split('\n')[1]).toContain(named.results[0]!.name);
      const usage = await cli(cases[9]!.args, warm);
      expect(usage.code).toBe(2);
      expect(usage.stderr).toContain('--limit must be an integer 1–200, got "0"');
    } finally {
      await proxy.close();
      await d.stop();
    }
  });

  it('finds what was written just before, through the daemon', async () => {
    const d = await startTestDaemon({}, { noOrchestrator: true });
    const proxy = await countingProxy(d.url);
    try {
      const { cli, cliJson } = cliFor(d.config.home);
      const repo = projectWithKnowledge();
      expect((await cliJson(['project', 'add', repo, '--url', d.url])).code).toBe(0);
      const warm = cleanEnv({ MAESTRO_URL: proxy.url });
      const args = ['search', 'quokka', 'wrangling', '--json', '--workflow-root', repo];
      const before = await cli(args, warm);
      expect(JSON.parse(before.stdout)).toMatchObject({ count: 0 });
      mkdirSync(join(repo, '.workflow', 'knowhow'), { recursive: true });
      writeFileSync(join(repo, '.workflow', 'knowhow', 'TIP-20260801-quokka.md'), '---\ntitle: "Quokka wrangling"\ntype: tip\n---\n\nQuokka wrangling needs patience.\n');
      const after = await cli(args, warm);
      expect(proxy.searches()).toBe(2);
      // Each search asks the daemon to re-check the files first: a CLI process may start within the daemon's
      // one-second throttle of the write, so the found entry alone does not show it (http.test.ts times that).
      expect(proxy.searchUrls.map((u) => new URL(u, 'http://x').searchParams.get('fresh'))).toEqual(['true', 'true']);
      expect(after.code).toBe(0);
      expect((JSON.parse(after.stdout) as { results: Array<{ name: string }> }).results.map((r) => r.name)).toEqual(['Quokka wrangling']);
    } finally {
      await proxy.close();
      await d.stop();
    }
  });
});
