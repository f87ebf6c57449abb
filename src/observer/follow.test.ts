import { mkdirSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { tempDir, TranscriptBuilder, type TempDir } from './__fixtures__/transcript-builder.js';
import { resolveObserverConfig } from './config.js';
import { SessionFollower } from './follow.js';
import { openObserverSession } from './observe.js';
import { claudeProjectDirs, encodeProjectPath, locateSession } from './paths.js';
import type { ObserverSession } from './session.js';

let dir: TempDir;
beforeEach(() => {
  dir = tempDir();
});
afterEach(() => dir.cleanup());

describe("Claude Code's project folder", () => {
  it('replaces every character that is not an ASCII letter or digit with "-", as Claude Code names its folders', () => {
    expect(encodeProjectPath('/home/a/my_repo')).toBe('-home-a-my-repo');
    expect(encodeProjectPath('/Users/me/Open Source/app.v2')).toBe('-Users-me-Open-Source-app-v2');
    expect(encodeProjectPath('/home/a/Проект')).toBe('-home-a-------');
    expect(encodeProjectPath('C:\\git\\cc-plus')).toBe('C--git-cc-plus');
  });

  it('finds the newest session under CLAUDE_CONFIG_DIR, in the workspace folder or the one named after the cwd', () => {
    const claude = join(dir.path, 'claude config');
    const repo = join(dir.path, 'my repo');
    const sub = join(repo, 'pkg_a');
    mkdirSync(sub, { recursive: true });
    const env = { CLAUDE_CONFIG_DIR: claude };
    expect(() => locateSession({ env, workspaceRoot: repo, cwd: sub })).toThrow(/No Claude Code session with a user line in .*claude config\/projects\/-.*-my-repo; start `claude` in/);
    const rootDir = join(claude, 'projects', encodeProjectPath(repo));
    const subDir = join(claude, 'projects', encodeProjectPath(sub));
    new TranscriptBuilder().user('at the root').writeTo(join(rootDir, 'a.jsonl'));
    new TranscriptBuilder().user('in the package').writeTo(join(subDir, 'b.jsonl'));
    utimesSync(join(rootDir, 'a.jsonl'), new Date(1_000_000), new Date(1_000_000));
    expect(claudeProjectDirs(env, repo, sub)).toEqual([rootDir, subDir]);
    expect(locateSession({ env, workspaceRoot: repo, cwd: sub }).sessionId).toBe('b');
    // Subagent transcripts never count as the session.
    new TranscriptBuilder().user('subagent work').writeTo(join(rootDir, 'agent-1234.jsonl'));
    expect(locateSession({ env, workspaceRoot: repo, cwd: sub }).sessionId).toBe('b');
  });
});

describe('SessionFollower', () => {
  it('moves to a new session when one starts, and stops cleanly', async () => {
    const repo = join(dir.path, 'repo');
    mkdirSync(repo);
    const claude = join(dir.path, 'claude');
    const env = { CLAUDE_CONFIG_DIR: claude, FLOW_PROJECT_DIR: repo, FLOW_WIKI_DIR: join(dir.path, 'wiki') };
    const config = resolveObserverConfig(env, repo);
    const folder = join(claude, 'projects', encodeProjectPath(config.workspaceRoot));
    new TranscriptBuilder().user('first session question').turn({ answer: 'ok' }).writeTo(join(folder, 'first.jsonl'));
    utimesSync(join(folder, 'first.jsonl'), new Date(1_000_000), new Date(1_000_000));
    const seen: string[] = [];
    const follower = new SessionFollower({ config, checkMs: 60_000, runner: { pollMs: 60_000, watch: false }, onSession: (s: ObserverSession) => seen.push(s.sessionId) });
    follower.start(openObserverSession(config));
    try {
      expect(seen).toEqual(['first']);
      expect(follower.check()).toBe(false);
      // A file without a user line yet is not a session to move to.
      writeFileSync(join(folder, 'second.jsonl'), '{"type":"summary","summary":"x"}\n');
      expect(follower.check()).toBe(false);
      new TranscriptBuilder().user('second session question').writeTo(join(folder, 'second.jsonl'));
      expect(follower.check()).toBe(true);
      expect(seen).toEqual(['first', 'second']);
      expect(follower.session!.sessionId).toBe('second');
    } finally {
      // Let the step the runner started finish before the folder goes.
      await follower.session?.step();
      follower.stop();
      follower.stop();
    }
    expect(follower.session).toBeNull();
  });
});
