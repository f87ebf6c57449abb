import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadProjectConfig } from './projectConfig.js';

const repos: string[] = [];
afterEach(() => {
  for (const r of repos.splice(0)) rmSync(r, { recursive: true, force: true });
});

function repoWith(config: string): { repo: string; file: string } {
  const repo = mkdtempSync(join(tmpdir(), 'maestro-pconfig-'));
  repos.push(repo);
  mkdirSync(join(repo, '.maestro'));
  const file = join(repo, '.maestro', 'config.json');
  writeFileSync(file, config);
  return { repo, file };
}

describe('.maestro/config.json', () => {
  it('reads the map form of checks as name → command', () => {
    const { repo } = repoWith(JSON.stringify({ checks: { test: 'npm test', lint: ['npx', 'eslint', '.'] } }));
    expect(loadProjectConfig(repo).checks).toEqual([{ name: 'test', command: 'npm test' }, { name: 'lint', command: ['npx', 'eslint', '.'] }]);
  });

  it('refuses a check name it cannot use as CONFIG_INVALID naming the file and the check, not an internal error', () => {
    const { repo, file } = repoWith(JSON.stringify({ checks: { 'bad name!': 'true' } }));
    const err = (() => {
      try {
        loadProjectConfig(repo);
      } catch (e) {
        return e as Error & { code?: string };
      }
    })();
    expect(err?.code).toBe('CONFIG_INVALID');
    expect(err?.message).toContain(file);
    expect(err?.message).toContain('checks.bad name!');
    expect(err?.message).toContain('check names are letters, digits, _ . -');
  });

  it('says on which line a JSON syntax error is', () => {
    const { repo, file } = repoWith('{\n  "checks": {\n    "test": "npm test",\n  }\n}\n');
    expect(() => loadProjectConfig(repo)).toThrow(new RegExp(`${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} cannot be parsed: line 4: `));
  });
});
