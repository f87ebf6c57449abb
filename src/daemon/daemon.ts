/**
 * The daemon: one per $MAESTRO_HOME. Takes the home lock, opens and migrates
 * the store, starts the event feed, the API and the orchestrator, and stops
 * them in reverse order. Every subsystem has an idempotent start() / stop().
 */
import { mkdirSync } from 'node:fs';
import type { FastifyInstance } from 'fastify';
import pino, { type Logger } from 'pino';
import { buildApi, isLoopback } from '../api/server.js';
import type { OpenApiDoc } from '../api/route.js';
import type { MaestroConfig } from '../config/config.js';
import { MaestroError } from '../core/errors.js';
import { openMigratedDatabase } from '../store/open.js';
import { createStore, type Store } from '../store/store.js';
import { Bus } from './bus.js';
import { EventFeed } from './eventFeed.js';
import { STREAM_CHANNEL, StreamRelay } from './streamRelay.js';
import { PgListener } from '../store/pgListener.js';
import { acquireHomeLock } from './homeLock.js';
import { createRunControl } from './runControl.js';
import { applyResultHooks, createDaemonHooks, type DaemonHooks } from './projectHooks.js';
import { Orchestrator, type OrchestratorHooks } from './orchestrator.js';
import { createDemo, type DemoOptions } from '../demo/demo.js';
import { knowledgeRoutes } from '../knowledge/http.js';
import { createKnowledgePool } from '../knowledge/pool.js';
import { resolveObserverConfig, type ObserverConfig } from '../observer/config.js';
import { followFromEnv, ObserverHub } from '../observer/hub.js';
import { observerEvents } from '../observer/events.js';
import { observerRoutes } from '../observer/http.js';

export interface Daemon {
  readonly url: string;
  readonly port: number;
  readonly config: MaestroConfig;
  readonly store: Store;
  readonly bus: Bus;
  readonly log: Logger;
  readonly orchestrator: Orchestrator;
  /** The API app, for in-process requests (`app.inject`). */
  readonly app: FastifyInstance;
  /** Stops claiming, gives workers `graceMs` to end their stage, then closes everything. */
  stop(opts?: { graceMs?: number }): Promise<void>;
  /** Stops at once, leaving workers running to be adopted by the next daemon (a crash, for tests). */
  abandon(): Promise<void>;
}

export interface DaemonOptions {
  /** Extra route plugins (the knowledge and observer APIs, the web board). */
  plugins?: ((app: FastifyInstance, doc: OpenApiDoc) => Promise<void> | void)[];
  /** Where log lines go; stdout by default. */
  logDestination?: NodeJS.WritableStream;
  /** Print the "daemon on …" line (the CLI does; tests do not). */
  announce?: boolean;
  hooks?: OrchestratorHooks;
  /** Environment for worker processes. */
  workerEnv?: NodeJS.ProcessEnv;
  workerSilenceMs?: number;
  heartbeatMs?: number;
  /** How long a hook may run before it counts as a cancel (5 s). */
  hookTimeoutMs?: number;
  /** Do not start the orchestrator loop (API-only tests). */
  noOrchestrator?: boolean;
  /** The event feed's poll while PostgreSQL LISTEN is up (default 2 s; tests raise it to prove NOTIFY alone delivers). */
  listeningPollMs?: number;
  /** With no project registered, create the offline demo project (`maestro serve` does). */
  demo?: boolean | DemoOptions;
  /** The observer's configuration (default: from the environment and cwd). */
  observer?: ObserverConfig;
  /** Keep the workspace's newest Claude Code transcript live in the daemon (default: MAESTRO_OBSERVER_FOLLOW). */
  observerFollow?: boolean;
}

