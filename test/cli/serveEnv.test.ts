/**
 * `maestro serve` configures the daemon from the environment the CLI started with: its knowledge
 * searches resolve a project's personal specs with the daemon's MAESTRO_UID. (serve once passed the
 * daemon no environment at all, so it answered as if MAESTRO_UID, FLOW_* and every credential were unset.)
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { trackResource } from '../../src/lib/resources.js';
import { budget } from '../helpers/budget.js';
import { removeTempDirs, tempDir } from '../helpers/db.js';
import { cleanEnv, cli, gitRepo, startCli } from './helpers.js';

afterEach(() => removeTempDirs());

const SPEC = `---
title: "Alice's notes"
category: coding
---

# Alice's notes

## Entries

### [2026-05-02] Quokka wrangling needs gloves
Always wear gloves when wrangling a quokka.
`;

describe('maestro serve', () => {
  it("hands the daemon the CLI's environment: a search through it finds the personal specs of the daemon's MAESTRO_UID", async () => {
    const home = tempDir('maestro-home-');
    const repo = gitRepo();
    mkdirSync(join(repo, '.workflow', 'collab', 'specs', 'alice'), { recursive: true });
    writeFileSync(join(repo, '.workflow', 'collab', 'specs', 'alice', 'notes.md'), SPEC);
    const child = startCli(['serve', '--home', home, '--port', '0', '--no-demo'], cleanEnv({ MAESTRO_UID: 'alice' }));
    const untrack = trackResource('process', `daemon ${child.pid}`, () => child.kill('SIGKILL'));
    let err = '';
    child.stderr!.on('data', (c: Buffer) => (err += c.toString()));
    try {
      const board = await new Promise<string>((resolve, reject) => {
        const check = () => {
          const m = /open the board: (\S+)/.exec(err);
          if (m && err.includes('Ctrl-C stops')) resolve(m[1]!);
        };
        child.stderr!.on('data', check);
        child.once('exit', (code) => reject(new Error(`serve exited (${code}) before it was ready: ${err}`)));
      });
      const url = new URL(board).origin;
      // The CLI below has no MAESTRO_UID: only the daemon knows alice, so only the daemon can find her spec.
      const env = cleanEnv({ MAESTRO_HOME: home, MAESTRO_URL: url, MAESTRO_SEARCH_DAEMON: 'on' });
      const added = await cli(['project', 'add', repo, '--name', 'notes'], env);
      expect(added.code, added.stderr).toBe(0);
      const found = await cli(['search', 'quokka', 'gloves', '--json', '--workflow-root', repo], env);
      expect(found.code, found.stderr).toBe(0);
      const body = JSON.parse(found.stdout) as { count: number; results: Array<{ id: string; name: string }> };
      expect(body.results.map((r) => r.name)).toEqual(['Quokka wrangling needs gloves']);
      expect(body.results[0]!.id).toMatch(/^spec:personal:alice:/);
    } finally {
      child.kill('SIGTERM');
      await new Promise((r) => (child.exitCode !== null ? r(null) : child.once('exit', r)));
      untrack();
    }
  }, budget(180_000));
});
