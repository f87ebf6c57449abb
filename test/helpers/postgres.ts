/**
 * Starts a real, throwaway PostgreSQL cluster for the test suites: initdb +
 * pg_ctl on a temp dir, loopback TCP on a free port, stopped after. TCP logins
 * need the role's password (scram-sha-256, a random one per cluster, in `url`),
 * as the daemon requires of the database it uses (src/app/databaseLogin.ts);
 * the cluster's own Unix socket, in its folder, trusts. PostgreSQL
 * refuses to run as root and CI runs as root, so as root the cluster runs as the
 * unprivileged `postgres` user the Debian package creates.
 *
 * Each cluster's folder names the process that started it (`owner`). A run
 * killed from outside never stops its cluster, so the next start stops every
 * cluster whose owner is gone and removes its folder (four such servers once
 * stayed up for an hour). A cluster whose owner lives is never touched: a
 * second copy of the suite may be using it.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { appendFileSync, chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { orphanedFolders, sharedTmp } from './suiteTmp.js';

export interface PgCluster {
  url: string;
  /** The folder of its Unix socket. */
  socketDir: string;
  port: number;
  dataDir: string;
  /** The server's pid (the postmaster, parent of every backend), from its postmaster.pid. */
  serverPid(): number;
  /** Stops the server (fast: clients are disconnected) and starts it again on the same port. */
  restart(): void;
  stop(): void;
}

