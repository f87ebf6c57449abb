/**
 * From the command line, a missing or unreadable reconciliation receipt names the CLI's own fix
 * (`--refresh`); the API's routes name theirs (src/api/routes/knowledgeReview.test.ts).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { maestro, maestroOk, project } from '../helpers/knowledge2.js';

describe('maestro knowledge: a receipt to rebuild', () => {
  it('resolve, promote and review tell the person to run review --refresh', async () => {
    const { dir } = project();
    const W = ['--workflow-root', dir];
    const ok = maestroOk(dir);
    await ok(['session', 'create', 's-1', '--objective', 'cache work']);
    const { candidate } = await ok(['knowledge', 'stage', 'spec', 'Feature flags are read once', 'Feature flags are read once per request and passed down explicitly.', '--category', 'coding', '--session', 's-1']);
    const hint = 'Refresh it: maestro knowledge review s-1 --refresh [STALE_RECEIPT]\n';
    const resolve = await maestro(['knowledge', 'review', 's-1', '--resolve', candidate.candidate_id, '--as', 'unique', '--reason', 'new rule', ...W]);
    expect(resolve.code).toBe(1);
    expect(resolve.stderr).toMatch(/^maestro: The reconciliation receipt of session s-1 is missing \(no complete receipt\)\. /);
    expect(resolve.stderr).toContain(hint);
    const promote = await maestro(['knowledge', 'promote', 's-1', '--candidate', candidate.candidate_id, ...W]);
    expect(promote.code).toBe(1);
    expect(promote.stderr).toContain(hint);

    await ok(['knowledge', 'review', 's-1', '--refresh']);
    const receipt = join(dir, '.workflow', 'sessions', 's-1', 'knowledge-reconciliation.json');
    writeFileSync(receipt, 'not json\n');
    const review = await ok(['knowledge', 'review', 's-1']);
    expect(review.sources[0]).toMatchObject({ receipt: 'missing', error: `${receipt}: not valid JSON (line 1, column 1); rebuild it: maestro knowledge review s-1 --refresh.` });
  });
});
