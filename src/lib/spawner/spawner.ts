/**
 * Spawner: runs the daemon's short commands (git, about 25 per demo scenario) from a
 * small helper process (child.ts) instead of from the daemon. Node starts a process by
 * forking the one that asks, and a fork copies the asker's page tables: from a 110 MB
 * daemon one `git --version` took 14.6 ms and 7.4 ms of the daemon's CPU, from the 50 MB
 * helper 4–6 ms and 0.3 ms of the daemon's CPU for the message (2 cores; 100 calls each).
 * Merges run a dozen git commands in a row on a scenario's critical path.
 *
 *   stopped ⇄ started: no helper → starting → ready → (IDLE_MS without a call) → no helper
 *                                       ↘ died → no helper (the next call starts one)
 * While no helper is ready, a command runs directly, as without a spawner, so a call never
 * waits for the helper to start. A request the helper never received (the send failed)
 * runs directly too; one it received and did not answer before dying fails with errno
 * ESPAWNER, since it may have run. After MAX_FAILURES helpers in a row die before they
 * are ready, every command runs directly, and `onGiveUp` says so once (a helper that cannot
 * start, as when the bundled worker looked for it in the wrong folder, is otherwise unseen).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { dirname } from 'node:path';
import { nodeEntry } from '../processes.js';
import { trackResource } from '../resources.js';
import type { SpawnerReply, SpawnerRequest } from './child.js';
import { execOnce, type ExecOutcome, type ExecRequest } from './exec.js';

const SECOND = 1000;
/** A helper with nothing to run this long exits; it holds about 45 MB. */
export const IDLE_MS = 30 * SECOND;
const MAX_FAILURES = 3;
/** How long stop() lets a helper take to leave once asked before it is killed. */
const STOP_KILL_MS = 5 * SECOND;

export class Spawner {
  private started = false;
  private child: ChildProcess | null = null;
  private exited: Promise<void> = Promise.resolve();
  private failures = 0;
  private nextId = 1;
  private readonly pending = new Map<number, (outcome: ExecOutcome) => void>();
  private drained: (() => void) | null = null;
  private idleTimer: NodeJS.Timeout | null = null;
  /** Helpers that said they were ready: one that dies before it does counts toward MAX_FAILURES. */
  private readonly answered = new WeakSet<ChildProcess>();
  /** Helpers this spawner ended itself (idle, or stopped): their exit is no failure. */
  private readonly ended = new WeakSet<ChildProcess>();

  /**
   * `detached`: the helper leads a process group of its own (the daemon's: a Ctrl-C meant for the
   * daemon does not end the commands under way). A worker keeps it in its own group instead, so
   * a run killed with its group also kills the git it was running.
   */
  constructor(
    private readonly opts: {
      idleMs?: number;
      detached?: boolean;
      /** Told once, when helpers stopped being started (MAX_FAILURES died before they were ready). */
      onGiveUp?: (message: string) => void;
      /** Tests: the helper's script (default: child.js of this build, found by nodeEntry). */
      helperFile?: string;
    } = {},
  ) {}

  /** Registered while started, as the owner of whatever helper runs: the leak check names a spawner nobody stopped. */
  private untrack: (() => void) | null = null;

  start(): void {
    this.started = true;
    this.untrack ??= trackResource('process', 'spawner (its helper process, when one runs)', () => {
      this.started = false;
      this.child?.kill('SIGKILL');
    });
  }

  /** Lets the commands under way finish, then ends the helper; later commands run directly. */
  async stop(): Promise<void> {
    this.started = false;
    if (this.pending.size) await new Promise<void>((r) => (this.drained = r));
    // Held until it exits: the caller waits for that, and nothing else may keep this process up.
    const child = this.child;
    child?.ref();
    this.endHelper();
    // A helper that does not leave when asked is ended: a stop never waits on it for good.
    const kill = setTimeout(() => child?.kill('SIGKILL'), STOP_KILL_MS);
    await this.exited;
    clearTimeout(kill);
    this.untrack?.();
    this.untrack = null;
  }

  /** The helper's pid while one runs or starts. */
  get helperPid(): number | undefined {
    return this.child?.pid;
  }

  /** Whether commands go to the helper now: it said it was ready, and it has not been asked to leave. */
  get helperReady(): boolean {
    const child = this.child;
    return child !== null && this.answered.has(child) && !this.ended.has(child) && child.connected;
  }

