import { describe, expect, it } from 'vitest';
import { resolveApiUrl } from '../cli/client.js';
import { daemonUrlFromEnv } from './daemonUrl.js';

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
