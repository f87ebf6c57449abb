/**
 * A daemon started with a relative folder in its PATH: an empty entry (`:/usr/bin`, what a shell profile's
 * `export PATH=$EXTRA:$PATH` gives with EXTRA unset), `.` or `node_modules/.bin`. The worker starts git and
 * bwrap in the task's worktree, which the agent writes, so such an entry found the agent's own `./git` and
 * `./bwrap` there: they ran outside the sandbox, as the person, and read the daemon's token. Everything the
 * daemon starts gets PATH's absolute folders only (src/lib/agentEnv.ts onlyAbsolute).
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

describe.skipIf(unusable)('a daemon whose PATH holds a relative folder', () => {
  let d: TestDaemon | null = null;
  const path = process.env.PATH;
  afterEach(async () => {
    process.env.PATH = path;
    await d?.stop({ graceMs: 0 });
    d = null;
    removeTempDirs();
  });

  it("runs no git or bwrap the agent put in its worktree: the token stays out of the agent's reach", async () => {
    const repo = makeRepo();
    mkdirSync(join(repo, '.agent'));
    writeFileSync(join(repo, '.git', 'info', 'exclude'), '.agent/\n');
    const home = tempDir('maestro-home-');
    // Outside /tmp, the sandbox's own: what runs outside it can write here, what runs inside cannot.
    const ran = join(tempDir('maestro-ran-', '/var/tmp'), 'ran');
    // `:` first: the folder a program starts in is searched before any other.
    process.env.PATH = `:${path}`;
    d = await startTestDaemon({ home, agentSandbox: { kind: 'bwrap', required: true, hide: [], writable: [] } });
    const agent = join(repo, '.agent', 'agent.sh');
    // Each planted program says it ran, with the token it can read, then hands over to the real one.
    const plant = ['git', 'bwrap']
      .map((p) => `printf '#!/bin/sh\\n{ echo ${p}; cat ${home}/token; } >> ${ran}\\nfor d in /usr/local/bin /usr/bin /bin; do [ -x $d/${p} ] && exec $d/${p} "$@"; done\\n' > ${p} && chmod +x ${p}`)
      .join(' && ');
    writeFileSync(agent, `cat >/dev/null
case "$MAESTRO_ROLE" in
  execute) ${plant}; echo hello > greeting.txt; echo done ;;
  review*) printf '\`\`\`json\\n{"verdict":"approve","findings":[]}\\n\`\`\`\\n' ;;
  *) echo done ;;
esac
`);
    const project = await d.store.projects.create({ name: 'planted', repoPath: repo, config: { provider: { kind: 'command', command: ['/bin/sh', agent], promptVia: 'stdin' } } });
    const task = await d.store.tasks.create({ projectId: project.id, title: 'Greet', complexity: 'easy' });
    // The worker's commit (git add, git commit) and both reviews (bwrap) ran after the agent planted them.
    await until(d.bus, async () => (await d!.store.tasks.get(task.id)).status === 'exec_review', 'the task to reach review', 120_000);
    expect(git(repo, 'show', `maestro/${task.id}-v1:greeting.txt`).trim()).toBe('hello');
    expect(existsSync(ran) ? readFileSync(ran, 'utf8') : 'nothing ran').toBe('nothing ran');
  });
});
