import { lstatSync, mkdirSync, readdirSync, readFileSync, readlinkSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { tempDir, type TempDir } from '../__fixtures__/transcript-builder.js';
import { bundlePath, wikiLayout } from '../../knowledge/format/wiki/layout.js';
import { readSessionIndex, recordSessionInIndex } from './session-index.js';
import { fileStamp, loadBundle, patchBundle, quarantineBundle, writeBundle, writeOwnedBundle } from './store.js';
import { createEmptyBundle } from './types.js';

let dir: TempDir;
beforeEach(() => {
  dir = tempDir();
});
afterEach(() => dir.cleanup());

describe('bundle writes', () => {
  it('writes 2-space JSON atomically (no temp file left) and patches with an mtime-checked retry', () => {
    const layout = wikiLayout(join(dir.path, 'wiki'));
    const jsonl = join(dir.path, 's.jsonl');
    writeFileSync(jsonl, '');
    const ctx = { workspaceRoot: dir.path };
    writeBundle(layout, createEmptyBundle({ sessionId: 's', workspaceRoot: dir.path, jsonlPath: jsonl, jsonlMtime: Date.now() + 60_000 }, 1));
    expect(readFileSync(bundlePath(layout, 's'), 'utf8')).toMatch(/^\{\n {2}"schemaVersion": 1,/);
    expect(readdirSync(join(layout.sessions, 's'))).toEqual(['bundle.json']);

    // A concurrent writer touches the file between our read and our write: the patch re-reads and re-applies.
    let attempts = 0;
    const patched = patchBundle(layout, 's', ctx, (current) => {
      attempts += 1;
      if (attempts === 1) {
        const other = structuredClone(current!);
        other.curation.openIntentKey = 'debug';
        writeBundle(layout, other);
        const later = new Date(Date.now() + 5_000);
        utimesSync(bundlePath(layout, 's'), later, later);
      }
      const next = structuredClone(current!);
      next.session.flow.revision += 1;
      return next;
    });
    expect(attempts).toBe(2);
    expect(patched).toMatchObject({ curation: { openIntentKey: 'debug' }, session: { flow: { revision: 1 } } });
    expect(loadBundle(layout, 's', ctx).bundle).toMatchObject({ curation: { openIntentKey: 'debug' }, session: { flow: { revision: 1 } } });

    // A writer that never stops: refused after 5 attempts, with the path in the message.
    let n = 0;
    expect(() =>
      patchBundle(layout, 's', ctx, (current) => {
        n += 1;
        const t = new Date(Date.now() + 10_000 * n);
        utimesSync(bundlePath(layout, 's'), t, t);
        return current;
      }),
    ).toThrow(/bundle\.json kept changing while being patched \(5 attempts\)/);
  });

  it('writes an owned bundle directly only while the file is the version written last', () => {
    const layout = wikiLayout(join(dir.path, 'wiki'));
    const path = bundlePath(layout, 's');
    const bundle = createEmptyBundle({ sessionId: 's', workspaceRoot: dir.path, jsonlPath: join(dir.path, 's.jsonl'), jsonlMtime: 0 }, 1);
    // No stamp yet (first write) or no file: the caller must patch.
    expect(writeOwnedBundle(layout, bundle, null)).toBeNull();
    writeBundle(layout, bundle);
    let stamp = fileStamp(path);
    bundle.session.flow.revision = 1;
    stamp = writeOwnedBundle(layout, bundle, stamp);
    expect(stamp).not.toBeNull();
    expect(JSON.parse(readFileSync(path, 'utf8')).session.flow.revision).toBe(1);
    // Another writer replaces the file: not ours any more, nothing written.
    const other = structuredClone(bundle);
    other.curation.openIntentKey = 'debug';
    writeBundle(layout, other);
    bundle.session.flow.revision = 2;
    expect(writeOwnedBundle(layout, bundle, stamp)).toBeNull();
    expect(JSON.parse(readFileSync(path, 'utf8'))).toMatchObject({ curation: { openIntentKey: 'debug' }, session: { flow: { revision: 1 } } });
  });
});

describe('keys this code does not know', () => {
  it('are written back at every level it rebuilds, while the keys it knows are still checked', () => {
    const layout = wikiLayout(join(dir.path, 'wiki'));
    const jsonl = join(dir.path, 's.jsonl');
    writeFileSync(jsonl, '');
    const path = bundlePath(layout, 's');
    mkdirSync(join(path, '..'), { recursive: true });
    writeFileSync(
      path,
      JSON.stringify({
        schemaVersion: 1,
        meta: { sessionId: 's', workspaceRoot: dir.path, jsonlPath: jsonl, jsonlMtime: 'soon', updatedAt: 1, x_meta: 'm' },
        session: { intent: null, flow: { revision: 2, fingerprint: '', flowGraph: null, flowchartHints: {}, graphPatchLedger: 'none', x_flow: 'f' }, x_session: 's' },
        curation: { openIntentKey: 'debug', buckets: [], evidence: {}, x_curation: 'c' },
        explorations: { exp_1: { explorationId: 'exp_1', question: 'q', x_exploration: 'e' } },
        x_top: { any: ['shape'] },
      }),
    );
    patchBundle(layout, 's', { workspaceRoot: dir.path }, (current) => {
      current!.session.flow.revision += 1;
      return current;
    });
    expect(JSON.parse(readFileSync(path, 'utf8'))).toEqual({
      schemaVersion: 1,
      meta: { sessionId: 's', workspaceRoot: dir.path, jsonlPath: jsonl, jsonlMtime: 0, updatedAt: 1, x_meta: 'm' },
      session: { intent: null, flow: { revision: 3, fingerprint: '', flowGraph: null, flowchartHints: {}, graphPatchLedger: [], x_flow: 'f' }, x_session: 's' },
      curation: { openIntentKey: 'debug', buckets: {}, evidence: {}, x_curation: 'c' },
      explorations: { exp_1: { explorationId: 'exp_1', question: 'q', x_exploration: 'e' } },
      x_top: { any: ['shape'] },
    });
  });
});

describe('session index', () => {
  it('records sessions and starts fresh on an invalid file or another workspace', () => {
    const layout = wikiLayout(join(dir.path, 'wiki'));
    recordSessionInIndex(layout, dir.path, 'a', { jsonlMtime: 10, bundleUpdatedAt: 20 }, 100);
    recordSessionInIndex(layout, dir.path, 'b', { jsonlMtime: 11, bundleUpdatedAt: 21 }, 101);
    expect(readSessionIndex(layout, dir.path, 0)).toMatchObject({ fresh: false, index: { lastSessionId: 'b', updatedAt: 101, sessions: { a: { jsonlMtime: 10 }, b: { bundleUpdatedAt: 21 } } } });
    expect(readSessionIndex(layout, '/other', 0)).toMatchObject({ fresh: true, reason: 'workspace_mismatch', index: { sessions: {} } });
    writeFileSync(layout.sessionIndex, JSON.stringify({ schemaVersion: 2, workspaceRoot: dir.path }));
    expect(readSessionIndex(layout, dir.path, 0)).toMatchObject({ fresh: true, reason: 'invalid' });
    writeFileSync(layout.sessionIndex, '{');
    expect(readSessionIndex(layout, dir.path, 0)).toMatchObject({ fresh: true, reason: 'parse_error' });
  });

  it('keeps the keys it does not know, at the top and in a session, when it records a session', () => {
    const layout = wikiLayout(join(dir.path, 'wiki'));
    mkdirSync(layout.sessions, { recursive: true });
    const sessions = { old: { jsonlMtime: 1, bundleUpdatedAt: 2, gaStar: true }, abc: { jsonlMtime: 3, bundleUpdatedAt: 4, gaLabel: 'login bug' } };
    writeFileSync(layout.sessionIndex, JSON.stringify({ schemaVersion: 1, workspaceRoot: dir.path, lastSessionId: 'old', updatedAt: 5, sessions, gaPinned: ['x'], note: 'added by GA' }));
    recordSessionInIndex(layout, dir.path, 'abc', { jsonlMtime: 30, bundleUpdatedAt: 40 }, 100);
    expect(JSON.parse(readFileSync(layout.sessionIndex, 'utf8'))).toEqual({
      schemaVersion: 1, workspaceRoot: dir.path, lastSessionId: 'abc', updatedAt: 100,
      sessions: { old: sessions.old, abc: { jsonlMtime: 30, bundleUpdatedAt: 40, gaLabel: 'login bug' } },
      gaPinned: ['x'], note: 'added by GA',
    });
  });
});

describe('setting a corrupted bundle aside', () => {
  it('moves a bundle.json that is a symbolic link aside as the link itself, never copying what it leads to', () => {
    const layout = wikiLayout(join(dir.path, 'wiki'));
    const secret = join(dir.path, 'docker-config.json');
    writeFileSync(secret, '{"auths":{"registry":{"auth":"c2VjcmV0"}}}\n');
    mkdirSync(join(layout.sessions, 's'), { recursive: true });
    symlinkSync(secret, bundlePath(layout, 's'));
    const load = loadBundle(layout, 's', { workspaceRoot: dir.path });
    expect(load.status).toBe('corrupted');

    const kept = quarantineBundle(layout, 's', 7)!;
    expect(kept).toBe(`${bundlePath(layout, 's')}.corrupt-7`);
    // The link is what was set aside: no copy of the secret is in the wiki.
    expect(lstatSync(kept).isSymbolicLink()).toBe(true);
    expect(readlinkSync(kept)).toBe(secret);
    for (const name of readdirSync(join(layout.sessions, 's'))) {
      const st = lstatSync(join(layout.sessions, 's', name));
      expect(st.isSymbolicLink() || !readFileSync(join(layout.sessions, 's', name), 'utf8').includes('c2VjcmV0')).toBe(true);
    }
    expect(readFileSync(secret, 'utf8')).toContain('c2VjcmV0');
  });

  it('keeps a corrupted regular bundle whole under its new name', () => {
    const layout = wikiLayout(join(dir.path, 'wiki'));
    mkdirSync(join(layout.sessions, 's'), { recursive: true });
    writeFileSync(bundlePath(layout, 's'), '{"schemaVersion": 1, "meta"');
    const kept = quarantineBundle(layout, 's', 8)!;
    expect(readFileSync(kept, 'utf8')).toBe('{"schemaVersion": 1, "meta"');
    expect(quarantineBundle(layout, 'absent', 9)).toBeNull();
  });

  it('refuses to set aside a bundle whose session folder is a link out of the wiki, and leaves it', () => {
    const layout = wikiLayout(join(dir.path, 'wiki'));
    const outside = join(dir.path, 'elsewhere');
    mkdirSync(outside);
    writeFileSync(join(outside, 'bundle.json'), 'not json');
    mkdirSync(layout.sessions, { recursive: true });
    symlinkSync(outside, join(layout.sessions, 's'));
    expect(() => quarantineBundle(layout, 's', 10)).toThrow(/symbolic link/);
    expect(readdirSync(outside)).toEqual(['bundle.json']);
  });
});
