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
});
