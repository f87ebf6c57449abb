/**
 * What the daemon's sandbox (sandboxSpecFor, from the config's defaults) gives every process in it: an agent, the
 * project's checks and its hooks, which run the repository's code.
 *
 * The daemon's database is hidden from agents wherever it lies: a SQLite file the config puts outside the home
 * (with its -wal beside it), and the folder of the socket a PostgreSQL URL connects through (a server with peer
 * authentication takes whoever runs as the user for the daemon's role). An agent, a check or a hook in the
 * sandbox the daemon gives (sandboxSpecFor) reads none of it; the same sandbox without the database's entries
 * reads it all, which is what the assertions are measured against.
 *
 * No agent tool's state folder is writable there: each tool's is, in that tool's own runs (withStateDirs), but a
 * check or a hook that could write `~/.claude/settings.json` would plant a hook the user's next Claude Code runs.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { resolveConfig } from '../../src/config/config.js';
import { resolveAgentSandbox } from '../../src/config/sandbox.js';
import { sandboxSpecFor } from '../../src/daemon/jobs.js';
import { sandboxed, type SandboxSpec } from '../../src/lib/sandbox.js';
import { bwrapUnusable } from '../helpers/bwrap.js';
import { removeTempDirs, tempDir } from '../helpers/db.js';

/** A folder outside /tmp, which the sandbox replaces whole (so a file there is out of sight either way). */
const outsideTmp = (prefix: string) => tempDir(`maestro-sandbox-${prefix}-`, '/var/tmp');
afterEach(() => removeTempDirs());

const unusable = bwrapUnusable();
const SECRET = 'projects-and-their-keys';

/** What `script` prints, run in the sandbox as a run's agent would be, in `cwd`. */
function inSandbox(spec: SandboxSpec, cwd: string, script: string): string {
  const { file, args } = sandboxed({ spec, worktree: null }, cwd, '/bin/sh', ['-c', script]);
  const r = spawnSync(file, args, { encoding: 'utf8' });
  expect(r.status, r.stderr).toBe(0);
  return r.stdout;
}

/**
 * Writes SECRET at each of `places` (under `root`, the user's home) and reads them from the sandbox: nothing, while
 * without the defaults under `root` (the measure of that assertion) every one of them.
 */
function expectHidden(root: string, project: string, spec: SandboxSpec, places: string[]): void {
  for (const place of places) {
    mkdirSync(join(root, place, '..'), { recursive: true });
    writeFileSync(join(root, place), `${SECRET}\n`);
  }
  const read = `${places.map((place) => `cat ${join(root, place)} 2>/dev/null`).join('; ')}; echo end`;
  expect(inSandbox(spec, project, read)).toBe('end\n');
  const bare = { ...spec, hide: spec.hide.filter((h) => !h.startsWith(root)) };
  expect(inSandbox(bare, project, read)).toBe(`${`${SECRET}\n`.repeat(places.length)}end\n`);
}

/** The daemon's sandbox for `database`, and the same without what the database adds to it. */
function sandboxes(database: string) {
  const root = outsideTmp('home');
  const home = join(root, 'home');
  const project = join(root, 'project');
  mkdirSync(home);
  mkdirSync(project);
  const config = resolveConfig({ home, database }, { HOME: root, MAESTRO_AGENT_SANDBOX: 'bwrap' });
  const spec = sandboxSpecFor(config, project)!;
  const agentSandbox = resolveAgentSandbox('bwrap', { HOME: root }, 'config.json agentSandbox');
  return { root, project, spec, without: sandboxSpecFor({ home, agentSandbox }, project)! };
}

describe.skipIf(unusable)("the daemon's database, seen from the agent sandbox", () => {
  it('a SQLite file outside the home, and its -wal, read empty', () => {
    const dbDir = outsideTmp('db');
    const db = join(dbDir, 'maestro.db');
    writeFileSync(db, SECRET);
    writeFileSync(`${db}-wal`, SECRET);
    const { project, spec, without } = sandboxes(`sqlite:${db}`);
    const read = `cat ${db} ${db}-wal; echo end`;
    expect(inSandbox(spec, project, read)).toBe('end\n');
    expect(inSandbox(without, project, read)).toBe(`${SECRET}${SECRET}end\n`);
  });

  it("the folder of a PostgreSQL URL's socket is empty", () => {
    const sockets = outsideTmp('sockets');
    writeFileSync(join(sockets, '.s.PGSQL.5432'), '');
    const { project, spec, without } = sandboxes(`postgresql:///maestro?host=${sockets}`);
    const look = `ls -A ${sockets}; echo end`;
    expect(inSandbox(spec, project, look)).toBe('end\n');
    expect(inSandbox(without, project, look)).toBe('.s.PGSQL.5432\nend\n');
    // Through the host part too, as libpq and node-postgres read it.
    expect(inSandbox(sandboxes(`postgresql://me@${encodeURIComponent(sockets)}/maestro`).spec, project, look)).toBe('end\n');
  });

  it('a PostgreSQL server reached over TCP hides nothing', () => {
    const { spec, without } = sandboxes('postgres://me:pw@127.0.0.1:5432/maestro');
    expect(spec.hide).toEqual(without.hide);
  });
});

