/** Temporary workflow roots for the knowledge suites; removed after each test. */
import { cpSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach } from 'vitest';
import { resolveWorkflowRoot, type WorkflowRoot } from '../../src/knowledge/root.js';

const made: string[] = [];
afterEach(() => {
  for (const d of made.splice(0)) rmSync(d, { recursive: true, force: true });
});

export interface TempRoot {
  dir: string;
  root: WorkflowRoot;
}

/** A project folder with an empty `.workflow/`, confined (as with --workflow-root). */
export function tempRoot(fixture?: string): TempRoot {
  const dir = mkdtempSync(join(tmpdir(), 'maestro-knowledge-'));
  made.push(dir);
  if (fixture) cpSync(join(import.meta.dirname, '..', 'fixtures', 'knowledge', fixture), dir, { recursive: true });
  mkdirSync(join(dir, '.workflow'), { recursive: true });
  return { dir, root: resolveWorkflowRoot({ workflowRoot: dir, env: { ...process.env, MAESTRO_HOME: join(dir, '.home') } }) };
}
