import { readFileSync, readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { resolveApiUrl } from '../cli/client.js';
import { claudeConfigDir, daemonUrlFromEnv, wikiDirFromEnv } from './env.js';

describe('one URL variable for the daemon', () => {
  it('MAESTRO_URL names the daemon; MAESTRO_DAEMON_URL still works, with a one-line warning, and loses to MAESTRO_URL', () => {
    const lines: string[] = [];
    const warn = (l: string) => lines.push(l);
    expect(daemonUrlFromEnv({ MAESTRO_URL: 'http://a:1' }, warn)).toBe('http://a:1');
    expect(daemonUrlFromEnv({}, warn)).toBeUndefined();
    expect(daemonUrlFromEnv({ MAESTRO_DAEMON_URL: '' }, warn)).toBeUndefined();
    expect(lines).toEqual([]);
    expect(daemonUrlFromEnv({ MAESTRO_DAEMON_URL: 'http://b:2' }, warn)).toBe('http://b:2');
    expect(lines).toEqual(['maestro: MAESTRO_DAEMON_URL is deprecated; set MAESTRO_URL=http://b:2 instead.']);
    expect(daemonUrlFromEnv({ MAESTRO_URL: 'http://a:1', MAESTRO_DAEMON_URL: 'http://b:2' }, warn)).toBe('http://a:1');
    expect(lines).toHaveLength(1);
  });

  it('the CLI client and the knowledge warm path read the same variable', () => {
    expect(resolveApiUrl(undefined, { MAESTRO_URL: 'http://a:1/' })).toBe('http://a:1');
    expect(() => resolveApiUrl(undefined, { MAESTRO_DAEMON_URL: 'nope' })).toThrow('The daemon URL "nope" (from MAESTRO_DAEMON_URL) is not a URL');
  });
});

const SRC = join(import.meta.dirname, '..');
function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? sources(join(dir, e.name)) : e.name.endsWith('.ts') && !e.name.endsWith('.test.ts') ? [join(dir, e.name)] : []));
}

describe('the shared environment variables are read in src/config only', () => {
  it('no other source file reads MAESTRO_URL, MAESTRO_DAEMON_URL, MAESTRO_TOKEN, CLAUDE_CONFIG_DIR or FLOW_WIKI_DIR', () => {
    const read = /env(?:\.|\[['"])(MAESTRO_URL|MAESTRO_DAEMON_URL|MAESTRO_TOKEN|CLAUDE_CONFIG_DIR|FLOW_WIKI_DIR)\b/;
    const offenders = sources(SRC)
      .filter((f) => !relative(SRC, f).startsWith('config/'))
      .flatMap((f) => readFileSync(f, 'utf8').split('\n').flatMap((line, i) => (read.test(line) ? [`${relative(SRC, f)}:${i + 1}`] : [])));
    expect(offenders).toEqual([]);
  });

  it('one rule for the wiki folder and the Claude login folder', () => {
    expect(wikiDirFromEnv({}, '/p')).toBeUndefined();
    expect(wikiDirFromEnv({ FLOW_PROJECT_DIR: 'a', FLOW_ROOT_DIR: 'b' }, '/p')).toBe('/p/b/wiki');
    expect(wikiDirFromEnv({ FLOW_WIKI_DIR: 'w', FLOW_ROOT_DIR: 'b' }, '/p')).toBe('/p/w');
    expect(claudeConfigDir({ HOME: '/h' })).toBe('/h/.claude');
    expect(claudeConfigDir({ HOME: '/h', CLAUDE_CONFIG_DIR: '/c' })).toBe('/c');
  });
});
