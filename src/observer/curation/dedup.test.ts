import { describe, expect, it } from 'vitest';
import type { WikiEntry } from '../../knowledge/format/wiki/entries.js';
import { deduplicateKnowledge, type DedupCandidate } from './dedup.js';

function entry(id: string, fields: Partial<WikiEntry>): WikiEntry {
  return {
    id,
    slug: id.toLowerCase(),
    request: '',
    type: 'context',
    tags: ['proj:app'],
    version: 1,
    status: 'draft',
    source: { sessionId: 's0', explorationId: 'exp_0' },
    sources: [],
    confidence: 0.5,
    title: id,
    summary: '',
    body: '',
    path: `/w/${id}.md`,
    relativePath: `contexts/${id}.md`,
    mtimeMs: 0,
    size: 0,
    ...fields,
  };
}

const candidate = (fields: Partial<DedupCandidate>): DedupCandidate => ({
  type: 'context',
  request: 'Configure nginx websocket upgrade headers',
  content: 'add proxy_set_header Upgrade and Connection to the location block',
  confidence: 0.5,
  source: { sessionId: 's1', explorationId: 'exp_4' },
  ...fields,
});

describe('deduplicateKnowledge (FORMATS §8.6)', () => {
  it('same source exploration: skip, unless the same id or a confidence higher by more than 0.1', () => {
    const same = entry('C001', { request: 'anything', source: { sessionId: 's1', explorationId: 'exp_4' }, confidence: 0.5 });
    expect(deduplicateKnowledge(candidate({}), [same], 'app')).toMatchObject({ action: 'skip', reason: 'already_exists_same_source' });
    expect(deduplicateKnowledge(candidate({ id: 'C001' }), [same], 'app')).toMatchObject({ action: 'update', target: { id: 'C001' } });
    expect(deduplicateKnowledge(candidate({ confidence: 0.61 }), [same], 'app')).toMatchObject({ action: 'update' });
    expect(deduplicateKnowledge(candidate({ confidence: 0.6 }), [same], 'app')).toMatchObject({ action: 'skip' });
  });

  it('similar request (≥ 0.85) among same-type, project-compatible entries', () => {
    const similar = entry('C002', { request: 'configure nginx websocket upgrade headers' });
    expect(deduplicateKnowledge(candidate({}), [similar], 'app')).toMatchObject({ action: 'skip', reason: 'similar_request_exists', target: { id: 'C002' } });
    expect(deduplicateKnowledge(candidate({ confidence: 0.9 }), [similar], 'app')).toMatchObject({ action: 'update', target: { id: 'C002' } });
    // Another project's entry, or an entity, is not a duplicate of this context.
    expect(deduplicateKnowledge(candidate({}), [{ ...similar, tags: ['proj:other'] }], 'app')).toEqual({ action: 'create' });
    expect(deduplicateKnowledge(candidate({}), [{ ...similar, type: 'entity' }], 'app')).toEqual({ action: 'create' });
  });

  it('similar content (Jaccard ≥ 0.75) with a different request', () => {
    const body = entry('C003', { request: 'Proxy settings for realtime', body: 'add proxy_set_header Upgrade and Connection to the location block' });
    expect(deduplicateKnowledge(candidate({}), [body], 'app')).toMatchObject({ action: 'skip', reason: 'similar_content_exists' });
    const different = entry('C004', { request: 'Proxy settings for realtime', body: 'rotate the TLS certificates every ninety days with certbot' });
    expect(deduplicateKnowledge(candidate({}), [different], 'app')).toEqual({ action: 'create' });
  });
});
