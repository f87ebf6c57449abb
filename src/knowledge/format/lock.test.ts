/**
 * withCorpusLockAsync: a holder that awaits keeps the process's hold, and the locks go when the last holder is
 * done, whichever order holders that await finish in (the first taker's release would free them under the second).
 */
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tmpDir } from '../../../test/helpers/knowledge2.js';
import { acquireKernelLock } from '../../lib/kernelLock.js';
import { namespaceLockPath, withCorpusLock, withCorpusLockAsync } from './lock.js';

function deferred() {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

/** Whether another connection (as another process) gets the corpus's kernel lock now: it asks once, with no wait. */
function freeForOthers(target: string): boolean {
  try {
    acquireKernelLock(namespaceLockPath(target), 0, () => new Error('busy'))();
    return true;
  } catch {
    return false;
  }
}

describe('withCorpusLockAsync', () => {
  it('holds the locks until its last holder is done, in whatever order the holders that await finish', async () => {
    const dir = join(tmpDir(), '.workflow', 'sessions');
    mkdirSync(dir, { recursive: true });
    const target = join(dir, '.session-store');
    const first = deferred();
    const second = deferred();
    const a = withCorpusLockAsync([target], () => first.promise);
    const b = withCorpusLockAsync([target], () => second.promise);
    expect(existsSync(`${target}.lock`)).toBe(true);
    expect(freeForOthers(target)).toBe(false);
    withCorpusLock([target], () => expect(existsSync(`${target}.lock`)).toBe(true)); // re-entrant meanwhile
    first.resolve();
    await a;
    expect(existsSync(`${target}.lock`)).toBe(true);
    expect(freeForOthers(target)).toBe(false);
    second.resolve();
    await b;
    expect(existsSync(`${target}.lock`)).toBe(false);
    expect(freeForOthers(target)).toBe(true);
  });
});
