import { afterEach, describe, expect, it, vi } from 'vitest';
import { api, ApiError } from './client.js';

afterEach(() => vi.unstubAllGlobals());

describe('api client', () => {
  it('keeps only the last lines of a very long transcript', async () => {
    const body = Array.from({ length: 20_000 }, (_, i) => JSON.stringify({ role: 'agent', text: `line ${i}` })).join('\n') + '\n';
    vi.stubGlobal('fetch', async () => new Response(body));
    const { lines, total } = await api.transcript('t1', undefined, 300);
    expect(total).toBe(20_000);
    expect(lines.length).toBe(300);
    expect(JSON.parse(lines[0]!).text).toBe('line 19700');
    expect(JSON.parse(lines[299]!).text).toBe('line 19999');
  });

  it("turns the server's error and an unreachable daemon into ApiErrors that say what happened", async () => {
    vi.stubGlobal('fetch', async () => new Response(JSON.stringify({ error: { code: 'UNKNOWN_TASK', message: 'No task "x".' } }), { status: 404 }));
    await expect(api.task('x')).rejects.toMatchObject({ status: 404, code: 'UNKNOWN_TASK', message: 'No task "x".' });
    vi.stubGlobal('fetch', async () => {
      throw new TypeError('Failed to fetch');
    });
    const err = await api.projects().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).code).toBe('NETWORK');
    expect((err as ApiError).message).toBe('The daemon did not answer (Failed to fetch).');
  });

  it("takes over the board's first data that index.html asked for, once, and asks again after a failure", async () => {
    const g = globalThis as { __maestroEarly?: Record<string, Promise<{ ok: boolean; text: string }>> };
    const fetched: string[] = [];
    vi.stubGlobal('fetch', async (url: string) => {
      fetched.push(url);
      return new Response(JSON.stringify({ projects: [{ id: 'from-fetch' }] }));
    });
    const path = '/api/tasks?projectId=p1&limit=5000&view=board';
    g.__maestroEarly = { '/api/projects': Promise.resolve({ ok: true, text: JSON.stringify({ projects: [{ id: 'early' }] }) }), [path]: Promise.resolve({ ok: false, text: '{}' }) };
    expect((await api.projects()).projects[0]!.id).toBe('early');
    expect(fetched).toEqual([]);
    // Handed over once: the next call asks the daemon.
    expect((await api.projects()).projects[0]!.id).toBe('from-fetch');
    // The early answer failed: the same request is made again, so its error reads like any other.
    await api.tasks('p1');
    expect(fetched).toEqual(['/api/projects', path]);
    delete g.__maestroEarly;
  });
});
