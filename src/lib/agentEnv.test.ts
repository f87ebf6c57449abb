import { describe, expect, it } from 'vitest';
import { agentEnv, childEnv } from './agentEnv.js';

const daemonEnv = { PATH: '/bin', HOME: '/home/u', MAESTRO_TOKEN: 'secret', MAESTRO_DATABASE: 'postgres://u:pw@h/db', PGPASSWORD: 'pw', ANTHROPIC_API_KEY: 'sk', MY_TOOL: 'x', MAESTRO_MODEL_HARD: 'opus' };

describe('agentEnv and childEnv', () => {
  it('passes the base, the tiers, the given credentials and passEnv names; never the daemon’s MAESTRO_* or database secrets', () => {
    expect(agentEnv({ ...daemonEnv, PGHOST: 'db' }, { credentials: ['ANTHROPIC_API_KEY'], pass: ['MY_*', 'MAESTRO_TOKEN', 'PG*'] })).toEqual({ PATH: '/bin', HOME: '/home/u', ANTHROPIC_API_KEY: 'sk', MY_TOOL: 'x', MAESTRO_MODEL_HARD: 'opus', PGHOST: 'db' });
  });

  it('outside a worker (the observer in the daemon, detection) a provider child gets the allowlist, not the daemon environment', () => {
    expect(childEnv([], daemonEnv)).toEqual({ PATH: '/bin', HOME: '/home/u', MAESTRO_MODEL_HARD: 'opus' });
    expect(childEnv(['ANTHROPIC_API_KEY'], daemonEnv).ANTHROPIC_API_KEY).toBe('sk');
  });

  it('inside a worker the environment the daemon allowlisted for the run passes as it is (its passEnv names included)', () => {
    const worker = { PATH: '/bin', MY_TOOL: 'x', MAESTRO_RUN_DIR: '/runs/r1' };
    expect(childEnv([], worker)).toEqual(worker);
  });

  it('never passes PWD, the folder the daemon or worker was started in, whatever passEnv says: a child runs elsewhere', () => {
    expect(agentEnv({ ...daemonEnv, PWD: '/home/u/main-checkout' }, { pass: ['PWD', 'P*'] })).not.toHaveProperty('PWD');
    expect(childEnv([], { ...daemonEnv, PWD: '/home/u/main-checkout' })).not.toHaveProperty('PWD');
    expect(childEnv([], { PATH: '/bin', MAESTRO_RUN_DIR: '/runs/r1', PWD: '/home/u/main-checkout' })).toEqual({ PATH: '/bin', MAESTRO_RUN_DIR: '/runs/r1' });
  });
});

describe('PATH in what the daemon starts', () => {
  it('keeps only its absolute folders: an empty entry, . or node_modules/.bin is looked up in the worktree the agent writes', () => {
    expect(agentEnv({ PATH: ':/usr/bin:.:node_modules/.bin::/bin:' }).PATH).toBe('/usr/bin:/bin');
    expect(childEnv([], { PATH: '.:/usr/bin', MAESTRO_RUN_DIR: '/runs/r1' })).toEqual({ PATH: '/usr/bin', MAESTRO_RUN_DIR: '/runs/r1' });
    // None left: no PATH at all (the system's default), never an empty one, which is the folder itself.
    expect(agentEnv({ PATH: '.:bin', HOME: '/home/u' })).toEqual({ HOME: '/home/u' });
  });

  it('drops a relative HOME, XDG, temp or git settings folder: it would be read in the worktree the agent writes', () => {
    const env = { HOME: 'u', XDG_CONFIG_HOME: '.config', XDG_CACHE_HOME: '/home/u/.cache', TMPDIR: 'tmp', GIT_CONFIG_GLOBAL: '.gitconfig', GIT_AUTHOR_NAME: 'Ann' };
    expect(agentEnv(env, { pass: ['GIT_*'] })).toEqual({ XDG_CACHE_HOME: '/home/u/.cache', GIT_AUTHOR_NAME: 'Ann' });
    expect(childEnv([], { ...env, MAESTRO_RUN_DIR: '/runs/r1' })).toEqual({ XDG_CACHE_HOME: '/home/u/.cache', GIT_AUTHOR_NAME: 'Ann', MAESTRO_RUN_DIR: '/runs/r1' });
  });
});
