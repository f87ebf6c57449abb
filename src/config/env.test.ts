import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { resolveApiUrl } from '../api/client.js';
import { claudeConfigDir, defaultDaemonUrl, readTimeoutMs, searchDaemonSetting, wikiDirFromEnv } from './env.js';

describe('the daemon URL', () => {
  it('MAESTRO_URL, else this host at MAESTRO_PORT, else where the home\'s daemon listens; MAESTRO_SEARCH_DAEMON only says whether search asks it', () => {
    expect(defaultDaemonUrl({ MAESTRO_URL: 'http://a:1' })).toBe('http://a:1');
    expect(defaultDaemonUrl({ MAESTRO_PORT: '9' })).toBe('http://127.0.0.1:9');
    const home = mkdtempSync(join(tmpdir(), 'maestro-env-'));
    try {
      expect(defaultDaemonUrl({ MAESTRO_HOME: home })).toBe('http://127.0.0.1:4300');
      // A daemon on that home recorded where it listens: a client given only the home finds it.
      writeFileSync(join(home, 'daemon.url'), JSON.stringify({ url: 'http://127.0.0.1:4301', pid: process.pid, host: hostname() }));
      expect(defaultDaemonUrl({ MAESTRO_HOME: home })).toBe('http://127.0.0.1:4301');
      expect(defaultDaemonUrl({ MAESTRO_HOME: home, MAESTRO_PORT: '9' })).toBe('http://127.0.0.1:9');
      // Its process gone (a crash left the file), or on another host (a home on a shared disk): not believed.
      writeFileSync(join(home, 'daemon.url'), JSON.stringify({ url: 'http://127.0.0.1:4301', pid: 2 ** 22 + 17, host: hostname() }));
      expect(defaultDaemonUrl({ MAESTRO_HOME: home })).toBe('http://127.0.0.1:4300');
      writeFileSync(join(home, 'daemon.url'), JSON.stringify({ url: 'http://127.0.0.1:4301', pid: process.pid, host: 'elsewhere' }));
      expect(defaultDaemonUrl({ MAESTRO_HOME: home })).toBe('http://127.0.0.1:4300');
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
    expect(searchDaemonSetting({})).toBe('auto');
    expect(searchDaemonSetting({ MAESTRO_SEARCH_DAEMON: '' })).toBe('auto');
    expect(searchDaemonSetting({ MAESTRO_SEARCH_DAEMON: 'off' })).toBe('off');
    expect(searchDaemonSetting({ MAESTRO_SEARCH_DAEMON: 'On' })).toBe('on');
    expect(() => searchDaemonSetting({ MAESTRO_SEARCH_DAEMON: 'http://b:2' })).toThrow('MAESTRO_SEARCH_DAEMON must be auto, on or off');
    expect(() => searchDaemonSetting({ MAESTRO_DAEMON_URL: 'http://b:2' })).toThrow('MAESTRO_DAEMON_URL is gone');
  });

  it('the API client reads the same rule', () => {
    expect(resolveApiUrl(undefined, { MAESTRO_URL: 'http://a:1/' })).toBe('http://a:1');
    expect(() => resolveApiUrl(undefined, { MAESTRO_URL: 'nope' })).toThrow('The daemon URL "nope" (from MAESTRO_URL) is not a URL');
    // MAESTRO_PORT is read as the daemon reads it: a port, nothing else in the URL.
    expect(resolveApiUrl(undefined, { MAESTRO_PORT: '4391' })).toBe('http://127.0.0.1:4391');
    for (const port of ['abc', '99999', '4300/x', '4300?q']) {
      expect(() => resolveApiUrl(undefined, { MAESTRO_PORT: port }), port).toThrow(`MAESTRO_PORT must be a port number (0–65535), got "${port}".`);
    }
  });
});

const SRC = join(import.meta.dirname, '..');
function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? sources(join(dir, e.name)) : e.name.endsWith('.ts') && !e.name.endsWith('.test.ts') ? [join(dir, e.name)] : []));
}

