/** Real temporary git repositories and run directories for the pipeline suites. */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import type { JobInput } from '../../src/executor/protocol/job.js';

export interface Sandbox {
  root: string;
  repo: string;
  worktrees: string;
  runs: string;
  git(...args: string[]): string;
  commitFile(path: string, content: string, message?: string): string;
  script(steps: unknown[], name?: string): string;
  runDir(name: string): string;
  job(overrides: Partial<JobInput> & { kind: JobInput['kind'] }, script: string, runName?: string): JobInput;
  [Symbol.dispose](): void;
}

export function sandbox(): Sandbox {
  const root = mkdtempSync(join(tmpdir(), 'maestro-exec-'));
  const repo = join(root, 'repo');
  mkdirSync(repo);
  const git = (...args: string[]) => execFileSync('git', args, { cwd: repo, encoding: 'utf8', env: { ...process.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@t', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@t' } }).trim();
  git('init', '-q', '-b', 'main');
  const commitFile = (path: string, content: string, message = `edit ${path}`) => {
    mkdirSync(join(repo, path, '..'), { recursive: true });
    writeFileSync(join(repo, path), content);
    git('add', '--', path);
    git('commit', '-q', '-m', message);
    return git('rev-parse', 'HEAD');
  };
  commitFile('README.md', '# demo\n', 'initial');
  let n = 0;
  const sb: Sandbox = {
    root,
    repo,
    worktrees: join(root, 'worktrees'),
    runs: join(root, 'runs'),
    git,
    commitFile,
    script(steps, name = `script-${++n}.yaml`) {
      const p = join(root, name);
      writeFileSync(p, name.endsWith('.json') ? JSON.stringify({ steps }) : stringify({ steps }));
      return p;
    },
    runDir(name) {
      const d = join(root, 'runs', name);
      mkdirSync(d, { recursive: true });
      return d;
    },
    job(overrides, script, runName = `run-${overrides.kind}`) {
      return {
        schemaVersion: 1,
        runId: runName,
        taskId: 'T1',
        traceId: `trace-${runName}`,
        task: { title: 'Add greeting', complexity: 'medium', ownedFiles: [] },
        project: { id: 'p1', repoPath: repo, worktreeRoot: join(root, 'worktrees') },
        provider: { kind: 'scripted', script, callLog: join(root, 'calls.ndjson') },
        checks: [],
        ...overrides,
      } as JobInput;
    },
    [Symbol.dispose]() {
      rmSync(root, { recursive: true, force: true });
    },
  };
  return sb;
}

/** The data of a result record; fails the test with the record when the run ended in an error. */
export function resultData<T = Record<string, any>>(record: { type: string }): T {
  if (record.type !== 'result') throw new Error(`expected a result record, got ${JSON.stringify(record)}`);
  return (record as unknown as { data: T }).data;
}
