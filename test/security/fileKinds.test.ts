/**
 * A FIFO where Maestro reads a file someone else writes (a project's config, the home's config.json, a run's
 * job.json, stages.json and outbox, a Claude Code transcript): refused at once, saying what it is. A plain
 * open blocked until a writer came, and in the daemon every request and tick with it. Each FIFO here has a
 * writer that holds it open for a while, so a reader that opens it the old way is not stuck for good: it reads
 * nothing once the writer leaves, and the test fails on what it got instead of hanging.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { resolveConfig } from '../../src/config/config.js';
import { loadProjectConfig } from '../../src/executor/projectConfig.js';
import { readJsonLines } from '../../src/executor/protocol/files.js';
import { readJob } from '../../src/executor/protocol/job.js';
import { readStages } from '../../src/executor/protocol/stages.js';
import { newestSession } from '../../src/observer/paths.js';
import { readTranscriptFile } from '../../src/observer/transcript/reader.js';
import { removeTempDirs, tempDir } from '../helpers/db.js';

const writers: ChildProcess[] = [];
afterEach(() => {
  for (const w of writers.splice(0)) w.kill('SIGKILL');
  removeTempDirs();
});

/** A FIFO at `path`, with a writer that opens it and leaves after 15 s (see the file's comment). */
function fifo(path: string): string {
  execFileSync('mkfifo', [path]);
  writers.push(spawn('sh', ['-c', `sleep 15 > '${path}'`], { stdio: 'ignore' }));
  return path;
}

const refusal = (path: string) => `${path} is a FIFO, not a regular file: nothing was read from it`;

describe('a FIFO in place of a file', () => {
  it("is refused as a project's config, as the home's config.json, and as a run's files, naming it", () => {
    const repo = tempDir('maestro-repo-');
    mkdirSync(join(repo, '.maestro'));
    const config = fifo(join(repo, '.maestro', 'config.json'));
    expect(() => loadProjectConfig(repo)).toThrow(`${config} cannot be read: ${refusal(config)}`);

    const home = tempDir('maestro-home-');
    const homeConfig = fifo(join(home, 'config.json'));
    expect(() => resolveConfig({ home }, {})).toThrow(refusal(homeConfig));

    const runDir = tempDir('maestro-run-');
    for (const name of ['job.json', 'stages.json', 'outbox.ndjson']) fifo(join(runDir, name));
    expect(() => readJob(runDir)).toThrow(refusal(join(runDir, 'job.json')));
    expect(() => readStages(runDir)).toThrow(refusal(join(runDir, 'stages.json')));
    expect(() => readJsonLines(join(runDir, 'outbox.ndjson'))).toThrow(refusal(join(runDir, 'outbox.ndjson')));
  });

  it('is passed over as a Claude Code transcript: the newest real session is the one observed', () => {
    const dir = tempDir('maestro-claude-project-');
    const real = join(dir, 'real.jsonl');
    writeFileSync(real, `${JSON.stringify({ type: 'user', message: { role: 'user', content: 'hi' } })}\n`);
    const planted = fifo(join(dir, 'newer.jsonl')); // made last: the newest
    expect(newestSession([dir])?.path).toBe(real);
    expect(() => readTranscriptFile(planted)).toThrow(refusal(planted));
  });
});

describe('a config file an editor saved with a byte-order mark', () => {
  it("is read as the same JSON, the project's and the home's", () => {
    const repo = tempDir('maestro-repo-');
    mkdirSync(join(repo, '.maestro'));
    writeFileSync(join(repo, '.maestro', 'config.json'), `\ufeff${JSON.stringify({ mergeStrategy: 'no-ff' })}`);
    expect(loadProjectConfig(repo).mergeStrategy).toBe('no-ff');
    const home = tempDir('maestro-home-');
    writeFileSync(join(home, 'config.json'), `\ufeff${JSON.stringify({ maxConcurrentRuns: 7 })}`);
    expect(resolveConfig({ home }, {}).maxConcurrentRuns).toBe(7);
  });
});

describe("a run's stages.json written over", () => {
  it('is refused naming the file and the field, not taken for a run with nothing done', () => {
    const runDir = tempDir('maestro-run-');
    const path = join(runDir, 'stages.json');
    writeFileSync(path, 'null\n');
    expect(() => readStages(runDir)).toThrow(`${path} is not a stages file: (root): `);
    writeFileSync(path, JSON.stringify({ done: 'abc' }));
    expect(() => readStages(runDir)).toThrow(`${path} is not a stages file: done: `);
    writeFileSync(path, JSON.stringify({ done: { plan: { at: 1, output: { ok: true } } }, consumedInbox: ['m1'] }));
    expect(readStages(runDir)).toEqual({ done: { plan: { at: 1, output: { ok: true } } }, consumedInbox: ['m1'], instructions: {}, usage: null });
  });
});
