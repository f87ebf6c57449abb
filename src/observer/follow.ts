/**
 * SessionFollower: keeps one ObserverRunner on the project's newest Claude
 * Code session and moves it to a newer one when a new session starts (a new
 * `<id>.jsonl` with a user line appears under ~/.claude/projects/<slug>/).
 * What `maestro observe` does without --session. The check is one readdir and
 * a stat per transcript (bench/observer.ts: 1,000 transcripts), run on a timer;
 * start() and stop() are idempotent and the timer is tracked.
 */
import { coerceError } from '../core/errors.js';
import { trackResource } from '../lib/resources.js';
import type { ObserverConfig } from './config.js';
import { openObserverSession, type OpenSessionOptions } from './observe.js';
import { claudeProjectDirs, newestSession } from './paths.js';
import { ObserverRunner, type ObserverRunnerOptions } from './runner.js';
import type { ObserverSession } from './session.js';

export interface SessionFollowerOptions {
  config: ObserverConfig;
  open?: Omit<OpenSessionOptions, 'session'>;
  runner?: ObserverRunnerOptions;
  /** How often to look for a newer session (ms). */
  checkMs?: number;
  /** Called with each session the follower moves to (the first one too). */
  onSession: (session: ObserverSession) => void;
  onError?: (err: Error) => void;
}

export class SessionFollower {
  private runner: ObserverRunner | null = null;
  private timer: NodeJS.Timeout | null = null;
  private release: (() => void) | null = null;

  constructor(private readonly options: SessionFollowerOptions) {}

  get session(): ObserverSession | null {
    return this.runner?.session ?? null;
  }

  /** Starts on the given session (already opened by the caller) and begins watching for newer ones. */
  start(first: ObserverSession): void {
    if (this.timer) return;
    this.use(first);
    this.timer = setInterval(() => this.check(), this.options.checkMs ?? 2_000);
    this.release = trackResource('timer', 'observer session follower', () => this.stop());
  }

  /** Moves to the newest session if it is not the one followed; returns whether it moved. */
  check(): boolean {
    try {
      const { config } = this.options;
      const newest = newestSession(claudeProjectDirs(config.env, config.workspaceRoot, config.cwd));
      if (!newest || newest.path === this.runner?.session.jsonlPath) return false;
      this.use(openObserverSession(config, { ...this.options.open, session: newest.path }));
      return true;
    } catch (err) {
      this.options.onError?.(coerceError(err));
      return false;
    }
  }

  private use(session: ObserverSession): void {
    this.runner?.stop();
    this.runner = new ObserverRunner(session, this.options.runner);
    this.options.onSession(session);
    if (session.mode === 'live') this.runner.start();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    this.runner?.stop();
    this.runner = null;
    this.release?.();
    this.release = null;
  }
}