  run(req: ExecRequest): Promise<ExecOutcome> {
    if (!this.started) return execOnce(req);
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.idleTimer = null;
    const child = this.child;
    if (!child || !this.helperReady) {
      this.launch();
      return execOnce(req);
    }
    const id = this.nextId++;
    return new Promise((resolveRun) => {
      this.pending.set(id, resolveRun);
      if (this.pending.size === 1) refChannel(child, true);
      child.send({ ...req, id } satisfies SpawnerRequest, (err) => {
        if (!err || !this.pending.delete(id)) return;
        this.settled();
        resolveRun(execOnce(req));
      });
    });
  }

  private launch(): void {
    if (this.child || this.failures >= MAX_FAILURES) return;
    const { file, execArgv, cwd } = this.opts.helperFile ? { file: this.opts.helperFile, execArgv: [], cwd: dirname(this.opts.helperFile) } : nodeEntry(import.meta.url, 'lib/spawner/child');
    const child = spawn(process.execPath, [...execArgv, file], {
      cwd,
      // Nothing of this process's environment: each request carries its command's whole environment.
      env: {},
      stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
      detached: this.opts.detached ?? true,
    });
    this.child = child;
    child.on('message', (reply: SpawnerReply) => this.onReply(child, reply));
    this.exited = new Promise((resolveExit) => {
      let gone = false;
      // 'exit', or 'error' alone when it could not start ('close' never comes after a disconnect we asked for).
      const onGone = () => {
        if (gone) return;
        gone = true;
        if (this.child === child) this.child = null;
        if (!this.answered.has(child) && !this.ended.has(child) && ++this.failures === MAX_FAILURES) {
          this.opts.onGiveUp?.(`the helper process for short commands (${file}) exited ${MAX_FAILURES} times before it was ready (last: ${exitOf(child)}); commands run from this process from now on`);
        }
        this.failAll();
        resolveExit();
      };
      child.once('exit', onGone);
      child.on('error', () => child.pid === undefined && onGone());
    });
    child.unref();
    refChannel(child, false);
  }

  private onReply(child: ChildProcess, reply: SpawnerReply): void {
    if ('ready' in reply) {
      this.answered.add(child);
      this.failures = 0;
      // Ready with nothing sent to it yet: it idles out like one whose last command is done.
      if (!this.pending.size) this.armIdle();
      return;
    }
    const { id, ...outcome } = reply;
    const resolveRun = this.pending.get(id);
    if (!resolveRun) return;
    this.pending.delete(id);
    this.settled();
    resolveRun(outcome);
  }

  /** After a request is answered: the channel stops holding the process open, and an idle helper is let go. */
  private settled(): void {
    if (this.pending.size) return;
    if (this.child) refChannel(this.child, false);
    if (this.drained) {
      this.drained();
      this.drained = null;
    }
    this.armIdle();
  }

  private armIdle(): void {
    if (!this.started) return;
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.idleTimer = setTimeout(() => this.endHelper(), this.opts.idleMs ?? IDLE_MS);
    this.idleTimer.unref();
  }

  private endHelper(): void {
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.idleTimer = null;
    const child = this.child;
    if (!child) return;
    // One still starting has been sent nothing, and may not listen for its channel's end yet: it is killed.
    this.ended.add(child);
    if (!this.answered.has(child)) child.kill('SIGKILL');
    // The helper exits when its channel closes.
    else if (child.connected) child.disconnect();
  }

  private failAll(): void {
    const lost = [...this.pending.values()];
    this.pending.clear();
    this.settled();
    for (const resolveRun of lost) {
      resolveRun({ stdout: '', stderr: '', code: null, signal: null, errno: 'ESPAWNER', message: 'the helper process running it stopped before it answered' });
    }
  }
}

function exitOf(child: ChildProcess): string {
  if (child.exitCode !== null) return `exit code ${child.exitCode}`;
  return child.signalCode ? `signal ${child.signalCode}` : 'it did not start';
}

/** An IPC channel keeps Node's event loop alive while referenced: only while a request waits. */
function refChannel(child: ChildProcess, on: boolean): void {
  const channel = child.channel as { ref?: () => void; unref?: () => void } | null | undefined;
  if (on) channel?.ref?.();
  else channel?.unref?.();
}
