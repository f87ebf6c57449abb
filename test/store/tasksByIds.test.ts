/** Reading tasks by id: every one asked for, however many (a single `list({ ids })` takes at most 1,000). */
import { expect, it } from 'vitest';
import { createStore } from '../../src/store/store.js';
import { freshSqlite } from '../helpers/db.js';

it('reads every task of 1,500 ids, leaving out the unknown ones', async () => {
  const { db } = await freshSqlite();
  const store = createStore(db);
  try {
    const project = await store.projects.create({ name: 'many', repoPath: '/nonexistent-for-this-test', config: {} });
    const first = await store.tasks.create({ projectId: project.id, title: 'The first', complexity: 'easy' });
    const cols = (await db.all<{ name: string }>(`SELECT name FROM pragma_table_info('tasks')`)).map((c) => c.name);
    const picked = cols.map((c) => (c === 'id' ? `'copy-' || n.i` : `t.${c}`));
    await db.run(`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 1499) INSERT INTO tasks (${cols.join(', ')}) SELECT ${picked.join(', ')} FROM n, tasks t WHERE t.id = $1`, [first.id]);
    const ids = [first.id, ...Array.from({ length: 1499 }, (_, i) => `copy-${i + 1}`), 'no-such-task'];
    const found = await store.tasks.byIds(ids);
    expect(new Set(found.map((t) => t.id))).toEqual(new Set(ids.slice(0, 1500)));
    expect(found).toHaveLength(1500);
    // The same ids through one list: cut at 1,000, which is why callers read through byIds.
    expect(await store.tasks.list({ ids, limit: 100_000 })).toHaveLength(1000);
  } finally {
    await store.close();
  }
});