export function findPgBin(): string | null {
  if (process.env.MAESTRO_PG_BIN && existsSync(join(process.env.MAESTRO_PG_BIN, 'initdb'))) return process.env.MAESTRO_PG_BIN;
  const root = '/usr/lib/postgresql';
  if (existsSync(root)) {
    const versions = readdirSync(root)
      .filter((v) => existsSync(join(root, v, 'bin', 'initdb')))
      .sort((a, b) => Number(b) - Number(a));
    if (versions[0]) return join(root, versions[0], 'bin');
  }
  const which = spawnSync('sh', ['-c', 'command -v initdb'], { encoding: 'utf8' });
  const found = which.stdout.trim();
  return found ? found.replace(/\/initdb$/, '') : null;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

export interface PgOptions {
  /** Addresses to listen on besides 127.0.0.1 (the multihost suite's veth addresses). */
  listen?: string[];
  /** Networks (CIDR) allowed in besides loopback, with the password as loopback is. */
  hosts?: string[];
  /** 'trust': TCP logins need no password (plain initdb's default, which the daemon refuses; its test). */
  hostAuth?: 'scram-sha-256' | 'trust';
  /** The process the cluster belongs to (default: this one); once it is gone, the next start stops the cluster. */
  ownerPid?: number;
  /** More server settings (`name=value`), e.g. a bench's shared_preload_libraries. */
  settings?: string[];
}

const PREFIX = 'maestro-pg-';

/** Stops the clusters whose owner is gone (a run killed from outside), and removes their folders. */
export function reapOrphanClusters(run: (cmd: string, args: string[]) => void): string[] {
  const reaped = orphanedFolders(PREFIX);
  for (const base of reaped) {
    try {
      if (existsSync(join(base, 'data', 'postmaster.pid'))) run('pg_ctl', ['-D', join(base, 'data'), '-m', 'immediate', '-w', 'stop']);
    } catch {
      // already stopped
    }
    rmSync(base, { recursive: true, force: true });
  }
  return reaped;
}

export async function startPostgres(options: PgOptions = {}): Promise<PgCluster | null> {
  const bin = findPgBin();
  if (!bin) return null;
  const isRoot = process.getuid?.() === 0;
  // In the folder every run sees: the next run stops a cluster whose run was killed (reapOrphanClusters).
  const base = mkdtempSync(join(sharedTmp(), PREFIX));
  const dataDir = join(base, 'data');
  const asUser = (cmd: string, args: string[]) => (isRoot ? ['runuser', ['-u', 'postgres', '--', cmd, ...args]] as const : [cmd, args] as const);
  if (isRoot) {
    const pwuid = spawnSync('id', ['-u', 'postgres']);
    if (pwuid.status !== 0) throw new Error('Running as root, but there is no `postgres` user to run the test cluster as (install the postgresql package).');
    chownSync(base, Number(pwuid.stdout.toString().trim()), Number(spawnSync('id', ['-g', 'postgres']).stdout.toString().trim()));
  }
  const run = (cmd: string, args: string[]) => {
    const [c, a] = asUser(join(bin, cmd), args);
    execFileSync(c, [...a], { stdio: ['ignore', 'pipe', 'pipe'] });
  };
  reapOrphanClusters(run);
  writeFileSync(join(base, 'owner'), String(options.ownerPid ?? process.pid));
  const password = randomBytes(18).toString('hex');
  const pwfile = join(base, 'pwfile');
  writeFileSync(pwfile, `${password}\n`, { mode: 0o644 }); // read by initdb, which runs as postgres under root
  try {
    run('initdb', ['-D', dataDir, `--auth-host=${options.hostAuth ?? 'scram-sha-256'}`, '--auth-local=trust', `--pwfile=${pwfile}`, '-U', 'postgres', '--no-sync', '-E', 'UTF8', '--locale=C']);
  } finally {
    rmSync(pwfile, { force: true });
  }
  for (const net of options.hosts ?? []) appendFileSync(join(dataDir, 'pg_hba.conf'), `host all all ${net} ${options.hostAuth ?? 'scram-sha-256'}\n`);
  // fsync off: these clusters are throwaway; durability is PostgreSQL's to test, not ours.
  const optsFor = (p: number) => `-p ${p} -k ${base} -c listen_addresses=${['127.0.0.1', ...(options.listen ?? [])].join(',')} -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=300${(options.settings ?? []).map((kv) => ` -c ${kv}`).join('')}`;
  let port = 0;
  // The free port can be taken before PostgreSQL binds it (another suite, or a second copy of the run,
  // asking for one at the same moment): then try another.
  for (let attempt = 1; ; attempt++) {
    port = await freePort();
    try {
      run('pg_ctl', ['-D', dataDir, '-o', optsFor(port), '-l', join(base, 'server.log'), '-w', '-t', '60', 'start']);
      break;
    } catch (err) {
      if (attempt >= 3 || !/already in use|could not bind|could not create any TCP\/IP sockets/i.test(readLog(base))) throw err;
    }
  }
  const opts = optsFor(port);
  let stopped = false;
  return {
    url: `postgres://postgres:${password}@127.0.0.1:${port}/postgres`,
    socketDir: base,
    port,
    dataDir,
    serverPid: () => Number(readFileSync(join(dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]),
    restart() {
      run('pg_ctl', ['-D', dataDir, '-m', 'fast', '-w', 'stop']);
      run('pg_ctl', ['-D', dataDir, '-o', opts, '-l', join(base, 'server.log'), '-w', '-t', '60', 'start']);
    },
    stop() {
      if (stopped) return;
      stopped = true;
      try {
        // No postmaster.pid: not running (a later start stopped it as an orphan, and removed its folder).
        if (existsSync(join(dataDir, 'postmaster.pid'))) run('pg_ctl', ['-D', dataDir, '-m', 'immediate', '-w', 'stop']);
      } finally {
        rmSync(base, { recursive: true, force: true });
      }
    },
  };
}

function readLog(base: string): string {
  try {
    return readFileSync(join(base, 'server.log'), 'utf8');
  } catch {
    return '';
  }
}

/** The loud message a suite prints when it cannot run PostgreSQL here. */
export const PG_MISSING =
  '\n*** PostgreSQL binaries (initdb, pg_ctl) not found: the PostgreSQL suites are SKIPPED on this machine. ***\n' +
  '*** Install the postgresql package (CI does, in .ci/run) to run them.                                  ***\n';
