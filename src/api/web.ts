/**
 * The web board, served by the daemon at `/`: the built `web/dist` as static
 * files, and index.html for any other non-API GET (the app routes on the hash,
 * but a bookmarked path must still open it). `ensureWebBuilt()` builds the app
 * when `web/dist` is missing, so `maestro serve` works from a fresh checkout.
 * An install without optional dependencies (`npm install --omit=optional`) has
 * no native binding for Vite's bundler (rolldown lists one per platform as
 * optional): the board cannot be built there, and `maestro serve` runs the
 * daemon without it (`boardUnavailableRoutes`) rather than not at all.
 */
import { spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, renameSync, rmSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { MaestroError } from '../core/errors.js';
import { acquireLockFile } from '../lib/lockFile.js';

/** The repository root, from src/api or dist/api alike. */
const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const WEB_DIR = join(ROOT, 'web');
export const WEB_DIST = join(WEB_DIR, 'dist');

export function webIsBuilt(dist = WEB_DIST): boolean {
  return existsSync(join(dist, 'index.html'));
}

/** The newest modification time among the board's sources (web/src, index.html, the Vite config). */
function newestSource(): number {
  let newest = 0;
  const walk = (dir: string) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else newest = Math.max(newest, statSync(p).mtimeMs);
    }
  };
  if (existsSync(join(WEB_DIR, 'src'))) walk(join(WEB_DIR, 'src'));
  for (const f of ['index.html', 'vite.config.ts', 'package.json']) if (existsSync(join(WEB_DIR, f))) newest = Math.max(newest, statSync(join(WEB_DIR, f)).mtimeMs);
  return newest;
}

/** What rolldown (Vite 8's bundler) prints when no binding for this platform is installed. */
const NO_BUNDLER_BINDING = /Cannot find native binding/;

/** `details.reason` of the error ensureWebBuilt throws when the bundler has no native binding. */
export const BUNDLER_BINDING_MISSING = 'bundler_binding_missing';

const isFresh = () => webIsBuilt() && statSync(join(WEB_DIST, 'index.html')).mtimeMs >= newestSource();

/** How long a build waits for another process's build of the same web/ (a loaded machine builds slowly). */
const BUILD_LOCK_WAIT_MS = 15 * 60_000;

/**
 * Builds web/ with vite when web/dist is missing, older than its sources, or
 * `force`. Synchronous: it runs once, before the daemon listens. Several
 * processes may want the board at once (test suites, daemons started together):
 * one builds under web/.build.lock while the others wait, then find it fresh;
 * without the lock one build's emptying of web/dist pulls the files from under
 * another's.
 */
export function ensureWebBuilt(opts: { force?: boolean; log?: (line: string) => void } = {}): string {
  if (!opts.force && isFresh()) return WEB_DIST;
  const vite = join(ROOT, 'node_modules', 'vite', 'bin', 'vite.js');
  if (!existsSync(vite)) throw new MaestroError('CONFIG_INVALID', `Cannot build the web board: ${vite} is missing. Run npm install at ${ROOT}.`);
  const release = acquireLockFile(join(WEB_DIR, '.build.lock'), { startedAt: Date.now() }, {
    deadline: Date.now() + BUILD_LOCK_WAIT_MS,
    unparseableStaleMs: 60_000,
    busy: (holder) => new MaestroError('CONFIG_INVALID', `Another process (${holder && holder !== 'unparseable' ? `pid ${holder.pid}` : 'unknown'}) has been building the web board for ${BUILD_LOCK_WAIT_MS / 60_000} minutes; see ${join(WEB_DIR, '.build.lock')}.`),
    what: 'the web build lock',
    retryMs: 200,
  });
  try {
    // Built by another process while this one waited.
    if (!opts.force && isFresh()) return WEB_DIST;
    buildWeb(vite, { webDir: WEB_DIR, dist: WEB_DIST, log: opts.log });
  } finally {
    release();
  }
  return WEB_DIST;
}

/**
 * Builds the board in `webDir` beside `dist` and moves it into place whole. Vite writes what it could before it
 * reports some failures (an import it cannot resolve): built in place, such a board, half made, was taken for a
 * built one by the next start and served without a word, and the one built earlier was gone. Now a failed build
 * leaves `dist` as it was.
 */
