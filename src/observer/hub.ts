/**
 * ObserverHub: the daemon's side of live observer updates.
 *
 * - Bundle watch (always): `wiki/sessions/` is watched (every bundle write also
 *   rewrites `_index.json` there) with a fallback poll; a `bundle.json` whose
 *   mtime changed is read and published as `session.updated` (source `bundle`).
 *   This covers `maestro observe` running beside Claude Code in another process.
 * - Follow (opt-in, MAESTRO_OBSERVER_FOLLOW=1 or the daemon option): the hub
 *   itself keeps an ObserverSession + ObserverRunner live on the workspace's
 *   newest transcript (switching when a newer one appears), so an append to
 *   the transcript updates the bundle and publishes (source `live`) with no
 *   terminal UI running. Off by default: two live observers of one session
 *   would both summarise and curate it.
 * Everything goes out on one ObserverEvents emitter; the daemon forwards it to
 * its WebSocket. start()/stop() are idempotent; watchers and timers are tracked.
 */
import { existsSync, readdirSync, statSync, watch, type FSWatcher } from 'node:fs';
import { join } from 'node:path';
import { coerceError } from '../core/errors.js';
import { trackResource } from '../lib/resources.js';
import type { ObserverConfig } from './config.js';
import type { ObserverEvents } from './events.js';
import { loadBundle } from './bundle/store.js';
import { openObserverSession } from './observe.js';
import { locateSession } from './paths.js';
import { ObserverRunner } from './runner.js';
import { wikiLayout } from '../knowledge/format/wiki/layout.js';

export interface ObserverHubOptions {
  config: ObserverConfig;
  /** Where updates are published (the ObserverService's emitter). */
  events: ObserverEvents;
  /** Keep the newest transcript of the workspace live in this process. */
  follow?: boolean;
  /** Fallback poll for bundles and for a newer transcript (ms). */
  pollMs?: number;
  onError?: (err: Error) => void;
  now?: () => number;
}

/** MAESTRO_OBSERVER_FOLLOW=1|true|yes turns following on in the daemon. */
export function followFromEnv(env: Record<string, string | undefined>): boolean {
  return /^(1|true|yes)$/i.test(env.MAESTRO_OBSERVER_FOLLOW?.trim() ?? '');
}

export class ObserverHub {
  private readonly events: ObserverEvents;
  private readonly now: () => number;
  private readonly mtimes = new Map<string, number>();
  private watcher: FSWatcher | null = null;
  private poll: NodeJS.Timeout | null = null;
  private runner: ObserverRunner | null = null;
  private followedPath: string | null = null;
  private releases: Array<() => void> = [];
  private started = false;
  private scanning = false;

  constructor(private readonly options: ObserverHubOptions) {
    this.events = options.events;
    this.now = options.now ?? Date.now;
  }

  /** The session the hub keeps live, if any. */
  get followedSessionId(): string | null {
    return this.runner?.session.sessionId ?? null;
  }

  start(): void {
    if (this.started) return;
    this.started = true;
    this.scanBundles(false);
    this.watchSessions();
    this.releases.push(trackResource('watcher', 'observer hub', () => this.stop()));
    this.poll = setInterval(() => this.tick(), this.options.pollMs ?? 1_000);
    this.tick();
  }

  private tick(): void {
    if (!this.started) return;
    if (!this.watcher) this.watchSessions();
    if (this.options.follow) this.followNewest();
    this.scanBundles(true);
  }

  private watchSessions(): void {
    const dir = wikiLayout(this.options.config.wikiRoot).sessions;
    if (!existsSync(dir)) return;
    try {
      this.watcher = watch(dir, () => this.scanBundles(true));
      this.watcher.on('error', () => {
        this.watcher?.close();
        this.watcher = null;
      });
    } catch {
      this.watcher = null; // the poll covers it
    }
  }

  /** Publishes every bundle whose mtime moved; `emit: false` only records (the first scan). */
  private scanBundles(emit: boolean): void {
    if (this.scanning) return;
    this.scanning = true;
    try {
      const layout = wikiLayout(this.options.config.wikiRoot);
      let names: string[];
      try {
        names = readdirSync(layout.sessions);
      } catch {
        return;
      }
      for (const id of names) {
        if (id.startsWith('.') || id.startsWith('_')) continue;
        let mtime: number;
        try {
          mtime = statSync(join(layout.sessions, id, 'bundle.json')).mtimeMs;
        } catch {
          continue;
        }
        if (this.mtimes.get(id) === mtime) continue;
        this.mtimes.set(id, mtime);
        // The followed session publishes its own writes (source live).
        if (!emit || id === this.followedSessionId) continue;
        const b = loadBundle(layout, id, { workspaceRoot: this.options.config.workspaceRoot }).bundle;
        if (!b) continue;
        const explorations = Object.values(b.explorations);
        const running = explorations.find((e) => !e.meta);
        this.events.emit('update', {
          type: 'session.updated',
          sessionId: id,
          revision: b.session.flow.revision,
          explorationCount: explorations.length,
          runningExplorationId: running?.explorationId ?? null,
          at: this.now(),
          source: 'bundle',
        });
      }
    } catch (err) {
      this.options.onError?.(coerceError(err));
    } finally {
      this.scanning = false;
    }
  }

  private followNewest(): void {
    let newest: string;
    try {
      newest = locateSession({ env: this.options.config.env, workspaceRoot: this.options.config.workspaceRoot }).path;
    } catch {
      return; // no session yet
    }
    if (newest === this.followedPath) return;
    try {
      const session = openObserverSession(this.options.config, { session: newest, events: this.events, now: this.now });
      this.runner?.stop();
      this.followedPath = newest;
      this.runner = new ObserverRunner(session, { pollMs: this.options.pollMs ?? 1_000, ...(this.options.onError ? { onError: this.options.onError } : {}) });
      this.runner.start();
    } catch (err) {
      this.options.onError?.(coerceError(err));
    }
  }

  stop(): void {
    if (!this.started) return;
    this.started = false;
    this.watcher?.close();
    this.watcher = null;
    if (this.poll) clearInterval(this.poll);
    this.poll = null;
    this.runner?.stop();
    this.runner = null;
    this.followedPath = null;
    for (const release of this.releases) release();
    this.releases = [];
  }
}
