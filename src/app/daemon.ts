/**
 * The daemon: one per $MAESTRO_HOME. Checks the home is writable, takes the home lock, opens and migrates the store
 * (refusing an emptied database beside earlier work), starts the health probe, the event feed, the API and the
 * orchestrator, and stops them in reverse order. Every subsystem has an idempotent start() / stop(). A full disk or
 * a home turned read-only while running is a health condition (HealthMonitor), never a crash.
 *
 * The composition root, so it sits above the parts it wires (daemon/, api/, observer/, demo/;
 * docs/architecture.md): none of them imports it.
 */
import { dirname, resolve } from 'node:path';
import { existsSync } from 'node:fs';
import type { FastifyInstance } from 'fastify';
import type { OpenApiDoc } from '../api/route.js';
import type { Logger } from 'pino';
import { buildApi } from '../api/server.js';
import type { MaestroConfig } from '../config/config.js';
import { ensureHomeToken, isLoopback, writeHomeDaemonUrl } from '../config/home.js';
import { terminalName } from './terminalName.js';
import { settingsOf } from '../daemon/daemonSettings.js';
import { MaestroError } from '../core/errors.js';
import { openMigratedDatabase } from '../store/open.js';
import { checkWalBeforeOpen } from '../store/walCheck.js';
import type { DBAdapter } from '../store/db.js';
import { createStore, type Store } from '../store/store.js';
import { Bus } from '../lib/bus.js';
import { EventFeed } from '../daemon/eventFeed.js';
import { STREAM_CHANNEL, StreamRelay } from '../daemon/streamRelay.js';
import { PgListener } from '../store/pgListener.js';
import { acquireHomeLock } from '../daemon/homeLock.js';
import { confineToProjects, registeredFolders } from '../daemon/projectRoots.js';
import { HealthMonitor, type HealthReport } from '../daemon/health.js';
import { watchSchema } from '../daemon/schemaWatch.js';
import { fileSize, prepareHome, refuseEmptiedDatabase, refuseEmptyDatabaseFile, sqlitePath } from '../daemon/homeCheck.js';
import { healthAndLog, healthReaction } from './healthLog.js';
import { listen, refusePortInUse } from './port.js';
import { refusePasswordlessDatabase } from './databaseLogin.js';
import { createRunControl } from '../daemon/runControl.js';
import { applyResultHooks, createDaemonHooks, type DaemonHooks } from '../daemon/projectHooks.js';
import { Orchestrator } from '../daemon/orchestrator.js';
import { createDemo } from '../demo/demo.js';
import { providerProblem } from '../daemon/providerCheck.js';
import { workRepoOf, type ProjectRepos } from '../daemon/repos.js';
import { promoteCommitted } from '../daemon/checkoutKnowledge.js';
import type { Project } from '../core/types.js';
import { knowledgeRoutes } from '../api/routes/knowledge.js';
import { KnowledgeService, resolveKnowledgeConfig } from '../knowledge/service.js';
import { KnowledgeBridge } from '../knowledge/lifecycle/bridge.js';
import { importAtGate } from '../daemon/knowledgeImport.js';
import { resolveObserverConfig } from '../observer/config.js';
import { followFromEnv } from '../observer/hub.js';
import { ObserverService } from '../observer/service.js';
import { observerRoutes } from '../api/routes/observer.js';
import { processAgentEnv } from '../lib/agentEnv.js';
import { announceAgentSandbox, observerIn, settleAgentSandbox, type AgentSandboxState } from './agentSandbox.js';
import { CREDENTIAL_ENV } from '../agents/credentials.js';
import { Spawner } from '../lib/spawner/spawner.js';
import { runGitThrough } from '../git/git.js';
import type { DaemonOptions } from './daemonOptions.js';
import { STOP_GRACE_MS, StopRequest } from './stopRequest.js';

export type { DaemonOptions } from './daemonOptions.js';

