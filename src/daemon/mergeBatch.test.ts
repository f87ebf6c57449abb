/**
 * A passed chain (mergeBatch.ts) whose rider holds an older check of its own alone, on real git: the chain lands as it
 * is, with no further check. The rider, approved earlier, went first in the train, its own check stale (main moved
 * since), and a check of it started, the chain thrown away.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Task } from '../core/types.js';
import { removeTempDirs } from '../../test/helpers/db.js';
import { git, makeRepo } from '../../test/helpers/repo.js';
import { ridersFor } from './mergeBatch.js';
import { inQueueOrder, mustCheckFor } from './mergeQueue.js';
import { runTrain, type Car } from './mergeTrain.js';

function commitFile(repo: string, name: string): string {
  writeFileSync(join(repo, name), `${name}\n`);
  git(repo, 'add', name);
  git(repo, 'commit', '-qm', `add ${name}`);
  return git(repo, 'rev-parse', 'HEAD');
}

const merge = (repo: string, commit: string, message: string) => (git(repo, 'merge', '-q', '--no-ff', '-m', message, commit), git(repo, 'rev-parse', 'HEAD'));

const taskOf = (id: string, updatedAt: number, result: Record<string, unknown>) => ({ id, projectId: 'p', title: id, status: 'merging', updatedAt, result: { kind: 'review', verdict: 'approve', ...result } }) as unknown as Task;
const carOf = (repo: string, task: Task): Car => ({ task, branch: `maestro/${task.id}-v1`, ref: `refs/heads/maestro/${task.id}-v1`, tip: git(repo, 'rev-parse', `maestro/${task.id}-v1`) });

describe('a chain with a rider checked alone before', () => {
  afterEach(() => removeTempDirs());

  it('lands as checked, each change with its merge commit: its leader goes first, and no check starts', async () => {
    const repo = makeRepo();
    git(repo, 'checkout', '-qb', 'maestro/t_r-v1');
    const r = commitFile(repo, 'r.txt');
    git(repo, 'checkout', '-q', 'main');
    git(repo, 'checkout', '-qb', 'maestro/t_l-v1');
    const l = commitFile(repo, 'l.txt');
    git(repo, 'checkout', '-q', 'main');
    const m1 = commitFile(repo, 'p1.txt');
    // R's own merge check passed on main m1: its branch holds main merged in.
    git(repo, 'checkout', '-q', 'maestro/t_r-v1');
    const rChecked = merge(repo, 'main', 'Merge main');
    git(repo, 'checkout', '-q', 'main');
    const m2 = commitFile(repo, 'p2.txt');
    // Then L's check of the two together passed on m2: L's branch is the chain, a merge commit each.
    git(repo, 'checkout', '-q', 'maestro/t_l-v1');
    git(repo, 'reset', '-q', '--hard', m2);
    const c1 = merge(repo, l, 'Merge maestro/t_l-v1');
    const c2 = merge(repo, rChecked, 'Merge maestro/t_r-v1');
    git(repo, 'checkout', '-q', 'main');

    const rider = taskOf('t_r', 1, { commitSha: r, mergeChecked: { approved: r, commitSha: rChecked, rounds: 1, baseSha: m1 } });
    const batch = { from: l, before: null, base: m2, cars: [{ taskId: 't_l', commit: l, sha: c1 }, { taskId: 't_r', commit: rChecked, sha: c2 }] };
    const leader = taskOf('t_l', 2, { commitSha: l, mergeChecked: { approved: l, commitSha: c2, rounds: 1, baseSha: m2, batch } });

    const order = inQueueOrder([rider, leader], false);
    expect(order.map((t) => t.id)).toEqual(['t_l', 't_r']);
    // Nor is a car holding a chain of its own ever a rider of another's check (its chain would never count).
    expect(ridersFor(carOf(repo, rider), [carOf(repo, leader)])).toEqual([]);

    const outcomes = await runTrain({ repo, base: 'main', strategy: 'merge', cars: order.map((t) => carOf(repo, t)), veto: async () => null, mustCheck: mustCheckFor(repo, 'merge', 1) });
    expect(outcomes.map((o) => (o.kind === 'merged' ? `${o.car.task.id} merged ${o.sha}` : `${o.car.task.id} ${o.kind}`))).toEqual([`t_l merged ${c1}`, `t_r merged ${c2}`]);
    expect(git(repo, 'rev-parse', 'main')).toBe(c2);
  });
});
