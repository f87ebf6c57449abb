/**
 * Building the board with the real Vite and React plugin, in a small project beside the real one: a build that
 * fails leaves the board built earlier as it was (Vite 8 writes what it could before it reports an import it
 * cannot resolve, and the next start took that half-made board for a built one); a build that works replaces it.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { removeTempDirs, tempDir } from '../../test/helpers/db.js';
import { buildWeb } from './web.js';

const ROOT = resolve(import.meta.dirname, '..', '..');
const VITE = join(ROOT, 'node_modules', 'vite', 'bin', 'vite.js');

/** A one-page React project whose entry imports `module`, with a board built earlier in dist/. */
function boardProject(module: string): { webDir: string; dist: string } {
  const webDir = tempDir('maestro-web-');
  symlinkSync(join(ROOT, 'node_modules'), join(webDir, 'node_modules'));
  mkdirSync(join(webDir, 'src'));
  writeFileSync(join(webDir, 'index.html'), '<!doctype html><html><body><div id="root"></div><script type="module" src="/src/main.tsx"></script></body></html>\n');
  writeFileSync(join(webDir, 'src', 'main.tsx'), `import { version } from '${module}';\ndocument.getElementById('root')!.textContent = String(version);\n`);
  writeFileSync(join(webDir, 'vite.config.mjs'), "import react from '@vitejs/plugin-react';\nexport default { plugins: [react()], build: { outDir: 'dist', emptyOutDir: true } };\n");
  const dist = join(webDir, 'dist');
  mkdirSync(dist);
  writeFileSync(join(dist, 'index.html'), 'the board built earlier\n');
  return { webDir, dist };
}

describe('building the web board', () => {
  afterEach(() => removeTempDirs());

  it('a build that fails leaves the board built earlier as it was, and nothing of its own (nor of a killed build)', () => {
    const { webDir, dist } = boardProject('maestro-no-such-module');
    mkdirSync(join(webDir, '.dist-1')); // a build killed before it could clear up
    expect(() => buildWeb(VITE, { webDir, dist })).toThrow(/Building the web board failed \(exit 1\): .*maestro-no-such-module/s);
    expect(readFileSync(join(dist, 'index.html'), 'utf8')).toBe('the board built earlier\n');
    expect(readdirSync(dist)).toEqual(['index.html']);
    expect(readdirSync(webDir).filter((f) => f.startsWith('.dist-'))).toEqual([]);
  });

  it('a build that works replaces it', () => {
    const { webDir, dist } = boardProject('react');
    buildWeb(VITE, { webDir, dist });
    expect(readFileSync(join(dist, 'index.html'), 'utf8')).toMatch(/<script type="module" crossorigin src="\/assets\/index-[\w-]+\.js"><\/script>/);
    expect(existsSync(join(dist, 'assets'))).toBe(true);
    expect(readdirSync(webDir).filter((f) => f.startsWith('.dist-'))).toEqual([]);
  });
});
