import { describe, expect, it } from 'vitest';
import type { Project } from '../core/types.js';
import { RemoteReach } from './remoteReach.js';

const project: Project = { id: 'p1', name: 'web', repoPath: '/srv/web.git', config: {}, createdAt: 0, updatedAt: 0, archivedAt: null };

describe('RemoteReach', () => {
  it('names an unreachable https remote without its password, in the message and the condition', async () => {
    const reach = new RemoteReach();
    const remote = 'https://ann:s3cret@git.example.com/web.git';
    const err = await reach.reach(project, remote, async () => {
      throw new Error(`git fetch failed: fatal: unable to access '${remote}/': Could not resolve host: git.example.com`);
    }).catch((e: Error & { code?: string; details?: { path?: string } }) => e);
    expect(err).toMatchObject({ code: 'REMOTE_UNREACHABLE', details: { path: 'https://ann:***@git.example.com/web.git' } });
    expect(err.message).toContain('https://ann:***@git.example.com/web.git');
    expect(err.message).not.toContain('s3cret');
  });

  it('passes any other failure through untouched, and remembers nothing', async () => {
    const reach = new RemoteReach();
    const disk = Object.assign(new Error('No space left on device'), { code: 'ENOSPC' });
    await expect(reach.reach(project, '/srv/web.git', async () => Promise.reject(disk))).rejects.toBe(disk);
    expect(reach.failed(project.id)).toBe(false);
  });
});
