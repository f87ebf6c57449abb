/**
 * A daemon started with a relative folder in its environment. The worker starts git and bwrap in the task's
 * worktree, which the agent writes, and a relative folder is looked up there:
 *   - PATH with an empty entry (`:/usr/bin`, what a shell profile's `export PATH=$EXTRA:$PATH` gives with
 *     EXTRA unset), `.` or `node_modules/.bin` found the agent's own `./git` and `./bwrap`;
 *   - XDG_CONFIG_HOME=.config had git read the agent's `.config/git/config`, whose `gpg.program = ./sign.sh`
 *     ran at the worker's commit.
 * Both ran outside the sandbox, as the person, and read the daemon's token. Everything the daemon starts gets
 * PATH's absolute folders only, and no relative folder variable (src/lib/agentEnv.ts).
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { bwrapUnusable } from '../helpers/bwrap.js';
import { removeTempDirs, tempDir } from '../helpers/db.js';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { git, makeRepo } from '../helpers/repo.js';
import { until } from '../helpers/wait.js';

const unusable = bwrapUnusable();

describe.skipIf(unusable)('a daemon whose environment holds a relative folder', () => {
  let d: TestDaemon | null = null;
  const saved = { PATH: process.env.PATH, XDG_CONFIG_HOME: process.env.XDG_CONFIG_HOME };
  afterEach(async () => {
    for (const [name, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
    await d?.stop({ graceMs: 0 });
    d = null;
    removeTempDirs();
  });

  /**
   * A sandboxed command agent whose execute call runs `plant` (sh, in its worktree) and writes greeting.txt; the
   * task run until it waits for a person. What ran outside the sandbox is in the answer's `ran`, with the token.
   */
  async function runPlanting(env: Record<string, string>, plant: (ran: string, home: string) => string): Promise<{ status: string; branch: string; ran: string }> {
    const repo = makeRepo();
    mkdirSync(join(repo, '.agent'));
    writeFileSync(join(repo, '.git', 'info', 'exclude'), '.agent/\n');
    const home = tempDir('maestro-home-');
    // Outside /tmp, the sandbox's own: what runs outside it can write here, what runs inside cannot.
    const ran = join(tempDir('maestro-ran-', '/var/tmp'), 'ran');
    Object.assign(process.env, env);
    d = await startTestDaemon({ home, agentSandbox: { kind: 'bwrap', required: true, hide: [], writable: [] } });
    const agent = join(repo, '.agent', 'agent.sh');
    writeFileSync(agent, `cat >/dev/null
case "$MAESTRO_ROLE" in
  execute) ${plant(ran, home)}; echo hello > greeting.txt; echo done ;;
  review*) printf '\`\`\`json\\n{"verdict":"approve","findings":[]}\\n\`\`\`\\n' ;;
  *) echo done ;;
esac
`);
    const project = await d.store.projects.create({ name: 'planted', repoPath: repo, config: { provider: { kind: 'command', command: ['/bin/sh', agent], promptVia: 'stdin' } } });
    const task = await d.store.tasks.create({ projectId: project.id, title: 'Greet', complexity: 'easy' });
    const status = await until(d.bus, async () => {
      const s = (await d!.store.tasks.get(task.id)).status;
      return s === 'exec_review' || s === 'needs_attention' ? s : null;
    }, 'the task to wait for a person', 120_000);
    return { status, branch: git(repo, 'show', `maestro/${task.id}-v1:greeting.txt`).trim(), ran: existsSync(ran) ? readFileSync(ran, 'utf8') : 'nothing ran' };
  }

  it("PATH: runs no git or bwrap the agent put in its worktree; the token stays out of the agent's reach", async () => {
    // `:` first: the folder a program starts in is searched before any other.
    const run = await runPlanting({ PATH: `:${saved.PATH}` }, (ran, home) =>
      // Each planted program says it ran, with the token it can read, then hands over to the real one.
      ['git', 'bwrap']
        .map((p) => `printf '#!/bin/sh\\n{ echo ${p}; cat ${home}/token; } >> ${ran}\\nfor d in /usr/local/bin /usr/bin /bin; do [ -x $d/${p} ] && exec $d/${p} "$@"; done\\n' > ${p} && chmod +x ${p}`)
        .join(' && '));
    // The worker's commit (git add, git commit) and both reviews (bwrap) ran after the agent planted them.
    expect(run).toEqual({ status: 'exec_review', branch: 'hello', ran: 'nothing ran' });
  });

  it("XDG_CONFIG_HOME: git reads no settings from the agent's worktree; its signing program does not run", async () => {
    const run = await runPlanting({ XDG_CONFIG_HOME: '.config' }, (ran, home) =>
      [
        'mkdir -p .config/git',
        `printf '[commit]\\n\\tgpgSign = true\\n[gpg]\\n\\tprogram = ./sign.sh\\n' > .config/git/config`,
        `printf '#!/bin/sh\\n{ echo sign.sh; cat ${home}/token; } >> ${ran}\\nexit 1\\n' > sign.sh && chmod +x sign.sh`,
      ].join(' && '));
    expect(run).toEqual({ status: 'exec_review', branch: 'hello', ran: 'nothing ran' });
  });
});
