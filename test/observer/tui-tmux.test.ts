/**
 * Drives the real `maestro observe` in a terminal: tmux runs it in a pane
 * beside nothing, we append to the transcript as Claude Code would, read the
 * screen with capture-pane, press keys with send-keys. Its own tmux server
 * (-L) so it never touches a user's sessions.
 */
import { poll } from '../helpers/wait.js';
import { execFileSync } from 'node:child_process';
import { appendFileSync, mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { tempDir, TranscriptBuilder, writeEntry, type TempDir } from '../../src/observer/__fixtures__/transcript-builder.js';
import { budget } from '../helpers/budget.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const SOCKET = `maestro-observe-test-${process.pid}`;

function hasTmux(): boolean {
  try {
    execFileSync('tmux', ['-V'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}
const TMUX = hasTmux();
if (!TMUX) process.stderr.write('\n!!! tmux not found: the terminal UI smoke test is SKIPPED (the Ink testing-library test still runs).\n\n');

const tmux = (...args: string[]) => execFileSync('tmux', ['-L', SOCKET, ...args], { encoding: 'utf8' });

async function screenWhere(pred: (s: string) => boolean, what: string, limitMs = 30_000): Promise<string> {
  let screen = '';
  try {
    return await poll(() => {
      screen = tmux('capture-pane', '-p', '-t', 'obs');
      return pred(screen) && screen;
    }, what, limitMs);
  } catch {
    throw new Error(`screen never showed ${what}; last screen:\n${screen}`);
  }
}

let dir: TempDir;
beforeEach(() => {
  dir = tempDir();
});
afterEach(() => {
  try {
    tmux('kill-server');
  } catch {
    // already gone
  }
  dir.cleanup();
});

describe.skipIf(!TMUX)('maestro observe in a real terminal (tmux)', () => {
  it('shows the session, follows appends, files an audit with k, quits with q', { timeout: budget(300_000) }, async () => {
    const repo = join(dir.path, 'repo');
    mkdirSync(repo);
    execFileSync('git', ['init', '-q'], { cwd: repo });
    const wiki = join(repo, 'wiki');
    writeEntry(wiki, 'contexts/debug/C001-retry.md', { id: '"C001"', request: '"Where the retry policy is defined"', tags: ['proj:repo'] }, '## 摘要\n\nsrc/retry.ts, maxAttempts 5.\n');
    const jsonl = join(dir.path, 'live.jsonl');
    const b = new TranscriptBuilder();
    b.user('where is the retry policy defined').turn({ tools: [{ name: 'Grep', input: { pattern: 'retry' } }], answer: 'src/retry.ts' }).writeTo(jsonl);
    // Ink draws nothing until exit when CI is set (it assumes no terminal); a person's terminal has no CI.
    const cmd = `cd ${repo} && env -u CI MAESTRO_FROM_SOURCE=1 ${process.execPath} ${join(ROOT, 'bin/maestro.js')} observe --session ${jsonl} --poll 100; echo OBSERVER-EXITED; sleep 60`;
    tmux('new-session', '-d', '-s', 'obs', '-x', '110', '-y', '40', cmd);

    // The first screen waits for the CLI to load from the sources through tsx: slow on a busy machine.
    let screen = await screenWhere((s) => s.includes('1/1'), 'the first exploration', 120_000);
    expect(screen).toContain('session live · 1 exploration ·');
    expect(screen).toContain('Done · 1 tool (Grep×1)');
    // Once the bundle is written the header says so (it used to keep saying "bundle miss").
    await screenWhere((s) => s.includes('bundle hit') && s.includes('SUMMARY where is the retry'), 'the header after the bundle is written');
    expect(screen).toMatch(/KNOWLEDGE C001 · Where the retry policy is defined/);

    appendFileSync(jsonl, b.user('and what is the backoff cap?').take());
    screen = await screenWhere((s) => s.includes('2/2'), 'the appended question');
    expect(screen).toContain('exp_2 · and what is the backoff cap?');
    expect(screen).toContain('Running');

    tmux('send-keys', '-t', 'obs', 'Up');
    await screenWhere((s) => s.includes('1/2'), 'the selection moving up');
    tmux('send-keys', '-t', 'obs', 'k');
    await screenWhere((s) => s.includes('Audit filed against C001'), 'the audit message');
    expect(readdirSync(join(wiki, 'knowledge', 'audit')).length).toBe(1);

    tmux('send-keys', '-t', 'obs', 'q');
    await screenWhere((s) => s.includes('OBSERVER-EXITED'), 'the observer exiting');
  });
});