export interface Daemon {
  readonly url: string;
  readonly port: number;
  /** The API token (`$MAESTRO_HOME/token` unless MAESTRO_TOKEN or config.json set one); null with `--no-auth`. */
  readonly token: string | null;
  /** The board link that logs a browser in: `url` with `?token=` (the board keeps it in its own storage, src/api/guard.ts). */
  readonly boardUrl: string;
  readonly config: MaestroConfig;
  readonly store: Store;
  readonly bus: Bus;
  readonly log: Logger;
  readonly orchestrator: Orchestrator;
  readonly health: HealthMonitor;
  /** The API app, for in-process requests (`app.inject`). */
  readonly app: FastifyInstance;
  /** Stops claiming, gives workers `graceMs` to end their stage, then closes everything. */
  stop(opts?: { graceMs?: number }): Promise<void>;
  /** Stops at once, leaving workers running to be adopted by the next daemon (a crash, for tests). */
  abandon(): Promise<void>;
}

/** Stop steps, run in reverse order of registration. */
type Cleanups = (() => Promise<void> | void)[];

/** How the orchestrator stops: set by stop() / abandon() before the cleanups run. */
interface ShutdownMode { graceMs: number; detach: boolean }

/**
 * The daemon's knowledge service, started, and the one bridge its runs and the API's imports at a gate share
 * (daemon/knowledgeImport.ts). Its MAESTRO_HOME is this daemon's home (--home wins over the environment): run folders
 * may link only into its runs/ (session/store.ts assertRunFolderInside), and its specs/ are the global scope the
 * briefs read. A project's linked workspaces (.workflow/config.json, the repository's) are read only inside registered projects.
 */
async function startKnowledge(config: MaestroConfig, options: DaemonOptions, store: Store): Promise<{ knowledge: KnowledgeService; bridge: KnowledgeBridge }> {
  const knowledge = new KnowledgeService({ ...resolveKnowledgeConfig({ ...(options.env ?? {}), MAESTRO_HOME: config.home }), workspaceAllowed: await registeredFolders(store) });
  knowledge.start();
  return { knowledge, bridge: KnowledgeBridge.forService(knowledge, knowledge.config.env) };
}

/**
 * Settings the daemon refuses to start with, before it touches anything; the config with the agent sandbox
 * this machine gives. A sandbox asked for by name that cannot start stops the daemon here, not its first run.
 */
function refuseUnsafeStart(config: MaestroConfig): { config: MaestroConfig; sandbox: AgentSandboxState } {
  if (config.noAuth && !isLoopback(config.host)) {
    throw new MaestroError('CONFIG_INVALID', `Refusing --no-auth on ${config.host}: without a token anyone who reaches that address drives the daemon. --no-auth works on 127.0.0.1, localhost or ::1 only.`);
  }
  const settled = settleAgentSandbox(config, processAgentEnv());
  return { config: settled.config, sandbox: settled.state };
}

/** Every refusal made before the home is made or touched: a start refused at listen left a fresh home populated (port.ts). */
async function refuseStart(given: MaestroConfig, options: DaemonOptions): Promise<ReturnType<typeof refuseUnsafeStart>> {
  const refused = refuseUnsafeStart(given);
  await refusePasswordlessDatabase(refused.config, options.env ?? {});
  await refusePortInUse(refused.config);
  return refused;
}