export async function startDaemon(config: MaestroConfig, options: DaemonOptions = {}): Promise<Daemon> {
  if (!isLoopback(config.host) && !config.token) {
    throw new MaestroError('CONFIG_INVALID', `Refusing to bind ${config.host} without MAESTRO_TOKEN: anything but loopback needs a token.`);
  }
  mkdirSync(config.home, { recursive: true });
  const log = pino({ level: config.logLevel, base: { pid: process.pid } }, (options.logDestination ?? process.stdout) as pino.DestinationStream);
  const lock = acquireHomeLock(config.home);
  const cleanups: (() => Promise<void> | void)[] = [() => lock.release()];
  const cleanup = async () => {
    for (const fn of cleanups.splice(0).reverse()) await fn();
  };
  try {
    const db = await openMigratedDatabase(config.database);
    cleanups.push(() => db.close());
    const store = createStore(db);
    const bus = new Bus();
    const logError = (err: Error) => log.error({ err }, err.message);
    const postgres = db.dialect === 'postgres';
    const feed = new EventFeed(store, bus, { pollMs: 250, listeningPollMs: options.listeningPollMs ?? 2000, gapMs: postgres ? 30_000 : 0, onError: logError });
    await feed.start();
    cleanups.push(() => feed.stop());
    if (postgres) {
      // Other daemons' events and stream items, as they happen (NOTIFY); the poll covers the gaps when the listener is down.
      const relay = new StreamRelay(store.db, config.name, bus, { onError: logError });
      const offLocal = bus.onLocalStream((item) => relay.send(item));
      const listener = new PgListener(config.database, ['maestro_events', STREAM_CHANNEL], {
        onNotify: (channel, payload) => (channel === STREAM_CHANNEL ? relay.receive(payload) : void feed.poke()),
        onState: (up, err) => {
          if (up) log.info('listening for other daemons\' events (PostgreSQL LISTEN)');
          else log.warn({ err: err?.message }, 'lost the PostgreSQL LISTEN connection: polling the event log until it is back');
          feed.setListening(up);
        },
      });
      await listener.start();
      cleanups.push(() => relay.stop(), offLocal, () => listener.stop());
    }
    const poke = () => void feed.poke();
    // Every committed write: its events go to WebSocket clients at once; the read after it catches anything else.
    store.onWrite((events) => {
      feed.publishDirect(events);
      poke();
    });
    const control = createRunControl(store, poke);
    const hooks = options.hooks ?? createDaemonHooks(store, config.home, options.hookTimeoutMs);
    const orchestrator = new Orchestrator(store, bus, config, {
      hooks,
      preFinal: options.hooks ? undefined : (run, record) => applyResultHooks(store, hooks as DaemonHooks, run, record),
      workerEnv: options.workerEnv,
      workerSilenceMs: options.workerSilenceMs,
      heartbeatMs: options.heartbeatMs,
      onError: logError,
      onChange: poke,
      log,
      reply: (task, answer, who) => control.reply(task, answer, who),
    });
    let graceMs = 30_000;
    let detach = false;
    cleanups.push(() => orchestrator.stop({ graceMs, detach }));
    // The knowledge search (warm indexes per workflow root) and the observer's sessions.
    const knowledge = createKnowledgePool();
    cleanups.push(() => knowledge.stop());
    const observer = options.observer ?? resolveObserverConfig();
    const builtIn = [
      async (a: FastifyInstance, doc: OpenApiDoc) => {
        // Review, promotion and audit act on a registered project's own `.workflow/` only.
        await a.register(knowledgeRoutes, { pool: knowledge, doc, projectRoot: async (projectId: string) => (await store.projects.get(projectId)).repoPath });
      },
      (a: FastifyInstance) => observerRoutes(a, { wikiRoot: observer.wikiRoot, workspaceRoot: observer.workspaceRoot }),
    ];
    const app = await buildApi({ store, bus, config, control, logError, plugins: [...builtIn, ...(options.plugins ?? [])] });
    // Observer updates reach the board over the same WebSocket as everything else.
    const forward = (update: unknown) => bus.publishEvent({ id: 0, projectId: null, taskId: null, runId: null, traceId: null, type: 'observer.update', payload: update as Record<string, unknown>, at: Date.now() });
    observerEvents.on('update', forward);
    cleanups.push(() => void observerEvents.off('update', forward));
    // Bundles written by `maestro observe` elsewhere, and (when following) the newest transcript itself.
    const hub = new ObserverHub({ config: observer, follow: options.observerFollow ?? followFromEnv(process.env), onError: logError });
    hub.start();
    cleanups.push(() => hub.stop());
    // A local write reaches WebSocket clients at once instead of at the next poll.
    app.addHook('onResponse', async (req) => {
      if (req.method !== 'GET') void feed.poke();
    });
    cleanups.push(() => app.close());
    try {
      await app.listen({ host: config.host, port: config.port });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'EADDRINUSE') {
        throw new MaestroError('CONFIG_INVALID', `Port ${config.port} on ${config.host} is in use. Stop what uses it or pick another with --port / MAESTRO_PORT.`);
      }
      throw err;
    }
    const addr = app.server.address();
    const port = typeof addr === 'object' && addr ? addr.port : config.port;
    const url = `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${port}`;
    log.info({ url, home: config.home, database: db.name }, 'daemon started');
    if (options.announce) process.stderr.write(`maestro: daemon on ${url} (data in ${config.home})\n`);
    await orchestrator.register();
    if (options.demo && (await store.projects.list()).length === 0) {
      const { project, task } = await createDemo(store, config.home, typeof options.demo === 'object' ? options.demo : {});
      log.info({ project: project.id, task: task.id, repo: project.repoPath }, 'created the demo project');
      if (options.announce) process.stderr.write(`maestro: no projects yet, so a demo project runs: ${project.repoPath} (task "${task.title}")\n`);
    }
    if (!options.noOrchestrator) orchestrator.start();
    let stopping: Promise<void> | null = null;
    return {
      url,
      port,
      config,
      store,
      bus,
      log,
      orchestrator,
      app,
      stop(opts = {}) {
        graceMs = opts.graceMs ?? graceMs;
        stopping ??= cleanup().then(() => log.info('daemon stopped'));
        return stopping;
      },
      abandon() {
        detach = true;
        graceMs = 0;
        stopping ??= cleanup();
        return stopping;
      },
    };
  } catch (err) {
    await cleanup();
    throw err;
  }
}
