/**
 * The diff the reviewers are shown is the commit's, whatever the repository's diff settings say. A person's
 * `diff.external` (difftastic is a common choice) or a textconv driver (`.gitattributes` + `diff.<driver>.textconv`,
 * which an agent can write into the shared repository's config) replaced the patch in the review prompt with that
 * program's output: the reviewers judged text that is not what the merge lands.
 */
import { chmodSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseJob } from '../../src/executor/protocol/job.js';
import { runPipeline } from '../../src/executor/run.js';
import { resultData, sandbox, type Sandbox } from './helpers.js';

/** Execute writes config.js; each reviewer saves its prompt under the root and approves. */
function agent(sb: Sandbox): string[] {
  const path = join(sb.root, 'agent.sh');
  writeFileSync(path, `prompt=$(cat)
case "$MAESTRO_ROLE" in
  execute) echo 'const password = "hunter2";' > config.js ;;
  review:code) printf '%s' "$prompt" > ${JSON.stringify(join(sb.root, 'review-prompt.txt'))} ;;
esac
case "$MAESTRO_ROLE" in review*) printf '\`\`\`json\\n{"verdict":"approve","findings":[]}\\n\`\`\`\\n' ;; *) echo done ;; esac
`);
  return ['/bin/sh', path];
}

describe("the reviewers' diff", () => {
  it('is the patch git makes, not an external diff tool or a textconv filter from the repository config', async () => {
    using sb = sandbox();
    const fake = join(sb.root, 'fake-diff.sh');
    writeFileSync(fake, '#!/bin/sh\necho "nothing changed here"\n');
    chmodSync(fake, 0o755);
    sb.git('config', 'diff.external', fake);
    sb.git('config', 'diff.hide.textconv', 'sed s/hunter2/xxx/');
    sb.commitFile('.gitattributes', '*.js diff=hide\n');
    const command = agent(sb);
    const job = (kind: 'execute' | 'review', id: string) => parseJob(sb.job({ kind, provider: { kind: 'command', command } } as never, '', id));
    resultData(await runPipeline(job('execute', 'e1'), { runDir: sb.runDir('e1') }));
    resultData(await runPipeline(job('review', 'v1'), { runDir: sb.runDir('v1') }));
    const prompt = readFileSync(join(sb.root, 'review-prompt.txt'), 'utf8');
    expect(prompt).toContain('+const password = "hunter2";');
    expect(prompt).not.toContain('nothing changed here');
  });
});
