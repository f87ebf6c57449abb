/**
 * ObserverRunner: keeps an ObserverSession live. It steps on fs.watch events
 * for the transcript and its folder (appends, replacement by rename), on a
 * fallback poll (watchers miss events on some filesystems), and on the idle
 * timer (30 s + 100 ms after the last completion). start() and stop() are
 * idempotent; every watcher and timer is registered with trackResource.
 */
import { watch, type FSWatcher } from 'node:fs';
import { basename, dirname } from 'node:path';
import { coerceError } from '../core/errors.js';
import { trackResource } from '../lib/resources.js';
import { IDLE_TIMER_MS } from './curation/buckets.js';
import type { ObserverSession, StepResult } from './session.js';

export interface ObserverRunnerOptions {
  /** Fallback poll interval; fs.watch usually fires first. */
  pollMs?: number;
  /** false: poll only (the benchmark's baseline; filesystems without inotify). */
  watch?: boolean;
  onStep?: (result: StepResult) => void;
  /** New transcript lines were read (before the step that summarises them). */
  onChange?: () => void;
  onError?: (err: Error) => void;
}

export class ObserverRunner {
  private watchers: FSWatcher[] = [];
  private poll: NodeJS.Timeout | null = null;
  private idle: NodeJS.Timeout | null = null;
  private idleFor: number | null = null;
  private releases: Array<() => void> = [];
  private started = false;

  constructor(
    readonly session: ObserverSession,
    private readonly options: ObserverRunnerOptions = {},
  ) {}

  start(): void {
    if (this.started) return;
    this.started = true;
    const path = this.session.jsonlPath;
    const kick = () => this.kick();
    if (this.options.watch !== false) this.watchFiles(path, kick);
    this.releases.push(trackResource('watcher', `observer ${this.session.sessionId}`, () => this.stop()));
    this.poll = setInterval(kick, this.options.pollMs ?? 500);
    this.kick();
  }

  private watchFiles(path: string, kick: () => void): void {
    try {
      const w = watch(path, kick);
      w.on('error', () => undefined);
      this.watchers.push(w);
    } catch {
      // file not there yet: the folder watcher and the poll cover it
    }
    try {
      const name = basename(path);
      const w = watch(dirname(path), (_event, file) => {
        if (!file || file.toString() === name) kick();
      });
      w.on('error', () => undefined);
      this.watchers.push(w);
    } catch {
      // folder missing: the poll covers it
    }
  }

  /** Shows new transcript lines at once, then runs a step (coalesced with one already running). */
  kick(): void {
    if (!this.started) return;
    try {
      if (this.session.pollNow()) this.options.onChange?.();
    } catch (err) {
      this.options.onError?.(coerceError(err));
    }
    this.session.step().then(
      (result) => {
        this.armIdle();
        this.options.onStep?.(result);
      },
      (err) => this.options.onError?.(coerceError(err)),
    );
  }

  private armIdle(): void {
    const last = this.session.lastCompletedAt();
    if (!this.started || last === null || last === this.idleFor) return;
    this.idleFor = last;
    if (this.idle) clearTimeout(this.idle);
    this.idle = setTimeout(() => this.kick(), IDLE_TIMER_MS);
  }

  stop(): void {
    if (!this.started) return;
    this.started = false;
    for (const w of this.watchers) w.close();
    this.watchers = [];
    if (this.poll) clearInterval(this.poll);
    if (this.idle) clearTimeout(this.idle);
    this.poll = this.idle = null;
    for (const release of this.releases) release();
    this.releases = [];
  }
}
