/**
 * `maestro observe`: the live terminal UI. Opens the session, starts the
 * runner (watch + poll + idle timer), renders the Ink app, and stops the
 * runner when the app exits (q, Esc or Ctrl-C).
 */
import { render } from 'ink';
import { createElement as h } from 'react';
import type { ObserverConfig } from '../config.js';
import { openObserverSession, type OpenSessionOptions } from '../observe.js';
import { SessionFollower } from '../follow.js';
import { ObserverRunner } from '../runner.js';
import { ObserverApp } from './app.js';
import { SessionUiSource } from './source.js';

export async function runObserverUi(config: ObserverConfig, opts: OpenSessionOptions & { pollMs?: number; follow?: boolean } = {}): Promise<void> {
  const session = openObserverSession(config, opts);
  const source = new SessionUiSource(session, config.wikiRoot, opts.now, config.projectSlug);
  const errors: string[] = [];
  const onError = (err: Error) => {
    errors.push(err.message);
    source.notify();
  };
  const runnerOptions = { ...(opts.pollMs ? { pollMs: opts.pollMs } : {}), onStep: () => source.notify(), onChange: () => source.notify(), onError };
  // Without --session the UI follows the project's newest session: a new `claude` started beside it is picked up.
  const { session: _explicit, follow, ...openRest } = opts;
  void _explicit;
  const follower = new SessionFollower({
    config,
    open: openRest,
    runner: runnerOptions,
    ...(opts.pollMs ? { checkMs: Math.max(opts.pollMs * 4, 500) } : {}),
    onSession: (s) => source.switchTo(s),
    onError,
  });
  const runner = follow ? null : new ObserverRunner(session, runnerOptions);
  if (follow) follower.start(session);
  else if (session.mode === 'live') runner!.start();
  const app = render(h(ObserverApp, { source }), { exitOnCtrlC: true });
  try {
    await app.waitUntilExit();
  } finally {
    runner?.stop();
    follower.stop();
  }
  if (errors.length) process.stderr.write(`observer: ${errors.length} step error(s); last: ${errors[errors.length - 1]}\n`);
}