describe.skipIf(unusable)("the agent tools' state, seen from a check or a hook", () => {
  it("is read-only: no hook, MCP server or plugin planted in any tool's folder", () => {
    const { root, project, spec } = sandboxes(`sqlite:${join(outsideTmp('db'), 'maestro.db')}`);
    const places = ['.claude/settings.json', '.claude.json', '.codex/config.toml', '.gemini/settings.json', '.config/opencode/opencode.json'];
    for (const place of places) {
      mkdirSync(join(root, place, '..'), { recursive: true });
      writeFileSync(join(root, place), 'mine\n');
    }
    const plant = places.map((place) => `(echo planted > ${join(root, place)}) 2>/dev/null && echo wrote ${place}`).join('; ');
    expect(inSandbox(spec, project, `${plant}; echo end`)).toBe('end\n');
    for (const place of places) expect(readFileSync(join(root, place), 'utf8')).toBe('mine\n');
    // Where the config leaves a folder writable, it is (the measure of the assertions above).
    const writable = { ...spec, writable: [join(root, '.claude')] };
    expect(inSandbox(writable, project, `${plant}; echo end`)).toBe('wrote .claude/settings.json\nend\n');
  });
});

describe.skipIf(unusable)("what in the user's home holds secrets, seen from an agent, a check or a hook", () => {
  it('reads empty: keys, a shell history, a browser profile, a password store, a registry credential', () => {
    const { root, project, spec } = sandboxes('postgres://me:pw@127.0.0.1:5432/maestro');
    const places = ['.ssh/id_ed25519', '.bash_history', '.config/google-chrome/Default/Cookies', '.mozilla/firefox/p.default/cookies.sqlite', '.password-store/bank.gpg', '.cargo/credentials.toml', '.pypirc'];
    expectHidden(root, project, spec, places);
  });
});

describe.skipIf(unusable)('another Maestro home of the user, seen from an agent of a daemon on its own home', () => {
  it('reads empty: the default home (~/.maestro), its token and database, while this daemon runs on another', () => {
    // A second daemon (MAESTRO_HOME for a trial, or for agents trusted less) hid only its own home: its agents read
    // the everyday daemon's token in ~/.maestro and, on the shared network, could drive that daemon.
    const { root, project, spec } = sandboxes('postgres://me:pw@127.0.0.1:5432/maestro');
    const places = ['.maestro/token', '.maestro/maestro.db'];
    expectHidden(root, project, spec, places);
  });
});

describe.skipIf(unusable)("the board's cookie in a browser the system packs (the daemon's token, 90 days)", () => {
  it('reads empty: Firefox and Chromium as snaps (Ubuntu\'s Firefox) or flatpaks, and other browsers\' profiles', () => {
    // Each holds the board's cookie as any profile does, Firefox's in plain SQLite: the daemon's token, with
    // which an agent approves its own task. ~/.mozilla and ~/.config/chromium alone left these in sight.
    const { root, project, spec } = sandboxes('postgres://me:pw@127.0.0.1:5432/maestro');
    const places = [
      'snap/firefox/common/.mozilla/firefox/p.default/cookies.sqlite',
      'snap/chromium/common/chromium/Default/Cookies',
      '.var/app/org.mozilla.firefox/.mozilla/firefox/p.default/cookies.sqlite',
      '.var/app/com.google.Chrome/config/google-chrome/Default/Cookies',
      '.config/vivaldi/Default/Cookies',
      '.config/opera/Cookies',
      '.librewolf/p.default/cookies.sqlite',
      '.cache/mozilla/firefox/p.default/cache2/entries/E1',
    ];
    expectHidden(root, project, spec, places);
  });
});

describe('the other registered projects', () => {
  it("are hidden, but for a folder that holds the run's own (a monorepo beside its parts) or the user's home", () => {
    const { root, project, spec } = sandboxes('postgres://me:pw@127.0.0.1:5432/maestro');
    const other = join(root, 'other');
    const withOthers = sandboxSpecFor(resolveConfig({ home: join(root, 'home') }, { HOME: root, MAESTRO_AGENT_SANDBOX: 'bwrap' }), project, [other, root, project, homedir()])!;
    expect(withOthers.hide).toEqual([...spec.hide, other]);
  });
});