export async function startDaemon(given: MaestroConfig, options: DaemonOptions = {}): Promise<Daemon> {
  const { config, sandbox } = await refuseStart(given, options);
  const homeWarning = prepareHome(config.home);
  let onHealth = (_report: HealthReport) => {};
  const { health, log, closeLog } = healthAndLog(config, options, (report) => onHealth(report));
  if (homeWarning) log.warn(homeWarning);
  let lock: ReturnType<typeof acquireHomeLock>;
  try {
    lock = acquireHomeLock(config.home);
  } catch (err) {
    void closeLog();
    throw err;
  }
  // The log closes last, after the "daemon stopped" line.
  const cleanups: Cleanups = [() => lock.release()];
  const cleanup = async () => {
    for (const fn of cleanups.splice(0).reverse()) await fn();
  };
  // The daemon's git commands run from a small helper process; stopped last, after everything that runs git.
  const spawner = new Spawner({ onGiveUp: (message) => log.warn(message) });
  spawner.start();
  const stopRoutingGit = runGitThrough(spawner);
  cleanups.push(async () => {
    stopRoutingGit();
    await spawner.stop();
  });
  try {
    const warn = startWarning(options, log);
    const token = resolveToken(config, warn);
    const { db, store } = await openStore(config, health, cleanups, options.schemaCheckMs ?? 30_000, warn);
    const bus = new Bus();
    const logError = (err: Error) => log.error({ err }, err.message);
    const feed = await startEventFeed(config, options, store, bus, log, cleanups);
    const wrote = () => void feed.wrote();
    // Every committed write: its events go to WebSocket clients at once, without reading them back. Other processes'
    // events come with the feed's reads: on NOTIFY (PostgreSQL) and its poll. A read after every write of ours as
    // well (a lease renewed, a heartbeat: most write no event) was half its reads of the log (bench:multihost).
    store.onWrite((events) => feed.publishDirect(events));
    // Knowledge (warm indexes, corpus watchers, the embedder): stopped after the orchestrator, whose runs still report to it.
    const { knowledge, bridge } = await startKnowledge(config, options, store);
    cleanups.push(() => knowledge.stop());
    const control = createRunControl(store, wrote);
    const orchestrator = createOrchestrator({ config, options, store, bus, log, health, control, bridge, wrote, logError });
    onHealth = healthReaction(log, bus, orchestrator);
    const mode: ShutdownMode = { graceMs: STOP_GRACE_MS, detach: false };
    const stopRequest = new StopRequest(() => orchestrator.workers.running);
    // The API closes after the hand-over, not first: `maestro stop` follows the stop through it (stopRequest.ts).
    cleanups.push(() => stopRequest.closeApi(), () => stopRequest.progress.through((onHandOver) => orchestrator.stop({ graceMs: mode.graceMs, detach: mode.detach, onHandOver })));
    // Runs before the orchestrator stops: a probe clearing during shutdown must not kick a tick.
    cleanups.push(() => {
      onHealth = () => {};
    });
    const observer = createObserver(config, options, bus, logError);
    const app = await buildDaemonApi({ config, options, store, bus, token, control, health, sandbox, database: db.name, knowledge, bridge, observer, repos: orchestrator.repos, logError, stopRequest });
    observer.start();
    cleanups.push(() => observer.stop());
    // After a request that wrote: its events went out at commit; without a NOTIFY listener, other processes' are read now too.
    app.addHook('onResponse', async (req) => {
      if (req.method !== 'GET') void feed.wrote();
    });
    cleanups.push(stopRequest.refuseDuringStop(app)); // the stop's first step: the API answers the stop and health only
    // Before it listens: a daemon refused for a live name on a shared database never says it is up.
    await orchestrator.register();
    const { port, url } = await listen(app, config);
    // Clients given only this home find this daemon, whatever its port (a wildcard bind: through loopback).
    cleanups.push(writeHomeDaemonUrl(config.home, /^(0\.0\.0\.0|::|\[::\])$/.test(config.host) ? `http://127.0.0.1:${port}` : url));
    const boardUrl = token ? `${url}/?token=${encodeURIComponent(token)}` : `${url}/`;
    const said = announceAgentSandbox(sandbox);
    log.info({ url, home: config.home, database: db.name, agentSandbox: sandbox.kind, ...(sandbox.network ? { agentSandboxNetwork: sandbox.network } : {}) }, 'daemon started');
    if (said.warning) log.warn(said.warning);
    if (options.announce) process.stderr.write(`maestro: daemon${terminalName(config) ? ` ${terminalName(config)}` : ''} on ${url} (data in ${config.home}; ${said.words})\n${said.warning ? `maestro: ${said.warning}\n` : ''}`);
    await createDemoIfEmpty(config, options, store, log);
    if (!options.noOrchestrator) orchestrator.start();
    return stopRequest.answeredBy(daemonHandle({ url, port, token, boardUrl, config, store, bus, log, orchestrator, health, app }, mode, cleanup, closeLog), options.onStopRequest, logError);
  } catch (err) {
    await cleanup();
    await closeLog();
    throw err;
  }
}