export function buildWeb(vite: string, o: { webDir: string; dist: string; log?: (line: string) => void }): void {
  o.log?.('maestro: building the web board (web/dist is missing or older than web/src)…');
  const out = join(o.webDir, `.dist-${process.pid}`);
  // Called under the build lock: any other `.dist-*` is the folder of a build that was killed.
  for (const f of readdirSync(o.webDir)) if (f.startsWith('.dist-')) rmSync(join(o.webDir, f), { recursive: true, force: true });
  try {
    const r = spawnSync(process.execPath, [vite, 'build', '--logLevel', 'warn', '--outDir', out, '--emptyOutDir'], { cwd: o.webDir, encoding: 'utf8' });
    throwIfFailed(r, out);
    rmSync(o.dist, { recursive: true, force: true });
    renameSync(out, o.dist);
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}

function throwIfFailed(r: SpawnSyncReturns<string>, out: string): void {
  if (r.status !== 0 || !webIsBuilt(out)) {
    if (NO_BUNDLER_BINDING.test(`${r.stderr}${r.stdout}`)) {
      throw new MaestroError(
        'CONFIG_INVALID',
        "Cannot build the web board: Vite's bundler (rolldown) has no native binding for this platform. It is an optional dependency, left out by `npm install --omit=optional`; run `npm install` at " + ROOT + ' to build the board.',
        { details: { reason: BUNDLER_BINDING_MISSING } },
      );
    }
    throw new MaestroError('CONFIG_INVALID', `Building the web board failed (exit ${r.status ?? r.signal}): ${(r.stderr || r.stdout || '').trim().slice(-2000)}`);
  }
}

/**
 * What the board's page may load and run: its own files and API only, its one inline script (index.html's early
 * fetch) by its hash. Agents write much of what the board shows; it is drawn as text, and should a way to turn it
 * into markup ever appear, no script of theirs runs (an inline handler, a script tag) and no image carries data away.
 */
export function boardPolicy(html: string): string {
  const inline = [...html.matchAll(/<script(?![^>]*\bsrc=)[^>]*>([\s\S]*?)<\/script>/g)].map((m) => `'sha256-${createHash('sha256').update(m[1]!).digest('base64')}'`);
  return ["default-src 'self'", `script-src 'self' ${inline.join(' ')}`.trim(), "style-src 'self' 'unsafe-inline'", "img-src 'self' data:", "font-src 'self' data:", "connect-src 'self'", "object-src 'none'", "base-uri 'none'", "form-action 'self'", "frame-ancestors 'none'"].join('; ');
}

/** The policy for the built index.html, read again when a build replaces it. */
function policyOf(dist: string): () => string {
  let cached = { mtimeMs: -1, policy: '' };
  return () => {
    const path = join(dist, 'index.html');
    const { mtimeMs } = statSync(path);
    if (mtimeMs !== cached.mtimeMs) cached = { mtimeMs, policy: boardPolicy(readFileSync(path, 'utf8')) };
    return cached.policy;
  };
}

/** Registers the static board. Call after the API routes; it only adds GET routes outside /api. */
export async function webRoutes(app: FastifyInstance, opts: { dist?: string } = {}): Promise<void> {
  const dist = opts.dist ?? WEB_DIST;
  if (!webIsBuilt(dist)) throw new MaestroError('CONFIG_INVALID', `The web board is not built: ${join(dist, 'index.html')} is missing (ensureWebBuilt() builds it).`);
  const policy = policyOf(dist);
  // On the board's page and its other root files: not on its assets (a script or a style sheet has no use for
  // one, and they are most of the requests), nor on the API's answers (they keep the server's own).
  app.addHook('onSend', async (req, reply) => {
    const path = req.url.split('?')[0]!;
    if (!/^\/(api|assets)(\/|$)/.test(path)) reply.header('content-security-policy', policy());
    // The board link's page (?token=, src/api/guard.ts): kept in no cache, whose index would hold its URL.
    if (/[?&]token=/.test(req.url)) reply.header('cache-control', 'no-store');
  });
  await app.register(fastifyStatic, {
    root: dist,
    prefix: '/',
    // One route per built file, so unknown paths fall through to the SPA fallback below.
    wildcard: false,
    // Our own cache headers: Vite puts a content hash in every asset name, so those never change; index.html always may.
    cacheControl: false,
    setHeaders(res, path) {
      res.setHeader('cache-control', path.startsWith(join(dist, 'assets')) ? 'public, max-age=31536000, immutable' : 'no-cache');
    },
  });
  app.get('/*', async (req, reply) => {
    const path = req.url.split('?')[0]!;
    // The API's own 404, through the one error handler.
    if (path === '/api' || path.startsWith('/api/')) throw new MaestroError('NOT_FOUND', `No route GET ${path}.`);
    // A file of a build made since the daemon started (another `maestro serve` of this checkout, `npm run build:web`,
    // a test run) has no route of its own: it is served from disk, as the index.html that names it is. A missing one
    // is a 404: the page's HTML, answered for its script, left the board blank without a word until a restart.
    if (path.startsWith('/assets/')) return sendAsset(reply, dist, path);
    reply.header('cache-control', 'no-cache');
    return reply.sendFile('index.html', dist);
  });
}

/** `/assets/<name>` from the build on disk now (names carry a content hash: cached for good), or a 404. */
function sendAsset(reply: FastifyReply, dist: string, path: string): FastifyReply {
  const name = path.slice('/assets/'.length);
  if (!/^[\w-][\w.-]*$/.test(name) || !statSync(join(dist, 'assets', name), { throwIfNoEntry: false })?.isFile()) {
    // Not where the build lies on disk: the board's files answer without the token, to anyone who reaches the port.
    throw new MaestroError('NOT_FOUND', `No file ${path} in the web board's build: it was rebuilt since this page loaded; reload the page.`);
  }
  reply.header('cache-control', 'public, max-age=31536000, immutable');
  return reply.sendFile(join('assets', name), dist);
}

/**
 * In place of the board when it could not be built (`why`): every non-API GET answers 503 with the
 * reason, in plain text for a person's browser; the API is unaffected.
 */
export async function boardUnavailableRoutes(app: FastifyInstance, why: string): Promise<void> {
  app.get('/*', async (req, reply) => {
    const path = req.url.split('?')[0]!;
    if (path === '/api' || path.startsWith('/api/')) throw new MaestroError('NOT_FOUND', `No route GET ${path}.`);
    reply.code(503).header('cache-control', 'no-cache').type('text/plain; charset=utf-8');
    return `The Maestro daemon is running, but without its web board.\n\n${why}\n\nThe API (/api) and the maestro CLI work meanwhile.\n`;
  });
}
