import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { sandboxSpecFor } from '../daemon/jobs.js';
import { resolveConfig } from './config.js';

const homes: string[] = [];
afterEach(() => {
  for (const h of homes.splice(0)) rmSync(h, { recursive: true, force: true });
});

function home(config?: unknown): string {
  const dir = mkdtempSync(join(tmpdir(), 'maestro-config-'));
  homes.push(dir);
  if (config !== undefined) writeFileSync(join(dir, 'config.json'), JSON.stringify(config));
  return dir;
}

describe('allowedHosts and allowedOrigins', () => {
  it('come from config.json, and MAESTRO_ALLOWED_HOSTS / MAESTRO_ALLOWED_ORIGINS override it', () => {
    const h = home({ allowedHosts: ['Maestro.Example.com', '10.0.0.5'], allowedOrigins: ['https://board.example.com'] });
    expect(resolveConfig({ home: h }, {})).toMatchObject({ allowedHosts: ['maestro.example.com', '10.0.0.5'], allowedOrigins: ['https://board.example.com'], noAuth: false });
    const env = { MAESTRO_ALLOWED_HOSTS: 'a.example, [fd00::1]', MAESTRO_ALLOWED_ORIGINS: 'http://localhost:5173' };
    expect(resolveConfig({ home: h }, env)).toMatchObject({ allowedHosts: ['a.example', '[fd00::1]'], allowedOrigins: ['http://localhost:5173'] });
    expect(resolveConfig({ home: home() }, {})).toMatchObject({ allowedHosts: [], allowedOrigins: [] });
  });

  it('refuse what is not a host name or an origin, naming where it came from', () => {
    const h = home({ allowedHosts: ['https://maestro.example.com'] });
    expect(() => resolveConfig({ home: h }, {})).toThrow(`${join(h, 'config.json')} allowedHosts: "https://maestro.example.com" is not a host name`);
    expect(() => resolveConfig({ home: home() }, { MAESTRO_ALLOWED_HOSTS: 'a.example:8080' })).toThrow(/MAESTRO_ALLOWED_HOSTS: "a.example:8080" is not a host name/);
    expect(() => resolveConfig({ home: home() }, { MAESTRO_ALLOWED_ORIGINS: 'https://board.example.com/app' })).toThrow(/MAESTRO_ALLOWED_ORIGINS: "https:\/\/board.example.com\/app" is not an origin/);
    expect(() => resolveConfig({ home: home() }, { MAESTRO_ALLOWED_ORIGINS: '*' })).toThrow(/is not an origin/);
    expect(() => resolveConfig({ home: home({ allowedOrigins: 'https://x.example' }) }, {})).toThrow(/allowedOrigins: Invalid input: expected array/);
  });

  it('masks a password when it refuses a database URL', () => {
    expect(() => resolveConfig({ home: home(), database: 'postgress://ann:s3cret@db/x?password=s3cret' }, {})).toThrow(/^--database: .*got "postgress:\/\/ann:\*\*\*@db\/x\?password=\*\*\*"/);
  });

  it('refuses a postgres URL that does not parse, naming where it came from and what to check, without its password', () => {
    // node-postgres said only "Invalid URL" for these, after the daemon had started to open the database.
    const portTypo = () => resolveConfig({ home: home() }, { MAESTRO_DATABASE: 'postgres://ann:s3cret@db.internal:543210/maestro' });
    expect(portTypo).toThrow(expect.objectContaining({ code: 'CONFIG_INVALID', message: expect.stringMatching(/^MAESTRO_DATABASE: "postgres:\/\/ann:\*\*\*@db.internal:543210\/maestro" is not a URL: check the port \(1–65535\), and percent-encode/) }));
    const h = home({ database: 'postgres://ann:pa#ss/w@db.internal/maestro?password=x#y' });
    let message = '';
    try {
      resolveConfig({ home: h }, {});
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).toContain(`${join(h, 'config.json')} database: "postgres://ann:***@db.internal/maestro?password=***" is not a URL`);
    expect(message).toContain('PGPASSWORD');
    expect(message).not.toMatch(/pa#ss|ss\/w|x#y/);
    // One that parses is left to the connection, which names the server it could not reach.
    expect(resolveConfig({ home: home() }, { MAESTRO_DATABASE: 'postgres://ann:pa%23ss@db.internal:5432/maestro' }).database).toBe('postgres://ann:pa%23ss@db.internal:5432/maestro');
  });
});

describe('a config.json that is not JSON', () => {
  it('is refused naming the file, the line and the column, and quoting nothing of it', () => {
    const h = home();
    const file = join(h, 'config.json');
    writeFileSync(file, '{\n  "token": "long-enough",\n  "logLevel": warn\n}\n');
    expect(() => resolveConfig({ home: h }, {})).toThrow(expect.objectContaining({ code: 'CONFIG_INVALID', message: `${file} is not valid JSON (line 3, column 15).` }));
    // JSON.parse's own message would have quoted the start of the file (a link to a secret, say).
    writeFileSync(file, 'TOPSECRET-1234');
    expect(() => resolveConfig({ home: h }, {})).toThrow(expect.objectContaining({ message: `${file} is not valid JSON (line 1, column 1).` }));
    writeFileSync(file, '{"token": "long-e');
    expect(() => resolveConfig({ home: h }, {})).toThrow(expect.objectContaining({ message: `${file} is not valid JSON (it ends early, at line 1, column 18).` }));
  });
});

describe('the token', () => {
  it('from MAESTRO_TOKEN must be as long as config.json asks (8 characters), or the start is refused', () => {
    expect(() => resolveConfig({ home: home() }, { MAESTRO_TOKEN: 'a' })).toThrow(/MAESTRO_TOKEN must be at least 8 characters, got 1/);
    expect(() => resolveConfig({ home: home({ token: 'short' }) }, {})).toThrow(/token/);
    expect(resolveConfig({ home: home() }, { MAESTRO_TOKEN: 'long-enough' }).token).toBe('long-enough');
  });
});

describe('the log level', () => {
  it('from MAESTRO_LOG_LEVEL must be one of pino\'s levels, said by name with the ones it takes; unset or empty leaves config.json\'s', () => {
    expect(() => resolveConfig({ home: home() }, { MAESTRO_LOG_LEVEL: 'bogus' })).toThrow(
      expect.objectContaining({ code: 'CONFIG_INVALID', message: 'MAESTRO_LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent, got "bogus".' }),
    );
    expect(resolveConfig({ home: home({ logLevel: 'warn' }) }, { MAESTRO_LOG_LEVEL: 'debug' }).logLevel).toBe('debug');
    expect(resolveConfig({ home: home({ logLevel: 'warn' }) }, { MAESTRO_LOG_LEVEL: '' }).logLevel).toBe('warn');
  });
});

describe('timers and limits in config.json', () => {
  it('refuse values a timer cannot hold or a daemon cannot live with, naming the file and the key', () => {
    // 1e10 ms overflows Node's timers, which then fire every millisecond: an idle daemon at half a core.
    const big = home({ tickMs: 1e10 });
    expect(() => resolveConfig({ home: big }, {})).toThrow(`${join(big, 'config.json')}`);
    expect(() => resolveConfig({ home: big }, {})).toThrow(/tickMs: Too big: expected number to be <=60000/);
    expect(() => resolveConfig({ home: home({ leaseMs: 5 }) }, {})).toThrow(/leaseMs: Too small/);
    expect(() => resolveConfig({ home: home({ warmWorkers: 10_000 }) }, {})).toThrow(/warmWorkers: Too big/);
    // A nice value is 0-19 (what an unprivileged daemon may give its workers); runs are niced by default.
    expect(() => resolveConfig({ home: home({ workerNice: 20 }) }, {})).toThrow(/workerNice: Too big/);
    expect(() => resolveConfig({ home: home({ workerNice: -5 }) }, {})).toThrow(/workerNice: Too small/);
    expect(resolveConfig({ home: home() }, {}).workerNice).toBe(10);
    expect(resolveConfig({ home: home({ workerNice: 0 }) }, {}).workerNice).toBe(0);
    expect(resolveConfig({ home: home({ tickMs: 60_000, leaseMs: 4000 }) }, {})).toMatchObject({ tickMs: 60_000, leaseMs: 4000 });
  });
});

describe('agentSandbox', () => {
  it('is on by default where it works ("auto"), required when asked for by name, off only when said; the environment wins on the kind', () => {
    expect(resolveConfig({ home: home() }, {}).agentSandbox).toMatchObject({ kind: 'bwrap', required: false });
    expect(resolveConfig({ home: home({ agentSandbox: 'auto' }) }, {}).agentSandbox).toMatchObject({ kind: 'bwrap', required: false });
    expect(resolveConfig({ home: home({ agentSandbox: 'off' }) }, {}).agentSandbox).toBeNull();
    expect(resolveConfig({ home: home({ agentSandbox: 'bwrap' }) }, { MAESTRO_AGENT_SANDBOX: 'off' }).agentSandbox).toBeNull();
    expect(resolveConfig({ home: home({ agentSandbox: 'off' }) }, { MAESTRO_AGENT_SANDBOX: 'auto' }).agentSandbox).toMatchObject({ required: false });
    const on = resolveConfig({ home: home() }, { MAESTRO_AGENT_SANDBOX: 'bwrap', HOME: '/home/ada' }).agentSandbox;
    expect(on).toMatchObject({ kind: 'bwrap', required: true });
    expect(on!.hide).toEqual(expect.arrayContaining(['/home/ada/.ssh', '/home/ada/.aws', '/home/ada/.git-credentials', '/run/user', '/run/docker.sock']));
    // No agent tool's state by default: each tool's is writable in its own runs only (withStateDirs).
    expect(on!.writable).toEqual([]);
  });

  it('adds the folders config.json hides and leaves writable to the defaults, ~/ from HOME', () => {
    const c = resolveConfig({ home: home({ agentSandbox: { kind: 'bwrap', hide: ['~/work/secrets', '/srv/keys'], writable: ['~/.cache/pip'] } }) }, { HOME: '/home/ada' }).agentSandbox!;
    expect(c.hide).toEqual(expect.arrayContaining(['/home/ada/.ssh', '/home/ada/work/secrets', '/srv/keys']));
    expect(c.writable).toEqual(['/home/ada/.cache/pip']);
  });

  it('network: the host\'s by default ("shared"), else "proxied" with its allow list or "none"; in every spec the daemon hands on', () => {
    expect(resolveConfig({ home: home() }, {}).agentSandbox!.network).toBeUndefined();
    expect(resolveConfig({ home: home({ agentSandbox: { kind: 'auto', network: 'shared' } }) }, {}).agentSandbox!.network).toBeUndefined();
    const proxied = resolveConfig({ home: home({ agentSandbox: { kind: 'auto', network: 'proxied', allow: ['registry.internal:8443', '10.0.0.5:11434', '[fd00::5]:80'] } }) }, {});
    expect(proxied.agentSandbox!.network).toEqual({ mode: 'proxied', allow: ['registry.internal:8443', '10.0.0.5:11434', '[fd00::5]:80'] });
    expect(sandboxSpecFor(proxied, '/srv/repo')!.network).toEqual({ mode: 'proxied', allow: ['registry.internal:8443', '10.0.0.5:11434', '[fd00::5]:80'] });
    expect(resolveConfig({ home: home({ agentSandbox: { kind: 'bwrap', network: 'none' } }) }, {}).agentSandbox!.network).toEqual({ mode: 'none', allow: [] });
  });

  it('"proxied" goes through the proxy the daemon\'s environment names (HTTPS_PROXY, HTTP_PROXY, NO_PROXY), in every spec the daemon hands on', () => {
    const proxied = home({ agentSandbox: { kind: 'auto', network: 'proxied' } });
    const env = { HTTPS_PROXY: 'http://me:pw@proxy.corp:3128', http_proxy: 'proxy.corp:8080', HTTP_PROXY: 'http://ignored:1', NO_PROXY: ' .corp.example, 10.0.0.0/8 ,,Localhost' };
    const upstream = { https: 'http://me:pw@proxy.corp:3128/', http: 'http://proxy.corp:8080/', noProxy: ['.corp.example', '10.0.0.0/8', 'localhost'] };
    const config = resolveConfig({ home: proxied }, env);
    expect(config.agentSandbox!.network).toEqual({ mode: 'proxied', allow: [], upstream });
    expect(sandboxSpecFor(config, '/srv/repo')!.network).toEqual({ mode: 'proxied', allow: [], upstream });
    expect(resolveConfig({ home: proxied }, {}).agentSandbox!.network).toEqual({ mode: 'proxied', allow: [] });
    // The other modes have no proxy of Maestro's to chain.
    expect(resolveConfig({ home: home({ agentSandbox: { kind: 'auto', network: 'none' } }) }, env).agentSandbox!.network).toEqual({ mode: 'none', allow: [] });
    expect(resolveConfig({ home: home() }, env).agentSandbox!.network).toBeUndefined();
  });

  it('"proxied" refuses a host proxy it cannot go through, naming the variable and never its credentials', () => {
    const proxied = home({ agentSandbox: { kind: 'auto', network: 'proxied' } });
    expect(() => resolveConfig({ home: proxied }, { https_proxy: 'socks5://me:pw@proxy.corp:1080' })).toThrow('https_proxy (socks5://proxy.corp:1080) names a proxy agentSandbox.network "proxied" cannot go through: only an http:// proxy (http://host:port) is chained to. Set https_proxy to one, or agentSandbox.network to "shared".');
    expect(() => resolveConfig({ home: proxied }, { HTTP_PROXY: 'http://' })).toThrow('HTTP_PROXY (not a URL) names a proxy');
    // "shared" hands the variables to the agent as they are: nothing to refuse.
    expect(resolveConfig({ home: home() }, { https_proxy: 'socks5://proxy.corp:1080' }).agentSandbox!.network).toBeUndefined();
  });

  it('refuses a network mode it does not know and an allow entry that is not host:port, naming the file and the key; nothing starts', () => {
    const open = home({ agentSandbox: { kind: 'auto', network: 'open' } });
    expect(() => resolveConfig({ home: open }, {})).toThrow(`${join(open, 'config.json')}: agentSandbox: network: Invalid option: expected one of "shared"|"proxied"|"none"`);
    for (const [entry, why] of [['nohost', '"nohost" must be host:port'], ['h:99999', '"h:99999" must be host:port'], ['h:0', '"h:0" must be host:port'], ['http://h:80', '"http://h:80" must be host:port']]) {
      const h = home({ agentSandbox: { kind: 'auto', network: 'proxied', allow: [entry] } });
      expect(() => resolveConfig({ home: h }, {})).toThrow(`${join(h, 'config.json')} agentSandbox.allow: ${why} (a host name or IP address, a port from 1 to 65535), like "registry.internal:8443".`);
    }
    const shared = home({ agentSandbox: { kind: 'auto', allow: ['h:443'] } });
    expect(() => resolveConfig({ home: shared }, {})).toThrow(`${join(shared, 'config.json')} agentSandbox.allow: the proxy lets these through, and only "network": "proxied" has one (network is "shared").`);
  });

  it('refuses a kind it does not know, a relative path and a ~/ without HOME, naming where', () => {
    const h = home({ agentSandbox: 'docker' });
    expect(() => resolveConfig({ home: h }, {})).toThrow(`${join(h, 'config.json')}: agentSandbox:`);
    expect(() => resolveConfig({ home: home() }, { MAESTRO_AGENT_SANDBOX: 'yes' })).toThrow('MAESTRO_AGENT_SANDBOX must be auto, bwrap or off, got "yes"');
    const rel = home({ agentSandbox: { kind: 'bwrap', hide: ['secrets'] } });
    expect(() => resolveConfig({ home: rel }, { HOME: '/home/ada' })).toThrow(`${join(rel, 'config.json')} agentSandbox.hide: "secrets" must be an absolute path or start with ~/`);
    const tilde = home({ agentSandbox: { kind: 'bwrap', writable: ['~/.cache'] } });
    expect(() => resolveConfig({ home: tilde }, {})).toThrow(`${join(tilde, 'config.json')} agentSandbox.writable: "~/.cache" starts with ~/ but HOME is not set`);
    expect(resolveConfig({ home: home() }, { MAESTRO_AGENT_SANDBOX: 'bwrap' }).agentSandbox).toEqual({ kind: 'bwrap', required: true, hide: ['/run/user', '/run/docker.sock', '/var/run/docker.sock', '/run/podman'], writable: [] });
    const extra = home({ agentSandbox: { kind: 'bwrap', mounts: [] } });
    expect(() => resolveConfig({ home: extra }, {})).toThrow(/agentSandbox/);
  });
});

describe('a key config.json does not take', () => {
  it('is refused naming the keys it takes, which are the ones the README lists', () => {
    const h = home({ prt: 4300 });
    let said = '';
    try {
      resolveConfig({ home: h }, {});
    } catch (err) {
      said = (err as Error).message;
    }
    const takes = /^.*config\.json: \(root\): Unrecognized key: "prt" \(did you mean port\? it takes (.+)\)$/.exec(said);
    expect(takes, said).not.toBeNull();
    const readme = readFileSync(join(import.meta.dirname, '../../README.md'), 'utf8');
    const sentence = /`config\.json` accepts ([\s\S]+?); unknown keys are/.exec(readme)![1]!;
    const documented = [...sentence.matchAll(/`(\w+)`/g)].map((m) => m[1]).sort();
    expect(documented).toEqual(takes![1]!.split(', ').sort());
  });
});

describe('a misspelt key of config.json', () => {
  it('is said with the key it is nearest to, a letter or two away; a key near none gets the list alone', () => {
    const refusal = (file: Record<string, unknown>) => {
      try {
        resolveConfig({ home: home(file) }, {});
      } catch (err) {
        return (err as Error).message;
      }
      return 'accepted';
    };
    expect(refusal({ maxConcurentRuns: 2 })).toMatch(/: \(root\): Unrecognized key: "maxConcurentRuns" \(did you mean maxConcurrentRuns\? it takes name, host, port, /);
    expect(refusal({ MaxConcurrentRuns: 2, warmWorker: 1 })).toMatch(/Unrecognized keys: "MaxConcurrentRuns", "warmWorker" \(did you mean maxConcurrentRuns for MaxConcurrentRuns, warmWorkers for warmWorker\? it takes /);
    expect(refusal({ colour: 'blue' })).toMatch(/Unrecognized key: "colour" \(it takes name, host, /);
  });
});

describe('allowPasswordlessDatabase', () => {
  it('is off unless config.json or MAESTRO_ALLOW_PASSWORDLESS_DATABASE turns it on; a bad value is named', () => {
    expect(resolveConfig({ home: home() }, {}).allowPasswordlessDatabase).toBe(false);
    expect(resolveConfig({ home: home({ allowPasswordlessDatabase: true }) }, {}).allowPasswordlessDatabase).toBe(true);
    expect(resolveConfig({ home: home() }, { MAESTRO_ALLOW_PASSWORDLESS_DATABASE: '1' }).allowPasswordlessDatabase).toBe(true);
    expect(resolveConfig({ home: home({ allowPasswordlessDatabase: true }) }, { MAESTRO_ALLOW_PASSWORDLESS_DATABASE: 'no' }).allowPasswordlessDatabase).toBe(false);
    expect(() => resolveConfig({ home: home() }, { MAESTRO_ALLOW_PASSWORDLESS_DATABASE: 'sure' })).toThrow('MAESTRO_ALLOW_PASSWORDLESS_DATABASE must be 1, true, yes, 0, false or no, got "sure".');
    expect(() => resolveConfig({ home: home({ allowPasswordlessDatabase: 'yes' }) }, {})).toThrow(/allowPasswordlessDatabase/);
  });
});