/**
 * The running daemon: stop() and abandon() set how the orchestrator stops, then run the
 * cleanups once (a second call gets the same promise); the log closes after them.
 */
function daemonHandle(parts: Omit<Daemon, 'stop' | 'abandon'>, mode: ShutdownMode, cleanup: () => Promise<void>, closeLog: () => Promise<void>): Daemon {
  let stopping: Promise<void> | null = null;
  return {
    ...parts,
    stop(opts = {}) {
      mode.graceMs = opts.graceMs ?? mode.graceMs;
      // Settles once the last line is on disk: `maestro serve` exits right after, and a write still
      // in flight then (the "daemon stopped" line, the note of lines lost to a full disk) was lost.
      stopping ??= cleanup().then(() => {
        parts.log.info('daemon stopped');
        return closeLog();
      });
      return stopping;
    },
    abandon() {
      mode.detach = true;
      mode.graceMs = 0;
      stopping ??= cleanup().then(closeLog);
      return stopping;
    },
  };
}

/** The token: MAESTRO_TOKEN or config.json's, else the home's own (created on the first start); null with --no-auth, which is warned of. */
/** A warning at start: to the log, and to the terminal of a `maestro serve`. */
function startWarning(options: DaemonOptions, log: Logger): (message: string) => void {
  return (message) => {
    log.warn(message);
    if (options.announce) process.stderr.write(`maestro: WARNING: ${message}\n`);
  };
}

function resolveToken(config: MaestroConfig, warn: (message: string) => void): string | null {
  const token = config.noAuth ? null : (config.token ?? ensureHomeToken(config.home, warn));
  if (config.noAuth) warn(`--no-auth: the API on ${config.host} asks for no token. Any program of any user on this machine can drive this daemon, and so run commands as you.`);
  return token;
}

/**
 * Opens and migrates the database (refusing a damaged write-ahead log, and an emptied database beside earlier work),
 * then starts the health probe.
 */
async function openStore(config: MaestroConfig, health: HealthMonitor, cleanups: Cleanups, schemaCheckMs: number, warn: (message: string) => void): Promise<{ db: DBAdapter; store: Store }> {
  const dbPath = sqlitePath(config.database);
  if (dbPath) {
    const torn = checkWalBeforeOpen(dbPath, new Date(), { cut: dirname(resolve(dbPath)) === resolve(config.home) });
    if (torn) warn(torn);
    refuseEmptyDatabaseFile(config.home, dbPath);
  }
  const existed = dbPath !== null && fileSize(dbPath) !== null;
  const db = await openMigratedDatabase(config.database, {
    onFault: (fault) => health.notice(fault),
    beforeMigrate: (opened) => (dbPath ? refuseEmptiedDatabase(opened, config.home, dbPath, existed) : Promise.resolve()),
  });
  cleanups.push(() => db.close());
  health.start();
  cleanups.push(() => health.stop());
  cleanups.push(watchSchema(db, health, schemaCheckMs));
  return { db, store: createStore(db) };
}

