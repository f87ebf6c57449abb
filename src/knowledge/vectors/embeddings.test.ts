import { createServer, type Server } from 'node:http';
import { describe, expect, it } from 'vitest';
import { tempRoot, writeFiller, writeKnowhowFile } from '../../../test/helpers/knowledge.js';
import { embedderFromEnv, openAiCompatibleEmbedder } from './embeddings.js';
import { openKnowledge } from '../knowledge.js';

/**
 * The model fake for vectors: a local `/v1/embeddings` server whose vectors
 * put "car" and "automobile" on the same axis, so only a vector search can
 * connect them.
 */
const AXES = [['car', 'automobile', 'vehicle'], ['retry', 'backoff'], ['cache'], ['deploy']];
function vectorFor(text: string): number[] {
  const words = text.toLowerCase().match(/[a-z]+/g) ?? [];
  return AXES.map((axis) => words.filter((w) => axis.includes(w)).length + 0.01);
}

async function withServer<T>(fn: (url: string, calls: () => number) => Promise<T>): Promise<T> {
  let calls = 0;
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      calls++;
      const { input, model } = JSON.parse(body) as { input: string[]; model: string };
      if (req.url !== '/v1/embeddings' || model !== 'fake-embed') {
        res.writeHead(404).end('no');
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ data: input.map((t, index) => ({ index, embedding: vectorFor(t) })) }));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as { port: number };
  try {
    return await fn(`http://127.0.0.1:${port}`, () => calls);
  } finally {
    await new Promise((r) => server.close(r));
  }
}

describe('optional vectors', () => {
  it('are off unless configured', () => {
    expect(embedderFromEnv({})).toBeNull();
    expect(() => embedderFromEnv({ MAESTRO_EMBEDDINGS_URL: 'http://x' })).toThrow(/MAESTRO_EMBEDDINGS_MODEL/);
  });

  it('mix in semantic hits through a /v1/embeddings endpoint, embed only changed entries, and respect filters', async () => {
    const { dir, root } = tempRoot();
    writeFiller(root, 20);
    writeKnowhowFile(root, 'TIP-20260801-automobile', { title: 'Automobile maintenance', category: 'ops' }, 'Check the automobile tyres monthly.');
    writeKnowhowFile(root, 'TIP-20260801-vehicle', { title: 'Vehicle paperwork', category: 'admin' }, 'Keep the vehicle papers in the glovebox.');
    await withServer(async (url, calls) => {
      const k = openKnowledge({ env: process.env, workflowRoot: dir, embedder: openAiCompatibleEmbedder({ url, model: 'fake-embed' }) });
      try {
        expect(k.search('car').count).toBe(0); // lexical alone cannot connect them
        const hybrid = await k.searchHybrid('car', { limit: 5 });
        expect(hybrid.retrieval).toBe('hybrid');
        expect(hybrid.results.slice(0, 2).map((r) => r.id).sort()).toEqual(['knowhow-tip-20260801-automobile', 'knowhow-tip-20260801-vehicle']);
        const filtered = await k.searchHybrid('car', { category: 'admin' });
        expect(filtered.results.map((r) => r.id)).toEqual(['knowhow-tip-20260801-vehicle']);
        const before = calls();
        await k.searchHybrid('car');
        expect(calls()).toBe(before + 1); // only the query was embedded: nothing changed
      } finally {
        k.close();
      }
    });
  });
});
