/**
 * The sandbox's network modes, started for real (bwrap, the perl relay, this process's proxy, TCP servers on the
 * host's loopback): what a command inside can reach. Each "proxied" or "none" assertion has its "shared" twin
 * that reaches the same server, so what is refused is the mode's doing.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bwrapUnusable } from '../../../test/helpers/bwrap.js';
import { budget } from '../../../test/helpers/budget.js';
import { sandboxed, type RunSandbox } from '../sandbox.js';
import { stopSandboxProxies } from './proxy.js';
import type { NetworkMode } from './relay.js';

const unusable = bwrapUnusable();
const root = mkdtempSync(join(tmpdir(), 'maestro-net-test-'));
let host: Server;
let hostPort = 0;

/** A client that asks the proxy named by HTTPS_PROXY for a tunnel by hand (node's fetch ignores the variable). */
const CONNECT_CLIENT = `
const u = new URL(process.env.HTTPS_PROXY);
const c = require('net').connect(Number(u.port), u.hostname);
let got = '', tunnel = false;
c.write('CONNECT ' + process.argv[2] + ' HTTP/1.1\\r\\nHost: ' + process.argv[2] + '\\r\\n\\r\\n');
c.on('data', (d) => {
  got += d;
  if (!tunnel && got.startsWith('HTTP/1.1 200') && got.includes('\\r\\n\\r\\n')) { tunnel = true; c.write('ping\\n'); }
});
c.on('end', () => {
  const [head, body] = got.split('\\r\\n\\r\\n');
  console.log(tunnel ? '200\\n' + body.trim() : head.split('\\r\\n')[0] + ' | ' + body.trim());
});
c.on('error', (e) => console.log(e.code));
`;
/** Connects straight to 127.0.0.1:port and prints what it reads, or the error's code. */
const direct = (port: number) => `${process.execPath} -e "const c = require('net').connect(${port}, '127.0.0.1'); c.on('data', (d) => { process.stdout.write(d); c.destroy(); }); c.on('error', (e) => console.log(e.code))"`;

beforeAll(async () => {
  writeFileSync(join(root, 'connect.js'), CONNECT_CLIENT);
  host = createServer((c) => {
    c.write('host loopback\n');
    c.on('data', (d) => c.end(`pong ${d.toString().trim()}\n`));
  });
  await new Promise<void>((ok) => host.listen(0, '127.0.0.1', ok));
  hostPort = (host.address() as AddressInfo).port;
});
afterAll(async () => {
  stopSandboxProxies();
  await new Promise((ok) => host?.close(ok));
  rmSync(root, { recursive: true, force: true });
});

const box = (mode: NetworkMode, allow: string[] = []): RunSandbox => ({ spec: { kind: 'bwrap', hide: [], readOnly: [root], writable: [], network: { mode, allow } }, worktree: null });

/** Runs `script` with sh in the sandbox, asynchronously: the proxy answers on this process's event loop. */
function sh(sandbox: RunSandbox, script: string, env: NodeJS.ProcessEnv = process.env): Promise<{ out: string; err: string; code: number | null; signal: NodeJS.Signals | null }> {
  const start = sandboxed(sandbox, root, '/bin/sh', ['-c', script]);
  return new Promise((resolve, reject) => {
    const child = spawn(start.file, start.args, { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), budget(60_000));
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ out: out.trim(), err: err.trim(), code, signal });
    });
  });
}

const tunnel = (sandbox: RunSandbox, target: string) => sh(sandbox, `${process.execPath} ${join(root, 'connect.js')} ${target}`);

describe.skipIf(unusable)('the sandbox network (bwrap)', () => {
  it('"proxied": the host loopback is out of reach; "shared" reaches the same server', async () => {
    expect((await sh(box('shared'), direct(hostPort))).out).toBe('host loopback');
    expect((await sh(box('proxied'), direct(hostPort))).out).toBe('ECONNREFUSED');
  });

  it('"proxied": the proxy refuses the host loopback and the metadata endpoint, lets an allowed one through both ways', async () => {
    const loopback = await tunnel(box('proxied'), `127.0.0.1:${hostPort}`);
    expect(loopback.out).toMatch(new RegExp(`^HTTP/1.1 403 Forbidden \\| maestro sandbox proxy: port ${hostPort} is refused`));
    const loopbackWeb = await tunnel(box('proxied'), '127.0.0.1:443');
    expect(loopbackWeb.out).toBe('HTTP/1.1 403 Forbidden | maestro sandbox proxy: 127.0.0.1 is 127.0.0.1, loopback: out of the sandbox\'s reach; list "127.0.0.1:443" in agentSandbox.allow to let the sandbox reach it');
    const localhost = await tunnel(box('proxied'), 'localhost:80');
    expect(localhost.out).toMatch(/^HTTP\/1.1 403 Forbidden \| maestro sandbox proxy: localhost is (127\.0\.0\.1|::1), loopback: /);
    const metadata = await tunnel(box('proxied'), '169.254.169.254:80');
    expect(metadata.out).toMatch(/^HTTP\/1.1 403 Forbidden \| maestro sandbox proxy: 169.254.169.254 is 169.254.169.254, link-local: out of the sandbox's reach/);
    const mapped = await tunnel(box('proxied'), '[::ffff:127.0.0.1]:443');
    expect(mapped.out).toMatch(/^HTTP\/1.1 403 Forbidden \| .*loopback: out of the sandbox's reach/);
    const allowed = await tunnel(box('proxied', [`127.0.0.1:${hostPort}`]), `127.0.0.1:${hostPort}`);
    expect(allowed.out.split('\n')).toEqual(['200', 'host loopback', 'pong ping']);
  });

  it('"proxied": a server the command starts on its own loopback is reached directly', async () => {
    const own = `const n = require('net'); const s = n.createServer((c) => c.end('own server\\n')).listen(0, '127.0.0.1', () => { const c = n.connect(s.address().port, '127.0.0.1'); c.on('data', (d) => process.stdout.write(d)); c.on('end', () => s.close()); c.on('error', (e) => { console.log(e.code); s.close(); }); });`;
    const r = await sh(box('proxied'), `${process.execPath} -e "${own}"; echo "$NO_PROXY"`);
    expect(r.out.split('\n')).toEqual(['own server', 'localhost,127.0.0.1,::1']);
  });

  it('"none": no proxy variables (not even the host\'s), the host loopback out of reach', async () => {
    const env = { ...process.env, HTTPS_PROXY: 'http://proxy.example:3128', no_proxy: 'example.com' };
    const vars = 'env | grep -i _proxy= ; echo end';
    expect((await sh(box('shared'), vars, env)).out).toContain('HTTPS_PROXY=http://proxy.example:3128');
    expect((await sh(box('none'), vars, env)).out).toBe('end');
    expect((await sh(box('none'), direct(hostPort))).out).toBe('ECONNREFUSED');
  });

  it('the relay passes the command\'s exit code and its death by a signal through, as "shared" does', async () => {
    expect((await sh(box('proxied'), 'exit 3')).code).toBe(3);
    const killed = await sh(box('shared'), 'kill -TERM $$');
    expect(await sh(box('proxied'), 'kill -TERM $$')).toMatchObject({ code: killed.code, signal: killed.signal });
    // The relay gone with its command: no process of the sandbox outlives it (bwrap ends when its command does).
    const start = Date.now();
    await sh(box('proxied'), 'true');
    console.log(`one "proxied" spawn of true: ${Date.now() - start} ms`);
  });
});
