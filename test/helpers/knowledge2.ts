/** Helpers for the Knowledge II suites: temp roots with a seeded spec, the fabric-gui fixture, CLI runs. */
import { spawn } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect } from 'vitest';
import { resolveWorkflowRoot, type WorkflowRoot } from '../../src/knowledge/format/root.js';
import { maestroArgs } from './maestro.js';

const made: string[] = [];
afterEach(() => {
  for (const d of made.splice(0)) rmSync(d, { recursive: true, force: true });
});

export const FABRIC = join(import.meta.dirname, '..', 'fixtures', 'knowledge2', 'fabric-gui');
export const FABRIC_SID = '20260922-odyssey-ui-app';
export const FABRIC_RID = 'run-6401c7fc128f';

export function tmpDir(prefix = 'maestro-k2-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  made.push(dir);
  return dir;
}

export interface Project {
  dir: string;
  root: WorkflowRoot;
}

export function rootAt(dir: string): WorkflowRoot {
  return resolveWorkflowRoot({ workflowRoot: dir, env: { ...process.env, MAESTRO_HOME: join(dir, '.home') } });
}

/** A confined project with one spec entry (sid S-20260101-aaaa) unless `specs` is false. */
export function project(opts: { fixture?: 'fabric'; specs?: boolean } = {}): Project {
  const dir = tmpDir();
  if (opts.fixture === 'fabric') cpSync(FABRIC, dir, { recursive: true });
  mkdirSync(join(dir, '.workflow', 'specs'), { recursive: true });
  if (opts.specs !== false && !opts.fixture) writeFileSync(join(dir, '.workflow', 'specs', 'coding-conventions.md'), SPEC_FILE);
  return { dir, root: rootAt(dir) };
}

export const SPEC_FILE = `---
title: Coding conventions
category: coding
---

<spec-entry category="coding" keywords="errors,codes" date="2026-01-01" sid="S-20260101-aaaa" title="Errors carry codes">

### Errors carry codes

Every error thrown to a user must carry a stable error code and say what and where.

</spec-entry>

<spec-entry category="coding" keywords="retries,network" date="2026-01-02" sid="S-20260102-bbbb" title="Retry budget">

### Retry budget

Network calls should retry at most three times with exponential backoff and jitter.

</spec-entry>
`;

export function maestro(args: string[], env: NodeJS.ProcessEnv = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [...maestroArgs(), ...args], { env: { ...process.env, MAESTRO_SEARCH_DAEMON: 'off', MAESTRO_RUN_DIR: '', MAESTRO_SESSION_ID: '', MAESTRO_RUN_ID: '', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('exit', (code, signal) => resolve({ code: code ?? (signal ? -1 : null), stdout, stderr }));
  });
}

/** `maestro <args> --workflow-root <dir> --json` that must succeed quietly: its parsed answer. */
export function maestroOk(dir: string): (args: string[]) => Promise<any> {
  return async (args) => {
    const r = await maestro([...args, '--workflow-root', dir, '--json']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    return JSON.parse(r.stdout);
  };
}