/** The event feed, and on PostgreSQL the LISTEN connection and stream relay that bring other daemons' events. */
async function startEventFeed(config: MaestroConfig, options: DaemonOptions, store: Store, bus: Bus, log: Logger, cleanups: Cleanups): Promise<EventFeed> {
  const logError = (err: Error) => log.error({ err }, err.message);
  const postgres = store.db.dialect === 'postgres';
  const feed = new EventFeed(store, bus, { pollMs: 250, listeningPollMs: options.listeningPollMs ?? 2000, gapMs: postgres ? 30_000 : 0, origin: store.db.notifyOrigin, onError: logError });
  await feed.start();
  cleanups.push(() => feed.stop());
  if (postgres) {
    // Other daemons' events and stream items, as they happen (NOTIFY); the poll covers the gaps when the listener is down.
    const relay = new StreamRelay(store.db, config.name, bus, { onError: logError });
    const offLocal = bus.onLocalStream((item) => relay.send(item));
    const listener = new PgListener(config.database, ['maestro_events', STREAM_CHANNEL], {
      onNotify: (channel, payload) => (channel === STREAM_CHANNEL ? relay.receive(payload) : feed.notified(payload)),
      onState: (up, err) => {
        if (up) log.info('listening for other daemons\' events (PostgreSQL LISTEN)');
        else log.warn({ err: err?.message }, 'lost the PostgreSQL LISTEN connection: polling the event log until it is back');
        feed.setListening(up);
      },
    });
    await listener.start();
    cleanups.push(() => relay.stop(), offLocal, () => listener.stop());
  }
  return feed;
}

interface OrchestratorParts {
  config: MaestroConfig;
  options: DaemonOptions;
  store: Store;
  bus: Bus;
  log: Logger;
  health: HealthMonitor;
  control: ReturnType<typeof createRunControl>;
  bridge: KnowledgeBridge;
  wrote: () => void;
  logError: (err: Error) => void;
}

/** The orchestrator, with the project hooks (or the caller's) and a pause on claiming while the disk is unhealthy. */
function createOrchestrator({ config, options, store, bus, log, health, control, bridge, wrote, logError }: OrchestratorParts): Orchestrator {
  const hooks = options.hooks ?? createDaemonHooks(store, config, options.hookTimeoutMs);
  return new Orchestrator(store, bus, config, {
    hooks,
    preFinal: options.hooks ? undefined : (run, record) => applyResultHooks(store, hooks as DaemonHooks, run, record),
    workerEnv: options.workerEnv,
    env: options.env ?? {},
    workerSilenceMs: options.workerSilenceMs,
    heartbeatMs: options.heartbeatMs,
    onError: logError,
    onChange: wrote,
    log,
    reply: (task, answer, who) => control.reply(task, answer, who),
    mayClaim: () => !health.claimPaused,
    // The remote as the error names it (its password hidden there).
    onRemote: (project, err) => health.remote(project.id, err && { path: String(err.details?.path), message: err.message }),
    onFolders: (missing) => health.projectFolders(missing),
    remoteRetryMs: options.remoteRetryMs,
    gitStallMs: options.gitStallMs,
    knowledge: bridge,
  });
}

/**
 * The observer (bundles written by `maestro observe` elsewhere, and when following the newest transcript
 * itself): its updates reach the board over the same WebSocket as everything else.
 */
function createObserver(config: MaestroConfig, options: DaemonOptions, bus: Bus, logError: (err: Error) => void): ObserverService {
  const forward = (update: unknown) => bus.publishEvent({ id: 0, projectId: null, taskId: null, runId: null, traceId: null, type: 'observer.update', payload: update as Record<string, unknown>, at: Date.now() });
  return new ObserverService({ config: observerIn(config, options.observer ?? resolveObserverConfig(options.env ?? {})), follow: options.observerFollow ?? followFromEnv(options.env ?? {}), ...(options.observerEvents ? { events: options.observerEvents } : {}), onUpdate: forward, onError: logError });
}

interface ApiParts {
  config: MaestroConfig;
  options: DaemonOptions;
  store: Store;
  bus: Bus;
  token: string | null;
  control: ReturnType<typeof createRunControl>;
  health: HealthMonitor;
  /** How agents run here, for GET /api/health. */
  sandbox: AgentSandboxState;
  /** The database's name as the log gives it (db.name: the password hidden), for GET /api/health. */
  database: string;
  knowledge: KnowledgeService; bridge: KnowledgeBridge;
  observer: ObserverService;
  /** Where this daemon works on each project (a diff fetches a shared remote's clone through it). */
  repos: ProjectRepos;
  logError: (err: Error) => void;
  stopRequest: StopRequest; // POST /api/daemon/stop: the request, once its answer is sent, and the stop's progress
}

