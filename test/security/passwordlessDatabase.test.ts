/**
 * A PostgreSQL that lets the daemon's role in over TCP with no password (plain `initdb` trusts 127.0.0.1): the
 * agent sandbox shares the machine's network, so a sandboxed agent could log in as the daemon and rewrite the
 * store (helper-118 did: a command agent's `psql postgres://postgres@127.0.0.1:<port>/<db> -c "update tasks …"`
 * changed its own task). serve refuses such a database unless allowed, and doctor fails its check
 * (src/app/databaseLogin.ts, src/store/passwordlessLogin.ts). The suite's own cluster asks for a password
 * (test/helpers/postgres.ts), so every other PostgreSQL suite runs under the same default.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { resolveConfig } from '../../src/config/config.js';
import { startDaemon } from '../../src/app/daemon.js';
import { probePasswordlessLogin } from '../../src/store/passwordlessLogin.js';
import { removeTempDirs, tempDir } from '../helpers/db.js';
import { startTestDaemon } from '../helpers/daemon.js';
import { PG_MISSING, startPostgres, type PgCluster } from '../helpers/postgres.js';
import { silentServer } from '../helpers/silentServer.js';
import { cleanEnv, cli, cliJson } from '../cli/helpers.js';

const pgUrl = inject('pgUrl');
if (!pgUrl) process.stderr.write(PG_MISSING);

interface Doctor {
  ok: boolean;
  checks: { name: string; status: string; detail: string }[];
}

describe.skipIf(!pgUrl)('a PostgreSQL that takes the daemon\'s role without a password', () => {
  let trusting: PgCluster;
  /** The trusting cluster's URL with a password in it, which the server never asks for: it must not be shown. */
  let url: string;
  beforeAll(async () => {
    trusting = (await startPostgres({ hostAuth: 'trust' }))!;
    url = `postgres://postgres:hunter2-secret@127.0.0.1:${trusting.port}/postgres`;
  }, 120_000);
  afterAll(() => {
    trusting?.stop();
    removeTempDirs();
  });

  it('serve refuses to start on it, saying who can write the store and how to fix it, before the home is made', async () => {
    const home = join(tempDir('maestro-parent-'), 'home');
    const refused = await startDaemon({ ...resolveConfig({ home, port: 0, database: url }, {}), logLevel: 'silent' }).then(() => null, (err: Error & { code?: string }) => err);
    expect(refused?.code).toBe('CONFIG_INVALID');
    expect(refused?.message).toContain(`PostgreSQL at postgres://postgres@127.0.0.1:${trusting.port}/postgres lets the daemon's role in with no password over TCP`);
    expect(refused?.message).toContain('sandboxed agents included');
    expect(refused?.message).toContain('scram-sha-256');
    expect(refused?.message).toContain('allowPasswordlessDatabase');
    expect(refused?.message).not.toContain('hunter2');
    expect(existsSync(home)).toBe(false);
  });

  it('maestro serve says so and exits non-zero; doctor fails the check', async () => {
    const env = cleanEnv({ MAESTRO_HOME: tempDir('maestro-home-') });
    const served = await cli(['serve', '--port', '0', '--no-demo', '--database', url], env);
    expect(served.code).not.toBe(0);
    expect(served.stderr).toContain('lets the daemon\'s role in with no password over TCP');
    expect(served.stderr + served.stdout).not.toContain('hunter2');
    const doctor = await cliJson<Doctor>(['doctor', '--url', 'http://127.0.0.1:9', '--database', url], env);
    expect(doctor.body.ok).toBe(false);
    const check = doctor.body.checks.find((c) => c.name === 'database password');
    expect(check?.status).toBe('fail');
    expect(check?.detail).toContain('scram-sha-256');
    expect(JSON.stringify(doctor.body)).not.toContain('hunter2');
  });

  it('a URL through the Unix socket is tried at 127.0.0.1 on its port', async () => {
    const socketUrl = `postgres://postgres@localhost:${trusting.port}/postgres?host=${encodeURIComponent(trusting.socketDir)}`;
    expect(await probePasswordlessLogin(socketUrl, { env: {} })).toEqual({ state: 'passwordless', url: `postgres://postgres@127.0.0.1:${trusting.port}/postgres` });
  });

  it('allowPasswordlessDatabase lets the person start on it anyway; doctor then warns', async () => {
    const d = await startTestDaemon({ database: url, allowPasswordlessDatabase: true }, { noOrchestrator: true });
    await d.stop({ graceMs: 0 });
    const doctor = await cliJson<Doctor>(['doctor', '--url', 'http://127.0.0.1:9', '--database', url], cleanEnv({ MAESTRO_ALLOW_PASSWORDLESS_DATABASE: '1' }));
    expect(doctor.body.checks.find((c) => c.name === 'database password')?.status).toBe('warn');
  });

  it('a server that asks for the password passes, with PGPASSWORD holding it and no password in the URL', async () => {
    const asks = new URL(pgUrl!);
    const password = asks.password;
    asks.password = '';
    // node-postgres reads PGPASSWORD for a URL without one: the probe must not log in with it.
    const saved = process.env.PGPASSWORD;
    process.env.PGPASSWORD = password;
    try {
      expect(await probePasswordlessLogin(asks.toString(), { env: process.env })).toMatchObject({ state: 'refused' });
    } finally {
      if (saved === undefined) delete process.env.PGPASSWORD;
      else process.env.PGPASSWORD = saved;
    }
    const doctor = await cliJson<Doctor>(['doctor', '--url', 'http://127.0.0.1:9', '--database', pgUrl!], cleanEnv());
    expect(doctor.body.checks.find((c) => c.name === 'database password')?.status).toBe('ok');
  });

  it('a server that never answers does not hold the start: the probe gives up', async () => {
    const silent = await silentServer();
    try {
      expect(await probePasswordlessLogin(`postgres://postgres@127.0.0.1:${silent.port}/postgres`, { env: {}, timeoutMs: 1000 })).toMatchObject({ state: 'unknown' });
    } finally {
      await silent.close();
    }
  });
});