describe('the shared environment variables are read in src/config only', () => {
  it('no other source file reads MAESTRO_URL, MAESTRO_SEARCH_DAEMON, MAESTRO_DAEMON_URL, MAESTRO_TOKEN, MAESTRO_READ_TIMEOUT, CLAUDE_CONFIG_DIR or FLOW_WIKI_DIR', () => {
    const read = /env(?:\.|\[['"])(MAESTRO_URL|MAESTRO_SEARCH_DAEMON|MAESTRO_DAEMON_URL|MAESTRO_TOKEN|MAESTRO_READ_TIMEOUT|CLAUDE_CONFIG_DIR|FLOW_WIKI_DIR)\b/;
    const offenders = sources(SRC)
      .filter((f) => !relative(SRC, f).startsWith('config/'))
      .flatMap((f) => readFileSync(f, 'utf8').split('\n').flatMap((line, i) => (read.test(line) ? [`${relative(SRC, f)}:${i + 1}`] : [])));
    expect(offenders).toEqual([]);
  });

  it('MAESTRO_READ_TIMEOUT: seconds, a minute when unset or empty, refused when no positive number up to an hour', () => {
    expect(readTimeoutMs({})).toBe(60_000);
    expect(readTimeoutMs({ MAESTRO_READ_TIMEOUT: ' ' })).toBe(60_000);
    expect(readTimeoutMs({ MAESTRO_READ_TIMEOUT: '2.5' })).toBe(2500);
    expect(readTimeoutMs({ MAESTRO_READ_TIMEOUT: '3600' })).toBe(3_600_000);
    for (const bad of ['0', '0.0', '-1', 'abc', '1e3', '3601', 'Infinity', '5s']) {
      expect(() => readTimeoutMs({ MAESTRO_READ_TIMEOUT: bad }), bad).toThrow(`MAESTRO_READ_TIMEOUT must be a number of seconds above 0 and at most 3600, got ${JSON.stringify(bad)}.`);
    }
  });

  it('one rule for the wiki folder and the Claude login folder', () => {
    expect(wikiDirFromEnv({}, '/p')).toBeUndefined();
    expect(wikiDirFromEnv({ FLOW_PROJECT_DIR: 'a', FLOW_ROOT_DIR: 'b' }, '/p')).toBe('/p/b/wiki');
    expect(wikiDirFromEnv({ FLOW_WIKI_DIR: 'w', FLOW_ROOT_DIR: 'b' }, '/p')).toBe('/p/w');
    expect(claudeConfigDir({ HOME: '/h' })).toBe('/h/.claude');
    expect(claudeConfigDir({ HOME: '/h', CLAUDE_CONFIG_DIR: '/c' })).toBe('/c');
  });
});

/**
 * The process environment is read where a process starts and passed down from there; library code takes
 * `env`. Each file allowed to read it, and why.
 */
const READS_PROCESS_ENV: Record<string, string> = {
  'cli/main.ts': "the CLI's entry (and through `serve` and `mcp`, the daemon's and the MCP server's): reads it once and hands it to every command",
  'executor/worker.ts': "a worker process's entry: its environment is its run's allowlist (lib/agentEnv.ts), read once and passed to the run",
  'lib/processes.ts': "where Maestro's own processes start from: MAESTRO_JS_ROOT names a compiled copy of src/ for a process running from the sources (the test run sets it once, for every daemon it runs)",
  'lib/agentEnv.ts': "a child's environment is built from the parent's: the allowlist has to read it (and a warm worker sets its run's folder for what its agent starts)",
};

describe('the process environment is read at the entry points only', () => {
  it('no source file outside the allowed ones reads process.env, and each allowed one still does', () => {
    const read = /\bprocess\s*(?:\.\s*env\b|\[\s*['"]env['"]\s*\])|\{[^}]*\benv\b[^}]*\}\s*=\s*process\b/;
    const readers = sources(SRC).filter((f) => readFileSync(f, 'utf8').split('\n').some((line) => read.test(line)));
    const offenders = readers.map((f) => relative(SRC, f)).filter((f) => !(f in READS_PROCESS_ENV));
    expect(offenders, 'read the environment at the entry point and pass `env` down (or add the file to READS_PROCESS_ENV with its reason)').toEqual([]);
    expect(Object.keys(READS_PROCESS_ENV).filter((f) => !readers.some((r) => relative(SRC, r) === f))).toEqual([]);
  });
});