/** The API app with the built-in knowledge and observer routes and the caller's plugins (not yet listening). */
async function buildDaemonApi({ config, options, store, bus, token, control, health, sandbox, database, knowledge, bridge, observer, repos, logError, stopRequest }: ApiParts): Promise<FastifyInstance> {
  // Task branches of a project on a shared remote live in this host's clone of it, and so does its runs' knowledge.
  const repoFor = (project: Project) => {
    const work = workRepoOf(config.home, project);
    return existsSync(work) ? work : project.repoPath;
  };
  // A promotion changes files main tracks: committed under the merge lease (on a shared remote pushed to its main), as a merge is.
  const promote = { store, repos, owner: config.name, leaseMs: config.leaseMs, onError: logError };
  const builtIn = [
    async (a: FastifyInstance, doc: OpenApiDoc) => {
      // Review, promotion and audit act on a registered project's `.workflow/` only: where its runs work (repoFor).
      await a.register(knowledgeRoutes, { pool: knowledge.pool, lifecycle: knowledge.lifecycle, env: knowledge.config.env, doc, projectRoot: async (projectId: string) => repoFor(await store.projects.get(projectId)), promoteCommitted: async (projectId, sid, run) => promoteCommitted(promote, await store.projects.get(projectId), sid, run), supersededOf: (projectId, ids) => store.tasks.superseded(ids, projectId), beforeReview: (projectId, sid) => importAtGate(store, bridge, { home: config.home, self: config.name }, projectId, sid), confineRoot: (root) => confineToProjects(store, root) });
    },
    (a: FastifyInstance, doc: OpenApiDoc) => observerRoutes(a, observer.routeDeps, doc),
  ];
  // A daemon that runs tasks refuses one it could not run (no usable agent); without an orchestrator nothing runs.
  // What workers see (the allowlist with every provider's credentials): detection runs tools' status commands in it.
  const workersEnv = { ...processAgentEnv({ credentials: Object.values(CREDENTIAL_ENV).flat() }), ...options.workerEnv };
  const providerCheck = options.noOrchestrator ? {} : { providerProblem: (project: Project) => providerProblem(project, workersEnv) };
  return buildApi({ store, bus, config: { ...config, token }, home: config.home, control, logError, health: () => ({ ...health.report(), agentSandbox: sandbox, database }), ...providerCheck, repoFor, refreshRepo: (project) => repos.refresh(project), agentEnv: workersEnv, slots: { owner: config.name, perProject: config.maxConcurrentRunsPerProject }, knowledge: { bridge, home: config.home }, self: { name: config.name, settings: settingsOf(config) }, stop: { request: stopRequest.request, graceMs: STOP_GRACE_MS, home: config.home, progress: stopRequest.progress }, plugins: [...builtIn, ...(options.plugins ?? [])] });
}

/** With `demo` on and no project registered, creates the offline demo project. */
async function createDemoIfEmpty(config: MaestroConfig, options: DaemonOptions, store: Store, log: Logger): Promise<void> {
  if (!options.demo) return;
  // A PostgreSQL database is a team's: the demo's repository would live in this one daemon's home, every
  // other daemon would claim its tasks against a path it may not have, and every board would show it.
  if (store.db.dialect === 'postgres') {
    if (options.announce && (await store.projects.list()).length === 0) process.stderr.write('maestro: no projects yet; on a shared database no demo project is made: register one with maestro project add\n');
    return;
  }
  if ((await store.projects.list()).length === 0) {
    const { project, task } = await createDemo(store, config.home, typeof options.demo === 'object' ? options.demo : {});
    log.info({ project: project.id, task: task.id, repo: project.repoPath }, 'created the demo project');
    if (options.announce) process.stderr.write(`maestro: no projects yet, so a demo project runs: ${project.repoPath} (task "${task.title}")\n`);
  }
}
